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
-- Text, not json: the service sends it as is (app_public.planning_read_text, in parts:
-- planning_read_chunks), and a cast to json would parse the whole answer once more only to check it.
-- How it stays cheap for a month of 200 employees (6 000 cells, 2.5 MB):
--   * a worked or rest block is written in two parts: its head, up to "pending_request":, which
--     depends on the planned day only (written once per post of the templates, once per day
--     modification), and its tail, the pending request and the on-call periods of the cell;
--   * most cells are a day of their employee's one template with the usual tail (no pending
--     request, no on-call period): each template's week is written once (seven blocks texts),
--     and such a cell is its employee's week at its weekday, without any join;
--   * the other cells (a day modification, granted absences, a pending request, an on-call
--     period, or an employee with several templates in the window) are computed one by one,
--     the absences' blocks already in order; only a cell with an hourly absence sorts its
--     blocks;
--   * each employee's cells are aggregated in the order of the days, so the answer sorts
--     employees, not cells; the answer is one aggregate of its parts (head, employees' cells,
--     holidays), not concatenations that would each copy its 2.5 MB.
--   * the answer is its parts in order (head, each employee's cells, holidays): the route sends
--     them re-cut in 64 KiB (planning_read_chunks) and never holds the whole 2.5 MB text (each
--     copy of a value that large is fresh memory: page faults, zeroing, copies); planning_cells
--     joins them for the callers that need one text.
drop function if exists app_hidden.planning_cells(int[], date, date);
drop function if exists app_hidden.planning_parts(int[], date, date);
create or replace function app_hidden.planning_parts(p_employee_ids int[], p_from date, p_to date) returns setof text
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
declare
  -- The head of a rest block in a day without modification.
  v_rest_head constant text := '{"kind":"rest","post":null,"post_code":null,"post_label":null,"establishment":null'
    || ',"start_time":null,"end_time":null,"break_start_time":null,"break_end_time":null'
    || ',"break_paid":false,"minutes":0,"is_remote":false,"is_offsite":false'
    || ',"modified":false,"comment":null,"absence":null,"pending_request":';
  -- The same rest block with the usual tail: no pending request, no on-call period.
  v_rest_block constant text := v_rest_head || 'null,"on_call":[]}';
begin
  return query
    with days as (
      select d::date as date, app_hidden.json_date(d::date) as date_json, extract(isodow from d)::int as weekday
      from generate_series(p_from, p_to, interval '1 day') d
    ),
    emp as (
      select e.id, e.first_name, e.last_name, e.main_establishment_id,
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
    -- Per employee, how many templates the window meets, and the first one (meaningful when one).
    emp_template as (
      select t.employee_id, count(*) as templates, min(t.id) as template_id, min(t.valid_from) as valid_from,
             min(coalesce(t.valid_to, 'infinity')) as valid_to
      from tpl t
      group by t.employee_id
    ),
    -- The slots of those templates.
    template_slot as materialized (
      select ts.template_id, ts.weekday, ts.post_id, ts.position
      from app_public.planning_template_slots ts
      where ts.template_id in (select tpl.id from tpl)
    ),
    -- The head of a worked block of each post the templates plan (a template's slot is its
    -- post's, never remote, in a day without modification): written once per post, not per slot.
    post_head as materialized (
      select p.id, extract(epoch from p.start_time)::int / 60 as start_minute,
             '{"kind":"work","post":' || p.id
             || ',"post_code":' || app_hidden.json_text(p.code) || ',"post_label":' || app_hidden.json_text(p.label)
             || ',"establishment":' || app_hidden.json_int(p.establishment_id)
             || ',"start_time":' || app_hidden.json_hm(p.start_time)
             || ',"end_time":' || app_hidden.json_hm(p.end_time)
             || ',"break_start_time":' || app_hidden.json_hm(p.break_start_time)
             || ',"break_end_time":' || app_hidden.json_hm(p.break_end_time)
             || ',"break_paid":' || app_hidden.json_bool(coalesce(p.break_paid, false))
             || ',"minutes":' || app_hidden.json_int(app_hidden.slot_minutes(app_hidden.post_slot(p)))
             || ',"is_remote":false,"is_offsite":false,"modified":false,"comment":null,"absence":null,"pending_request":'
               as head
      from app_public.posts p
      where p.id in (select ts.post_id from template_slot ts)
    ),
    -- The heads of a template's weekday, by start time, with their start minutes (aggregated
    -- from sorted input: an aggregate's own order by would sort each group apart), and its
    -- blocks with the usual tail.
    template_day as (
      select y.template_id, y.weekday, y.heads, y.starts,
             array_to_string(y.heads, 'null,"on_call":[]},') || 'null,"on_call":[]}' as blocks
      from (
        select x.template_id, x.weekday, array_agg(x.head) as heads, array_agg(x.start_minute) as starts
        from (select ts.template_id, ts.weekday, ph.head, ph.start_minute
              from template_slot ts
              join post_head ph on ph.id = ts.post_id
              order by ts.template_id, ts.weekday, ph.start_minute, ts.position) x
        group by x.template_id, x.weekday
      ) y
    ),
    -- Each template's week: the blocks of its seven weekdays (a rest when none), usual tail.
    template_week as (
      select x.template_id, array_agg(x.blocks) as week
      from (select t.id as template_id, coalesce(td.blocks, v_rest_block) as blocks
            from tpl t
            cross join generate_series(1, 7) wd
            left join template_day td on td.template_id = t.id and td.weekday = wd
            order by t.id, wd) x
      group by x.template_id
    ),
    -- The heads of each day modification, by start time (a rest when it has no slot).
    modification as (
      select x.employee_id, x.date, array_agg(x.head) as heads, array_agg(x.start_minute) as starts
      from (
        select m.employee_id, m.date, coalesce(extract(epoch from m.start_time)::int / 60, 0) as start_minute,
               case when m.n is null
                    then '{"kind":"rest","post":null,"post_code":null,"post_label":null,"establishment":null'
                         || ',"start_time":null,"end_time":null,"break_start_time":null,"break_end_time":null'
                         || ',"break_paid":false,"minutes":0,"is_remote":false,"is_offsite":false'
                         || ',"modified":true,"comment":' || app_hidden.json_text(m.comment)
                         || ',"absence":null,"pending_request":'
                    else '{"kind":"work","post":' || app_hidden.json_int(m.post_id)
                         || ',"post_code":' || app_hidden.json_text(po.code) || ',"post_label":' || app_hidden.json_text(po.label)
                         || ',"establishment":' || app_hidden.json_int(m.establishment_id)
                         || ',"start_time":' || app_hidden.json_hm(m.start_time)
                         || ',"end_time":' || app_hidden.json_hm(m.end_time)
                         || ',"break_start_time":' || app_hidden.json_hm(m.break_start_time)
                         || ',"break_end_time":' || app_hidden.json_hm(m.break_end_time)
                         || ',"break_paid":' || app_hidden.json_bool(coalesce(m.break_paid, false))
                         || ',"minutes":' || app_hidden.json_int(app_hidden.slot_minutes(
                                               row(m.start_time, m.end_time, m.break_start_time, m.break_end_time,
                                                   m.break_paid, m.post_id, m.establishment_id, m.is_remote)::app_public.slot))
                         || ',"is_remote":' || app_hidden.json_bool(coalesce(m.is_remote, false) or coalesce(m.day_remote, false))
                         || ',"is_offsite":' || app_hidden.json_bool(coalesce(m.is_offsite, false))
                         || ',"modified":true,"comment":' || app_hidden.json_text(m.comment)
                         || ',"absence":null,"pending_request":'
               end as head
        from (select m.employee_id, m.date, m.comment, m.is_remote as day_remote, m.is_offsite, sl.*
              from app_public.day_modifications m
              left join lateral unnest(m.slots) with ordinality
                as sl(start_time, end_time, break_start_time, break_end_time, break_paid, post_id, establishment_id, is_remote, n) on true
              where m.employee_id = any (p_employee_ids) and m.date between p_from and p_to
              offset 0) m
        -- the posts joined once, not scanned per day modification
        left join app_public.posts po on po.id = m.post_id
        order by m.employee_id, m.date, 3, m.n
      ) x
      group by x.employee_id, x.date
    ),
    -- head: a granted absence's block up to its part, the same on each of its days: written once
    -- per absence (offset 0: evaluated here, not on each day of the absence).
    absence_day as (
      select a.employee_id, d.date, a.id, a.type_id, a.type_code, a.type_name,
             a.date_start, a.date_end, a.start_half, a.end_half, a.start_time, a.end_time, a.comment, a.status,
             case when a.start_time is not null then 'hours'
                  when d.date = a.date_start and a.start_half is not distinct from 'afternoon' then 'afternoon'
                  when d.date = a.date_end and a.end_half is not distinct from 'morning' then 'morning'
                  else 'day' end as part,
             a.head
      from (
        select a.employee_id, a.id, a.type_id, t.code as type_code, t.name as type_name,
               a.date_start, a.date_end, a.start_half, a.end_half, a.start_time, a.end_time, a.comment, a.status,
               case when a.status <> 'pending' then
                 '{"kind":"absence","post":null,"post_code":null,"post_label":null,"establishment":null'
                 || ',"start_time":' || app_hidden.json_hm(a.start_time) || ',"end_time":' || app_hidden.json_hm(a.end_time)
                 || ',"break_start_time":null,"break_end_time":null,"break_paid":false'
                 || ',"minutes":' || app_hidden.json_int(case when a.start_time is not null
                                                             then app_hidden.span_minutes(a.start_time, a.end_time) end)
                 || ',"is_remote":false,"is_offsite":false,"modified":false,"comment":null'
                 || ',"absence":{"id":' || a.id || ',"type":' || a.type_id || ',"type_code":' || app_hidden.json_text(t.code)
                 || ',"type_name":' || app_hidden.json_text(t.name) || ',"date_start":' || app_hidden.json_date(a.date_start)
                 || ',"date_end":' || app_hidden.json_date(a.date_end) || ',"start_half":' || app_hidden.json_text(a.start_half)
                 || ',"end_half":' || app_hidden.json_text(a.end_half) || ',"start_time":' || app_hidden.json_hm(a.start_time)
                 || ',"end_time":' || app_hidden.json_hm(a.end_time) || ',"comment":' || app_hidden.json_text(a.comment)
                 || ',"status":' || app_hidden.json_text(a.status) || ',"part":'
               end as head
        from app_public.absences a
        join app_public.absence_types t on t.id = a.type_id
        where a.employee_id = any (p_employee_ids) and a.date_start <= p_to and a.date_end >= p_from
          and a.status in ('pending', 'validated', 'cancellation_requested')
        offset 0
      ) a
      cross join lateral generate_series(greatest(a.date_start, p_from), least(a.date_end, p_to), interval '1 day') as g(day)
      cross join lateral (select g.day::date as date) d
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
    -- The tail of the worked or rest blocks of the cells that have a day modification, granted
    -- absences, a pending request or an on-call period: the pending request, the on-call periods.
    cell_tail as (
      select k.employee_id, k.date, pend.pending, coalesce(oc.on_call::text, '[]') as on_call,
             pend.pending || ',"on_call":' || coalesce(oc.on_call::text, '[]') || '}' as tail
      from (select x.employee_id, x.date from modification x
            union select x.employee_id, x.date from granted x
            union select x.employee_id, x.date from pending_absence x
            union select x.employee_id, x.date from pending_shift_change x
            union select x.employee_id, x.date from on_call x) k
      left join pending_absence pa on pa.employee_id = k.employee_id and pa.date = k.date
      left join pending_shift_change ps on ps.employee_id = k.employee_id and ps.date = k.date
      left join on_call oc on oc.employee_id = k.employee_id and oc.date = k.date
      cross join lateral (
        select case when pa.id is not null then '{"kind":"absence","id":' || pa.id || ',"is_cancellation":false}'
                    when ps.id is not null then '{"kind":"shift_change","id":' || ps.id || ',"is_cancellation":false}'
                    else 'null'
               end as pending
      ) pend
    ),
    -- The absence blocks of each cell, in their order (k1: morning or whole day, hourly, afternoon;
    -- k2: start minute), aggregated from sorted input.
    absence_blocks as (
      select b.employee_id, b.date, bool_or(b.whole) as whole,
             array_agg(b.block) as blocks, array_agg(b.k1) as k1s, array_agg(b.k2) as k2s,
             string_agg(b.block, ',') filter (where b.k1 = 0) as before_blocks,
             string_agg(b.block, ',') filter (where b.k1 = 2) as after_blocks, bool_or(b.k1 = 1) as hourly
      from (
        select g.employee_id, g.date, g.whole,
               case g.part when 'afternoon' then 2 when 'hours' then 1 else 0 end as k1,
               coalesce(extract(epoch from g.start_time)::int / 60, 0) as k2,
               g.head || app_hidden.json_text(g.part) || '}'
               || ',"pending_request":' || case when g.status = 'cancellation_requested'
                                                then '{"kind":"absence","id":' || g.id || ',"is_cancellation":true}'
                                                when g.whole then t.pending
                                                else 'null' end
               || ',"on_call":' || t.on_call || '}' as block
        from granted g
        join cell_tail t on t.employee_id = g.employee_id and t.date = g.date
        order by g.employee_id, g.date, 4, 5
      ) b
      group by b.employee_id, b.date
    ),
    cell_extra as (
      select t.employee_id, t.date, t.tail, m.heads, m.starts, ab.whole, ab.blocks, ab.k1s, ab.k2s,
             ab.before_blocks, ab.after_blocks, ab.hourly
      from cell_tail t
      left join modification m on m.employee_id = t.employee_id and m.date = t.date
      left join absence_blocks ab on ab.employee_id = t.employee_id and ab.date = t.date
    ),
    -- The cells computed one by one: those with something of their own, and every cell of an
    -- employee with several templates in the window (the latest valid_from first).
    special_cell as (
      select c.employee_id, c.date,
             case when x.employee_id is null then coalesce(td.blocks, v_rest_block)
                  when x.blocks is null then array_to_string(coalesce(x.heads, td.heads, array[v_rest_head]), x.tail || ',') || x.tail
                  when x.whole then array_to_string(x.blocks, ',')
                  -- a half day: the morning's absence, the worked (or rest) blocks, the afternoon's
                  when not x.hourly
                    then concat_ws(',', x.before_blocks,
                                   array_to_string(coalesce(x.heads, td.heads, array[v_rest_head]), x.tail || ',') || x.tail,
                                   x.after_blocks)
                  -- hourly absences among the worked (or rest) blocks, sorted together; at the same
                  -- start time, the worked slot before the hourly absence
                  else (select string_agg(b.block, ',' order by b.k1, b.k2, b.k3)
                        from (select a.block, a.k1, a.k2, 1 as k3
                              from unnest(x.blocks, x.k1s, x.k2s) as a(block, k1, k2)
                              union all
                              select h.head || x.tail, 1, h.start_minute, 0
                              from unnest(coalesce(x.heads, td.heads, array[v_rest_head]), coalesce(x.starts, td.starts, '{0}'::int[]))
                                as h(head, start_minute)) b)
             end as blocks
      from (
        select distinct on (s.employee_id, s.date) s.employee_id, s.date, t.id as template_id
        from (select x.employee_id, x.date from cell_extra x
              union
              select et.employee_id, d.date from emp_template et cross join days d where et.templates > 1) s
        left join tpl t on t.employee_id = s.employee_id and t.valid_from <= s.date and (t.valid_to is null or t.valid_to >= s.date)
        order by s.employee_id, s.date, t.valid_from desc
      ) c
      left join template_day td on td.template_id = c.template_id and td.weekday = extract(isodow from c.date)::int
      left join cell_extra x on x.employee_id = c.employee_id and x.date = c.date
    ),
    special_of_employee as (
      select s.employee_id, array_agg(s.date) as dates, array_agg(s.blocks) as blocks
      from special_cell s
      group by s.employee_id
    ),
    -- Each employee's cells, in the order of the days: a special cell, else the day of its one
    -- template's week while the template is valid, else a rest.
    employee_cells as (
      select e.ord, cells.text
      from emp e
      left join emp_template et on et.employee_id = e.id and et.templates = 1
      left join template_week tw on tw.template_id = et.template_id
      left join special_of_employee se on se.employee_id = e.id
      cross join lateral (
        select string_agg(case when e.ord = 1 and d.date = p_from then '{"employee":' else ',{"employee":' end
                          || e.id || ',"date":' || d.date_json || ',"blocks":['
                          || coalesce(se.blocks[array_position(se.dates, d.date)],
                                      case when d.date between et.valid_from and et.valid_to then tw.week[d.weekday] end,
                                      v_rest_block)
                          || ']}', '') as text
        from days d
      ) cells
    )
    -- The answer's parts in order (concatenations would copy 2.5 MB each).
    select part.text
    from (
      select 0::bigint as k,
             '{"from":' || app_hidden.json_date(p_from) || ',"to":' || app_hidden.json_date(p_to)
             || ',"employees":[' || coalesce((select string_agg(
                  '{"id":' || e.id || ',"name":' || app_hidden.json_text(e.first_name || ' ' || e.last_name)
                  || ',"first_name":' || app_hidden.json_text(e.first_name) || ',"last_name":' || app_hidden.json_text(e.last_name)
                  || ',"main_establishment":' || app_hidden.json_int(e.main_establishment_id) || '}', ',' order by e.ord)
                  from emp e), '')
             || '],"cells":[' as text
      union all
      select c.ord, c.text from employee_cells c
      union all
      select 9223372036854775807,
             '],"holidays":[' || coalesce((select string_agg(
                  '{"date":' || app_hidden.json_date(h.day) || ',"name":' || app_hidden.json_text(h.name) || '}', ',' order by h.day)
                  from generate_series(extract(year from p_from)::int, extract(year from p_to)::int) y,
                       lateral app_public.public_holidays(y) h
                  where h.day between p_from and p_to), '')
             || ']}'
    ) part
    order by part.k;
end;
$$;

-- The answer as one text: its parts joined in their order.
create or replace function app_hidden.planning_cells(p_employee_ids int[], p_from date, p_to date) returns text
language sql stable as $$
  select string_agg(p.part, '' order by p.n) from app_hidden.planning_parts(p_employee_ids, p_from, p_to) with ordinality as p(part, n);
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
-- planning_read_text is the JSON text as written, which the service passes through (a month
-- of 200 employees is 2.5 MB); the route calls planning_read_chunks, the same bytes in parts.
-- planning_read is the same answer typed json, for SQL callers and GraphQL.
drop function if exists app_public.planning_read(date, date, int);
-- The window and the employees of a planning read (its checks and errors), for planning_read_text
-- and planning_read_chunks; called by them only (security definer), as they were its body.
create or replace function app_hidden.planning_scope(p_from date, p_to date, p_employee int, p_establishment int, p_team int,
                                                     out from_date date, out to_date date, out employee_ids int[])
language plpgsql stable as $$
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
  from_date := v_from;
  to_date := v_to;
  employee_ids := v_ids;
end;
$$;

create or replace function app_public.planning_read_text(p_from date default null, p_to date default null, p_employee int default null,
                                                         p_establishment int default null, p_team int default null)
returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_scope record := app_hidden.planning_scope(p_from, p_to, p_employee, p_establishment, p_team);
begin
  return app_hidden.planning_cells(v_scope.employee_ids, v_scope.from_date, v_scope.to_date);
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

-- The same answer in parts of at most 64 KiB, in order, for the route to send as they come: one
-- 2.5 MB value was received whole by the service's driver, in a buffer doubled up to 4 MiB
-- per request (docs/architecture.md, Performance notes). Cut from the answer's parts as they
-- come (a part may straddle two pieces), without ever forming the whole text. Each piece is
-- whole UTF-8 characters (cut before a continuation byte, so 64 KiB less at most 3 bytes): the
-- driver reads every value as UTF-8 text before handing its bytes over, and a character cut in
-- two would become two replacement characters.
create or replace function app_public.planning_read_chunks(p_from date default null, p_to date default null, p_employee int default null,
                                                           p_establishment int default null, p_team int default null)
returns setof bytea
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_scope record := app_hidden.planning_scope(p_from, p_to, p_employee, p_establishment, p_team);
  v_part bytea;
  v_length int;
  v_at int;
  v_cut int;
  v_pieces bytea[] := '{}';  -- of the piece being filled
  v_room int := 65536;       -- bytes still free in it
begin
  for v_part in select convert_to(p.part, 'UTF8')
                from app_hidden.planning_parts(v_scope.employee_ids, v_scope.from_date, v_scope.to_date) as p(part) loop
    v_length := length(v_part);
    v_at := 0;
    while v_length - v_at >= v_room loop
      v_cut := v_room;
      -- never between the bytes of one character (get_byte counts from 0: the next piece's first byte)
      while v_at + v_cut < v_length and get_byte(v_part, v_at + v_cut) between 128 and 191 loop
        v_cut := v_cut - 1;
      end loop;
      v_pieces := array_append(v_pieces, substring(v_part from v_at + 1 for v_cut));
      return next (select string_agg(x.piece, ''::bytea order by x.n) from unnest(v_pieces) with ordinality as x(piece, n));
      v_at := v_at + v_cut;
      v_room := 65536;
      v_pieces := '{}';
    end loop;
    if v_length > v_at then
      v_pieces := array_append(v_pieces, case when v_at = 0 then v_part else substring(v_part from v_at + 1) end);
      v_room := v_room - (v_length - v_at);
    end if;
  end loop;
  if cardinality(v_pieces) > 0 then
    return next (select string_agg(x.piece, ''::bytea order by x.n) from unnest(v_pieces) with ordinality as x(piece, n));
  end if;
end;
$$;

-- The team planning's grid as a spreadsheet (GET /api/planning/export/, issue 29 point 4): one
-- row per employee of the read (same window, perimeter and filters as GET /api/planning/, in its
-- order), one column per day (d1 the first day of the window, up to d62; the days after the
-- window's last are null), each cell what the grid's cell shows: the codes of its blocks in their
-- order (an absence's reason code, a worked post's code; a rest shows nothing), a half-day
-- absence with its half, and « (demande en attente) » or « (annulation demandée) » as the grid
-- marks them. from and to are required (the columns are the window's days).
create or replace function app_hidden.planning_cell_label(p_blocks json) returns text
language sql immutable as $$
  select nullif(concat_ws(' ',
           nullif(string_agg(case
                    when b.value->'absence' is not null and json_typeof(b.value->'absence') = 'object' then
                      (b.value->'absence'->>'type_code')
                      || case b.value->'absence'->>'part' when 'morning' then ' matin' when 'afternoon' then ' après-midi'
                                                          when 'hours' then ' ' || (b.value->'absence'->>'start_time') || '-'
                                                                                 || (b.value->'absence'->>'end_time')
                                                          else '' end
                    when b.value->>'kind' = 'work' then b.value->>'post_code'
                  end, ' / ' order by b.n), ''),
           case when bool_or(json_typeof(b.value->'pending_request') = 'object'
                             and (b.value->'pending_request'->>'is_cancellation')::boolean) then '(annulation demandée)'
                when bool_or(json_typeof(b.value->'pending_request') = 'object') then '(demande en attente)'
           end), '')
  from json_array_elements(p_blocks) with ordinality as b(value, n);
$$;

drop function if exists app_public.planning_export(date, date, int, int, int);
create or replace function app_public.planning_export(p_from date default null, p_to date default null, p_employee int default null,
                                                      p_establishment int default null, p_team int default null)
returns table (employee int, employee_name text,
               d1 text, d2 text, d3 text, d4 text, d5 text, d6 text, d7 text, d8 text, d9 text, d10 text,
               d11 text, d12 text, d13 text, d14 text, d15 text, d16 text, d17 text, d18 text, d19 text, d20 text,
               d21 text, d22 text, d23 text, d24 text, d25 text, d26 text, d27 text, d28 text, d29 text, d30 text,
               d31 text, d32 text, d33 text, d34 text, d35 text, d36 text, d37 text, d38 text, d39 text, d40 text,
               d41 text, d42 text, d43 text, d44 text, d45 text, d46 text, d47 text, d48 text, d49 text, d50 text,
               d51 text, d52 text, d53 text, d54 text, d55 text, d56 text, d57 text, d58 text, d59 text, d60 text,
               d61 text, d62 text)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_planning json;
begin
  if p_from is null then
    perform app_hidden.invalid('from', 'Indiquez le premier jour de la période exportée.', 'WV108');
  end if;
  if p_to is null then
    perform app_hidden.invalid('to', 'Indiquez le dernier jour de la période exportée.', 'WV108');
  end if;
  v_planning := app_public.planning_read(p_from, p_to, p_employee, p_establishment, p_team);
  return query
  with emp as (
    select (x.value->>'id')::int as id, x.value->>'name' as name, x.n
    from json_array_elements(v_planning->'employees') with ordinality as x(value, n)
  ),
  grid as (
    select (c.value->>'employee')::int as employee_id,
           array_agg(app_hidden.planning_cell_label(c.value->'blocks') order by (c.value->>'date')::date) as labels
    from json_array_elements(v_planning->'cells') as c(value)
    group by 1
  )
  select e.id, e.name,
         g.labels[1], g.labels[2], g.labels[3], g.labels[4], g.labels[5], g.labels[6], g.labels[7], g.labels[8], g.labels[9], g.labels[10],
         g.labels[11], g.labels[12], g.labels[13], g.labels[14], g.labels[15], g.labels[16], g.labels[17], g.labels[18], g.labels[19], g.labels[20],
         g.labels[21], g.labels[22], g.labels[23], g.labels[24], g.labels[25], g.labels[26], g.labels[27], g.labels[28], g.labels[29], g.labels[30],
         g.labels[31], g.labels[32], g.labels[33], g.labels[34], g.labels[35], g.labels[36], g.labels[37], g.labels[38], g.labels[39], g.labels[40],
         g.labels[41], g.labels[42], g.labels[43], g.labels[44], g.labels[45], g.labels[46], g.labels[47], g.labels[48], g.labels[49], g.labels[50],
         g.labels[51], g.labels[52], g.labels[53], g.labels[54], g.labels[55], g.labels[56], g.labels[57], g.labels[58], g.labels[59], g.labels[60],
         g.labels[61], g.labels[62]
  from emp e
  left join grid g on g.employee_id = e.id
  order by e.n;
end;
$$;
comment on function app_public.planning_export(date, date, integer, integer, integer) is
'Issue 29 point 4, GET /api/planning/export/: the team planning grid of GET /api/planning/ (same window,
perimeter and filters), one row per employee, one column per day (d1 = from), each cell the codes the
grid shows.';
