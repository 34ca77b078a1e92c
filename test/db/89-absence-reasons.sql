-- Issue 29 point 2: the reasons an absence form offers (app_public.absence_types_for_request).
-- Oneself: the active reasons « demandables par le salarié » that the contract in force admits;
-- the encadrement declaring for an employee of its perimeter: every active reason. Each with its
-- availability (counter open for the year, contract) and the reason why not.
begin;
select plan(31);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.reasons(p_employee text default null, p_date date default null) returns jsonb
language sql volatile as $$
  select app_public.absence_types_for_request(
    p_employee => case when p_employee is not null then tests.id('employees', p_employee) end,
    p_date => p_date, p_page_size => 200) -> 'results';
$$;
grant execute on function pg_temp.reasons(text, date) to public;
-- One reason of a list by code (null when the list leaves it out).
create function pg_temp.reason(p_list jsonb, p_code text) returns jsonb
language sql immutable as $$
  select r from jsonb_array_elements(p_list) r where r ->> 'code' = p_code;
$$;
grant execute on function pg_temp.reason(jsonb, text) to public;
create function pg_temp.codes(p_list jsonb) returns text[]
language sql immutable as $$
  select coalesce(array_agg(r ->> 'code' order by r ->> 'code'), '{}') from jsonb_array_elements(p_list) r;
$$;
grant execute on function pg_temp.codes(jsonb) to public;

-- The reference's defaults: twelve reasons are declared by the encadrement only.
select is((select array_agg(code order by code) from app_public.absence_types where not employee_requestable),
  array['AANP', 'AAP', 'ABS', 'AT', 'ATJ', 'FES', 'FOR', 'MP', 'SYN_CON', 'SYN_ELU', 'SYN_PAR', 'TTH'],
  'reference defaults: union activity, employer-qualified stoppages and training, granted and unjustified absences are not requestable');
select is((select count(*)::int from app_public.absence_types where employee_requestable = app_hidden.absence_type_requestable_default(code)),
  52, 'every reason holds the default of its code');

-- An employee's own list.
select tests.authenticate_as('alice');
select is(jsonb_array_length(pg_temp.reasons()), 40, 'alice (CDI) is offered the 40 requestable reasons');
select is(pg_temp.reasons(), pg_temp.reasons('alice'), 'without employee: one''s own record');
select ok(pg_temp.reason(pg_temp.reasons(), 'ABS') is null and pg_temp.reason(pg_temp.reasons(), 'SYN_CON') is null
          and pg_temp.reason(pg_temp.reasons(), 'FOR') is null, 'ABS, SYN_CON and FOR are not offered to the employee');
select is(pg_temp.reason(pg_temp.reasons(), 'CP') -> 'available', 'true'::jsonb, 'CP: counter open for 2026, available');
select is(pg_temp.reason(pg_temp.reasons(), 'CP') -> 'unavailable_reason', 'null'::jsonb, 'an available reason says no why');
select is(pg_temp.reason(pg_temp.reasons(), 'DLG_CSE') -> 'available', 'true'::jsonb, 'DLG_CSE: alice holds the counter');
select is(pg_temp.reason(pg_temp.reasons(), 'DLG_DS') ->> 'unavailable_reason',
  'Aucun compteur DLG_DS ouvert pour 2026 : le motif « Délégation délégué syndical » ne peut pas être posé sur cette année.',
  'DLG_DS without its counter: unavailable, with the counter rule''s message');
select is(pg_temp.reason(pg_temp.reasons(), 'DLG_DS') -> 'available', 'false'::jsonb, 'DLG_DS: not available');
select is(pg_temp.reason(pg_temp.reasons(), 'MAL') -> 'available', 'true'::jsonb, 'a reason without counter is available');
select is(pg_temp.reason(pg_temp.reasons(), 'CP') - 'available' - 'unavailable_reason',
  app_hidden.absence_type_json((select id from app_public.absence_types where code = 'CP')),
  'each reason carries the fields of GET /api/absence-types/');
-- The date chooses the counters' year: CT is open for 2026, not for 2027; CP for both.
select is(pg_temp.reason(pg_temp.reasons('alice', '2027-02-01'), 'CT') -> 'available', 'false'::jsonb, 'CT in 2027: no counter');
select is(pg_temp.reason(pg_temp.reasons('alice', '2027-02-01'), 'CP') -> 'available', 'true'::jsonb, 'CP in 2027: open');
select throws_ok($$select pg_temp.reasons('alice', '1999-01-04')$$, 'WV001',
  format('Date hors de la plage acceptée (années %s à %s).', app_hidden.first_accepted_year(), app_hidden.last_accepted_year()),
  'a date outside the accepted years is refused');
select throws_ok($$select pg_temp.reasons('bruno')$$, 'WV001', 'Vous ne pouvez déposer une absence que pour vous-même.',
  'an employee naming a colleague is refused under employee');

-- Contract types: a temporary worker is not offered the reasons of other contracts.
select tests.authenticate_as('emma');
select is(pg_temp.codes(pg_temp.reasons()) && array['ANC', 'CET', 'CT', 'JRS', 'PAR', 'PTP', 'SAB'], false,
  'emma (Intérim): ANC, CET, CT, JRS, PAR, PTP and SAB are left out');
select is(jsonb_array_length(pg_temp.reasons()), 33, 'emma is offered 33 reasons');
select is(pg_temp.reason(pg_temp.reasons(), 'CP') ->> 'unavailable_reason',
  'Aucun compteur CP ouvert pour 2026 : le motif « Congés payés » ne peut pas être posé sur cette année.',
  'emma holds no CP counter: CP is unavailable, and says why');
-- After the end of her mission no contract is in force: the reserved reasons are left out too.
select ok(pg_temp.reason(pg_temp.reasons('emma', '2027-01-04'), 'CET') is null, 'no contract in force: reserved reasons left out');

-- An employee without main workplace has a list all the same.
select tests.authenticate_as('farid');
select is(jsonb_array_length(pg_temp.reasons()), 40, 'farid (no main workplace) is offered his reasons');

-- A manager declaring for an employee of the perimeter keeps the full list.
select tests.authenticate_as('mgr1');
select is(jsonb_array_length(pg_temp.reasons('alice')), 52, 'mgr1 declaring for alice: the 52 reasons');
select is(pg_temp.reason(pg_temp.reasons('alice'), 'ABS') -> 'available', 'true'::jsonb, 'ABS is offered to the manager');
select is(pg_temp.reason(pg_temp.reasons('emma'), 'CET') ->> 'unavailable_reason',
  'Réservé aux contrats CDI ; le contrat en vigueur le 16/11/2026 est : Intérim.',
  'declaring for emma: CET is listed, unavailable, naming the contract held');
select is(jsonb_array_length(pg_temp.reasons()), 40, 'mgr1 for himself: the employee''s list');
select throws_ok($$select pg_temp.reasons('david')$$, 'WV001',
  'Ce salarié n’est pas dans votre périmètre : vous ne pouvez pas déclarer d’absence pour lui.',
  'an employee outside the perimeter: refused under employee');

-- Accounts without employee record: they name the employee.
select tests.authenticate_as('salarie_noemp');
select throws_ok($$select pg_temp.reasons()$$, 'WV001',
  'Votre compte n’a pas de fiche salarié : nommez le salarié pour qui l’absence est déclarée.',
  'no employee record and no employee named: refused under employee');
select tests.authenticate_as('mgr1_noemp');
select is(jsonb_array_length(pg_temp.reasons('david')), 52, 'a manager without record declares within its perimeter (E3)');

-- The attribute is written by staff at the back-office, through absence_type_save.
select tests.authenticate_as('rh1');
select throws_ok($$select app_public.absence_type_save((select id from app_public.absence_types where code = 'CP'),
  p_code => 'CP', p_name => 'Congés payés', p_category => (select category_id from app_public.absence_types where code = 'CP'),
  p_unit => 'day', p_half_day_allowed => false, p_employee_requestable => false)$$,
  'WF510', null, 'a non-staff account does not write the attribute');
select tests.authenticate_as('staff');
select is(app_public.absence_type_save((select id from app_public.absence_types where code = 'CP'),
  p_code => 'CP', p_name => 'Congés payés', p_category => (select category_id from app_public.absence_types where code = 'CP'),
  p_unit => 'day', p_half_day_allowed => false, p_employee_requestable => false) -> 'employee_requestable',
  'false'::jsonb, 'staff makes CP declared by the encadrement only');
select tests.authenticate_as('alice');
select ok(pg_temp.reason(pg_temp.reasons(), 'CP') is null, 'alice is no longer offered CP');

select * from finish();
rollback;
