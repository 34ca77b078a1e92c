-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--!include reference/tables.sql
--!include backoffice/reference.sql
--!include backoffice/counters.sql
--!include backoffice/role_attributions.sql
--!include backoffice/contracts.sql
--!include guards.sql
--!include finalize.sql
