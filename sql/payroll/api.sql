-- Payroll consultation (SPEC, Permissions rule 8): GET /api/payroll/options/ and
-- GET /api/payroll/?month=YYYY-MM&establishment=&search=&page=, with employee.view_payroll
-- (Admin, RH n1, RH n2, Service Paie) on its perimeter. Read only.
--
-- One line per contract active in the month (for the employees of the perimeter; with an
-- establishment, those attached to it: main, secondary workplace or team at the month's end):
--   * contract: type, dates, weekly hours, job title;
--   * period: the days of the month covered by the contract;
--   * planned_hours: the planned day (app_hidden.planned_slots: template or day
--     modification, net of unpaid breaks) summed over those days;
--   * absence_hours: per day, the planned minutes covered by absences, capped by the planned
--     minutes of the day: a whole day covers the whole planned day, a half-day half of it,
--     an hourly absence its hours; only validated absences (and those whose cancellation is
--     requested, still granted) count;
--   * worked_hours = planned_hours - absence_hours;
--   * absences: grouped by reason, each with its dates and quantity within the period (the
--     absence's counted quantity when it lies entirely in the period; otherwise the days of
--     the period counted on the establishment's base, Sundays and public holidays excluded,
--     a half-day counting half). Never comments, decision reasons or documents;
--   * counters: the balances of the employee's counters of that civil year, from the journal's
--     movements written before the end of the month; and, for each, the figures of « Mes compteurs »
--     (issue 27 point 5, app_private.counter_year_facts, the same function as GET /api/counters/,
--     computed on today's journal): how it acquires, still to come, carried over and until when,
--     what the year end will carry over or lose.

-- Counter balances of employees for a year, from the movements written before p_at.
create or replace function app_private.counter_balances_at(p_employees int[], p_year int, p_at timestamptz)
returns table (employee_id int, code text, name text, unit text, sort_order smallint,
               acquired numeric, taken numeric, planned numeric, remaining numeric)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select c.employee_id, c.code, k.name, k.unit, k.position,
         coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0),
         coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0),
         coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0),
         coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0)
           - coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0)
           - coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0)
  from app_public.counters c
  join app_public.counter_kinds k on k.code = c.code
  left join app_private.counter_movements m on m.counter_id = c.id and m.created_at < p_at
  where c.employee_id = any (p_employees) and c.year = p_year
  group by c.id, c.employee_id, c.code, k.name, k.unit, k.position;
$$;

create or replace function app_hidden.require_payroll() returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('employee.view_payroll') then
    perform app_hidden.forbidden('Vous n’avez pas accès à la consultation de la paie.', 'WF550');
  end if;
end;
$$;

-- GET /api/payroll/options/
create or replace function app_public.payroll_options() returns jsonb
language plpgsql stable as $$
declare
  v_scope int[];
begin
  perform app_hidden.require_payroll();
  v_scope := app_hidden.perimeter_establishment_ids('employee.view_payroll');
  return jsonb_build_object('establishments', coalesce(
    (select jsonb_agg(jsonb_build_object('id', e.id, 'name', e.name) order by lower(e.name), e.id)
     from app_public.establishments e where app_hidden.in_scope(e.id, v_scope)), '[]'::jsonb));
end;
$$;
comment on function app_public.payroll_options() is
'SPEC Documents and other routes and Permissions rule 8, GET /api/payroll/options/: the establishments
the caller may consult in payroll (employee.view_payroll perimeter; 403 without the permission).';

-- The payroll month, written once for GET /api/payroll/ (a page) and its export (every line,
-- p_limit null): one statement computes the count and the lines (no query per line). Called
-- by the security definer functions below (the balances come from the journal).
create or replace function app_hidden.payroll_month(p_month text, p_establishment int, p_search text,
                                                    p_limit int, p_offset int)
returns jsonb
language plpgsql stable as $$
declare
  v_month_start date;
  v_month_end date;
  v_month_next timestamptz;
  v_scope int[];
begin
  perform app_hidden.require_payroll();
  if p_month is null or btrim(p_month) = '' then
    perform app_hidden.invalid('month', 'Le mois est obligatoire (format AAAA-MM, par exemple 2026-11).', 'WV550');
  end if;
  if p_month !~ '^[0-9]{4}-(0[1-9]|1[0-2])$' then
    perform app_hidden.invalid('month', 'Mois invalide : format attendu AAAA-MM (par exemple 2026-11).', 'WV550');
  end if;
  v_month_start := (p_month || '-01')::date;
  v_month_end := (v_month_start + interval '1 month')::date - 1;
  v_month_next := (v_month_end + 1)::timestamp at time zone app_hidden.business_timezone();
  v_scope := app_hidden.perimeter_establishment_ids('employee.view_payroll');
  if p_establishment is not null
     and (not app_hidden.in_scope(p_establishment, v_scope)
          or not exists (select 1 from app_public.establishments e where e.id = p_establishment)) then
    perform app_hidden.forbidden('Vous n’êtes pas autorisé à consulter la paie de cet établissement.', 'WF551');
  end if;

  return (
    with perimeter as (
      select x.id from app_hidden.perimeter_employee_ids('employee.view_payroll') x(id)
    ),
    establishment_employees as (
      select x.id from app_hidden.employees_of_establishments(array[p_establishment], v_month_end) x(id)
      where p_establishment is not null
    ),
    lines as (
      select c.id as contract_id, c.employee_id, e.first_name, e.last_name,
             greatest(c.start_date, v_month_start) as slice_start,
             least(coalesce(c.end_date, v_month_end), v_month_end) as slice_end
      from app_public.contracts c
      join app_public.employees e on e.id = c.employee_id
      where c.employee_id in (select p.id from perimeter p)
        and (p_establishment is null or c.employee_id in (select ee.id from establishment_employees ee))
        and c.start_date <= v_month_end and (c.end_date is null or c.end_date >= v_month_start)
        and (coalesce(btrim(p_search), '') = ''
             or e.first_name || ' ' || e.last_name ilike app_hidden.like_pattern(p_search)
             or e.last_name || ' ' || e.first_name ilike app_hidden.like_pattern(p_search))
    ),
    page as (
      select l.*, row_number() over (order by lower(l.last_name), lower(l.first_name), l.employee_id,
                                              l.slice_start, l.contract_id) as ord
      from lines l
      order by ord
      limit p_limit offset p_offset
    ),
    days as (
      select p.contract_id, d::date as day,
             app_hidden.slots_minutes(app_hidden.planned_slots(p.employee_id, d::date)) as planned
      from page p, generate_series(p.slice_start, p.slice_end, interval '1 day') d
    ),
    absences as (
      select p.contract_id, p.slice_start, p.slice_end, a.id, a.type_id, a.date_start, a.date_end,
             a.start_half, a.end_half, a.start_time, a.end_time, a.counted_quantity,
             t.code as type_code, t.name as type_name, t.unit,
             app_hidden.employee_count_base(p.employee_id) as count_base
      from page p
      join app_public.absences a on a.employee_id = p.employee_id
      join app_public.absence_types t on t.id = a.type_id
      where a.status in ('validated', 'cancellation_requested')
        and a.date_start <= p.slice_end and a.date_end >= p.slice_start
    ),
    absence_days as (
      select ab.contract_id, ab.id as absence_id, d::date as day,
             case when ab.start_time is null
                  then ((case when d::date = ab.date_start and ab.start_half = 'afternoon' then 0 else 1 end)
                        + (case when d::date = ab.date_end and ab.end_half = 'morning' then 0 else 1 end)) / 2.0 end as share,
             case when ab.start_time is not null then app_hidden.span_minutes(ab.start_time, ab.end_time) end as minutes
      from absences ab,
           generate_series(greatest(ab.date_start, ab.slice_start), least(ab.date_end, ab.slice_end), interval '1 day') d
    ),
    day_totals as (
      select dy.contract_id, dy.day, dy.planned,
             least(dy.planned,
                   coalesce(sum(case when ad.minutes is not null then least(ad.minutes, dy.planned)
                                     else dy.planned * ad.share end), 0)) as absent
      from days dy
      left join absence_days ad on ad.contract_id = dy.contract_id and ad.day = dy.day
      group by dy.contract_id, dy.day, dy.planned
    ),
    hours as (
      select dt.contract_id, sum(dt.planned) as planned, sum(dt.absent) as absent
      from day_totals dt group by dt.contract_id
    ),
    absence_quantities as (
      select ab.*,
             case when ab.date_start >= ab.slice_start and ab.date_end <= ab.slice_end and ab.counted_quantity is not null
                    then ab.counted_quantity
                  when ab.unit = 'hour'
                    then coalesce(ab.counted_quantity, app_hidden.hours_between(ab.start_time, ab.end_time))
                  -- The share of the month, counted by the absences' own rule (base of the
                  -- establishment, Sundays and public holidays excluded, half-days at the bounds).
                  else (select coalesce(sum(c.quantity), 0)
                        from app_hidden.counted_days(ab.count_base,
                               greatest(ab.date_start, ab.slice_start), least(ab.date_end, ab.slice_end),
                               case when ab.date_start >= ab.slice_start then ab.start_half end,
                               case when ab.date_end <= ab.slice_end then ab.end_half end) c) end as quantity
      from absences ab
    ),
    reasons as (
      select aq.contract_id, aq.type_id, aq.type_code, aq.type_name, aq.unit, sum(aq.quantity) as quantity,
             jsonb_agg(jsonb_build_object(
               'date_start', greatest(aq.date_start, aq.slice_start),
               'date_end', least(aq.date_end, aq.slice_end),
               'start_half', case when aq.date_start >= aq.slice_start then aq.start_half end,
               'end_half', case when aq.date_end <= aq.slice_end then aq.end_half end,
               'start_time', to_char(aq.start_time, 'HH24:MI'),
               'end_time', to_char(aq.end_time, 'HH24:MI'),
               'quantity', app_hidden.fmt_quantity(aq.quantity)) order by aq.date_start, aq.id) as items
      from absence_quantities aq
      group by aq.contract_id, aq.type_id, aq.type_code, aq.type_name, aq.unit
    ),
    reason_lists as (
      select r.contract_id,
             jsonb_agg(jsonb_build_object('type', r.type_id, 'type_code', r.type_code, 'type_name', r.type_name,
                                          'unit', r.unit, 'quantity', app_hidden.fmt_quantity(r.quantity),
                                          'absences', r.items) order by r.type_code) as list
      from reasons r group by r.contract_id
    ),
    counters as (
      select * from app_private.counter_balances_at(array(select distinct p.employee_id from page p),
                                                    extract(year from v_month_start)::int, v_month_next)
    ),
    counter_lists as (
      select c.employee_id,
             jsonb_agg(jsonb_build_object('code', c.code, 'name', c.name, 'unit', c.unit,
                                          'acquired', app_hidden.fmt_quantity(c.acquired),
                                          'taken', app_hidden.fmt_quantity(c.taken),
                                          'planned', app_hidden.fmt_quantity(c.planned),
                                          'remaining', app_hidden.fmt_quantity(c.remaining))
                       -- The counter's year as « Mes compteurs » shows it (issue 27 point 5): the same
                       -- function as GET /api/counters/, on today's journal.
                       || app_private.counter_year_facts(k.id, app_hidden.today())
                       order by c.sort_order, c.code) as list
      from counters c
      join app_public.counters k on k.employee_id = c.employee_id and k.code = c.code
                                and k.year = extract(year from v_month_start)::int
      group by c.employee_id
    )
    select jsonb_build_object(
      'count', (select count(*) from lines),
      'results', coalesce((
        select jsonb_agg(jsonb_build_object(
                 'employee', p.employee_id,
                 'employee_name', p.first_name || ' ' || p.last_name,
                 'main_establishment', e.main_establishment_id,
                 'main_establishment_name', est.name,
                 'month', p_month,
                 'contract', jsonb_build_object('id', c.id, 'type', c.contract_type_id, 'type_code', ct.code,
                                                'type_name', ct.name, 'start_date', c.start_date, 'end_date', c.end_date,
                                                'trial_end_date', c.trial_end_date, 'job_title', c.job_title,
                                                'weekly_hours', app_hidden.fmt_quantity(c.weekly_hours)),
                 'period', jsonb_build_object('start', p.slice_start, 'end', p.slice_end),
                 'planned_hours', app_hidden.fmt_quantity(round(coalesce(h.planned, 0) / 60.0, 2)),
                 'absence_hours', app_hidden.fmt_quantity(round(coalesce(h.absent, 0) / 60.0, 2)),
                 'worked_hours', app_hidden.fmt_quantity(round((coalesce(h.planned, 0) - coalesce(h.absent, 0)) / 60.0, 2)),
                 'absences', coalesce(rl.list, '[]'::jsonb),
                 'counters', coalesce(cl.list, '[]'::jsonb)) order by p.ord)
        from page p
        join app_public.contracts c on c.id = p.contract_id
        join app_public.contract_types ct on ct.id = c.contract_type_id
        join app_public.employees e on e.id = p.employee_id
        left join app_public.establishments est on est.id = e.main_establishment_id
        left join hours h on h.contract_id = p.contract_id
        left join reason_lists rl on rl.contract_id = p.contract_id
        left join counter_lists cl on cl.employee_id = p.employee_id), '[]'::jsonb)));
end;
$$;

-- GET /api/payroll/: a page of 25 lines.
create or replace function app_public.payroll_lines(p_month text, p_establishment int default null, p_search text default null,
                                         p_page int default 1, p_page_size int default 25)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_hidden.payroll_month(p_month, p_establishment, p_search,
                                  app_hidden.page_limit(p_page_size), app_hidden.page_offset(p_page, p_page_size));
end;
$$;
comment on function app_public.payroll_lines(text, integer, text, integer, integer) is
'SPEC Permissions rule 8 and Limits, GET /api/payroll/?month=: one page (25 by default) of payroll lines
per contract active in the month, for the employee.view_payroll perimeter or an authorised
establishment: planned, absence and worked hours, absences by reason (never comments, decision reasons
or documents) and counter balances.';

-- GET /api/payroll/export/?month=&establishment=&search=&format=: every line of the month, one
-- row per contract, in the list's order. Like the list, never a comment, a decision reason or
-- a document: the absences are their reasons' totals (« CP : 2,00 j ; RTT : 0,50 j »).
-- The counters are one text column per figure, each listing the counters (« CP : 8,5 jours ; RTT : 2 jours »),
-- written from the line's JSON (app_hidden.payroll_counters_text): no figure computed twice.
create or replace function app_hidden.payroll_counters_text(p_counters jsonb, p_figure text) returns text
language sql stable as $$
  select string_agg(format('%s : %s', c ->> 'code',
           case p_figure
             when 'acquisition' then case c ->> 'acquisition' when 'monthly' then 'mensuelle'
                                                              when 'opening' then 'à l’ouverture'
                                                              else 'à la main ou par import' end
             when 'carried_over' then app_hidden.quantity_fr((c ->> 'carried_over')::numeric, c ->> 'unit')
               || case when c ->> 'carry_over_expires_on' is not null
                       then format(' jusqu’au %s (expirerait : %s)',
                                   to_char((c ->> 'carry_over_expires_on')::date, 'DD/MM/YYYY'),
                                   app_hidden.quantity_fr((c ->> 'carry_over_expiring')::numeric, c ->> 'unit'))
                       else '' end
             when 'year_end' then case when jsonb_typeof(c -> 'year_end') = 'object'
               then format('reporte %s%s, perd %s',
                           app_hidden.quantity_fr((c -> 'year_end' ->> 'carries_over')::numeric, c ->> 'unit'),
                           case when c -> 'year_end' ->> 'carry_over_until' is not null
                                then format(' jusqu’au %s', to_char((c -> 'year_end' ->> 'carry_over_until')::date, 'DD/MM/YYYY'))
                                else '' end,
                           app_hidden.quantity_fr((c -> 'year_end' ->> 'expires')::numeric, c ->> 'unit'))
               else 'année close ou sans règle' end
             else app_hidden.quantity_fr((c ->> p_figure)::numeric, c ->> 'unit') end), ' ; ' order by ord)
  from jsonb_array_elements(p_counters) with ordinality as x(c, ord);
$$;

drop function if exists app_public.payroll_export(text, int, text) cascade;
create or replace function app_public.payroll_export(p_month text, p_establishment int default null, p_search text default null)
returns table (employee int, employee_name text, main_establishment_name text, contract_type text,
               contract_start date, contract_end date, job_title text, weekly_hours numeric,
               period_start date, period_end date, planned_hours numeric, absence_hours numeric, worked_hours numeric,
               absences text, counters_acquisition text, counters_acquired text, counters_remaining text,
               counters_to_come text, counters_carried_over text, counters_year_end text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select (l ->> 'employee')::int, l ->> 'employee_name', l ->> 'main_establishment_name',
         l -> 'contract' ->> 'type_name', (l -> 'contract' ->> 'start_date')::date, (l -> 'contract' ->> 'end_date')::date,
         l -> 'contract' ->> 'job_title', (l -> 'contract' ->> 'weekly_hours')::numeric,
         (l -> 'period' ->> 'start')::date, (l -> 'period' ->> 'end')::date,
         (l ->> 'planned_hours')::numeric, (l ->> 'absence_hours')::numeric, (l ->> 'worked_hours')::numeric,
         (select string_agg(format('%s : %s %s', r ->> 'type_name', replace(r ->> 'quantity', '.', ','),
                                   case r ->> 'unit' when 'hour' then 'h' else 'j' end), ' ; ' order by ord)
          from jsonb_array_elements(l -> 'absences') with ordinality as x(r, ord)),
         app_hidden.payroll_counters_text(l -> 'counters', 'acquisition'),
         app_hidden.payroll_counters_text(l -> 'counters', 'acquired'),
         app_hidden.payroll_counters_text(l -> 'counters', 'remaining'),
         app_hidden.payroll_counters_text(l -> 'counters', 'to_come'),
         app_hidden.payroll_counters_text(l -> 'counters', 'carried_over'),
         app_hidden.payroll_counters_text(l -> 'counters', 'year_end')
  from jsonb_array_elements(app_hidden.payroll_month(p_month, p_establishment, p_search, null, 0) -> 'results')
       with ordinality as lines(l, n)
  order by n;
$$;
comment on function app_public.payroll_export(text, integer, text) is
'SPEC Permissions rule 8 and issue 16 exports, GET /api/payroll/export/?month=&format=: every payroll line of the month
(the list''s rules and order), one row per contract, for the CSV or XLSX file; absences are their reasons'' totals, never
comments, decision reasons or documents; the counters, one column per figure of « Mes compteurs » (issue 27 point 5).';
