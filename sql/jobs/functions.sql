-- Scheduled jobs: the scheduling decision, the run record, and the SQL side of each job.
-- A worker task (worker/tasks/<job>.ts) runs, in one transaction:
--   select app_private.job_claim(job, scheduled_at)  -- null: not due, or already run
--   select app_private.<job>(app_hidden.now())        -- the job itself, one SQL function
--   select app_private.job_finish(run_id, result)
-- so that a failed job leaves no claim and is retried, and a job that ran for a period
-- never runs again for it.

-- Is the scheduled instant of a cron job (UTC in graphile-worker) the intended local time
-- of the job (and its day of the week, for a weekly job)?
create function app_private.job_is_due(p_job text, p_scheduled_at timestamptz) returns boolean
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
create function app_private.job_claim(p_job text, p_scheduled_at timestamptz default null) returns bigint
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

create function app_private.job_finish(p_run_id bigint, p_result jsonb) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  update app_private.job_runs set finished_at = clock_timestamp(), result = p_result where id = p_run_id;
$$;

-- ---------------------------------------------------------------------------------------
-- send_missing_document_reminders (SPEC Events rule 5, CONTRACT section 7)

-- The p_count-th working day (Monday to Friday, public holidays excluded) after p_date.
create function app_private.working_day_after(p_date date, p_count int) returns date
language plpgsql immutable strict as $$
declare
  v_day date := p_date;
  v_left int := p_count;
begin
  while v_left > 0 loop
    v_day := v_day + 1;
    if extract(isodow from v_day) < 6 and not app_hidden.is_public_holiday(v_day) then
      v_left := v_left - 1;
    end if;
  end loop;
  return v_day;
end;
$$;

-- When the documents of an absence are due: hours after the start of its first day
-- (work-stoppage, sick-child and blood-donation certificates: 48 h), or the end of the
-- n-th working day after its last day (caregiver documents: 2 working days). Null when the
-- type expects no document by a deadline.
create function app_private.missing_document_deadline(p_type_id int, p_date_start date, p_date_end date)
returns timestamptz
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case
    when not t.documents_expected then null
    when t.document_deadline_hours is not null then
      (p_date_start::timestamp at time zone app_hidden.business_timezone()) + make_interval(hours => t.document_deadline_hours)
    when t.document_deadline_working_days_after_end is not null then
      ((app_private.working_day_after(p_date_end, t.document_deadline_working_days_after_end) + 1)::timestamp
        at time zone app_hidden.business_timezone())
  end
  from app_public.absence_types t where t.id = p_type_id;
$$;

-- RH n1 / RH n2 accounts whose perimeter covers the employee on p_on: an active attribution
-- of one of these roles without establishments, or with an establishment of the employee.
create function app_private.hr_accounts_covering(p_employee_id int, p_on date) returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select distinct ra.account_id
  from app_public.role_attributions ra
  join app_public.roles r on r.id = ra.role_id and r.name in ('RH n1', 'RH n2')
  join app_public.accounts a on a.id = ra.account_id and a.is_active
  where app_hidden.date_in(p_on, ra.start_date, ra.end_date)
    and (not exists (select 1 from app_public.role_attribution_establishments rae where rae.attribution_id = ra.id)
         or exists (select 1 from app_public.role_attribution_establishments rae
                    where rae.attribution_id = ra.id
                      and rae.establishment_id in (select app_hidden.employee_establishments(p_employee_id, p_on))));
$$;

-- Reminds the missing documents whose deadline fell in the week before p_now: pending and
-- validated absences of a type expecting documents, with no document deposited. The
-- employee receives "Justificatif à transmettre"; each RH n1 / RH n2 account covering the
-- employee receives one "Justificatifs manquants" listing them. A reminder is recorded in
-- app_private.reminders_sent (absence, kind) first: a second run sends nothing twice.
-- Returns the number of notifications sent.
create function app_private.send_missing_document_reminders(p_now timestamptz) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_run_id bigint := nullif(current_setting('app.job_run_id', true), '')::bigint;
  v_tz text := app_hidden.business_timezone();
  v_today date;
  v_fresh jsonb;
  v_count int := 0;
  r record;
begin
  if p_now is null then
    raise exception 'send_missing_document_reminders: p_now is required';
  end if;
  v_today := (p_now at time zone v_tz)::date;

  with due as (
    select a.id, a.employee_id, a.date_start, a.date_end, t.name as type_name,
           app_private.missing_document_deadline(a.type_id, a.date_start, a.date_end) as deadline
    from app_public.absences a
    join app_public.absence_types t on t.id = a.type_id
    where a.status in ('pending', 'validated')
      and t.documents_expected
      and (t.document_deadline_hours is not null or t.document_deadline_working_days_after_end is not null)
      -- Deadlines of the last week only: the absence started at most a few weeks ago.
      and a.date_start <= v_today and a.date_end >= v_today - 31
      and not exists (select 1 from app_public.absence_documents d where d.absence_id = a.id)
  ),
  fresh as (
    insert into app_private.reminders_sent (absence_id, kind, deadline_at, sent_at, job_run_id)
    select due.id, 'missing_document', due.deadline, p_now, v_run_id
    from due
    where due.deadline <= p_now and due.deadline > p_now - interval '7 days'
    on conflict (absence_id, kind) do nothing
    returning absence_id
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'absence_id', due.id, 'employee_id', due.employee_id, 'date_start', due.date_start,
           'account_id', app_private.employee_account_id(due.employee_id),
           'employee_name', app_hidden.employee_name(due.employee_id),
           'line', format('%s du %s au %s (attendu avant le %s)', due.type_name, app_hidden.fr_date(due.date_start),
                          app_hidden.fr_date(due.date_end), to_char(due.deadline at time zone v_tz, 'DD/MM/YYYY à HH24:MI')))
         order by due.date_start, due.id), '[]'::jsonb)
  into v_fresh
  from due join fresh on fresh.absence_id = due.id;

  -- The employee.
  for r in select * from jsonb_to_recordset(v_fresh) as x(absence_id int, employee_id int, account_id int,
                                                            employee_name text, line text)
           where x.account_id is not null loop
    perform app_private.notify(r.account_id, 'Justificatif à transmettre',
      format('Le justificatif de votre absence %s n''a pas été reçu. Déposez-le depuis la fiche de l''absence.', r.line),
      'warning', 'absence', r.absence_id);
    v_count := v_count + 1;
  end loop;

  -- HR: one notification per account, listing the missing documents of its perimeter.
  for r in
    select h.account_id,
           string_agg('- ' || x.employee_name || ' : ' || x.line, E'\n' order by x.employee_name, x.date_start, x.absence_id) as lines
    from jsonb_to_recordset(v_fresh) as x(absence_id int, employee_id int, date_start date, account_id int,
                                          employee_name text, line text)
    cross join lateral app_private.hr_accounts_covering(x.employee_id, v_today) as h(account_id)
    where h.account_id is distinct from x.account_id
    group by h.account_id
  loop
    perform app_private.notify(r.account_id, 'Justificatifs manquants',
      E'Justificatifs non reçus à l''échéance :\n' || r.lines, 'warning', null, null);
    v_count := v_count + 1;
  end loop;

  return v_count;
end;
$$;
