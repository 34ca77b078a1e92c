-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--!include employees/helpers.sql
--!include reference/administration.sql
--!include org/role_attributions.sql
--!include employees/contracts.sql
--!include teams/members.sql
--!include absences/corrections.sql
--!include finalize.sql
