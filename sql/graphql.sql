-- PostGraphile smart comments. /graphql offers the API functions only (src/graphql.ts leaves
-- every table out): the aggregates once opted in here on tables are gone with them.
comment on table app_public.absences is null;
comment on table app_public.shift_change_requests is null;
comment on table app_public.counters is null;
comment on table app_public.day_modifications is null;
comment on table app_public.events is null;
-- Impersonation hands out a token, which only the REST route signs: GraphQL does not offer it
-- (and the function refuses unless the server turned impersonation on, sql/impersonation/api.sql).
-- Smart tags come first: PostGraphile reads the first line that is not a tag, and all after it,
-- as the description.
comment on function app_public.impersonation_start(int) is
'@behavior -*
SPEC Authentication rule 5 (user impersonation, off by default): a superuser starts speaking for another
active account that is not a superuser; returns that account and the impersonator, which the REST route
signs into a token; audited. Refused unless the server turned impersonation on for the request.';
comment on function app_public.impersonation_end() is
'@behavior -*
Issue 25: the end of an impersonation (POST /api/auth/impersonate/end/ with the impersonation token), audited
as impersonation_ended by the superuser; refused unless the server turned impersonation on for the request.';
-- The planning as text, and in parts, is the REST route's (passed through as written);
-- GraphQL offers planningRead, typed JSON.
comment on function app_public.planning_read_text(date, date, int, int, int) is
'@behavior -*
SPEC Planning cell and Permissions rule 3, GET /api/planning/: planning_read''s answer as JSON text, as written
(no parse and serialise), which the REST route sends in parts (planning_read_chunks).';
comment on function app_public.planning_read_chunks(date, date, int, int, int) is
'@behavior -*
SPEC Planning cell and Permissions rule 3, GET /api/planning/: planning_read''s answer as UTF-8 bytes in parts of
at most 64 KiB, in order, which the REST route sends as they come.';
-- The list of absences as text is the REST route's (passed through as written); GraphQL offers
-- absencesList, typed JSON.
comment on function app_public.absences_list_text(text, int, date, date, int, int, text, int, int) is
'@behavior -*
SPEC Absences, GET /api/absences/ and Permissions rules 3 and 19: absences_list''s count, and its results as
JSON text, as written (no envelope, no parse and serialise), which the REST route sends as they come.';
