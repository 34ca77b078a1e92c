--! Previous: sha1:59455e0ad02fe286c856c267a41060d737d0e9dc
--! Hash: sha1:da44bce9b166d3c61178604da4f07dc6aa060087
--! Message: Issue 31: operations metrics read

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included jobs/metrics.sql
-- The operations figures of GET /metrics (src/http/metrics.ts), read by the service's owner
-- connection at each scrape: background jobs queued and failed for good (graphile-worker, whose
-- schema the worker installs at its start: none before, so the figures are 0), e-mails of the
-- outbox pending (still retried) and abandoned (email_max_attempts used). Not for the request
-- roles (wfm_visitor, wfm_authenticator): figures of the whole installation.
create or replace function app_private.operations_metrics()
returns table (jobs_queued bigint, jobs_failed bigint, emails_pending bigint, emails_abandoned bigint)
language plpgsql stable set search_path = pg_catalog, public, pg_temp as $$
declare
  v_max_attempts int := coalesce((app_hidden.setting('email_max_attempts') #>> '{}')::int, 10);
begin
  jobs_queued := 0;
  jobs_failed := 0;
  if to_regclass('graphile_worker.jobs') is not null then
    execute 'select count(*) filter (where attempts < max_attempts), count(*) filter (where attempts >= max_attempts)
             from graphile_worker.jobs'
      into jobs_queued, jobs_failed;
  end if;
  select count(*) filter (where o.attempts < v_max_attempts), count(*) filter (where o.attempts >= v_max_attempts)
    into emails_pending, emails_abandoned
    from app_private.email_outbox o
   where o.sent_at is null;
  return next;
end;
$$;
revoke all on function app_private.operations_metrics() from public;
--! EndIncluded jobs/metrics.sql
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
grant execute on function app_private.begin_request(int, int, int), app_private.begin_request_or_fail(int, int, boolean, int, text),
  app_private.login_lookup(text), app_private.set_client_address(text),
  app_private.record_login(int), app_private.password_reset_request(text),
  app_private.password_token_check(text), app_private.password_reset_confirm(text, text),
  app_private.rate_limit_hit(text, int, interval), app_private.rate_limit_hit_or_fail(text, int, interval)
  to wfm_authenticator;
-- Login throttling (sql/auth/rate_limits.sql): the API and back-office logins, as the authenticator.
grant execute on function app_private.login_throttle(text, text, text, int, int, interval),
  app_private.login_failed(text, text, text, interval, interval), app_private.login_succeeded(text, text, text)
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
