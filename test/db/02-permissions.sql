-- SPEC "Permissions" as data: for each of the ten role-granted permissions, exactly the
-- roles of the table hold it. audit.view_actionlog is explicit only, a superuser holds
-- everything, an inactive account nothing, dated attributions grant only inside their
-- (inclusive, Europe/Paris) dates, and opening an account on a record grants Salarié once.
begin;
select plan(39);

select tests.freeze('2026-11-16 10:00+01');

-- One fresh account per role, unrestricted, without employee record (so no automatic Salarié).
insert into app_public.accounts (username) select 'perm-' || r.id from app_public.roles r;
insert into app_public.role_attributions (account_id, role_id)
select a.id, r.id from app_public.roles r join app_public.accounts a on a.username = 'perm-' || r.id;

-- Roles (in display order) whose fresh account holds the permission now.
create function pg_temp.holders(p_permission text) returns setof text language sql stable as $$
  select r.name from app_public.roles r
  join app_public.accounts a on a.username = 'perm-' || r.id
  where app_hidden.account_has_permission(a.id, p_permission)
  order by r.precedence;
$$;

select is((select count(*)::int from app_public.roles), 9, 'nine roles');
select results_eq('select name from app_public.roles order by precedence',
  array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2', 'Salarié', 'Intérimaire', 'Service Paie'],
  'role names, in display precedence');
select set_eq('select code from app_public.permissions',
  array['absences.view_absence_queue', 'absences.decide_absence', 'planning.decide_shift_change',
        'absences.view_absencedocument_file', 'employee.change_employee_record',
        'employee.view_employee_directory', 'employee.view_social_security_number',
        'employee.change_account_activation', 'employee.change_interim_account_activation',
        'employee.view_payroll', 'audit.view_actionlog',
        -- the project's own, where the SPEC says "own permissions" (sql/org/accounts.sql)
        'employee.view_emergency_contact', 'employee.change_emergency_contact',
        'employee.view_employee_attachment', 'employee.change_employee_attachment',
        'employee.change_team', 'events.change_event',
        'on_call.view_on_call_period', 'on_call.change_on_call_period'],
  'the eleven permissions of the SPEC and the eight of the project exist, and only them');

-- The permission table, row by row (each list written from the SPEC, not from the data).
select results_eq($$select * from pg_temp.holders('absences.view_absence_queue')$$,
  array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2'],
  'absences.view_absence_queue: Admin, RH n1, RH n2, DA, Manager n1, Manager n2');
select results_eq($$select * from pg_temp.holders('absences.decide_absence')$$,
  array['Admin', 'RH n1', 'RH n2', 'Manager n1', 'Manager n2'],
  'absences.decide_absence: Admin, RH n1, RH n2, Manager n1, Manager n2 (not DA)');
select results_eq($$select * from pg_temp.holders('planning.decide_shift_change')$$,
  array['Admin', 'RH n1', 'RH n2', 'Manager n1', 'Manager n2'],
  'planning.decide_shift_change: the same five roles');
select results_eq($$select * from pg_temp.holders('absences.view_absencedocument_file')$$,
  array['Admin', 'RH n1', 'RH n2'],
  'absences.view_absencedocument_file: Admin, RH n1, RH n2');
select results_eq($$select * from pg_temp.holders('employee.change_employee_record')$$,
  array['Admin', 'RH n1', 'RH n2'],
  'employee.change_employee_record: Admin, RH n1, RH n2');
select results_eq($$select * from pg_temp.holders('employee.view_employee_directory')$$,
  array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2'],
  'employee.view_employee_directory: the encadrement (Admin, RH, DA, managers)');
select results_eq($$select * from pg_temp.holders('employee.view_social_security_number')$$,
  array['Admin', 'RH n1', 'RH n2'],
  'employee.view_social_security_number: Admin, RH n1, RH n2');
select results_eq($$select * from pg_temp.holders('employee.change_account_activation')$$,
  array['Admin', 'RH n1', 'RH n2'],
  'change_account_activation: Admin, RH n1, RH n2');
select results_eq($$select * from pg_temp.holders('employee.change_interim_account_activation')$$,
  array['DA', 'Manager n1', 'Manager n2'],
  'change_interim_account_activation: DA, Manager n1, Manager n2');
select results_eq($$select * from pg_temp.holders('employee.view_payroll')$$,
  array['Admin', 'RH n1', 'RH n2', 'Service Paie'],
  'employee.view_payroll: Admin, RH n1, RH n2, Service Paie');

-- audit.view_actionlog: explicit only.
select is_empty($$select * from pg_temp.holders('audit.view_actionlog')$$,
  'audit.view_actionlog is held by no role');
select is_empty($$select * from app_public.role_permissions where permission_code = 'audit.view_actionlog'$$,
  'no role_permissions row grants audit.view_actionlog');
select ok(app_hidden.account_has_permission(tests.id('accounts', 'rh1'), 'audit.view_actionlog'),
  'rh1 holds audit.view_actionlog through account_permissions');
select ok(not app_hidden.account_has_permission(tests.id('accounts', 'admin'), 'audit.view_actionlog'),
  'admin (Admin role, no explicit permission) does not hold audit.view_actionlog');

insert into app_public.accounts (username) values ('perm-explicit');
insert into app_public.account_permissions (account_id, permission_code)
select id, 'audit.view_actionlog' from app_public.accounts where username = 'perm-explicit';
select results_eq(
  $$select p.code from app_public.permissions p, app_public.accounts a
    where a.username = 'perm-explicit' and app_hidden.account_has_permission(a.id, p.code)$$,
  array['audit.view_actionlog'],
  'an explicit permission grants that permission and nothing else');

-- Superuser: every permission, without any role.
select is_empty($$select 1 from app_public.role_attributions where account_id = tests.id('accounts', 'root')$$,
  'root holds no role');
select results_eq(
  $$select count(*)::int from app_public.permissions p
    where app_hidden.account_has_permission(tests.id('accounts', 'root'), p.code)$$,
  $$values (19)$$,
  'the superuser holds all nineteen permissions');
select ok(not app_hidden.account_has_permission(tests.id('accounts', 'staff'), 'employee.view_employee_directory'),
  'staff status alone grants no permission');

-- Inactive accounts hold nothing (roles, explicit permissions, superuser status).
update app_public.accounts set is_active = false where username in ('perm-1', 'perm-explicit');
insert into app_public.accounts (username, is_superuser, is_active) values ('perm-root-off', true, false);
select is_empty(
  $$select p.code from app_public.permissions p, app_public.accounts a
    where a.username = 'perm-1' and app_hidden.account_has_permission(a.id, p.code)$$,
  'an inactive Admin account holds no permission');
select ok(not app_hidden.account_has_permission(
  (select id from app_public.accounts where username = 'perm-explicit'), 'audit.view_actionlog'),
  'an inactive account loses its explicit permissions');
select is_empty(
  $$select p.code from app_public.permissions p, app_public.accounts a
    where a.username = 'perm-root-off' and app_hidden.account_has_permission(a.id, p.code)$$,
  'an inactive superuser holds no permission');
select ok(not app_hidden.account_has_permission(9999999, 'absences.view_absence_queue'),
  'an unknown account holds no permission');

-- Dated attribution: Manager n1 from 10 to 20 November 2026 inclusive, business dates in Paris.
insert into app_public.accounts (username) values ('perm-dated');
insert into app_public.role_attributions (account_id, role_id, start_date, end_date)
select id, 5, '2026-11-10', '2026-11-20' from app_public.accounts where username = 'perm-dated';
create function pg_temp.dated(p_at timestamptz) returns boolean language sql stable as $$
  select app_hidden.account_has_permission((select id from app_public.accounts where username = 'perm-dated'),
                                           'absences.decide_absence', p_at);
$$;
select ok(not pg_temp.dated('2026-11-09 23:59:59+01'), 'dated role: nothing the evening before its start (Paris)');
select ok(pg_temp.dated('2026-11-10 00:00:00+01'), 'dated role: granted from midnight of its start date (Paris)');
select ok(pg_temp.dated('2026-11-09 23:30:00+00'), 'dated role: 23:30 UTC on the 9th is already the 10th in Paris');
select ok(pg_temp.dated('2026-11-20 23:59:59+01'), 'dated role: still granted at the last second of its end date');
select ok(not pg_temp.dated('2026-11-20 23:30:00+00'), 'dated role: 23:30 UTC on the 20th is the 21st in Paris, over');
select ok(pg_temp.dated(null), 'dated role: granted at the frozen business now (16 November)');
select tests.freeze('2026-11-21 09:00+01');
select ok(not pg_temp.dated(null), 'dated role: not granted once the business clock is past its end');
select tests.freeze('2026-11-16 10:00+01');

-- Opening an account on an employee record grants Salarié, once.
insert into app_public.employees (first_name, last_name) values ('Perm', 'Un'), ('Perm', 'Deux');
insert into app_public.accounts (username, employee_id)
select 'perm-salarie', id from app_public.employees where last_name = 'Un';
select results_eq(
  $$select ra.role_id::int, ra.start_date, ra.end_date from app_public.role_attributions ra
    join app_public.accounts a on a.id = ra.account_id where a.username = 'perm-salarie'$$,
  $$values (7, null::date, null::date)$$,
  'an account opened on a record receives Salarié, undated, and nothing else');
select is_empty(
  $$select 1 from app_public.role_attributions ra join app_public.accounts a on a.id = ra.account_id
    where a.username = 'perm-explicit'$$,
  'an account without employee record receives no role');

update app_public.accounts set employee_id = employee_id where username = 'perm-salarie';
update app_public.accounts set employee_id = (select id from app_public.employees where last_name = 'Deux')
 where username = 'perm-salarie';
select results_eq(
  $$select count(*)::int from app_public.role_attributions ra join app_public.accounts a on a.id = ra.account_id
    where a.username = 'perm-salarie' and ra.role_id = 7$$,
  $$values (1)$$,
  'granting Salarié again (same or another record) changes nothing');

update app_public.accounts set employee_id = (select id from app_public.employees where last_name = 'Un')
 where username = 'perm-explicit';
select results_eq(
  $$select ra.role_id::int from app_public.role_attributions ra join app_public.accounts a on a.id = ra.account_id
    where a.username = 'perm-explicit'$$,
  array[7],
  'attaching a record to an existing account grants Salarié');

select is_empty(
  $$select a.username from app_public.accounts a
    where a.employee_id is not null
      and not exists (select 1 from app_public.role_attributions ra where ra.account_id = a.id and ra.role_id = 7)$$,
  'every fixture account with a record holds Salarié');
select results_eq(
  $$select count(*)::int from app_public.role_attributions ra where ra.account_id = tests.id('accounts', 'emma')$$,
  $$values (2)$$,
  'emma: Salarié once plus Intérimaire');
select ok(not app_hidden.account_has_permission(tests.id('accounts', 'alice'), 'absences.view_absence_queue')
          and not app_hidden.account_has_permission(tests.id('accounts', 'emma'), 'employee.view_payroll'),
  'Salarié and Intérimaire accounts hold none of the role permissions');

select * from finish();
rollback;
