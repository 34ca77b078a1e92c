-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--!include counters/tables.sql
--!include notifications/emails.sql
--!include counters/functions.sql
--!include counters/rules.sql
--!include counters/year.sql
--!include finalize.sql
