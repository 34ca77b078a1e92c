--! Previous: sha1:b3b8947b8dd37b9a846730433f4c63dec853966f
--! Hash: sha1:760627447a5dc28b2b84d49e629917603cb66c43
--! Message: The team month's grid: its SQL from 50 to 14 ms (issue 29 point 6)

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included planning/grid.sql
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
-- force_generic_plan: docs/architecture.md, Performance notes. enable_nestloop off: the generic
-- plan's estimates (ten rows for "= any of the ids") chose nested loops over CTEs of 200 rows,
-- rescanning one of them per employee; hash joins cost nothing here, and the tables are read by
-- their indexes without a nested loop (= any of an array).
-- How it stays cheap (the full read's way, planning_parts; 50 -> 14 ms for the bench's month of
-- 200 employees, BENCHMARKS.md): most cells are a day of their employee's one template without
-- anything of their own, so each distinct template's week (the same slots: a team shares a few)
-- is computed once (seven cells) and such a cell is its employee's week at its weekday; only the
-- cells with a day modification, granted absences or a pending request (and every cell of an
-- employee with several templates in the window) are computed one by one. Blocks are numbered by
-- grouping their values (a hash; only the some tens of distinct ones are sorted), cells by
-- grouping their blocks' numbers as written; only the distinct ones are written. An employee's
-- row is its template's week repeated over the window (no expression per day), with its special
-- cells put in between stretches of it.
create or replace function app_hidden.planning_grid(p_employee_ids int[], p_from date, p_to date) returns text
language plpgsql stable
set plan_cache_mode = force_generic_plan set enable_nestloop = off as $$
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
    tpl as materialized (
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
    -- The worked blocks of each template's weekday (a template's slot is its post's).
    template_block as materialized (
      select ts.template_id, ts.weekday, ts.post_id, p.start_time, p.end_time,
             extract(epoch from p.start_time)::int / 60 as k2, ts.position as k4
      from app_public.planning_template_slots ts
      join app_public.posts p on p.id = ts.post_id
      where ts.template_id = any (array(select tpl.id from tpl))
    ),
    -- The templates whose week is drawn (the one template of an employee in the window), each with
    -- the first one of the same slots: a week is computed once per distinct template (a team's
    -- employees share a few templates' slots), not once per employee.
    week_template as materialized (
      select w.template_id, min(w.template_id) over (partition by w.slots) as rep
      from (select et.template_id, coalesce(s.slots, '{}') as slots
            from emp_template et
            left join (select b.template_id, array_agg(array[b.weekday::int, b.k4::int, b.post_id]) as slots
                       from (select b.template_id, b.weekday, b.k4, b.post_id from template_block b
                             order by b.template_id, b.weekday, b.k4) b
                       group by b.template_id) s on s.template_id = et.template_id
            where et.templates = 1) w
    ),
    -- The blocks of each day modification (one rest block when it has no slot).
    modification as materialized (
      select m.employee_id, m.date, sl.n is null as rest, sl.post_id, sl.start_time, sl.end_time,
             coalesce(extract(epoch from sl.start_time)::int / 60, 0) as k2, coalesce(sl.n, 0) as k4
      from app_public.day_modifications m
      left join lateral unnest(m.slots) with ordinality
        as sl(start_time, end_time, break_start_time, break_end_time, break_paid, post_id, establishment_id, is_remote, n) on true
      where m.employee_id = any (p_employee_ids) and m.date between p_from and p_to
    ),
    -- The absences of the window by day, with the part of the day they cover (the days listed in
    -- the select list: a set-returning function in from would be a table per absence).
    absence_day as materialized (
      select x.employee_id, x.date, x.id, x.status, x.type_id, x.start_time, x.end_time,
             case when x.start_time is not null then 'hours'
                  when x.date = x.date_start and x.start_half is not distinct from 'afternoon' then 'afternoon'
                  when x.date = x.date_end and x.end_half is not distinct from 'morning' then 'morning'
                  else 'day' end as part
      from (select a.employee_id, a.id, a.status, a.type_id, a.start_time, a.end_time, a.date_start, a.date_end,
                   a.start_half, a.end_half,
                   generate_series(greatest(a.date_start, p_from), least(a.date_end, p_to), interval '1 day')::date as date
            from app_public.absences a
            where a.employee_id = any (p_employee_ids) and a.date_start <= p_to and a.date_end >= p_from
              and a.status in ('pending', 'validated', 'cancellation_requested')) x
    ),
    -- The cells computed one by one: those with a day modification, a granted absence, a pending
    -- request (an absence request, or a day-change request), and every cell of an employee with
    -- several templates in the window; whole: the granted absences of the cell cover the whole day.
    special as materialized (
      select f.employee_id, f.date, bool_or(f.pending) as pending, bool_or(f.modified) as modified,
             coalesce(bool_or(f.part in ('day', 'morning')) and bool_or(f.part in ('day', 'afternoon')), false) as whole
      from (select m.employee_id, m.date, false as pending, true as modified, null::text as part from modification m
            union all
            select a.employee_id, a.date, a.status = 'pending', false,
                   case when a.status <> 'pending' then a.part end
            from absence_day a
            union all
            select r.employee_id, r.date, true, false, null
            from app_public.shift_change_requests r
            where r.employee_id = any (p_employee_ids) and r.date between p_from and p_to and r.status = 'pending'
            union all
            select et.employee_id, d.date, false, false, null
            from emp_template et cross join days d where et.templates > 1) f
      group by f.employee_id, f.date
    ),
    -- The granted absences (validated, or cancellation_requested: still drawn).
    granted as (
      select a.* from absence_day a where a.status in ('validated', 'cancellation_requested')
    ),
    -- Every block with its cell and its order in it. A cell is a special one (employee_id, date),
    -- a template's weekday (template_id, weekday), or the rest of an employee without template
    -- (template_id 0). Order: k1 (a morning or whole-day absence, then the worked or rest blocks
    -- and hourly absences, then the afternoon's absence), k2 (start minute), k3 (at the same
    -- start, the worked slot before the hourly absence). The planned blocks are hidden by a
    -- whole-day absence; pending on the absence blocks of a whole day and on the planned ones.
    block as (
      select g.employee_id, g.date, null::int as template_id, null::int as weekday, 'absence' as kind,
             null::int as post_id, g.type_id, g.part,
             g.start_time, g.end_time, false as modified, g.status,
             case when g.status = 'cancellation_requested' then 'cancellation'
                  when s.whole and s.pending then 'request' end as pending,
             case g.part when 'afternoon' then 2 when 'hours' then 1 else 0 end as k1,
             coalesce(extract(epoch from g.start_time)::int / 60, 0) as k2, 1 as k3, g.id as k4
      from granted g
      join special s on s.employee_id = g.employee_id and s.date = g.date
      union all
      select s.employee_id, s.date, null, null, case when m.rest then 'rest' else 'work' end, m.post_id,
             null, null, m.start_time, m.end_time, true, null, case when s.pending then 'request' end, 1, m.k2, 0, m.k4
      from special s
      join modification m on m.employee_id = s.employee_id and m.date = s.date
      where not s.whole
      union all
      select s.employee_id, s.date, null, null, case when tb.template_id is null then 'rest' else 'work' end, tb.post_id,
             null, null, tb.start_time, tb.end_time, false, null, case when s.pending then 'request' end,
             1, coalesce(tb.k2, 0), 0, coalesce(tb.k4, 0)
      -- (the template valid that day: the latest valid_from)
      from (select s.employee_id, s.date, s.pending,
                   case when et.templates = 1 then case when s.date between et.valid_from and et.valid_to then et.template_id end
                        else (select t.id from tpl t
                              where t.employee_id = s.employee_id and t.valid_from <= s.date and (t.valid_to is null or t.valid_to >= s.date)
                              order by t.valid_from desc limit 1) end as template_id
            from special s
            left join emp_template et on et.employee_id = s.employee_id
            where not s.whole and not s.modified) s
      left join template_block tb on tb.template_id = s.template_id and tb.weekday = extract(isodow from s.date)::int
      union all
      select null, null, t.id, wd.weekday, case when tb.template_id is null then 'rest' else 'work' end, tb.post_id,
             null, null, tb.start_time, tb.end_time, false, null, null, 1, coalesce(tb.k2, 0), 0, coalesce(tb.k4, 0)
      from (select distinct w.rep as id from week_template w) t
      cross join generate_series(1, 7) as wd(weekday)
      left join template_block tb on tb.template_id = t.id and tb.weekday = wd.weekday
      union all
      select null, null, 0, 0, 'rest', null, null, null, null, null, false, null, null, 1, 0, 0, 0
      where exists (select 1 from emp)
    ),
    -- Each distinct block numbered (its rank among the distinct values): the blocks grouped by
    -- value (a hash of their post's and reason's ids, where ranking them all would sort every block
    -- on eleven keys), the some tens of groups given their post's and reason's codes and names and
    -- ranked (two posts of the same code and label are the same value), and each block given the
    -- number of its group (by its row number).
    block_row as materialized (
      select row_number() over () as rid, b.* from block b
    ),
    distinct_block as materialized (
      -- (byte order: any order numbers them, and the collation's would cost more than the rest)
      select dense_rank() over (order by g.kind collate "C", p.code collate "C", p.label collate "C",
                                         t.code collate "C", t.name collate "C", g.part collate "C",
                                         g.start_time, g.end_time, g.modified, g.status collate "C", g.pending collate "C") - 1 as bi,
             g.kind, p.code, p.label, t.code as reason_code, t.name as reason_name, g.part, g.start_time, g.end_time,
             g.modified, g.status, g.pending, g.rids
      from (select b.kind, b.post_id, b.type_id, b.part, b.start_time, b.end_time, b.modified, b.status, b.pending,
                   array_agg(b.rid) as rids
            from block_row b
            group by b.kind, b.post_id, b.type_id, b.part, b.start_time, b.end_time, b.modified, b.status, b.pending) g
      left join app_public.posts p on p.id = g.post_id
      left join app_public.absence_types t on t.id = g.type_id
    ),
    -- The number of each block, by rid.
    block_number as (
      select array_agg(x.bi order by x.rid) as bis
      from (select d.bi, unnest(d.rids) as rid from distinct_block d) x
    ),
    post_dict as materialized (
      select x.code, x.label, row_number() over (order by x.code, x.label) - 1 as i
      from (select distinct r.code, r.label from distinct_block r where r.code is not null) x
    ),
    reason_dict as materialized (
      select x.code, x.name, row_number() over (order by x.code, x.name) - 1 as i
      from (select distinct r.reason_code as code, r.reason_name as name from distinct_block r where r.kind = 'absence') x
    ),
    block_dict as (
      select distinct on (r.bi) r.bi,
             '{"kind":"' || r.kind || '","post":' || app_hidden.json_int(pd.i) || ',"reason":' || app_hidden.json_int(rd.i)
             || ',"part":' || app_hidden.json_text(r.part) || ',"start_time":' || app_hidden.json_hm(r.start_time)
             || ',"end_time":' || app_hidden.json_hm(r.end_time) || ',"modified":' || r.modified
             || ',"status":' || app_hidden.json_text(r.status) || ',"pending":' || app_hidden.json_text(r.pending) || '}' as text
      from distinct_block r
      left join post_dict pd on pd.code = r.code and pd.label is not distinct from r.label
      left join reason_dict rd on rd.code = r.reason_code and rd.name = r.reason_name
      order by r.bi
    ),
    -- Each cell as its blocks' numbers in order, as written (aggregated from sorted input: an
    -- aggregate's own order by would sort each cell apart), then each distinct one numbered (by its
    -- numbers: text compares and hashes without a copy, an array does not).
    cell_blocks as (
      select r.employee_id, r.date, r.template_id, r.weekday, string_agg(r.bi::text, ',') as blocks
      from (select r.employee_id, r.date, r.template_id, r.weekday, (select n.bis from block_number n)[r.rid] as bi
            from block_row r
            order by r.employee_id, r.date, r.template_id, r.weekday, r.k1, r.k2, r.k3, r.k4) r
      group by r.employee_id, r.date, r.template_id, r.weekday
    ),
    distinct_cell as materialized (
      select x.blocks, row_number() over (order by string_to_array(x.blocks, ',')::bigint[]) - 1 as ci
      from (select distinct c.blocks from cell_blocks c) x
    ),
    cell_ranked as materialized (
      select c.*, dc.ci
      from cell_blocks c
      join distinct_cell dc on dc.blocks = c.blocks
    ),
    -- The special cells of each employee: their days (1: from) and cells, in the order of the days.
    special_of_employee as materialized (
      select c.employee_id, array_agg(c.i) as days, array_agg(c.ci) as cis
      from (select c.employee_id, c.date - p_from + 1 as i, c.ci::text as ci from cell_ranked c
            where c.employee_id is not null order by c.employee_id, c.date) c
      group by c.employee_id
    ),
    template_week as (
      select c.template_id, array_agg(c.ci) as week
      from (select c.template_id, c.ci from cell_ranked c where c.template_id > 0 order by c.template_id, c.weekday) c
      group by c.template_id
    ),
    -- Each employee's row without its special cells (each day's cell as text, in the order of the
    -- days): the day of its one template's week while the template is valid, else a rest. When the
    -- template is valid all the window (the usual case), its week from the window's first weekday,
    -- repeated: no expression per day.
    emp_base as materialized (
      select e.id, e.ord,
             case when et.valid_from <= p_from and et.valid_to >= p_to
                    then string_to_array(repeat(array_to_string(tw.week[v.weekday : 7] || tw.week[1 : v.weekday - 1], ',') || ',',
                                                (v.days + 6) / 7), ',')
                  when et.employee_id is not null
                    then array(select coalesce(case when d.date between et.valid_from and et.valid_to then tw.week[d.weekday] end,
                                               rest.ci)::text
                               from days d order by d.date)
                  else array_fill(rest.ci::text, array[v.days])
             end as base
      from emp e
      left join emp_template et on et.employee_id = e.id and et.templates = 1
      left join week_template wt on wt.template_id = et.template_id
      left join template_week tw on tw.template_id = wt.rep
      cross join (select (select c.ci from cell_ranked c where c.template_id = 0) as ci) rest
      cross join (select extract(isodow from p_from)::int as weekday, p_to - p_from + 1 as days) v
    ),
    -- Each employee's row: the stretches of its base between its special cells, and those cells.
    grid_row as (
      select b.ord,
             '[' || (select string_agg(x.piece, ',')
                     from (select nullif(concat_ws(',', se.cis[j],
                                                   nullif(array_to_string(b.base[coalesce(se.days[j], 0) + 1 : coalesce(se.days[j + 1], v.days + 1) - 1], ','), '')),
                                         '') as piece
                           from generate_series(0, coalesce(cardinality(se.days), 0)) j) x) || ']' as text
      from emp_base b
      left join special_of_employee se on se.employee_id = b.id
      cross join (select p_to - p_from + 1 as days) v
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
           || '],"blocks":[' || coalesce((select string_agg(bd.text, ',' order by bd.bi) from block_dict bd), '')
           || '],"cells":[' || coalesce((select string_agg('[' || dc.blocks || ']', ',' order by dc.ci)
                                         from distinct_cell dc), '')
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
--! EndIncluded planning/grid.sql
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
