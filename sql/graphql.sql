-- PostGraphile smart comments. /graphql offers the API functions only (src/graphql.ts leaves
-- every table out): the aggregates once opted in here on tables are gone with them.
comment on table app_public.absences is null;
comment on table app_public.shift_change_requests is null;
comment on table app_public.counters is null;
comment on table app_public.day_modifications is null;
comment on table app_public.events is null;
-- Impersonation hands out a token, which only the REST route signs: GraphQL does not offer it
-- (and the function refuses unless the server turned impersonation on, sql/impersonation/api.sql).
comment on function app_public.impersonation_start(int) is E'@behavior -*';
-- The planning as text is the REST route's (passed through as written); GraphQL offers
-- planningRead, typed JSON.
comment on function app_public.planning_read_text(date, date, int, int, int) is E'@behavior -*';
