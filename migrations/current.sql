-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--!include delegations/tables.sql
--!include perimeter.sql
--!include audit/functions.sql
--!include notifications/functions.sql
--!include delegations/api.sql
--!include delegations/routing.sql
--!include finalize.sql
