-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--!include org/accounts.sql
--!include audit/tables.sql
--!include auth/functions.sql
--!include audit/functions.sql
--!include backoffice/sessions.sql
--!include auth/security_events.sql
--!include finalize.sql
