-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--!include reference/tables.sql
--!include reference/data.sql
--!include planning/planning.sql
--!include absences/reasons.sql
--!include backoffice/shift_change.sql
--!include backoffice/reference.sql
--!include finalize.sql
