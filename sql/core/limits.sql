-- The thresholds of the SPEC ("Limits" and the declaration rules of Absences), each named once.
-- Rules, messages and CHECK constraints take their number from these functions; the HTTP layer's
-- copies are compared with them at start-up (src/http/manifest-check.ts). Immutable SQL: the
-- planner folds them into constants.

create or replace function app_hidden.retroactivity_days() returns int
language sql immutable parallel safe as $$ select 14 $$;
comment on function app_hidden.retroactivity_days() is
'SPEC Limits, retroactivity of an employee request: how many days back an absence request, a
cancellation request or a day-change request may reach (declaration rules 13 and 15).';

create or replace function app_hidden.employee_retroactivity_limit(p_today date) returns date
language sql immutable parallel safe as $$ select p_today - app_hidden.retroactivity_days() $$;
comment on function app_hidden.employee_retroactivity_limit(date) is
'SPEC Limits: the earliest date an employee''s own request may concern on business date p_today
(today minus app_hidden.retroactivity_days()).';

create or replace function app_hidden.manager_retroactivity_limit(p_today date) returns date
language sql immutable parallel safe as $$ select make_date(extract(year from p_today)::int - 1, 12, 1) $$;
comment on function app_hidden.manager_retroactivity_limit(date) is
'SPEC Limits, retroactivity of a manager''s declaration: 1 December of the year before p_today, the
earliest date a declaration for another employee or a decider''s decision may concern.';

create or replace function app_hidden.first_accepted_year() returns int
language sql immutable parallel safe as $$ select 2000 $$;
create or replace function app_hidden.last_accepted_year() returns int
language sql immutable parallel safe as $$ select 2100 $$;
comment on function app_hidden.first_accepted_year() is
'The first civil year a date of an absence or a counter may fall in (input sanity bound).';
comment on function app_hidden.last_accepted_year() is
'The last civil year a date of an absence or a counter may fall in (input sanity bound).';

create or replace function app_hidden.absence_max_days() returns int
language sql immutable parallel safe as $$ select 1096 $$;
comment on function app_hidden.absence_max_days() is
'Longest span between the first and last day of one absence: three years (the longest leave, a renewed
parental leave); beyond is an input error.';

create or replace function app_hidden.notice_follow_days() returns int
language sql immutable parallel safe as $$ select 7 $$;
comment on function app_hidden.notice_follow_days() is
'SPEC Absences, declaration rule 16: a parental leave starting at most this many days after a maternity
or adoption leave follows it directly and takes the short notice period.';

create or replace function app_hidden.document_max_bytes() returns int
language sql immutable parallel safe as $$ select 10 * 1024 * 1024 $$;
comment on function app_hidden.document_max_bytes() is
'SPEC Limits, document size: 10 MB (10 x 1024 x 1024 bytes, CONTRACT section 7) per absence document,
attachment and honorability certificate.';

create or replace function app_hidden.document_content_types() returns text[]
language sql immutable parallel safe as $$ select array['application/pdf', 'image/jpeg', 'image/png'] $$;
comment on function app_hidden.document_content_types() is
'SPEC Limits, document formats: the content types an absence document, an attachment or an honorability
certificate may have (PDF, JPEG, PNG; checked by content, src/storage/file-type.ts; the document tables''
CHECKs list the same, test/db/82-client-settings.sql compares them).';

create or replace function app_hidden.planning_max_days() returns int
language sql immutable parallel safe as $$ select 62 $$;
comment on function app_hidden.planning_max_days() is
'CONTRACT section 7: the longest window of days one planning read covers.';
