-- The perimeter: app_hidden.permission_scope, perimeter_employee_ids, may and
-- perimeter_establishment_ids. Dated establishment attributions, whole association without
-- establishments, main / secondary workplace, dated team assignments to a team spanning
-- establishments, employees without main workplace, on-call extension [start, end).
begin;
select plan(50);

select tests.freeze('2026-11-16 10:00+01');

-- Extra people: zoe works in E3 with a secondary workplace in E2; yann has no main
-- workplace and joins team T2 (E1 + E2) from 20 to 22 November only.
insert into app_public.employees (first_name, last_name, main_establishment_id)
values ('Zoé', 'zoe', tests.id('establishments', 'E3')), ('Yann', 'yann', null);
insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
select id, tests.id('establishments', 'E2') from app_public.employees where last_name = 'zoe';
insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
select id, tests.id('teams', 'T2'), '2026-11-20', '2026-11-22' from app_public.employees where last_name = 'yann';

-- Extra accounts (no employee record).
insert into app_public.accounts (username) values
  ('p-dated'), ('p-multi'), ('p-mixed'), ('p-whole'), ('p-expired'), ('p-paie-e3');
insert into app_public.role_attributions (account_id, role_id, start_date, end_date)
select a.id, x.role_id, x.start_date::date, x.end_date::date
from (values ('p-dated', 6, '2026-11-17', '2026-11-18'),
             ('p-multi', 5, null, null),
             ('p-mixed', 5, null, null),
             ('p-mixed', 6, null, null),
             ('p-whole', 5, null, null),
             ('p-expired', 5, '2026-01-01', '2026-11-15'),
             ('p-paie-e3', 9, null, null)) as x(username, role_id, start_date, end_date)
join app_public.accounts a on a.username = x.username;
insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
select ra.id, tests.id('establishments', x.est)
from (values ('p-dated', 6, 'E3'), ('p-multi', 5, 'E2'), ('p-multi', 5, 'E3'), ('p-mixed', 5, 'E1'),
             ('p-expired', 5, 'E3'), ('p-paie-e3', 9, 'E3')) as x(username, role_id, est)
join app_public.accounts a on a.username = x.username
join app_public.role_attributions ra on ra.account_id = a.id and ra.role_id = x.role_id;
-- p-expired was Manager n1 of E3 until yesterday and is on call for E1 now; alice (Salarié)
-- is on call for E1 now too.
insert into app_public.on_call_periods (account_id, start_at, end_at)
select a.id, '2026-11-16 08:00+01', '2026-11-17 08:00+01'
from app_public.accounts a where a.username in ('p-expired', 'alice');
insert into app_public.on_call_period_establishments (period_id, establishment_id)
select p.id, tests.id('establishments', 'E1')
from app_public.on_call_periods p join app_public.accounts a on a.id = p.account_id
where a.username in ('p-expired', 'alice');

create function pg_temp.acc(p_username text) returns int language sql stable as $$
  select id from app_public.accounts where username = p_username;
$$;
create function pg_temp.emp(p_key text) returns int language sql stable as $$
  select coalesce(tests.id('employees', p_key), (select id from app_public.employees where last_name = p_key));
$$;
-- The perimeter as employee keys (fixture key, else the extra employee's last name).
create function pg_temp.perimeter(p_username text, p_permission text, p_at timestamptz default null)
returns setof text language sql stable as $$
  select coalesce(f.key, e.last_name)
  from app_hidden.perimeter_employee_ids(p_permission, pg_temp.acc(p_username), p_at) x(id)
  join app_public.employees e on e.id = x.id
  left join public.fixture_ids f on f.section = 'employees' and f.id = x.id;
$$;
-- The scope, establishments as sorted keys.
create function pg_temp.scope(p_username text, p_permission text, p_at timestamptz default null)
returns table (whole boolean, establishments text[]) language sql stable as $$
  select s.whole, case when s.establishment_ids is not null then array(
           select f.key from public.fixture_ids f
           where f.section = 'establishments' and f.id = any (s.establishment_ids) order by f.key) end
  from app_hidden.permission_scope(pg_temp.acc(p_username), p_permission, coalesce(p_at, app_hidden.now())) s;
$$;
create function pg_temp.may(p_username text, p_permission text, p_employee text, p_at timestamptz default null)
returns boolean language sql stable as $$
  select app_hidden.may(pg_temp.acc(p_username), p_permission, pg_temp.emp(p_employee), p_at);
$$;

-- Establishment attributions.
select set_eq($$select * from pg_temp.perimeter('mgr1', 'absences.view_absence_queue')$$,
  array['admin', 'rh1', 'da', 'mgr1', 'paie', 'alice', 'bruno', 'emma', 'chloe'],
  'mgr1 (E1): main workplace E1, plus chloe through team T2 spanning E1 and E2');
select results_eq($$select * from pg_temp.scope('mgr1', 'absences.view_absence_queue')$$,
  $$values (false, array['E1'])$$, 'mgr1: scope restricted to E1');
select set_eq($$select * from pg_temp.perimeter('mgr2', 'absences.decide_absence')$$,
  array['rh2', 'mgr2', 'chloe', 'gaelle', 'bruno', 'zoe'],
  'mgr2 (E2): main E2, bruno (secondary E2 and team T2), zoe (secondary E2)');
select set_eq($$select * from pg_temp.perimeter('mgr3', 'absences.view_absence_queue')$$,
  array['mgr3', 'david', 'zoe'], 'mgr3 (E3) outside on-call: E3 only');
select set_eq($$select * from pg_temp.perimeter('rh2', 'employee.view_social_security_number')$$,
  array['rh2', 'mgr2', 'chloe', 'gaelle', 'bruno', 'zoe'], 'rh2 (RH n2, E2): the E2 perimeter');
select set_eq($$select * from pg_temp.perimeter('p-multi', 'absences.view_absence_queue')$$,
  array['rh2', 'mgr2', 'chloe', 'gaelle', 'bruno', 'zoe', 'mgr3', 'david'],
  'an attribution with two establishments covers both');
select results_eq($$select * from pg_temp.scope('p-multi', 'absences.view_absence_queue')$$,
  $$values (false, array['E2', 'E3'])$$, 'two establishments in the scope');
select set_eq($$select * from pg_temp.perimeter('da', 'absences.view_absence_queue')$$,
  array['admin', 'rh1', 'da', 'mgr1', 'paie', 'alice', 'bruno', 'emma', 'chloe'], 'da (E1): reads the E1 queue');
select is_empty($$select * from pg_temp.perimeter('da', 'absences.decide_absence')$$,
  'da holds no decision perimeter');
select set_eq($$select * from pg_temp.perimeter('p-paie-e3', 'employee.view_payroll')$$,
  array['mgr3', 'david', 'zoe'], 'Service Paie restricted to E3: the E3 payroll perimeter');

-- Dated attribution (Manager n2 of E3 from 17 to 18 November inclusive).
select is_empty($$select * from pg_temp.perimeter('p-dated', 'absences.view_absence_queue')$$,
  'dated attribution: no perimeter before its start');
select set_eq($$select * from pg_temp.perimeter('p-dated', 'absences.view_absence_queue', '2026-11-17 00:00+01')$$,
  array['mgr3', 'david', 'zoe'], 'dated attribution: E3 from its first day');
select set_eq($$select * from pg_temp.perimeter('p-dated', 'absences.view_absence_queue', '2026-11-18 23:59:59+01')$$,
  array['mgr3', 'david', 'zoe'], 'dated attribution: E3 until the end of its last day');
select is_empty($$select * from pg_temp.perimeter('p-dated', 'absences.view_absence_queue', '2026-11-19 00:00+01')$$,
  'dated attribution: nothing the day after its end');

-- No establishment: the whole association, people without main workplace included.
select results_eq($$select * from pg_temp.scope('p-whole', 'absences.decide_absence')$$,
  $$values (true, null::text[])$$, 'a manager role without establishments: whole association');
select set_eq($$select * from pg_temp.perimeter('p-whole', 'absences.decide_absence')$$,
  $$select coalesce(f.key, e.last_name) from app_public.employees e
    left join public.fixture_ids f on f.section = 'employees' and f.id = e.id$$,
  'whole association: every employee');
select set_eq($$select * from pg_temp.perimeter('admin', 'employee.change_employee_record')$$,
  $$select coalesce(f.key, e.last_name) from app_public.employees e
    left join public.fixture_ids f on f.section = 'employees' and f.id = e.id$$,
  'admin (no establishment): every employee');
select results_eq($$select * from pg_temp.scope('p-mixed', 'absences.view_absence_queue')$$,
  $$values (true, null::text[])$$, 'a restricted and an unrestricted attribution together: whole association');
select ok(app_hidden.perimeter_establishment_ids('absences.view_absence_queue', pg_temp.acc('admin')) is null,
  'perimeter_establishment_ids: null means the whole association');

-- Employees without main workplace.
select ok(not pg_temp.may('mgr1', 'absences.view_absence_queue', 'farid'), 'farid (no main workplace) is outside mgr1''s perimeter');
select ok(not pg_temp.may('rh2', 'employee.view_social_security_number', 'farid'), 'farid is outside rh2''s perimeter');
select ok(not pg_temp.may('da', 'absences.view_absence_queue', 'farid'), 'farid is outside da''s perimeter');
select ok(pg_temp.may('admin', 'absences.view_absence_queue', 'farid'), 'farid is inside admin''s perimeter');
select ok(pg_temp.may('rh1', 'absences.decide_absence', 'farid'), 'farid is inside rh1''s perimeter (unrestricted RH n1)');

-- Main and secondary workplaces, teams.
select ok(pg_temp.may('mgr1', 'absences.decide_absence', 'chloe'), 'chloe (E2) is in mgr1''s perimeter through team T2 (E1 + E2)');
select ok(pg_temp.may('mgr2', 'absences.decide_absence', 'bruno'), 'bruno (E1, secondary E2) is in mgr2''s perimeter');
select ok(pg_temp.may('mgr2', 'absences.decide_absence', 'zoe') and not pg_temp.may('mgr1', 'absences.decide_absence', 'zoe'),
  'a secondary workplace brings the employee into that establishment''s perimeter only');
select ok(not pg_temp.may('mgr1', 'absences.decide_absence', 'david'), 'david (E3) is outside mgr1''s perimeter');

-- Dated team assignment (yann in T2 from 20 to 22 November, no main workplace).
select ok(not pg_temp.may('mgr1', 'absences.decide_absence', 'yann', '2026-11-19 23:59:59+01'),
  'team assignment: not yet on the day before its start');
select ok(pg_temp.may('mgr1', 'absences.decide_absence', 'yann', '2026-11-20 00:00+01'),
  'team assignment: in the perimeter from its start date');
select ok(pg_temp.may('mgr2', 'absences.decide_absence', 'yann', '2026-11-22 23:59:59+01'),
  'team assignment: the team spans E2 too, up to its end date');
select ok(not pg_temp.may('mgr1', 'absences.decide_absence', 'yann', '2026-11-23 00:00+01'),
  'team assignment: out of the perimeter the day after its end');

-- On-call: mgr3 (Manager n1 of E3) on call for E1 from 20 Nov 18:00 to 23 Nov 08:00 (Paris).
select ok(not pg_temp.may('mgr3', 'absences.view_absence_queue', 'alice', '2026-11-20 17:59:59+01'),
  'on-call: not extended one second before the start');
select ok(pg_temp.may('mgr3', 'absences.view_absence_queue', 'alice', '2026-11-20 18:00:00+01'),
  'on-call: extended exactly at the start (included)');
select ok(pg_temp.may('mgr3', 'absences.decide_absence', 'alice', '2026-11-23 07:59:59+01'),
  'on-call: still extended one second before the end');
select ok(not pg_temp.may('mgr3', 'absences.view_absence_queue', 'alice', '2026-11-23 08:00:00+01'),
  'on-call: not extended exactly at the end (excluded)');
select results_eq($$select * from pg_temp.scope('mgr3', 'absences.view_absence_queue', '2026-11-21 12:00+01')$$,
  $$values (false, array['E1', 'E3'])$$, 'on-call: the scope is E3 plus the period''s E1');
select set_eq($$select * from pg_temp.perimeter('mgr3', 'absences.view_absence_queue', '2026-11-21 12:00+01')$$,
  array['mgr3', 'david', 'zoe', 'admin', 'rh1', 'da', 'mgr1', 'paie', 'alice', 'bruno', 'emma', 'chloe', 'yann'],
  'on-call: the perimeter adds the E1 people (yann through T2 that day)');
select is_empty($$select * from pg_temp.perimeter('mgr3', 'employee.view_payroll', '2026-11-21 12:00+01')$$,
  'on-call grants no permission the role does not hold');
select results_eq($$select * from pg_temp.scope('alice', 'absences.view_absence_queue')$$,
  $$values (false, '{}'::text[])$$, 'on-call adds nothing to an account without a manager role (Salarié)');
select is_empty($$select * from pg_temp.perimeter('p-expired', 'absences.view_absence_queue')$$,
  'on-call adds nothing once the manager attribution has ended');

-- Superuser, Salarié, Intérimaire.
select results_eq($$select * from pg_temp.scope('root', 'audit.view_actionlog')$$,
  $$values (true, null::text[])$$, 'superuser: whole association, even for audit.view_actionlog');
select ok((select count(*) from pg_temp.perimeter('root', 'employee.view_social_security_number'))
          = (select count(*) from app_public.employees), 'superuser: every employee');
select results_eq($$select * from pg_temp.scope('rh1', 'audit.view_actionlog')$$,
  $$values (true, null::text[])$$, 'an explicit permission carries no establishment restriction');
select is_empty($$select p.code, x.id from app_public.permissions p,
                  app_hidden.perimeter_employee_ids(p.code, pg_temp.acc('alice')) x(id)$$,
  'Salarié: no perimeter for any permission');
select is_empty($$select p.code, x.id from app_public.permissions p,
                  app_hidden.perimeter_employee_ids(p.code, pg_temp.acc('emma')) x(id)$$,
  'Intérimaire: no perimeter for any permission');
select is(app_hidden.perimeter_establishment_ids('absences.view_absence_queue', pg_temp.acc('alice')), '{}'::int[],
  'Salarié: an empty establishment list, not null (null would mean the whole association)');

-- The acting account by default.
select tests.authenticate_as('mgr2');
select is(app_hidden.perimeter_establishment_ids('absences.view_absence_queue'),
  array[tests.id('establishments', 'E2')], 'without an account argument: the acting account (mgr2: E2)');
select ok(app_hidden.current_employee_id() = tests.id('employees', 'mgr2')
          and tests.id('employees', 'chloe') in (select app_hidden.perimeter_employee_ids('absences.decide_absence')),
  'without an account argument: the perimeter of the acting account');
select tests.as_owner();

-- An inactive manager has no perimeter.
update app_public.accounts set is_active = false where username = 'mgr1';
select results_eq($$select * from pg_temp.scope('mgr1', 'absences.view_absence_queue')$$,
  $$values (false, '{}'::text[])$$, 'an inactive manager has no perimeter');

select * from finish();
rollback;
