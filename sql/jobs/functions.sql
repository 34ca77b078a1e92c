-- Scheduled jobs: the scheduling decision, the run record, and the SQL side of each job.
-- A worker task (worker/tasks/<job>.ts) runs, in one transaction:
--   select app_private.job_claim(job, scheduled_at)  -- null: not due, or already run
--   select app_private.<job>(app_hidden.now())        -- the job itself, one SQL function
--   select app_private.job_finish(run_id, result)
-- so that a failed job leaves no claim and is retried, and a job that ran for a period
-- never runs again for it.

-- Is the scheduled instant of a cron job (UTC in graphile-worker) the intended local time
-- of the job (and its day of the week, for a weekly job)?
create or replace function app_private.job_is_due(p_job text, p_scheduled_at timestamptz) returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce((
    select date_trunc('minute', p_scheduled_at at time zone s.time_zone)::time = s.local_time
           and (s.isodow is null or extract(isodow from p_scheduled_at at time zone s.time_zone) = s.isodow)
    from app_private.job_schedules s
    where s.job = p_job), false);
$$;

-- Claims a run. p_scheduled_at null: a run by hand, always claimed. Otherwise the cron
-- instant: null when it is not the job's local time, or when the job already ran for that
-- local date. The run id is also left in app.job_run_id for the job's records.
create or replace function app_private.job_claim(p_job text, p_scheduled_at timestamptz default null) returns bigint
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_schedule app_private.job_schedules;
  v_id bigint;
begin
  select * into v_schedule from app_private.job_schedules s where s.job = p_job;
  if not found then
    raise exception 'job_claim: unknown job "%"', p_job;
  end if;
  if p_scheduled_at is null then
    insert into app_private.job_runs (job, period, trigger)
    values (p_job, 'manual:' || to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'manual')
    returning id into v_id;
  else
    if not app_private.job_is_due(p_job, p_scheduled_at) then
      return null;
    end if;
    insert into app_private.job_runs (job, period, trigger, scheduled_at)
    values (p_job, ((p_scheduled_at at time zone v_schedule.time_zone)::date)::text, 'cron', p_scheduled_at)
    on conflict (job, period) do nothing
    returning id into v_id;
    if v_id is null then
      return null;
    end if;
  end if;
  perform set_config('app.job_run_id', v_id::text, true);
  return v_id;
end;
$$;

create or replace function app_private.job_finish(p_run_id bigint, p_result jsonb) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  update app_private.job_runs set finished_at = clock_timestamp(), result = p_result where id = p_run_id;
$$;

-- ---------------------------------------------------------------------------------------
-- send_missing_document_reminders: the rules live with the absences (sql/absences/reminders.sql).
