-- On-call periods: access by role, screens by perimeter, and the extension of a manager's
-- perimeter during [start, end).
begin;
select plan(15);
select tests.freeze('2026-11-16 10:00+01');

select set_eq(
  $$select r.name from app_public.role_permissions rp join app_public.roles r on r.id = rp.role_id
    where rp.permission_code = 'on_call.view_on_call_period'$$,
  array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2', 'Service Paie'], 'who reads on-call periods');
select set_eq(
  $$select r.name from app_public.role_permissions rp join app_public.roles r on r.id = rp.role_id
    where rp.permission_code = 'on_call.change_on_call_period'$$,
  array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2'], 'who writes on-call periods');

-- The extension, at both boundaries (mgr3, Manager n1 of E3, on call for E1 from
-- 2026-11-20 18:00 to 2026-11-23 08:00).
select is((select establishment_ids from app_hidden.permission_scope(tests.id('accounts', 'mgr3'), 'absences.view_absence_queue', '2026-11-20 17:59:59+01')),
          array[tests.id('establishments', 'E3')], 'not extended just before the start');
select set_eq($$select unnest(establishment_ids) from app_hidden.permission_scope(tests.id('accounts', 'mgr3'), 'absences.view_absence_queue', '2026-11-20 18:00:00+01')$$,
              array[tests.id('establishments', 'E3'), tests.id('establishments', 'E1')], 'extended from the start (inclusive)');
select set_eq($$select unnest(establishment_ids) from app_hidden.permission_scope(tests.id('accounts', 'mgr3'), 'absences.view_absence_queue', '2026-11-23 07:59:59+01')$$,
              array[tests.id('establishments', 'E3'), tests.id('establishments', 'E1')], 'still extended just before the end');
select is((select establishment_ids from app_hidden.permission_scope(tests.id('accounts', 'mgr3'), 'absences.view_absence_queue', '2026-11-23 08:00:00+01')),
          array[tests.id('establishments', 'E3')], 'not extended at the end (exclusive)');
select ok(tests.id('employees', 'alice') = any (array(select app_hidden.perimeter_employee_ids('absences.view_absence_queue', tests.id('accounts', 'mgr3'), '2026-11-21 12:00+01'))),
          'during the period, the manager''s perimeter holds the E1 employees');
select is(app_hidden.scope_establishment_ids(tests.id('accounts', 'mgr3'), '2026-11-23 08:00:00+01'), array[tests.id('establishments', 'E3')],
          'scope=perimeter follows the same interval');

-- Access.
select tests.authenticate_as('alice');
select throws_ok($$select app_public.on_call_periods_list()$$, 'WF540', null, 'a Salarié has no access');
select tests.authenticate_as('emma');
select throws_ok($$select app_public.on_call_periods_list()$$, 'WF540', null, 'an Intérimaire has no access');
select tests.authenticate_as('paie');
select is((app_public.on_call_periods_list() ->> 'count')::int, 1, 'Service Paie reads');
select throws_ok($$select app_public.on_call_period_update((select id from app_public.on_call_periods limit 1), p_comment => 'x', p_sent => '{comment}')$$,
                 'WF540', null, 'Service Paie does not write');
select tests.authenticate_as('mgr2');
select is((app_public.on_call_periods_list() ->> 'count')::int, 0, 'a manager of E2 does not see an E1 period');
select tests.authenticate_as('mgr1');
select throws_ok($$select app_public.on_call_period_create(p_account => tests.id('accounts', 'mgr1'),
                     p_start_at => '2026-12-01T18:00:00+01:00', p_end_at => '2026-12-02T08:00:00+01:00',
                     p_establishments => array[tests.id('establishments', 'E2')])$$,
                 'WV540', null, 'a manager creates periods of its establishments only');
select tests.as_owner();
select throws_ok($$insert into app_public.on_call_periods (account_id, start_at, end_at)
                   values (tests.id('accounts', 'mgr3'), '2026-11-22 00:00+01', '2026-11-22 06:00+01')$$,
                 '23P01', null, 'an account is never on call twice at the same time');

select * from finish();
rollback;
