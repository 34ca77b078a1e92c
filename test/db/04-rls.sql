-- Row-level security as the request role (tests.authenticate_as: wfm_visitor + acting
-- account), privileges of the request role, and app_public.me().
begin;
select plan(67);

select tests.freeze('2026-11-16 10:00+01');

-- Extra accounts: a Service Paie restricted to E3 with a record in E1; accounts holding
-- several roles (display precedence) or a single role other than Salarié.
insert into app_public.employees (first_name, last_name, main_establishment_id)
values ('Paula', 'paie3', tests.id('establishments', 'E1'));
insert into app_public.accounts (username, employee_id)
select 'paie3', id from app_public.employees where last_name = 'paie3';
insert into app_public.accounts (username) values
  ('r-rh2-da-m2'), ('r-m1-m2'), ('r-old-admin'), ('r-future-admin'), ('r-interim'), ('r-paie');
insert into app_public.role_attributions (account_id, role_id, start_date, end_date)
select a.id, x.role_id, x.start_date::date, x.end_date::date
from (values ('paie3', 9, null, null),
             ('r-rh2-da-m2', 6, null, null), ('r-rh2-da-m2', 4, null, null), ('r-rh2-da-m2', 3, null, null),
             ('r-m1-m2', 6, null, null), ('r-m1-m2', 5, null, null),
             ('r-old-admin', 1, '2025-01-01', '2026-11-15'), ('r-old-admin', 6, null, null),
             ('r-future-admin', 1, '2026-11-17', null), ('r-future-admin', 4, null, null),
             ('r-interim', 8, null, null),
             ('r-paie', 9, null, null)) as x(username, role_id, start_date, end_date)
join app_public.accounts a on a.username = x.username;
insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
select ra.id, tests.id('establishments', 'E3')
from app_public.role_attributions ra join app_public.accounts a on a.id = ra.account_id
where a.username = 'paie3' and ra.role_id = 9;

-- Notifications: one for alice, two for mgr1, one for root.
insert into app_public.notifications (account_id, title, body)
values (tests.id('accounts', 'alice'), 'Pour Alice', 'a'),
       (tests.id('accounts', 'mgr1'), 'Pour Julien 1', 'b'),
       (tests.id('accounts', 'mgr1'), 'Pour Julien 2', 'c'),
       (tests.id('accounts', 'root'), 'Pour root', 'd');

-- Totals, computed as owner and handed to the visitor through transaction settings.
do $$
begin
  perform set_config('tests.employees', (select count(*) from app_public.employees)::text, true);
  perform set_config('tests.accounts', (select count(*) from app_public.accounts)::text, true);
  perform set_config('tests.ssn', (select count(*) from app_public.employee_social_security_numbers)::text, true);
  perform set_config('tests.counter_people', (select count(distinct employee_id) from app_public.counters)::text, true);
end;
$$;

-- Employee keys of a set of employee ids.
create function pg_temp.keys(p_ids int[]) returns setof text language sql stable security definer as $$
  select coalesce(f.key, e.last_name) from app_public.employees e
  left join public.fixture_ids f on f.section = 'employees' and f.id = e.id
  where e.id = any (p_ids);
$$;
grant execute on function pg_temp.keys(int[]) to public;

------------------------------------------------------------------------------------------
-- employees
select tests.authenticate_as('alice');
select results_eq('select id from app_public.employees', array[tests.id('employees', 'alice')],
  'a Salarié reads only their own employee record');
select results_eq('select employee_id from app_public.contracts', array[tests.id('employees', 'alice')],
  'a Salarié reads only their own contracts');
select tests.authenticate_as('emma');
select results_eq('select id from app_public.employees', array[tests.id('employees', 'emma')],
  'an Intérimaire reads only their own employee record');
select tests.authenticate_as('farid');
select results_eq('select id from app_public.employees', array[tests.id('employees', 'farid')],
  'an employee without main workplace reads their own record');
select tests.authenticate_as('staff');
select is_empty('select id from app_public.employees', 'an account without role nor record reads no employee');

select tests.authenticate_as('mgr1');
select is((select count(*)::text from app_public.employees), current_setting('tests.employees'),
  'a directory holder (Manager n1 of E1) reads the whole directory');
select tests.authenticate_as('da');
select ok(exists (select 1 from app_public.employees where id = tests.id('employees', 'farid'))
          and exists (select 1 from app_public.employees where id = tests.id('employees', 'david')),
  'the directory is entire even for a restricted DA (farid, david of E3)');
select tests.authenticate_as('paie');
select is((select count(*)::text from app_public.employees), current_setting('tests.employees'),
  'Service Paie (whole association) reads every employee through its payroll perimeter');
select tests.authenticate_as('paie3');
select set_eq('select * from pg_temp.keys(array(select id from app_public.employees))',
  array['paie3', 'mgr3', 'david'], 'Service Paie restricted to E3: its own record and the E3 payroll perimeter');
select set_eq('select * from pg_temp.keys(array(select employee_id from app_public.contracts))',
  array['mgr3', 'david'], 'Service Paie restricted to E3: the contracts of its perimeter');

-- social security numbers
select tests.authenticate_as('rh2');
select set_eq('select * from pg_temp.keys(array(select employee_id from app_public.employee_social_security_numbers))',
  array['rh2', 'mgr2', 'chloe', 'gaelle', 'bruno'],
  'RH n2 restricted to E2 reads the social security numbers of E2 only');
select tests.authenticate_as('rh1');
select is((select count(*)::text from app_public.employee_social_security_numbers), current_setting('tests.ssn'),
  'RH n1 (whole) reads every social security number');
select tests.authenticate_as('mgr1');
select is_empty('select * from app_public.employee_social_security_numbers',
  'a manager reads no social security number, directory or not');
select tests.authenticate_as('paie');
select is_empty('select * from app_public.employee_social_security_numbers', 'Service Paie reads no social security number');
select tests.authenticate_as('alice');
select is_empty('select * from app_public.employee_social_security_numbers',
  'a Salarié does not read social security numbers (not even their own)');

-- accounts, role attributions, explicit permissions
select tests.authenticate_as('alice');
select results_eq('select id from app_public.accounts', array[tests.id('accounts', 'alice')],
  'a Salarié reads only their own account');
select set_eq('select distinct account_id from app_public.role_attributions', array[tests.id('accounts', 'alice')],
  'a Salarié reads only their own role attributions');
select is_empty('select * from app_public.account_permissions', 'a Salarié reads nobody''s explicit permissions');
select is_empty('select * from app_public.role_attribution_establishments',
  'a Salarié reads no establishment of others'' attributions');
select tests.authenticate_as('rh1');
select results_eq('select account_id, permission_code from app_public.account_permissions',
  $$values (tests.id('accounts', 'rh1'), 'audit.view_actionlog')$$, 'rh1 reads its own explicit permission');
select tests.authenticate_as('mgr1');
select is((select count(*)::text from app_public.accounts), current_setting('tests.accounts'),
  'a directory holder reads every account');
select ok(exists (select 1 from app_public.role_attributions where account_id = tests.id('accounts', 'rh2'))
          and exists (select 1 from app_public.role_attribution_establishments),
  'a directory holder reads the role attributions of others and their establishments');
select tests.authenticate_as('paie');
select results_eq('select id from app_public.accounts', array[tests.id('accounts', 'paie')],
  'Service Paie (no directory) reads only its own account');

-- counters: own, queue perimeter, payroll perimeter
select tests.authenticate_as('alice');
select set_eq('select distinct employee_id from app_public.counters', array[tests.id('employees', 'alice')],
  'a Salarié reads only their own counters');
select tests.authenticate_as('david');
select set_eq('select distinct employee_id from app_public.counters', array[tests.id('employees', 'david')],
  'david reads only his own counters');
select tests.authenticate_as('mgr1');
select set_eq('select * from pg_temp.keys(array(select employee_id from app_public.counters))',
  array['admin', 'rh1', 'da', 'mgr1', 'paie', 'alice', 'bruno', 'chloe'],
  'mgr1 reads the counters of its E1 queue perimeter (chloe through team T2)');
select tests.authenticate_as('mgr2');
select set_eq('select * from pg_temp.keys(array(select employee_id from app_public.counters))',
  array['rh2', 'mgr2', 'chloe', 'gaelle', 'bruno'], 'mgr2 reads the counters of its E2 queue perimeter');
select tests.authenticate_as('da');
select ok(not exists (select 1 from app_public.counters where employee_id = tests.id('employees', 'david'))
          and exists (select 1 from app_public.counters where employee_id = tests.id('employees', 'alice')),
  'da reads E1 counters, not E3 ones');
select tests.authenticate_as('paie');
select is((select count(distinct employee_id)::text from app_public.counters), current_setting('tests.counter_people'),
  'Service Paie (whole) reads the counters of everybody');

-- notifications: only one's own, superuser included
select tests.authenticate_as('alice');
select results_eq('select title from app_public.notifications', array['Pour Alice'], 'alice reads only her notification');
select tests.authenticate_as('mgr1');
select set_eq('select title from app_public.notifications', array['Pour Julien 1', 'Pour Julien 2'],
  'mgr1 reads only his notifications');
select tests.authenticate_as('root');
select results_eq('select title from app_public.notifications', array['Pour root'],
  'a superuser reads only its own notifications too');
select tests.authenticate_as('staff');
select is_empty('select * from app_public.notifications', 'an account without notification reads none');

------------------------------------------------------------------------------------------
-- app_private is unreadable by the request role
select tests.as_owner();
select ok(not has_schema_privilege('wfm_visitor', 'app_private', 'usage'), 'wfm_visitor has no usage on app_private');
select is_empty($$select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
                  where n.nspname = 'app_private' and c.relkind in ('r', 'v', 'p')
                    and has_table_privilege('wfm_visitor', c.oid, 'select, insert, update, delete')$$,
  'wfm_visitor holds no privilege on any app_private table or view');
select tests.authenticate_as('alice');
select throws_ok('select * from app_private.account_secrets', '42501', null, 'alice: account_secrets is denied');
select throws_ok('select * from app_private.password_tokens', '42501', null, 'alice: password_tokens is denied');
select throws_ok('select * from app_private.email_outbox', '42501', null, 'alice: email_outbox is denied');
select throws_ok('select * from app_private.counter_movements', '42501', null, 'alice: counter_movements is denied');
select tests.authenticate_as('root');
select throws_ok('select * from app_private.audit_log', '42501', null, 'a superuser account: audit_log is denied');
select throws_ok('select * from app_private.settings', '42501', null, 'a superuser account: settings are denied');

-- app_public tables are not writable directly by the request role
select tests.as_owner();
select is_empty($$select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
                  where n.nspname = 'app_public' and c.relkind in ('r', 'p')
                    and has_table_privilege('wfm_visitor', c.oid, 'insert, update, delete, truncate')$$,
  'wfm_visitor may not insert, update, delete or truncate any app_public table');
select tests.authenticate_as('admin');
select throws_ok($$insert into app_public.employees (first_name, last_name) values ('X', 'Y')$$, '42501', null,
  'admin cannot insert an employee directly');
select tests.authenticate_as('rh1');
select throws_ok($$update app_public.accounts set is_active = false where username = 'alice'$$, '42501', null,
  'rh1 cannot update an account directly');
select tests.authenticate_as('root');
select throws_ok($$insert into app_public.role_attributions (account_id, role_id) values (11, 1)$$, '42501', null,
  'a superuser account cannot grant a role directly');
select tests.authenticate_as('alice');
select throws_ok('update app_public.notifications set read_at = now()', '42501', null,
  'alice cannot update her notifications directly');
select throws_ok('delete from app_public.counters', '42501', null, 'alice cannot delete counters');

------------------------------------------------------------------------------------------
-- app_public.me(): booleans per role and display precedence
create function pg_temp.me_as(p_username text) returns jsonb language plpgsql as $$
declare
  v jsonb;
begin
  perform tests.authenticate_as(p_username);
  v := app_public.me();
  perform tests.as_owner();
  return v;
end;
$$;
create function pg_temp.flags(p_role text, p_queue boolean, p_decide boolean, p_shift boolean, p_payroll boolean)
returns jsonb language sql immutable as $$
  select jsonb_strip_nulls(jsonb_build_object('role', p_role)) || jsonb_build_object(
    'can_view_absence_queue', p_queue, 'can_decide_absences', p_decide,
    'can_decide_shift_changes', p_shift, 'can_view_payroll', p_payroll,
    -- the decisions held by the account itself (issue 30): without delegations, the decision hints
    'can_delegate_absences', p_decide, 'can_delegate_shift_changes', p_shift,
    -- impersonation is off here (app.allow_impersonation unset): test/db/36 turns it on
    'can_impersonate', false);
$$;
create function pg_temp.me_flags(p_username text) returns jsonb language sql as $$
  select pg_temp.me_as(p_username) - 'id' - 'username' - 'employee_id' - 'display_name' - 'roles';
$$;

select is(pg_temp.me_as('alice'),
  jsonb_build_object('id', tests.id('accounts', 'alice'), 'username', 'alice', 'employee_id', tests.id('employees', 'alice'),
                     'display_name', 'Alice Martin', 'roles', jsonb_build_array('Salarié'))
  || pg_temp.flags('Salarié', false, false, false, false), 'me(): alice, Salarié, no interface right');
select is(pg_temp.me_flags('admin'), pg_temp.flags('Admin', true, true, true, true), 'me(): Admin');
select is(pg_temp.me_flags('rh1'), pg_temp.flags('RH n1', true, true, true, true), 'me(): RH n1');
select is(pg_temp.me_flags('rh2'), pg_temp.flags('RH n2', true, true, true, true), 'me(): RH n2');
select is(pg_temp.me_flags('da'), pg_temp.flags('DA', true, false, false, false), 'me(): DA reads the queue, decides nothing');
select is(pg_temp.me_flags('mgr1'), pg_temp.flags('Manager n1', true, true, true, false), 'me(): Manager n1');
select is(pg_temp.me_flags('mgr2'), pg_temp.flags('Manager n2', true, true, true, false), 'me(): Manager n2');
select is(pg_temp.me_flags('emma'), pg_temp.flags('Salarié', false, false, false, false),
  'me(): emma holds Salarié and Intérimaire, Salarié comes first');
select is(pg_temp.me_flags('r-interim'), pg_temp.flags('Intérimaire', false, false, false, false), 'me(): Intérimaire alone');
select is(pg_temp.me_flags('paie'), pg_temp.flags('Salarié', false, false, false, true),
  'me(): Service Paie with a record also holds Salarié, which comes first; payroll hint true');
select is(pg_temp.me_flags('r-paie'), pg_temp.flags('Service Paie', false, false, false, true), 'me(): Service Paie alone');
select is(pg_temp.me_as('root'),
  jsonb_build_object('id', tests.id('accounts', 'root'), 'username', 'root', 'employee_id', null,
                     'display_name', 'root', 'roles', '[]'::jsonb)
  || pg_temp.flags(null, true, true, true, true), 'me(): a superuser without role has every hint and no role key');
select is(pg_temp.me_flags('staff'), pg_temp.flags(null, false, false, false, false), 'me(): staff without role: no role key');
select is(pg_temp.me_flags('r-rh2-da-m2') ->> 'role', 'RH n2', 'me(): RH n2 + DA + Manager n2 shows RH n2');
select is(pg_temp.me_flags('r-m1-m2') ->> 'role', 'Manager n1', 'me(): Manager n2 + Manager n1 shows Manager n1');
select is(pg_temp.me_flags('r-old-admin'), pg_temp.flags('Manager n2', true, true, true, false),
  'me(): an ended Admin attribution is not shown nor counted');
select is(pg_temp.me_flags('r-future-admin'), pg_temp.flags('DA', true, false, false, false),
  'me(): an Admin attribution starting tomorrow is not shown nor counted');

-- roles: every role held today, in display precedence (the header names them all).
select is(pg_temp.me_as('paie') -> 'roles', '["Salarié", "Service Paie"]'::jsonb, 'me(): roles of the payroll account: Salarié and Service Paie');
select is(pg_temp.me_as('r-rh2-da-m2') -> 'roles', '["RH n2", "DA", "Manager n2"]'::jsonb, 'me(): roles in display precedence');
select is(pg_temp.me_as('r-old-admin') -> 'roles', '["Manager n2"]'::jsonb, 'me(): an ended attribution is not in roles');

select * from finish();
rollback;
