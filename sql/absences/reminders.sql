-- Missing-document reminders (SPEC Events rule 5, CONTRACT section 7), run daily by the
-- worker task send_missing_document_reminders.
--
-- A reason that expects a document has a deadline: hours after the first day of the
-- absence (work stoppage, sick child, blood donation: 48 h), or working days after its last
-- day (family caregiver: 2 working days, on the employee's counting base). The run looks
-- only at deadlines that fell due in the week before p_now, reminds pending and validated
-- absences only, never twice (app_private.reminders_sent), and nothing when a document was
-- received for an absence of the same reason of the same employee.
-- The employee receives "Justificatif à transmettre" per absence; each RH n1 / RH n2
-- account whose perimeter covers the employee receives one "Justificatifs manquants"
-- listing the missing documents of the run.

-- app_private.reminders_sent (sql/jobs/tables.sql) records each reminder once.

-- When the document of an absence is due (null: the reason expects none).
create or replace function app_hidden.absence_document_deadline(p_absence app_public.absences, p_type app_public.absence_types)
returns timestamptz
language sql stable as $$
  select case
    when not p_type.documents_expected then null
    when p_type.document_deadline_hours is not null then
      (p_absence.date_start::timestamp at time zone app_hidden.business_timezone())
      + make_interval(hours => p_type.document_deadline_hours)
    when p_type.document_deadline_working_days_after_end is not null then
      ((app_hidden.add_working_days(p_absence.date_end, p_type.document_deadline_working_days_after_end,
                                    app_hidden.employee_count_base(p_absence.employee_id)) + 1)::timestamp
       at time zone app_hidden.business_timezone())
  end;
$$;

create or replace function app_private.send_missing_document_reminders(p_now timestamptz) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := app_hidden.business_date(p_now);
  v_run jsonb;
  v_absence app_public.absences;
  v_sent int := 0;
  r record;
begin
  -- Claim the due reminders (a concurrent run claims each at most once).
  with due as (
    select a.id, a.employee_id, a.type_id, t.name as type_name,
           app_hidden.absence_period_fr(a.date_start, a.date_end, a.start_half, a.end_half,
                                        a.start_time, a.end_time) as period_fr,
           app_hidden.absence_document_deadline(a, t) as deadline_at
    from app_public.absences a
    join app_public.absence_types t on t.id = a.type_id
    where a.status in ('pending', 'validated') and t.documents_expected
      and (t.document_deadline_hours is not null or t.document_deadline_working_days_after_end is not null)
      -- a cheap bound before the exact deadline (a deadline lies days, not weeks, after the dates)
      and a.date_start <= v_today and a.date_end >= v_today - 45
  ),
  missing as (
    select due.* from due
    where due.deadline_at > p_now - interval '7 days' and due.deadline_at <= p_now
      and not exists (select 1 from app_public.absence_documents doc
                      join app_public.absences same on same.id = doc.absence_id
                      where same.employee_id = due.employee_id and same.type_id = due.type_id)
  ),
  claimed as (
    insert into app_private.reminders_sent (absence_id, kind, deadline_at, sent_at, job_run_id)
    select m.id, 'missing_document', m.deadline_at, p_now, nullif(current_setting('app.job_run_id', true), '')::bigint
    from missing m
    on conflict (absence_id, kind) do nothing
    returning absence_id
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'absence_id', m.id, 'employee_id', m.employee_id, 'deadline_at', m.deadline_at,
           'line', format('%s : « %s » %s, justificatif attendu au plus tard le %s à %s',
                          app_hidden.employee_name(m.employee_id), m.type_name, m.period_fr,
                          app_hidden.fr_date(app_hidden.business_date(m.deadline_at)),
                          to_char(m.deadline_at at time zone app_hidden.business_timezone(), 'HH24:MI')))
           order by m.deadline_at, m.id), '[]'::jsonb)
    into v_run
  from missing m join claimed c on c.absence_id = m.id;

  for r in select (x ->> 'absence_id')::int as absence_id, (x ->> 'deadline_at')::timestamptz as deadline_at
           from jsonb_array_elements(v_run) x
  loop
    select * into v_absence from app_public.absences a where a.id = r.absence_id;
    perform app_private.absence_notify_employee(v_absence, 'Justificatif à transmettre',
      format('Le justificatif de votre absence %s était attendu au plus tard le %s à %s. Déposez-le sur l’absence ou transmettez-le au service RH.',
             app_hidden.absence_subject(v_absence), app_hidden.fr_date(app_hidden.business_date(r.deadline_at)),
             to_char(r.deadline_at at time zone app_hidden.business_timezone(), 'HH24:MI')),
      'warning');
    v_sent := v_sent + 1;
  end loop;

  -- One list per RH n1 / RH n2 account whose perimeter covers the employees concerned.
  for r in
    with run as (
      select (x ->> 'absence_id')::int as absence_id, (x ->> 'employee_id')::int as employee_id, x ->> 'line' as line,
             o as position
      from jsonb_array_elements(v_run) with ordinality as y(x, o)
    ),
    hr as (
      select ra.account_id,
             bool_or(rae.establishment_id is null) as whole,
             array_agg(rae.establishment_id) filter (where rae.establishment_id is not null) as establishments
      from app_public.role_attributions ra
      join app_public.accounts ac on ac.id = ra.account_id and ac.is_active
      left join app_public.role_attribution_establishments rae on rae.attribution_id = ra.id
      where ra.role_id in (select ro.id from app_public.roles ro where ro.name in ('RH n1', 'RH n2'))
        and app_hidden.date_in(v_today, ra.start_date, ra.end_date)
      group by ra.account_id
    )
    select hr.account_id, string_agg('- ' || run.line, E'\n' order by run.position) as lines, count(*) as n
    from hr
    join run on hr.whole
             or run.employee_id in (select app_hidden.employees_of_establishments(hr.establishments, v_today))
    group by hr.account_id
    order by hr.account_id
  loop
    perform app_private.notify(r.account_id, 'Justificatifs manquants',
      format(E'%s justificatif(s) manquant(s) à la date limite :\n%s', r.n, r.lines), 'warning', null, null);
    v_sent := v_sent + 1;
  end loop;
  -- The number of notifications sent (employees and HR), as the worker reports it.
  return v_sent;
end;
$$;
