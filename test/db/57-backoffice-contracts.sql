-- A contract added from the back-office goes through employee_update: its rules (no overlap,
-- dates), its perimeter (outside: 404; without the right: 403) and its audit; the record's
-- other contracts are kept, whoever reads them.
begin;
select plan(8);
select tests.freeze('2026-11-16 10:00+01');

-- alice's CDI ends on 30 November; a CDD may follow it.
update app_public.contracts set end_date = '2026-11-30' where employee_id = tests.id('employees', 'alice');
create temporary table ids as select tests.id('employees', 'alice') as alice,
  (select id from app_public.contract_types where code = 'CDD') as cdd;
grant select on ids to public;

select tests.authenticate_as('rh1');
select is(jsonb_array_length(app_public.employee_contract_add((select alice from ids),
            jsonb_build_object('type', (select cdd from ids), 'start_date', '2026-12-01', 'end_date', '2027-05-31',
                               'job_title', 'Éducatrice', 'weekly_hours', '28')) -> 'contracts'), 2,
          'HR adds a CDD after the CDI: both contracts are on the record');
select is((select count(*)::int from app_public.contracts where employee_id = (select alice from ids) and end_date = '2026-11-30'), 1,
          'the CDI is kept as it was');
select throws_ok(format($$select app_public.employee_contract_add(%s, '{"type": %s, "start_date": "2027-01-01"}')$$,
                        (select alice from ids), (select cdd from ids)), 'WV501', null, 'an overlapping contract is refused under contracts');
select throws_ok(format($$select app_public.employee_contract_add(%s, '{"type": %s, "start_date": "2027-09-01", "end_date": "2027-08-01"}')$$,
                        (select alice from ids), (select cdd from ids)), 'WV501', null, 'an end before the start is refused');
select throws_ok(format($$select app_public.employee_contract_add(%s, '"CDD"')$$, (select alice from ids)), 'WV501', null,
                 'a contract that is no object is refused');

select tests.authenticate_as('rh2');
select throws_ok(format($$select app_public.employee_contract_add(%s, '{"type": %s, "start_date": "2027-09-01"}')$$,
                        (select alice from ids), (select cdd from ids)), 'WN001', null, 'RH n2 of E2, an employee of E1: 404');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.employee_contract_add(%s, '{"type": %s, "start_date": "2027-09-01"}')$$,
                        (select alice from ids), (select cdd from ids)), 'WF502', null, 'a manager of E1 without the right: 403');

select tests.as_owner();
select is((select count(*)::int from app_public.contracts where employee_id = (select alice from ids)), 2,
          'no refusal wrote anything');

select * from finish();
rollback;
