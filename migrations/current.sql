-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--!include core/input_contract.sql
--!include absences/rules.sql
--!include counters/functions.sql
--!include absences/api.sql
--!include backoffice/reference.sql
--!include finalize.sql
