-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--!include core/arguments.sql
--!include referentials/api.sql
--!include teams/api.sql
--!include events/api.sql
--!include backoffice/team_members.sql
--!include guards.sql
--!include finalize.sql
