-- The team month's compact grid (app_public.planning_grid, GET /api/planning/grid/, issue 29
-- point 6): expanded back, every cell shows what GET /api/planning/ gives the grid to draw (for
-- every kind of block, every kind of reader); the same perimeter, filters and errors; each post,
-- reason, block and day once.
begin;
select plan(27);
select tests.freeze('2026-11-16 10:00+01');

-- What the grid draws of planning_read's blocks: one row per block, in the cell's order.
create function pg_temp.drawn(p_planning json)
returns table (employee int, date date, n bigint, block jsonb) language sql as $$
  select (c.value ->> 'employee')::int, (c.value ->> 'date')::date, b.n,
         jsonb_build_object(
           'kind', b.value ->> 'kind',
           'post_code', case when b.value ->> 'kind' = 'work' then b.value ->> 'post_code' end,
           'post_label', case when b.value ->> 'kind' = 'work' then b.value ->> 'post_label' end,
           'reason_code', b.value -> 'absence' ->> 'type_code', 'reason_name', b.value -> 'absence' ->> 'type_name',
           'part', b.value -> 'absence' ->> 'part', 'status', b.value -> 'absence' ->> 'status',
           'start_time', b.value ->> 'start_time', 'end_time', b.value ->> 'end_time',
           'modified', (b.value ->> 'modified')::boolean,
           'pending', case when json_typeof(b.value -> 'pending_request') <> 'object' then null
                           when (b.value -> 'pending_request' ->> 'is_cancellation')::boolean then 'cancellation'
                           else 'request' end)
  from json_array_elements(p_planning -> 'cells') c
  cross join lateral json_array_elements(c.value -> 'blocks') with ordinality b(value, n);
$$;
-- The same rows from the compact grid: rows → cells → blocks → posts and reasons.
create function pg_temp.expanded(p_grid json)
returns table (employee int, date date, n bigint, block jsonb) language sql as $$
  select (p_grid -> 'employees' -> (r.o - 1)::int ->> 'id')::int, (p_grid ->> 'from')::date + (d.o - 1)::int, b.n,
         jsonb_build_object(
           'kind', k.value ->> 'kind',
           'post_code', p_grid -> 'posts' -> (k.value ->> 'post')::int ->> 'code',
           'post_label', p_grid -> 'posts' -> (k.value ->> 'post')::int ->> 'label',
           'reason_code', p_grid -> 'reasons' -> (k.value ->> 'reason')::int ->> 'code',
           'reason_name', p_grid -> 'reasons' -> (k.value ->> 'reason')::int ->> 'name',
           'part', k.value ->> 'part', 'status', k.value ->> 'status',
           'start_time', k.value ->> 'start_time', 'end_time', k.value ->> 'end_time',
           'modified', (k.value ->> 'modified')::boolean, 'pending', k.value ->> 'pending')
  from json_array_elements(p_grid -> 'rows') with ordinality r(value, o)
  cross join lateral json_array_elements_text(r.value) with ordinality d(cell, o)
  cross join lateral json_array_elements_text(p_grid -> 'cells' -> d.cell::int) with ordinality b(value, n)
  cross join lateral (select p_grid -> 'blocks' -> b.value::int as value) k;
$$;
-- The differences between both (none: null), at most five, to read when it fails.
create function pg_temp.differences(p_from date, p_to date, p_establishment int default null, p_team int default null)
returns text language plpgsql as $$
declare
  v_grid json := app_public.planning_grid(p_from, p_to, p_establishment, p_team)::json;
  v_read json := app_public.planning_read(p_from, p_to, null, p_establishment, p_team);
begin
  return coalesce((select string_agg(x.side || ' ' || x.employee || ' ' || x.date || ' #' || x.n || ' ' || x.block, E'\n')
          from (select * from ((select 'grid only', * from pg_temp.expanded(v_grid) except select 'grid only', * from pg_temp.drawn(v_read))
                               union all
                               (select 'read only', * from pg_temp.drawn(v_read) except select 'read only', * from pg_temp.expanded(v_grid))) y
                order by 3, 4, 5 limit 5) x(side, employee, date, n, block)), '')
         || case when (v_grid -> 'employees')::jsonb is distinct from
                      (select coalesce(jsonb_agg(jsonb_build_object('id', e -> 'id', 'name', e -> 'name') order by o), '[]')
                       from json_array_elements(v_read -> 'employees') with ordinality x(e, o))
                 then ' employees differ' else '' end;
end;
$$;
grant execute on all functions in schema pg_temp to public;

-- Every kind of block: whole-day, half-day, hourly absences, a requested cancellation, a pending
-- absence request, a day modification (worked, and a rest), a pending day-change request, an
-- absence across the end of the window, a public holiday.
select tests.as_owner();
insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, start_time, end_time, status, comment)
select tests.id('employees', e), (select id from app_public.absence_types where code = t), ds::date, de::date, sh, eh, st::time, et::time, s, null
from (values
  ('alice', 'CP', '2026-11-17', '2026-11-17', null, null, null, null, 'validated'),
  ('alice', 'MAL', '2026-11-18', '2026-11-18', 'morning', 'morning', null, null, 'validated'),
  ('alice', 'MAL', '2026-11-19', '2026-11-19', 'afternoon', 'afternoon', null, null, 'cancellation_requested'),
  ('alice', 'DON', '2026-11-20', '2026-11-20', null, null, '10:00', '11:30', 'validated'),
  ('alice', 'CP', '2026-11-24', '2026-11-24', null, null, null, null, 'pending'),
  ('alice', 'CP', '2026-11-25', '2026-11-25', null, null, null, null, 'validated'),
  ('alice', 'CP', '2026-11-25', '2026-11-25', null, null, null, null, 'refused'),
  ('bruno', 'CP', '2026-11-30', '2026-12-02', 'afternoon', null, null, null, 'validated'),
  ('bruno', 'MAL', '2026-11-10', '2026-11-10', 'morning', 'morning', null, null, 'validated'),
  ('bruno', 'ENF', '2026-11-10', '2026-11-10', 'afternoon', 'afternoon', null, null, 'validated'),
  ('chloe', 'CP', '2026-11-09', '2026-11-13', null, null, null, null, 'validated')
) as v(e, t, ds, de, sh, eh, st, et, s);
insert into app_public.shift_change_requests (employee_id, date, reason, is_remote)
values (tests.id('employees', 'alice'), '2026-11-27', 'urgence', true),
       (tests.id('employees', 'alice'), '2026-11-25', 'urgence', false);
insert into app_public.day_modifications (employee_id, date, slots, is_remote, comment)
values (tests.id('employees', 'alice'), '2026-11-23',
        array[row('07:00', '14:00', '10:00', '10:15', true, tests.id('posts', 'E1-M'), tests.id('establishments', 'E1'), true)::app_public.slot,
              row('18:00', '20:00', null, null, false, null, tests.id('establishments', 'E1'), false)::app_public.slot],
        false, 'Remplacement'),
       (tests.id('employees', 'bruno'), '2026-11-24', '{}', false, 'Repos donné');

-- 1-6. Expanded, the grid draws what the full read gives, for every kind of reader.
select tests.authenticate_as('mgr1');
select is(pg_temp.differences('2026-11-01', '2026-11-30'), '', 'a manager, a month of its perimeter: every cell the same');
select is(pg_temp.differences('2026-11-16', '2026-12-06'), '', 'a window across two months (an absence running on)');
select tests.authenticate_as('rh1');
select is(pg_temp.differences('2026-11-01', '2026-11-30'), '', 'RH n1, the whole association');
select is(pg_temp.differences('2026-11-01', '2026-11-30', tests.id('establishments', 'E2')), '', 'RH n1, one establishment');
select tests.authenticate_as('alice');
select is(pg_temp.differences('2026-11-01', '2026-11-30'), '', 'an employee: their own row');
select tests.authenticate_as('mgr1_noemp');
select is(pg_temp.differences('2026-11-01', '2026-11-30'), '', 'a manager without an employee record');

-- 7-9. Each thing once, and a row per employee with a cell per day.
select tests.authenticate_as('rh1');
create temporary table grid on commit drop as select app_public.planning_grid('2026-11-01', '2026-11-30')::jsonb as g;
select is((select count(distinct x) from grid, jsonb_array_elements(g -> 'posts') x),
          (select jsonb_array_length(g -> 'posts')::bigint from grid), 'each post once');
select is((select count(distinct x) from grid, jsonb_array_elements(g -> 'blocks') x),
          (select jsonb_array_length(g -> 'blocks')::bigint from grid), 'each block once');
select is((select array_agg(distinct jsonb_array_length(r)) from grid, jsonb_array_elements(g -> 'rows') r), array[30],
          'each row: one cell per day of the window');
select is((select jsonb_array_length(g -> 'rows') from grid), (select jsonb_array_length(g -> 'employees') from grid),
          'one row per employee');
select is((select g -> 'holidays' from grid),
          '[{"date": "2026-11-01", "name": "Toussaint"}, {"date": "2026-11-11", "name": "Armistice 1918"}]'::jsonb,
          'the holidays of the window');

-- 12-15. The perimeter: rows outside it are never read; the filters narrow, never widen.
select tests.authenticate_as('mgr1');
select ok(not exists (select 1 from jsonb_array_elements(app_public.planning_grid('2026-11-01', '2026-11-30')::jsonb -> 'employees') e
                      where (e ->> 'id')::int in (tests.id('employees', 'david'), tests.id('employees', 'gaelle'))),
          'a manager of E1 reads no row outside its perimeter (gaelle of E2, david of E3)');
select is(app_public.planning_grid('2026-11-01', '2026-11-30', tests.id('establishments', 'E3'))::jsonb -> 'rows', '[]'::jsonb,
          'filtering on E3 reads nobody');
select tests.authenticate_as('mgr1_noemp');
select is((select array_agg((e ->> 'id')::int order by 1)
           from jsonb_array_elements(app_public.planning_grid('2026-11-01', '2026-11-30')::jsonb -> 'employees') e),
          (select array_agg(x order by 1) from app_hidden.perimeter_employee_ids('absences.view_absence_queue') x),
          'a manager of E3 without an employee record: the E3 perimeter');
select tests.authenticate_as('salarie_noemp');
select is(app_public.planning_grid('2026-11-01', '2026-11-30')::jsonb - 'holidays',
          '{"from": "2026-11-01", "to": "2026-11-30", "employees": [], "posts": [], "reasons": [], "blocks": [], "cells": [], "rows": []}'::jsonb,
          'an account without an employee record nor the directory: an empty grid');

-- 16-17. A closed account reads no perimeter (the HTTP layer answers 401 before any call).
select tests.as_owner();
update app_public.accounts set is_active = false where username = 'mgr1';
select tests.authenticate_as('mgr1');
select is(app_public.planning_grid('2026-11-01', '2026-11-30')::jsonb -> 'employees',
          jsonb_build_array(jsonb_build_object('id', tests.id('employees', 'mgr1'), 'name', 'Julien Petit')),
          'a closed manager account: its own row only, as GET /api/planning/');
select is(pg_temp.differences('2026-11-01', '2026-11-30'), '', 'and the same cells as the full read');
select tests.as_owner();
update app_public.accounts set is_active = true where username = 'mgr1';

-- 18-21. The same errors as GET /api/planning/.
select tests.authenticate_as('mgr1');
select throws_ok($$select app_public.planning_grid('2026-11-01', '2027-01-02')$$, 'WV108', null, 'more than 62 days: 400 under to');
select throws_ok($$select app_public.planning_grid('2026-11-20', '2026-11-19')$$, 'WV108', null, 'to before from: 400 under to');
select is((app_public.planning_grid(null, null)::jsonb ->> 'from'), '2026-11-16', 'without from nor to: the current week');
select is((app_public.planning_grid('2026-11-01', null)::jsonb ->> 'to'), '2026-11-07', 'with from only: 7 days');

-- 22-23. A cell's content, read as the grid reads it: alice's whole-day CP with a pending
-- day-change request (the absence block carries the cell's pending request), her morning MAL.
select tests.authenticate_as('mgr1');
select is((select block from pg_temp.expanded(app_public.planning_grid('2026-11-25', '2026-11-25')::json)
           where employee = tests.id('employees', 'alice')),
          '{"kind": "absence", "part": "day", "status": "validated", "pending": "request", "end_time": null, "modified": false,
            "post_code": null, "post_label": null, "start_time": null, "reason_code": "CP", "reason_name": "Congés payés"}'::jsonb,
          'a whole-day absence with a pending day-change request that day');
select is((select array_agg(block ->> 'kind' order by n) from pg_temp.expanded(app_public.planning_grid('2026-11-18', '2026-11-18')::json)
           where employee = tests.id('employees', 'alice')),
          array['absence', 'work'], 'a morning absence: the absence, then the worked half');

-- 24. An employee with two templates in the window (the latest valid one each day), and the
-- others' template weeks written once.
select tests.as_owner();
with t as (
  insert into app_public.planning_templates (employee_id, valid_from)
  values (tests.id('employees', 'alice'), '2026-11-20') returning id
)
insert into app_public.planning_template_slots (template_id, weekday, position, post_id)
select t.id, d, p, case p when 1 then tests.id('posts', 'E1-M') else tests.id('posts', 'E1-S') end
from t cross join generate_series(1, 6) d cross join generate_series(1, 2) p;
select tests.authenticate_as('mgr1');
select is(pg_temp.differences('2026-11-01', '2026-11-30'), '', 'a second template from the 20th: every cell the same');

-- 25. Hidden from GraphQL (the REST route's text).
select tests.as_owner();
select is(split_part(obj_description('app_public.planning_grid(date, date, int, int)'::regprocedure, 'pg_proc'), E'\n', 1),
  '@behavior -*', 'hidden from GraphQL: the smart tag is its comment''s first line');

-- 26-27. A template that ends within the window (its days after it: rests), an employee without
-- any template (all rests): the rows are their template's week repeated, with the days out of the
-- template's validity and the special cells put in; windows starting on any weekday.
select tests.as_owner();
update app_public.planning_templates set valid_to = '2026-11-12' where employee_id = tests.id('employees', 'bruno');
delete from app_public.planning_template_slots
where template_id in (select id from app_public.planning_templates where employee_id = tests.id('employees', 'chloe'));
delete from app_public.planning_templates where employee_id = tests.id('employees', 'chloe');
select tests.authenticate_as('rh1');
select is(pg_temp.differences('2026-11-01', '2026-11-30'), '', 'a template ending on the 12th, an employee without template: every cell the same');
select is(pg_temp.differences('2026-11-11', '2026-12-09'), '', 'the same from a Wednesday, across two months');

select * from finish();
rollback;
