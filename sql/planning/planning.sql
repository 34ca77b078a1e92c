-- GET /api/planning/: the cells of a window (at most 62 days) for the caller's employees,
-- built set-wise in one statement (dates × employees joined to templates, day
-- modifications, absences, pending requests and on-call periods).
-- The answer is json, not jsonb, written as text (app_hidden.json_text and its siblings):
-- docs/architecture.md, Performance notes.

-- On-call periods overlapping the window.
create index if not exists on_call_periods_interval_idx on app_public.on_call_periods (end_at, start_at);
-- Pending requests of a window (the planning's pending_request).
create index if not exists shift_change_requests_pending_date_idx on app_public.shift_change_requests (date, employee_id)
  where status = 'pending';

-- On-call periods of the employees' teams, per employee and day: the periods whose
-- establishments meet the establishments of a team the employee belongs to that day, and
-- whose interval [start, end) meets the day (business time zone). Security definer: an
-- employee reads who is on call for their teams without reading the on-call screens.
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_hidden.team_on_call_by_day(p_employee_ids int[], p_from date, p_to date)
returns table (employee_id int, date date, on_call jsonb)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan rows 100 as $$
#variable_conflict use_column
begin
  -- Most windows meet no on-call period: then there is nothing to join.
  if not exists (select 1 from app_public.on_call_periods op
                 where op.end_at > p_from::timestamp at time zone app_hidden.business_timezone()
                   and op.start_at < (p_to + 1)::timestamp at time zone app_hidden.business_timezone()) then
    return;
  end if;
  return query
    with days as (
      select d::date as date,
             d::date::timestamp at time zone app_hidden.business_timezone() as day_start,
             (d::date + 1)::timestamp at time zone app_hidden.business_timezone() as day_end
      from generate_series(p_from, p_to, interval '1 day') d
    ),
    periods as (
      select op.id, op.account_id, op.start_at, op.end_at, op.comment,
             coalesce(e.first_name || ' ' || e.last_name, a.username) as name,
             array_agg(ope.establishment_id order by ope.establishment_id) as establishment_ids
      from app_public.on_call_periods op
      join app_public.on_call_period_establishments ope on ope.period_id = op.id
      join app_public.accounts a on a.id = op.account_id
      left join app_public.employees e on e.id = a.employee_id
      where op.end_at > p_from::timestamp at time zone app_hidden.business_timezone()
        and op.start_at < (p_to + 1)::timestamp at time zone app_hidden.business_timezone()
      group by op.id, a.username, e.first_name, e.last_name
    ),
    team_days as (
      select ta.employee_id, d.date, d.day_start, d.day_end, array_agg(distinct te.establishment_id) as establishment_ids
      from app_public.team_assignments ta
      join app_public.team_establishments te on te.team_id = ta.team_id
      join days d on app_hidden.date_in(d.date, ta.start_date, ta.end_date)
      where ta.employee_id = any (p_employee_ids)
      group by ta.employee_id, d.date, d.day_start, d.day_end
    )
    select t.employee_id, t.date,
           jsonb_agg(jsonb_build_object('id', p.id, 'account', p.account_id, 'name', p.name,
                                        'start', p.start_at, 'end', p.end_at,
                                        'establishments', to_jsonb(p.establishment_ids), 'comment', p.comment)
                     order by p.start_at, p.id)
    from team_days t
    join periods p on p.establishment_ids && t.establishment_ids
                  and p.start_at < t.day_end and p.end_at > t.day_start
    group by t.employee_id, t.date;
end;
$$;

-- JSON text of a value (null → null), for the planning's answer written as text
-- (docs/architecture.md, Performance notes).
-- Stable, as to_json and to_char are: an immutable wrapper would not be inlined.
create or replace function app_hidden.json_text(p text) returns text
language sql stable parallel safe as $$
  select coalesce(to_json(p)::text, 'null');
$$;
create or replace function app_hidden.json_hm(p time) returns text
language sql stable parallel safe as $$
  select coalesce('"' || to_char(p, 'HH24:MI') || '"', 'null');
$$;
create or replace function app_hidden.json_date(p date) returns text
language sql stable parallel safe as $$
  select coalesce('"' || to_char(p, 'YYYY-MM-DD') || '"', 'null');
$$;
create or replace function app_hidden.json_int(p bigint) returns text
language sql stable parallel safe as $$
  select coalesce(p::text, 'null');
$$;
create or replace function app_hidden.json_bool(p boolean) returns text
language sql stable parallel safe as $$
  select coalesce(p::text, 'null');
$$;

-- The cells of the employees over [p_from, p_to]. Runs with the caller's row-level security
-- (the caller chose the employees it may read).
--   * the planned day: the day modification, else the template valid that day;
--   * a granted absence (validated, or cancellation_requested: still drawn) prevails: a
--     whole-day absence is one absence block; a half-day absence gives two blocks (the
--     absence on its half, the worked day next to it with absence null); an hourly absence
--     is a block among the worked slots, by time;
--   * pending_request: on an absence block, its requested cancellation; on the worked or rest
--     blocks (or, in a cell without any, on the absence blocks), a pending absence request
--     of the day, else the pending day-change request of the day;
--   * on_call: the on-call periods of the employee's teams that meet the day.
-- force_generic_plan: docs/architecture.md, Performance notes.
-- Text, not json: the service sends it as is (app_public.planning_read_text), and a cast to json
-- would parse the whole answer once more only to check it.
drop function if exists app_hidden.planning_cells(int[], date, date);
create or replace function app_hidden.planning_cells(p_employee_ids int[], p_from date, p_to date) returns text
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
begin
  return (
    with days as (
      select d::date as date from generate_series(p_from, p_to, interval '1 day') d
    ),
    emp as (
      select e.id, e.first_name, e.last_name, e.main_establishment_id,
             row_number() over (order by lower(e.last_name), lower(e.first_name), e.id) as ord
      from app_public.employees e
      where e.id = any (p_employee_ids)
    ),
    cells as (
      select emp.id as employee_id, emp.ord, days.date from emp cross join days
    ),
    cell_template as (
      select distinct on (c.employee_id, c.date) c.employee_id, c.date, t.id as template_id
      from cells c
      join app_public.planning_templates t
        on t.employee_id = c.employee_id and t.valid_from <= c.date and (t.valid_to is null or t.valid_to >= c.date)
      order by c.employee_id, c.date, t.valid_from desc
    ),
    template_day as (
      select ts.template_id, ts.weekday, array_agg(app_hidden.post_slot(p) order by ts.position) as slots
      from app_public.planning_template_slots ts
      join app_public.posts p on p.id = ts.post_id
      where ts.template_id in (select ct.template_id from cell_template ct)
      group by ts.template_id, ts.weekday
    ),
    modification as (
      select m.* from app_public.day_modifications m
      where m.employee_id = any (p_employee_ids) and m.date between p_from and p_to
    ),
    absence_day as (
      select c.employee_id, c.date, a.id, a.type_id, t.code as type_code, t.name as type_name,
             a.date_start, a.date_end, a.start_half, a.end_half, a.start_time, a.end_time, a.comment, a.status,
             case when a.start_time is not null then 'hours'
                  when c.date = a.date_start and a.start_half is not distinct from 'afternoon' then 'afternoon'
                  when c.date = a.date_end and a.end_half is not distinct from 'morning' then 'morning'
                  else 'day' end as part
      from app_public.absences a
      join app_public.absence_types t on t.id = a.type_id
      join cells c on c.employee_id = a.employee_id and c.date between a.date_start and a.date_end
      where a.employee_id = any (p_employee_ids) and a.date_start <= p_to and a.date_end >= p_from
        and a.status in ('pending', 'validated', 'cancellation_requested')
    ),
    granted as (
      -- whole: the granted absences of the cell cover the whole day (one whole-day absence, or
      -- a morning and an afternoon): a window over the cell, not a join on an aggregate.
      select a.*,
             coalesce(bool_or(a.part in ('day', 'morning')) over w and bool_or(a.part in ('day', 'afternoon')) over w,
                      false) as whole
      from absence_day a
      where a.status in ('validated', 'cancellation_requested')
      window w as (partition by a.employee_id, a.date)
    ),
    pending_absence as (
      select distinct on (a.employee_id, a.date) a.employee_id, a.date, a.id
      from absence_day a
      where a.status = 'pending'
      order by a.employee_id, a.date, a.id
    ),
    pending_shift_change as (
      select r.employee_id, r.date, r.id
      from app_public.shift_change_requests r
      where r.employee_id = any (p_employee_ids) and r.date between p_from and p_to and r.status = 'pending'
    ),
    on_call as (
      select * from app_hidden.team_on_call_by_day(p_employee_ids, p_from, p_to)
    ),
    -- Everything a cell's blocks carry, in one row per cell: the planned day (the day
    -- modification, else the template), whether granted absences cover the whole day, the
    -- pending request of the day and the on-call periods (joined once here, not per kind of
    -- block).
    cell as (
      select c.employee_id, c.ord, c.date,
             coalesce(m.slots, td.slots, '{}'::app_public.slot[]) as slots,
             m.id is not null as modified,
             coalesce(m.is_remote, false) as day_remote,
             coalesce(m.is_offsite, false) as day_offsite,
             m.comment,
             coalesce(cv.whole, false) as whole,
             coalesce(oc.on_call::text, '[]') as on_call,
             case when pa.id is not null then '{"kind":"absence","id":' || pa.id || ',"is_cancellation":false}'
                  when ps.id is not null then '{"kind":"shift_change","id":' || ps.id || ',"is_cancellation":false}'
                  else 'null'
             end as pending
      from cells c
      left join cell_template ct on ct.employee_id = c.employee_id and ct.date = c.date
      left join template_day td on td.template_id = ct.template_id and td.weekday = extract(isodow from c.date)::int
      left join modification m on m.employee_id = c.employee_id and m.date = c.date
      left join (select distinct g.employee_id, g.date, g.whole from granted g) cv
        on cv.employee_id = c.employee_id and cv.date = c.date
      left join pending_absence pa on pa.employee_id = c.employee_id and pa.date = c.date
      left join pending_shift_change ps on ps.employee_id = c.employee_id and ps.date = c.date
      left join on_call oc on oc.employee_id = c.employee_id and oc.date = c.date
    ),
    blocks as (
      -- granted absences
      select g.employee_id, pr.ord, g.date,
             case g.part when 'afternoon' then 2 when 'hours' then 1 else 0 end as k1,
             coalesce(extract(epoch from g.start_time)::int / 60, 0) as k2,
             -- at the same start time, the worked slot before the hourly absence
             1 as k3,
             '{"kind":"absence","post":null,"post_code":null,"post_label":null,"establishment":null'
             || ',"start_time":' || app_hidden.json_hm(g.start_time) || ',"end_time":' || app_hidden.json_hm(g.end_time)
             || ',"break_start_time":null,"break_end_time":null,"break_paid":false'
             || ',"minutes":' || app_hidden.json_int(case when g.start_time is not null
                                                         then app_hidden.span_minutes(g.start_time, g.end_time) end)
             || ',"is_remote":false,"is_offsite":false,"modified":false,"comment":null'
             || ',"absence":{"id":' || g.id || ',"type":' || g.type_id || ',"type_code":' || app_hidden.json_text(g.type_code)
             || ',"type_name":' || app_hidden.json_text(g.type_name) || ',"date_start":' || app_hidden.json_date(g.date_start)
             || ',"date_end":' || app_hidden.json_date(g.date_end) || ',"start_half":' || app_hidden.json_text(g.start_half)
             || ',"end_half":' || app_hidden.json_text(g.end_half) || ',"start_time":' || app_hidden.json_hm(g.start_time)
             || ',"end_time":' || app_hidden.json_hm(g.end_time) || ',"comment":' || app_hidden.json_text(g.comment)
             || ',"status":' || app_hidden.json_text(g.status) || ',"part":' || app_hidden.json_text(g.part) || '}'
             || ',"pending_request":' || case when g.status = 'cancellation_requested'
                                              then '{"kind":"absence","id":' || g.id || ',"is_cancellation":true}'
                                              when g.whole then pr.pending
                                              else 'null' end
             || ',"on_call":' || pr.on_call || '}' as block
      from granted g
      join cell pr on pr.employee_id = g.employee_id and pr.date = g.date
      union all
      -- worked slots of the planned day (unnested once: each field a column, not an element
      -- extracted from the array at each use)
      select p.employee_id, p.ord, p.date, 1, extract(epoch from sl.start_time)::int / 60, 0,
             '{"kind":"work","post":' || app_hidden.json_int(sl.post_id)
             || ',"post_code":' || app_hidden.json_text(po.code) || ',"post_label":' || app_hidden.json_text(po.label)
             || ',"establishment":' || app_hidden.json_int(sl.establishment_id)
             || ',"start_time":' || app_hidden.json_hm(sl.start_time)
             || ',"end_time":' || app_hidden.json_hm(sl.end_time)
             || ',"break_start_time":' || app_hidden.json_hm(sl.break_start_time)
             || ',"break_end_time":' || app_hidden.json_hm(sl.break_end_time)
             || ',"break_paid":' || app_hidden.json_bool(coalesce(sl.break_paid, false))
             || ',"minutes":' || app_hidden.json_int(app_hidden.slot_minutes(
                                   row(sl.start_time, sl.end_time, sl.break_start_time, sl.break_end_time, sl.break_paid,
                                       sl.post_id, sl.establishment_id, sl.is_remote)::app_public.slot))
             || ',"is_remote":' || app_hidden.json_bool(coalesce(sl.is_remote, false) or p.day_remote)
             || ',"is_offsite":' || app_hidden.json_bool(p.day_offsite)
             || ',"modified":' || app_hidden.json_bool(p.modified) || ',"comment":' || app_hidden.json_text(p.comment)
             || ',"absence":null,"pending_request":' || p.pending || ',"on_call":' || p.on_call || '}'
      from cell p
      cross join lateral unnest(p.slots) as sl(start_time, end_time, break_start_time, break_end_time, break_paid,
                                               post_id, establishment_id, is_remote)
      left join app_public.posts po on po.id = sl.post_id
      where not p.whole
      union all
      -- a rest day
      select p.employee_id, p.ord, p.date, 1, 0, 0,
             '{"kind":"rest","post":null,"post_code":null,"post_label":null,"establishment":null'
             || ',"start_time":null,"end_time":null,"break_start_time":null,"break_end_time":null'
             || ',"break_paid":false,"minutes":0,"is_remote":false,"is_offsite":false'
             || ',"modified":' || app_hidden.json_bool(p.modified) || ',"comment":' || app_hidden.json_text(p.comment)
             || ',"absence":null,"pending_request":' || p.pending || ',"on_call":' || p.on_call || '}'
      from cell p
      where cardinality(p.slots) = 0 and not p.whole
    ),
    -- The blocks are sorted once and each cell's aggregate keeps that order: with
    -- string_agg(... order by), each of the 6 000 cells started a sort of its own (PostgreSQL
    -- 15), the larger part of the statement's time. employee_id follows ord in the sort key so
    -- that the grouping reads the sorted input as it comes (a hashed grouping also keeps the
    -- input order within a group).
    cell_json as (
      select b.ord, b.date,
             '{"employee":' || b.employee_id || ',"date":' || app_hidden.json_date(b.date)
             || ',"blocks":[' || string_agg(b.block, ',') || ']}' as cell
      from (select * from blocks x order by x.ord, x.date, x.employee_id, x.k1, x.k2, x.k3) b
      group by b.ord, b.date, b.employee_id
    )
    select ('{"from":' || app_hidden.json_date(p_from) || ',"to":' || app_hidden.json_date(p_to)
            || ',"employees":[' || coalesce((select string_agg(
                 '{"id":' || e.id || ',"name":' || app_hidden.json_text(e.first_name || ' ' || e.last_name)
                 || ',"first_name":' || app_hidden.json_text(e.first_name) || ',"last_name":' || app_hidden.json_text(e.last_name)
                 || ',"main_establishment":' || app_hidden.json_int(e.main_establishment_id) || '}', ',' order by e.ord)
                 from emp e), '')
            || '],"cells":[' || coalesce((select string_agg(c.cell, ',' order by c.ord, c.date) from cell_json c), '')
            || '],"holidays":[' || coalesce((select string_agg(
                 '{"date":' || app_hidden.json_date(h.day) || ',"name":' || app_hidden.json_text(h.name) || '}', ',' order by h.day)
                 from generate_series(extract(year from p_from)::int, extract(year from p_to)::int) y,
                      lateral app_public.public_holidays(y) h
                 where h.day between p_from and p_to), '')
            || ']}')
  );
end;
$$;

-- GET /api/planning/?from=&to=&employee=&establishment=&team=
-- Without from/to: the current week (Monday to Sunday); with only one bound, the 7 days
-- from it (or up to it). At most 62 days. The branch depends on the directory permission,
-- never on the size of the perimeter: a holder of employee.view_employee_directory reads
-- the absences.view_absence_queue perimeter (and their own record); any other account
-- reads only its own cells. employee narrows to one readable employee (else 404).
-- establishment and team narrow the readable employees (the team planning of a month): those
-- attached to the establishment (main, secondary, or team of the day), those assigned to the
-- team, on the day of the window nearest today.
-- planning_read_text is what the route calls: the JSON text as written, which the service
-- passes through (a month of 200 employees is 2.5 MB). planning_read is the same answer typed
-- json, for SQL callers and GraphQL.
drop function if exists app_public.planning_read(date, date, int);
create or replace function app_public.planning_read_text(p_from date default null, p_to date default null, p_employee int default null,
                                                         p_establishment int default null, p_team int default null)
returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := app_hidden.today();
  v_from date;
  v_to date;
  v_me int := app_hidden.current_employee_id();
  v_ids int[];
  v_on date;
begin
  if p_from is null and p_to is null then
    v_from := date_trunc('week', v_today::timestamp)::date;
    v_to := v_from + 6;
  elsif p_to is null then
    v_from := p_from;
    v_to := p_from + 6;
  elsif p_from is null then
    v_to := p_to;
    v_from := p_to - 6;
  else
    v_from := p_from;
    v_to := p_to;
  end if;
  if v_to < v_from then
    perform app_hidden.invalid('to', 'La date de fin doit être postérieure ou égale à la date de début.', 'WV108');
  end if;
  if v_to - v_from + 1 > app_hidden.planning_max_days() then
    perform app_hidden.invalid('to', format('Le planning se lit sur %s jours au plus (ici %s jours) : réduisez la période.',
                                            app_hidden.planning_max_days(), v_to - v_from + 1), 'WV108');
  end if;

  if app_hidden.current_account_has('employee.view_employee_directory') then
    v_ids := array(select x from app_hidden.perimeter_employee_ids('absences.view_absence_queue') x
                   union
                   select v_me where v_me is not null);
  else
    v_ids := case when v_me is null then '{}'::int[] else array[v_me] end;
  end if;
  if p_employee is not null then
    if not p_employee = any (v_ids) then
      perform app_hidden.not_found('Salarié introuvable dans votre périmètre.', 'WN102');
    end if;
    v_ids := array[p_employee];
  end if;
  v_on := greatest(v_from, least(v_to, v_today));
  if p_establishment is not null then
    v_ids := array(select x from unnest(v_ids) x
                   where x in (select y from app_hidden.employees_of_establishments(array[p_establishment], v_on) y));
  end if;
  if p_team is not null then
    v_ids := array(select x from unnest(v_ids) x
                   where exists (select 1 from app_public.team_assignments ta
                                 where ta.employee_id = x and ta.team_id = p_team
                                   and app_hidden.date_in(v_on, ta.start_date, ta.end_date)));
  end if;
  return app_hidden.planning_cells(v_ids, v_from, v_to);
end;
$$;

create or replace function app_public.planning_read(p_from date default null, p_to date default null, p_employee int default null,
                                                    p_establishment int default null, p_team int default null)
returns json
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_public.planning_read_text(p_from, p_to, p_employee, p_establishment, p_team)::json;
end;
$$;
comment on function app_public.planning_read(date, date, integer, integer, integer) is
'SPEC Planning cell and Permissions rule 3, GET /api/planning/: the cells of a window (the current week
by default, at most 62 days), with absences and pending requests; a directory reader reads its
absences.view_absence_queue perimeter, any other account its own cells; narrowed by employee,
establishment or team.';
