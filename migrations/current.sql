-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--!include notifications/tables.sql
--!include notifications/functions.sql
--!include notifications/emails.sql
--!include notifications/policies.sql
--!include finalize.sql
