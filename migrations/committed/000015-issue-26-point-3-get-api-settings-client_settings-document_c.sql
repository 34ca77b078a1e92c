--! Previous: sha1:d05cf0fd4b0505256c1f324ab5349783e7178e9a
--! Hash: sha1:8f772891ea595e335c64d21f332d093c8095141e
--! Message: Issue 26 point 3: GET /api/settings/ (client_settings, document_content_types)

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included core/limits.sql
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
--! EndIncluded core/limits.sql
--! Included api/settings.sql
-- GET /api/settings/: the limits a client shows and checks before sending (document size and
-- formats, retroactivity, planning window, text lengths), read from their one home so that the
-- web application copies none of them (issue 26). Every value of app_hidden.input_contract(),
-- its camelCase names written snake_case like the rest of the API, and the limit functions it
-- does not carry.
create or replace function app_public.client_settings() returns jsonb
language sql stable as $$
  select (select jsonb_object_agg(lower(regexp_replace(key, '([A-Z])', '_\1', 'g')), value)
          from jsonb_each(app_hidden.input_contract()))
         || jsonb_build_object(
              'absence_max_days', app_hidden.absence_max_days(),
              'document_content_types', to_jsonb(app_hidden.document_content_types()))
$$;
comment on function app_public.client_settings() is
'SPEC Limits and CONTRACT section 7, GET /api/settings/: the limits of the input contract
(app_hidden.input_contract(): text lengths, retroactivity days, planning window, document size) and the
document formats and longest absence, for clients to show and check before sending. The same for every account.';
--! EndIncluded api/settings.sql
--! Included finalize.sql
-- Last file of sql/ORDER, included by every migration that changes sql/ (npm run db:current):
-- grants, ownership of API functions, RLS check.

grant select on all tables in schema app_public to wfm_visitor;
grant select, insert, update, delete on all tables in schema app_public to wfm_api;
grant usage on all sequences in schema app_public to wfm_api;
grant usage on schema app_private to wfm_api;
grant execute on all functions in schema app_public to wfm_visitor, wfm_api;
grant execute on all functions in schema app_hidden to wfm_visitor, wfm_api;
grant execute on all functions in schema app_private to wfm_api;
grant execute on function app_private.begin_request(int, int), app_private.begin_request_or_fail(int, int, boolean),
  app_private.login_lookup(text),
  app_private.record_login(int), app_private.password_reset_request(text),
  app_private.password_token_check(text), app_private.password_reset_confirm(text, text),
  app_private.rate_limit_hit(text, int, interval), app_private.rate_limit_hit_or_fail(text, int, interval)
  to wfm_authenticator;

-- API functions that are security definer run as wfm_api, which does not own the tables:
-- row-level security applies to them exactly as to the visitor.
do $$
declare
  f record;
begin
  for f in
    select p.oid::regprocedure as signature
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'app_public' and p.prosecdef and p.proowner <> 'wfm_api'::regrole
  loop
    execute format('alter function %s owner to wfm_api', f.signature);
  end loop;
end;
$$;

-- Every table has row-level security enabled; a migration that forgets it fails here.
do $$
declare
  t record;
begin
  for t in
    select c.oid::regclass as rel
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname in ('app_public', 'app_private', 'app_hidden') and c.relkind in ('r', 'p')
      and not c.relrowsecurity
  loop
    raise exception 'Table % has no row-level security enabled', t.rel;
  end loop;
end;
$$;
--! EndIncluded finalize.sql
