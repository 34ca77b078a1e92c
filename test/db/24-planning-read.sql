-- The planning (GET /api/planning/): window, branch by directory permission, cells built
-- from the template, day modifications, granted absences (whole, half-day, hourly),
-- pending requests and on-call periods of the employee's teams.
begin;
select plan(46);
select tests.freeze('2026-11-16 10:00+01');

-- The blocks of one cell: kinds in order.
create function pg_temp.cell(p_planning jsonb, p_employee int, p_date date) returns jsonb language sql as $$
  select c -> 'blocks' from jsonb_array_elements(p_planning -> 'cells') c
  where (c ->> 'employee')::int = p_employee and c ->> 'date' = p_date::text;
$$;
create function pg_temp.kinds(p_blocks jsonb) returns text language sql as $$
  select string_agg(b ->> 'kind', ',' order by o) from jsonb_array_elements(p_blocks) with ordinality x(b, o);
$$;
grant execute on function pg_temp.cell(jsonb, int, date), pg_temp.kinds(jsonb) to wfm_visitor;

-- Arranged data (as owner): absences of every kind and state, a day modification.
select tests.as_owner();
insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, start_time, end_time, status, comment)
select tests.id('employees', e), (select id from app_public.absence_types where code = t), ds::date, de::date, sh, eh, st::time, et::time, s, c
from (values
  ('alice', 'CP', '2026-11-17', '2026-11-17', null, null, null, null, 'validated', 'Congé'),
  ('alice', 'MAL', '2026-11-18', '2026-11-18', 'morning', 'morning', null, null, 'validated', null),
  ('alice', 'MAL', '2026-11-19', '2026-11-19', 'afternoon', 'afternoon', null, null, 'cancellation_requested', null),
  ('alice', 'DON', '2026-11-20', '2026-11-20', null, null, '10:00', '11:30', 'validated', null),
  ('alice', 'CP', '2026-11-24', '2026-11-24', null, null, null, null, 'pending', null),
  ('alice', 'CP', '2026-11-25', '2026-11-25', null, null, null, null, 'refused', null),
  ('alice', 'CP', '2026-11-26', '2026-11-26', null, null, null, null, 'cancelled', null),
  ('alice', 'CP', '2026-11-30', '2026-12-02', 'afternoon', null, null, null, 'validated', null)
) as v(e, t, ds, de, sh, eh, st, et, s, c);
insert into app_public.day_modifications (employee_id, date, slots, is_remote, comment)
values (tests.id('employees', 'alice'), '2026-11-23',
        array[row('07:00', '14:00', '10:00', '10:15', true, tests.id('posts', 'E1-M'), tests.id('establishments', 'E1'), true)::app_public.slot],
        false, 'Remplacement de Bruno');
insert into app_public.shift_change_requests (employee_id, date, reason, is_remote)
values (tests.id('employees', 'alice'), '2026-11-27', 'urgence', true);

select tests.authenticate_as('alice');
select app_public.planning_read(null, null, null) as week \gset
select is((:'week'::jsonb) ->> 'from', '2026-11-16', 'without from/to: the current week from Monday');
select is((:'week'::jsonb) ->> 'to', '2026-11-22', 'to Sunday');
select is(jsonb_array_length((:'week'::jsonb) -> 'cells'), 7, 'an employee reads their own 7 cells');
select is((:'week'::jsonb) -> 'employees' -> 0 ->> 'name', 'Alice Martin', 'and their own record');

-- The template.
select is(pg_temp.kinds(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-16')), 'work', 'Monday: worked');
select is(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-16') -> 0 ->> 'post_code', 'J', 'with the post of the template');
select is((pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-16') -> 0 ->> 'minutes')::int, 450, 'and its net minutes');
select is(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-16') -> 0 -> 'modified', 'false'::jsonb, 'not modified');
select is(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-16') -> 0 -> 'absence', 'null'::jsonb, 'a worked day carries absence null');
select is(pg_temp.kinds(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-21')), 'rest', 'Saturday: rest');

-- Granted absences prevail.
select is(pg_temp.kinds(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-17')), 'absence', 'a whole-day absence: one block');
select is(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-17') -> 0 -> 'absence' ->> 'type_code', 'CP', 'carrying the absence (type)');
select is(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-17') -> 0 -> 'absence' ->> 'comment', 'Congé', 'and its comment');
select is(pg_temp.kinds(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-18')), 'absence,work', 'a morning absence: two blocks, absence first');
select is(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-18') -> 1 -> 'absence', 'null'::jsonb, 'the worked post next to it has absence null');
select is(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-18') -> 0 -> 'absence' ->> 'part', 'morning', 'the absence covers the morning');
select is(pg_temp.kinds(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-19')), 'work,absence', 'an afternoon absence: work first');
select is(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-19') -> 1 -> 'pending_request',
          jsonb_build_object('kind', 'absence', 'id', (select id from app_public.absences where date_start = '2026-11-19'), 'is_cancellation', true),
          'a requested cancellation: still drawn, with pending_request is_cancellation true');
select is(pg_temp.kinds(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-20')), 'work,absence', 'an hourly absence among the worked slots, by time');
select is((pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-20') -> 1 ->> 'minutes')::int, 90, 'with its minutes');

-- On-call periods of the employee's teams (mgr3 on call for E1 from Friday 18:00 to Monday 08:00).
select is(jsonb_array_length(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-19') -> 0 -> 'on_call'), 0, 'Thursday: no on-call');
select is(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-20') -> 0 -> 'on_call' -> 0 ->> 'name', 'Paul Fontaine',
          'Friday: the on-call period of her team (T1, E1) is shown');
select is(jsonb_array_length(pg_temp.cell(:'week', tests.id('employees', 'alice'), '2026-11-22') -> 0 -> 'on_call'), 1, 'Sunday too');

-- Next week: a day modification, a pending absence, refused and cancelled ones, a pending day change.
select app_public.planning_read('2026-11-23', '2026-12-02', null) as next \gset
select is(jsonb_array_length((:'next'::jsonb) -> 'cells'), 10, 'an explicit window');
select is(pg_temp.cell(:'next', tests.id('employees', 'alice'), '2026-11-23') -> 0 ->> 'post_code', 'M', 'a day modification replaces the template');
select is(pg_temp.cell(:'next', tests.id('employees', 'alice'), '2026-11-23') -> 0 -> 'modified', 'true'::jsonb, 'marked modified');
select is((pg_temp.cell(:'next', tests.id('employees', 'alice'), '2026-11-23') -> 0 ->> 'minutes')::int, 420, 'a paid break is not deducted');
select is(pg_temp.cell(:'next', tests.id('employees', 'alice'), '2026-11-23') -> 0 ->> 'comment', 'Remplacement de Bruno', 'with its comment');
select is(pg_temp.cell(:'next', tests.id('employees', 'alice'), '2026-11-23') -> 0 -> 'is_remote', 'true'::jsonb, 'and its options');
select is(pg_temp.cell(:'next', tests.id('employees', 'alice'), '2026-11-24') -> 0 -> 'pending_request',
          jsonb_build_object('kind', 'absence', 'id', (select id from app_public.absences where date_start = '2026-11-24'), 'is_cancellation', false),
          'a pending absence is not drawn; it shows as pending_request');
select is(pg_temp.kinds(pg_temp.cell(:'next', tests.id('employees', 'alice'), '2026-11-24')), 'work', 'the day stays worked');
select is(pg_temp.kinds(pg_temp.cell(:'next', tests.id('employees', 'alice'), '2026-11-25')) || pg_temp.kinds(pg_temp.cell(:'next', tests.id('employees', 'alice'), '2026-11-26')),
          'workwork', 'refused and cancelled absences are not drawn');
select is(pg_temp.cell(:'next', tests.id('employees', 'alice'), '2026-11-27') -> 0 -> 'pending_request' ->> 'kind', 'shift_change',
          'a pending day-change request shows as pending_request');
select is(pg_temp.kinds(pg_temp.cell(:'next', tests.id('employees', 'alice'), '2026-11-30'))
          || '/' || pg_temp.kinds(pg_temp.cell(:'next', tests.id('employees', 'alice'), '2026-12-01')),
          'work,absence/absence', 'an absence starting in the afternoon: half the first day, then whole days');

-- The window.
select throws_ok($$select app_public.planning_read('2026-11-01', '2027-01-02', null)$$, 'WV108',
                 'Le planning se lit sur 62 jours au plus (ici 63 jours) : réduisez la période.', 'more than 62 days: 400');
select is(jsonb_array_length(app_public.planning_read('2026-11-01', '2027-01-01', null)::jsonb -> 'cells'), 62, '62 days are accepted');
select throws_ok($$select app_public.planning_read('2026-11-20', '2026-11-19', null)$$, 'WV108', null, 'to before from: 400');
select is((app_public.planning_read('2026-11-20', null, null)) ->> 'to', '2026-11-26', 'only from: seven days from it');

-- The branch depends on the directory permission.
select throws_ok(format('select app_public.planning_read(null, null, %s)', tests.id('employees', 'chloe')), 'WN102', null,
                 'an employee cannot read a colleague''s cells');
select tests.authenticate_as('paie');
select is((select array_agg((e ->> 'id')::int) from jsonb_array_elements(app_public.planning_read(null, null, null)::jsonb -> 'employees') e),
          array[tests.id('employees', 'paie')], 'Service Paie (no directory permission) reads only its own week');
select tests.authenticate_as('mgr1');
select is(jsonb_array_length(app_public.planning_read(null, null, null)::jsonb -> 'employees'), 9, 'a manager reads the perimeter (E1, T2 spanning E1)');
select throws_ok(format('select app_public.planning_read(null, null, %s)', tests.id('employees', 'david')), 'WN102', null,
                 'an employee outside the perimeter: 404');
select is((select count(*)::int from jsonb_array_elements(app_public.planning_read(null, null, tests.id('employees', 'bruno'))::jsonb -> 'cells')), 7,
          'employee narrows to one readable employee');
select tests.authenticate_as('staff');
select is(app_public.planning_read(null, null, null)::jsonb -> 'cells', '[]'::jsonb, 'an account without record nor directory: nothing');
select tests.authenticate_as('root');
select is(jsonb_array_length(app_public.planning_read(null, null, null)::jsonb -> 'employees'),
          (select count(*)::int from public.fixture_ids where section = 'employees'), 'a superuser reads the whole association');
select tests.authenticate_as('da');
select ok(pg_temp.kinds(pg_temp.cell(app_public.planning_read(null, null, null)::jsonb, tests.id('employees', 'alice'), '2026-11-17')) = 'absence',
          'the DA reads the planning of the perimeter with its absences');

select * from finish();
rollback;
