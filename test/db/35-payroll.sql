-- Payroll consultation: employee.view_payroll on its perimeter, month required.
begin;
select plan(8);
select tests.freeze('2026-11-16 10:00+01');

select tests.authenticate_as('mgr1');
select throws_ok($$select app_public.payroll_options()$$, 'WF550', null, 'a manager does not consult payroll');
select throws_ok($$select app_public.payroll_lines('2026-11')$$, 'WF550', null, 'nor its lines');
select tests.authenticate_as('rh2');
select is(app_public.payroll_options(), jsonb_build_object('establishments', jsonb_build_array(
            jsonb_build_object('id', tests.id('establishments', 'E2'), 'name', 'IME Les Peupliers'))),
          'RH n2 consults E2 only');
select throws_ok($$select app_public.payroll_lines('2026-11', tests.id('establishments', 'E1'))$$, 'WF551', null,
                 'an establishment not authorised is refused');
select throws_ok($$select app_public.payroll_lines(null)$$, 'WV550', null, 'the month is required');
select throws_ok($$select app_public.payroll_lines('2026-13')$$, 'WV550', null, 'the month is YYYY-MM');
select is((app_public.payroll_lines('2026-11') ->> 'count')::int, 5, 'without establishment, the lines of the permission perimeter');
select tests.authenticate_as('paie');
select is((app_public.payroll_lines('2026-11', null, null, 1, 25) ->> 'count')::int, 15, 'Service Paie of the whole association: every contract');

select * from finish();
rollback;
