-- GET /api/planning/grid/ (issue 29 point 6): the team month as the grid draws it, compact.
-- The same window, checks, perimeter and filters as GET /api/planning/ (app_hidden.planning_scope),
-- the same days (the planned day: the day modification, else the template valid that day; a
-- granted absence prevails, a half-day one beside the worked half, an hourly one among the
-- slots by time; the pending request, the requested cancellation), but only what a cell of the
-- grid shows, each thing once:
--   posts    each post drawn ({code, label}), once;
--   reasons  each absence reason drawn ({code, name}), once;
--   blocks   each distinct block ({kind, post, reason, part, start_time, end_time, modified,
--            status, pending}: post and reason are indices in posts and reasons; pending is
--            null, "request" or "cancellation"), once;
--   cells    each distinct day (its blocks' indices in blocks, in their order), once;
--   rows     per employee (in the order of employees), per day from `from`: an index in cells.
-- A month of 200 employees is some 20 KB instead of 2.5 MB (BENCHMARKS.md, "The team month,
-- fast and light"). GET /api/planning/ stays the full read (the SPEC's cells and blocks), and
-- the grid's export keeps it (planning_export).
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_hidden.planning_grid(p_employee_ids int[], p_from date, p_to date) returns text
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
begin
  return (
    with days as (
      select d::date as date, extract(isodow from d)::int as weekday
      from generate_series(p_from, p_to, interval '1 day') d
    ),
    emp as (
      select e.id, e.first_name || ' ' || e.last_name as name,
             row_number() over (order by lower(e.last_name), lower(e.first_name), e.id) as ord
      from app_public.employees e
      where e.id = any (p_employee_ids)
    ),
    -- The templates valid at some day of the window.
    tpl as (
      select t.id, t.employee_id, t.valid_from, t.valid_to
      from app_public.planning_templates t
      where t.employee_id = any (p_employee_ids) and t.valid_from <= p_to and (t.valid_to is null or t.valid_to >= p_from)
    ),
    -- Every cell, with the template valid that day (the latest valid_from), if any.
    cell as materialized (
      select distinct on (e.id, d.date) e.id as employee_id, e.ord, d.date, d.weekday, t.id as template_id
      from emp e
      cross join days d
      left join tpl t on t.employee_id = e.id and t.valid_from <= d.date and (t.valid_to is null or t.valid_to >= d.date)
      order by e.id, d.date, t.valid_from desc
    ),
    -- The worked blocks of each template's weekday (a template's slot is its post's).
    template_block as (
      select ts.template_id, ts.weekday, p.code, p.label, p.start_time, p.end_time,
             extract(epoch from p.start_time)::int / 60 as k2, ts.position as k4
      from app_public.planning_template_slots ts
      join app_public.posts p on p.id = ts.post_id
      where ts.template_id in (select tpl.id from tpl)
    ),
    -- The blocks of each day modification (one rest block when it has no slot).
    modification as materialized (
      select m.employee_id, m.date, sl.n is null as rest, po.code, po.label, sl.start_time, sl.end_time,
             coalesce(extract(epoch from sl.start_time)::int / 60, 0) as k2, coalesce(sl.n, 0) as k4
      from app_public.day_modifications m
      left join lateral unnest(m.slots) with ordinality
        as sl(start_time, end_time, break_start_time, break_end_time, break_paid, post_id, establishment_id, is_remote, n) on true
      left join app_public.posts po on po.id = sl.post_id
      where m.employee_id = any (p_employee_ids) and m.date between p_from and p_to
    ),
    -- The planned blocks of every cell: the day modification's, else the template's, else a rest.
    planned as (
      select m.employee_id, m.date, case when m.rest then 'rest' else 'work' end as kind, m.code, m.label,
             m.start_time, m.end_time, true as modified, m.k2, m.k4
      from modification m
      union all
      select c.employee_id, c.date, case when tb.template_id is null then 'rest' else 'work' end, tb.code, tb.label,
             tb.start_time, tb.end_time, false, coalesce(tb.k2, 0), coalesce(tb.k4, 0)
      from cell c
      left join template_block tb on tb.template_id = c.template_id and tb.weekday = c.weekday
      where not exists (select 1 from modification m where m.employee_id = c.employee_id and m.date = c.date)
    ),
    -- The absences of the window by day, with the part of the day they cover.
    absence_day as (
      select a.employee_id, g.day::date as date, a.id, a.status, t.code, t.name, a.start_time, a.end_time,
             case when a.start_time is not null then 'hours'
                  when g.day::date = a.date_start and a.start_half is not distinct from 'afternoon' then 'afternoon'
                  when g.day::date = a.date_end and a.end_half is not distinct from 'morning' then 'morning'
                  else 'day' end as part
      from app_public.absences a
      join app_public.absence_types t on t.id = a.type_id
      cross join lateral generate_series(greatest(a.date_start, p_from), least(a.date_end, p_to), interval '1 day') as g(day)
      where a.employee_id = any (p_employee_ids) and a.date_start <= p_to and a.date_end >= p_from
        and a.status in ('pending', 'validated', 'cancellation_requested')
    ),
    -- The granted ones; whole: those of the cell cover the whole day.
    granted as (
      select a.*,
             coalesce(bool_or(a.part in ('day', 'morning')) over w and bool_or(a.part in ('day', 'afternoon')) over w,
                      false) as whole
      from absence_day a
      where a.status in ('validated', 'cancellation_requested')
      window w as (partition by a.employee_id, a.date)
    ),
    -- The cells with a pending request: an absence request, or a day-change request.
    pending_cell as (
      select a.employee_id, a.date from absence_day a where a.status = 'pending'
      union
      select r.employee_id, r.date
      from app_public.shift_change_requests r
      where r.employee_id = any (p_employee_ids) and r.date between p_from and p_to and r.status = 'pending'
    ),
    -- Every block with its order in the cell (k1: morning or whole-day absence, then the worked
    -- or rest blocks and hourly absences, then the afternoon's absence; k2: start minute; k3: at
    -- the same start, the worked slot before the hourly absence): the planned blocks are hidden by
    -- a whole-day absence; pending on the absence blocks of a whole day and on the planned ones.
    block as materialized (
      select g.employee_id, g.date, 'absence' as kind, null::text as code, null::text as label,
             g.code as reason_code, g.name as reason_name, g.part, g.start_time, g.end_time, false as modified,
             g.status, case when g.status = 'cancellation_requested' then 'cancellation'
                            when g.whole and pc.employee_id is not null then 'request' end as pending,
             case g.part when 'afternoon' then 2 when 'hours' then 1 else 0 end as k1,
             coalesce(extract(epoch from g.start_time)::int / 60, 0) as k2, 1 as k3, g.id as k4
      from granted g
      left join pending_cell pc on pc.employee_id = g.employee_id and pc.date = g.date
      union all
      select p.employee_id, p.date, p.kind, p.code, p.label, null, null, null, p.start_time, p.end_time, p.modified,
             null, case when pc.employee_id is not null then 'request' end, 1, p.k2, 0, p.k4
      from planned p
      left join pending_cell pc on pc.employee_id = p.employee_id and pc.date = p.date
      where not exists (select 1 from granted g where g.employee_id = p.employee_id and g.date = p.date and g.whole)
    ),
    post_dict as (
      select x.code, x.label, row_number() over (order by x.code, x.label) - 1 as i
      from (select distinct b.code, b.label from block b where b.code is not null) x
    ),
    reason_dict as (
      select x.code, x.name, row_number() over (order by x.code, x.name) - 1 as i
      from (select distinct b.reason_code as code, b.reason_name as name from block b where b.kind = 'absence') x
    ),
    -- Each block as the grid's JSON (its key in the dictionary of blocks).
    block_text as (
      select b.employee_id, b.date, b.k1, b.k2, b.k3, b.k4,
             '{"kind":"' || b.kind || '","post":' || app_hidden.json_int(pd.i) || ',"reason":' || app_hidden.json_int(rd.i)
             || ',"part":' || app_hidden.json_text(b.part) || ',"start_time":' || app_hidden.json_hm(b.start_time)
             || ',"end_time":' || app_hidden.json_hm(b.end_time) || ',"modified":' || b.modified
             || ',"status":' || app_hidden.json_text(b.status) || ',"pending":' || app_hidden.json_text(b.pending) || '}' as text
      from block b
      left join post_dict pd on pd.code = b.code and pd.label is not distinct from b.label
      left join reason_dict rd on rd.code = b.reason_code and rd.name = b.reason_name
    ),
    block_dict as (
      select x.text, row_number() over (order by x.text) - 1 as i
      from (select distinct bt.text from block_text bt) x
    ),
    -- Each cell as the list of its blocks' indices.
    cell_text as (
      select bt.employee_id, bt.date, '[' || string_agg(bd.i::text, ',' order by bt.k1, bt.k2, bt.k3, bt.k4) || ']' as text
      from block_text bt
      join block_dict bd on bd.text = bt.text
      group by bt.employee_id, bt.date
    ),
    cell_dict as (
      select x.text, row_number() over (order by x.text) - 1 as i
      from (select distinct ct.text from cell_text ct) x
    ),
    grid_row as (
      select c.employee_id, min(c.ord) as ord, '[' || string_agg(cd.i::text, ',' order by c.date) || ']' as text
      from cell c
      join cell_text ct on ct.employee_id = c.employee_id and ct.date = c.date
      join cell_dict cd on cd.text = ct.text
      group by c.employee_id
    )
    select '{"from":' || app_hidden.json_date(p_from) || ',"to":' || app_hidden.json_date(p_to)
           || ',"employees":[' || coalesce((select string_agg('{"id":' || e.id || ',"name":' || app_hidden.json_text(e.name) || '}',
                                                             ',' order by e.ord) from emp e), '')
           || '],"holidays":[' || coalesce((select string_agg(
                '{"date":' || app_hidden.json_date(h.day) || ',"name":' || app_hidden.json_text(h.name) || '}', ',' order by h.day)
                from generate_series(extract(year from p_from)::int, extract(year from p_to)::int) y,
                     lateral app_public.public_holidays(y) h
                where h.day between p_from and p_to), '')
           || '],"posts":[' || coalesce((select string_agg('{"code":' || app_hidden.json_text(pd.code)
                                                           || ',"label":' || app_hidden.json_text(pd.label) || '}', ',' order by pd.i)
                                         from post_dict pd), '')
           || '],"reasons":[' || coalesce((select string_agg('{"code":' || app_hidden.json_text(rd.code)
                                                             || ',"name":' || app_hidden.json_text(rd.name) || '}', ',' order by rd.i)
                                           from reason_dict rd), '')
           || '],"blocks":[' || coalesce((select string_agg(bd.text, ',' order by bd.i) from block_dict bd), '')
           || '],"cells":[' || coalesce((select string_agg(cd.text, ',' order by cd.i) from cell_dict cd), '')
           || '],"rows":[' || coalesce((select string_agg(r.text, ',' order by r.ord) from grid_row r), '')
           || ']}'
  );
end;
$$;

-- GET /api/planning/grid/?from=&to=&establishment=&team=: the team month's grid (above), for the
-- window, perimeter and filters of GET /api/planning/ (the same checks and errors: to before
-- from, more than 62 days, under to). JSON text, sent as written.
create or replace function app_public.planning_grid(p_from date default null, p_to date default null,
                                                    p_establishment int default null, p_team int default null)
returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_scope record := app_hidden.planning_scope(p_from, p_to, null, p_establishment, p_team);
begin
  return app_hidden.planning_grid(v_scope.employee_ids, v_scope.from_date, v_scope.to_date);
end;
$$;
comment on function app_public.planning_grid(date, date, integer, integer) is
'@behavior -*
Issue 29 point 6, GET /api/planning/grid/: the team month''s grid, compact (each post, reason, block and day once,
then per employee the index of each day), for the window, perimeter and filters of GET /api/planning/.';
