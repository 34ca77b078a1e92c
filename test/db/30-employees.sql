-- Employee record: who reads it, who reads the social security number, who writes it.
begin;
select plan(24);
select tests.freeze('2026-11-16 10:00+01');

-- Permissions of the annexes, as data.
select set_eq(
  $$select r.name from app_public.role_permissions rp join app_public.roles r on r.id = rp.role_id
    where rp.permission_code = 'employee.change_emergency_contact'$$,
  array['Admin', 'RH n1', 'RH n2'], 'HR writes emergency contacts');
select set_eq(
  $$select r.name from app_public.role_permissions rp join app_public.roles r on r.id = rp.role_id
    where rp.permission_code = 'employee.view_emergency_contact'$$,
  array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2'], 'encadrement reads emergency contacts');
select set_eq(
  $$select r.name from app_public.role_permissions rp join app_public.roles r on r.id = rp.role_id
    where rp.permission_code = 'employee.view_employee_attachment'$$,
  array['Admin', 'RH n1', 'RH n2'], 'HR reads attachments of third parties');

-- Reading the directory.
select tests.authenticate_as('alice');
select results_eq($$select id from app_public.employees$$, array[tests.id('employees', 'alice')], 'an employee reads only their own record');
select is((select count(*)::int from app_public.employee_social_security_numbers), 0, 'an employee does not read even their own number');
select tests.authenticate_as('mgr1');
select is((select count(*)::int from app_public.employees), 15, 'encadrement reads the whole directory');
select is((select count(*)::int from app_public.employee_social_security_numbers), 0, 'a manager reads no social security number');
select tests.authenticate_as('rh2');
select set_eq($$select employee_id from app_public.employee_social_security_numbers$$,
              $$select app_hidden.perimeter_employee_ids('employee.view_social_security_number')$$,
              'RH n2 reads the numbers of its perimeter only');
select ok(not exists (select 1 from app_public.employee_social_security_numbers where employee_id = tests.id('employees', 'alice')),
          'RH n2 of E2 does not read the number of an E1 employee');
select ok(exists (select 1 from app_public.employee_social_security_numbers where employee_id = tests.id('employees', 'chloe')),
          'RH n2 of E2 reads the number of an E2 employee');
select ok(not ((select j.doc from app_hidden.employees_json(array[tests.id('employees', 'alice')]) j) ? 'social_security_number'),
          'the key is absent from the JSON of a record outside the number perimeter');

-- The scope of scope=perimeter.
select tests.authenticate_as('mgr1');
select is(app_hidden.scope_establishment_ids(), array[tests.id('establishments', 'E1')], 'a manager''s scope: its establishments');
select tests.authenticate_as('rh1');
select is(app_hidden.scope_establishment_ids(), null, 'a role without establishment: the whole association');
select tests.authenticate_as('bruno');
select set_eq($$select unnest(app_hidden.scope_establishment_ids())$$,
              array[tests.id('establishments', 'E1'), tests.id('establishments', 'E2')], 'an employee''s scope: own workplaces');
select tests.authenticate_as('farid');
select is(app_hidden.scope_establishment_ids(), '{}'::int[], 'no workplace, no role: an empty scope');

-- Writes.
select tests.authenticate_as('mgr1');
select throws_ok($$select tests.employee_update(tests.id('employees', 'alice'), '{"social_security_number": null}')$$,
                 'WF501', null, 'the number key in a write by a reader without the right: 403');
select throws_ok($$select tests.employee_update(tests.id('employees', 'alice'), '{"last_name": "X"}')$$,
                 'WF502', null, 'a manager does not write employee records');
select tests.authenticate_as('rh2');
select throws_ok($$select tests.employee_update(tests.id('employees', 'alice'), '{"last_name": "X"}')$$,
                 'WN001', null, 'RH n2 does not write a record outside its perimeter (404)');
select throws_ok($$select tests.employee_create(('{"first_name": "A", "last_name": "B", "main_establishment": ' || tests.id('establishments', 'E1') || '}')::jsonb)$$,
                 'WV501', null, 'RH n2 creates only records of its establishments');
select lives_ok($$select tests.employee_update(tests.id('employees', 'chloe'), '{"social_security_number": "2910713123455"}')$$,
                'RH n2 writes the number of an E2 employee');

-- The policies themselves, as the API functions' role.
select tests.authenticate_as('rh2');
do $$ begin perform set_config('role', 'wfm_api', true); end $$;
update app_public.employees set last_name = 'X' where id = tests.id('employees', 'alice');
select tests.as_owner();
select is((select last_name from app_public.employees where id = tests.id('employees', 'alice')), 'Martin',
          'the update policy hides records outside the writer''s perimeter');
select tests.authenticate_as('rh2');
do $$ begin perform set_config('role', 'wfm_api', true); end $$;
select throws_ok($$insert into app_public.employees (first_name, last_name, main_establishment_id)
                   values ('A', 'B', tests.id('establishments', 'E1'))$$,
                 '42501', null, 'the insert policy refuses a main workplace outside the perimeter');
select tests.authenticate_as('mgr1');
do $$ begin perform set_config('role', 'wfm_api', true); end $$;
select throws_ok($$insert into app_public.contracts (employee_id, contract_type_id, start_date)
                   values (tests.id('employees', 'alice'), 1, '2027-01-01')$$,
                 '42501', null, 'contracts are written only with employee.change_employee_record');
select throws_ok($$insert into app_public.employee_emergency_contacts (employee_id, name, phone)
                   values (tests.id('employees', 'alice'), 'X', '0611223344')$$,
                 '42501', null, 'a manager reads but does not write emergency contacts');

select * from finish();
rollback;
