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
