-- Referentials: read by every authenticated account, written by staff accounts only.
begin;
select plan(9);
select tests.freeze('2026-11-16 10:00+01');

select tests.authenticate_as('emma');
select is((select count(*)::int from app_public.establishments), 3, 'every account reads the establishments');
select is((select count(*)::int from app_public.contract_types), 5, 'every account reads the contract types');
select throws_ok($$select app_public.division_create(p_name => 'Pôle')$$, 'WF510', null, 'an employee does not write divisions');

select tests.authenticate_as('rh1');
select throws_ok($$select app_public.establishment_create(p_name => 'MAS')$$, 'WF510', null, 'RH without staff status does not write establishments');
do $$ begin perform set_config('role', 'wfm_api', true); end $$;
select throws_ok($$insert into app_public.divisions (name) values ('Pôle')$$, '42501', null, 'the policy refuses a division written by a non-staff account');

select tests.authenticate_as('staff');
select lives_ok($$select app_public.division_create(p_name => 'Pôle enfance')$$, 'a staff account writes divisions');
select throws_ok($$select app_public.division_create(p_name => 'pôle ENFANCE')$$, 'WV510', null, 'division names are unique, case-insensitively');
select throws_ok($$select app_public.establishment_delete(tests.id('establishments', 'E1'))$$, 'WV511', null,
                 'an establishment in use is not deleted');
select throws_ok($$select app_public.contract_type_delete((select id from app_public.contract_types where code = 'CDI'))$$, 'WV511', null,
                 'a contract type in use is not deleted');

select * from finish();
rollback;
