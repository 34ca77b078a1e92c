-- Outside the perimeter: 404, not 403 (issue 11, finding 10; SPEC Errors: "404 row outside
-- perimeter"). 403 stays for a caller without the permission at all, or inside the perimeter
-- without the right asked.
begin;
select plan(13);
select tests.freeze('2026-11-16 10:00+01');

select tests.authenticate_as('alice');
do $$
begin
  perform app_public.honorability_certificate_put(tests.id('employees', 'alice'),
    p_file => jsonb_build_array(tests.uploaded_file('casier-alice.pdf')));
end;
$$;

-- Honorability certificate of alice (E1).
select tests.authenticate_as('rh2');
select throws_ok(format('select app_public.honorability_certificate_file(%s)', tests.id('employees', 'alice')), 'WN001', null,
  'RH n2 of E2 downloads the certificate of an employee of E1: 404');
select throws_ok(format($$select app_public.honorability_certificate_put(%s, p_file =>
  jsonb_build_array(tests.uploaded_file('x.pdf')))$$, tests.id('employees', 'alice')), 'WN001', null,
  'nor deposits one: 404');
select throws_ok(format('select app_public.honorability_certificate_delete(%s)', tests.id('employees', 'alice')), 'WN001', null,
  'nor removes it: 404');
select tests.authenticate_as('mgr1');
select throws_ok(format('select app_public.honorability_certificate_file(%s)', tests.id('employees', 'alice')), 'WF401', null,
  'a manager of E1 (no right to the content) stays at 403');
select tests.authenticate_as('paie');
select throws_ok(format('select app_public.honorability_certificate_delete(%s)', tests.id('employees', 'alice')), 'WF402', null,
  'Service Paie (no deposit right at all) stays at 403');
select tests.authenticate_as('rh1');
select ok(app_public.honorability_certificate_file(tests.id('employees', 'alice')) ? 'storage_key',
  'RH n1 (whole association) downloads it');

-- Account activation.
select tests.authenticate_as('rh2');
select throws_ok(format('select app_public.account_activation_set(%s, false)', tests.id('employees', 'alice')), 'WN001', null,
  'RH n2 of E2 closes the account of an employee of E1: 404');
select tests.authenticate_as('mgr2');
select throws_ok(format('select app_public.account_activation_set(%s, false)', tests.id('employees', 'emma')), 'WN001', null,
  'Manager n2 of E2 closes the account of a temporary worker of E1: 404');
select tests.authenticate_as('da');
select throws_ok(format('select app_public.account_activation_set(%s, false)', tests.id('employees', 'alice')), 'WF012', null,
  'DA of E1 on a non-temporary account of E1: 403 (in the perimeter, not the right)');
select tests.authenticate_as('alice');
select throws_ok(format('select app_public.account_activation_set(%s, false)', tests.id('employees', 'bruno')), 'WN001', null,
  'a Salarié (no activation right at all) on a colleague''s record: 404');
select throws_ok(format('select app_public.account_activation_set(%s, false)', tests.id('employees', 'alice')), 'WF011', null,
  'a Salarié (no activation right at all) on its own record: 403');

-- Employee record writes.
select tests.authenticate_as('rh2');
select throws_ok(format($$select tests.employee_update(%s, '{"first_name": "Alicia"}'::jsonb)$$,
  tests.id('employees', 'alice')), 'WN001', null, 'RH n2 of E2 writes the record of an employee of E1: 404');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select tests.employee_update(%s, '{"first_name": "Alicia"}'::jsonb)$$,
  tests.id('employees', 'alice')), 'WF502', null, 'a manager (no right to write records): 403');

select * from finish();
rollback;
