-- The back-office's own reads (sql/backoffice/choices.sql, the abilities of sql/employees/contracts.sql
-- and sql/teams/members.sql) and the paging of its lists (sql/backoffice/paging.sql): choices list
-- what row-level security lets the account read, abilities answer true or false (never null) for
-- every kind of caller, and one page of a list is the slice of the whole ordered list.
begin;
select plan(33);
select tests.freeze('2026-11-16 10:00+01');

-- An account without an employee record (Manager n1 of E1) and a closed one.
insert into app_public.accounts (username, is_active) values ('nx-mgr1', true), ('nx-closed', false);
insert into app_public.role_attributions (account_id, role_id)
select a.id, x.role_id from (values ('nx-mgr1', 5), ('nx-closed', 2)) x(username, role_id)
join app_public.accounts a on a.username = x.username;
insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
select ra.id, tests.id('establishments', 'E1')
from app_public.role_attributions ra join app_public.accounts a on a.id = ra.account_id where a.username = 'nx-mgr1';
-- An employee without a main workplace: farid.

-- Paging ------------------------------------------------------------------------------------
select is((select row(total, ids)::text from app_hidden.list_page(array[5, 4, 3, 2, 1], 2, 2)), '(5,"{3,2}")',
          'list_page: the total and the ids of the asked page, in the list''s order');
select is((select row(total, ids)::text from app_hidden.list_page(array[5, 4, 3], 3, 2)), '(3,{})',
          'a page beyond the list is empty, the total stays');
select is((select row(total, ids)::text from app_hidden.list_page(null, 1, 50)), '(0,{})', 'no ids: an empty list, never null');
select is((select row(total, ids)::text from app_hidden.list_page(array[1, 2, 3], 1, 500)), '(3,"{1,2,3}")',
          'a page size beyond 200 is read as 200');
select throws_ok($$select * from app_hidden.list_page(array[1], 0, 50)$$, 'WV003', 'Le numéro de page est un entier d’au moins 1.',
                 'page 0 is refused under page');
select throws_ok($$select * from app_hidden.list_page(array[1], 1, 0)$$, 'WV003', 'La taille de page est un entier d’au moins 1.',
                 'page size 0 is refused under page_size');
select throws_ok($$select * from app_hidden.list_page(array[1], 0, 0)$$, 'WV003', 'Le numéro de page est un entier d’au moins 1.',
                 'both wrong: the page is named first, as LIMIT ... OFFSET did');
select is(app_hidden.list_answer(0, null), '{"count": 0, "results": []}'::jsonb, 'list_answer: no record is an empty list');

-- A page of a back-office list is the slice of the whole list.
select tests.authenticate_as('admin');
create temporary table whole as select app_public.counters_search(p_page_size => 200) as doc;
select cmp_ok((select (doc ->> 'count')::int from whole), '>', 3, 'admin reads several counters');
select is(app_public.counters_search(p_page => 2, p_page_size => 2) -> 'results',
          (select jsonb_build_array(doc -> 'results' -> 2, doc -> 'results' -> 3) from whole),
          'the second page of two counters is the third and fourth of the whole list');
select is((app_public.counters_search(p_page => 2, p_page_size => 2) ->> 'count')::int, (select (doc ->> 'count')::int from whole),
          'every page counts the whole list');
select is(jsonb_array_length(app_public.absence_types_search(p_page_size => 200) -> 'results'),
          (select count(*)::int from app_public.absence_types), 'absence_types_search lists every type, inactive ones too');
select is((select array_agg(x ->> 'code') from jsonb_array_elements(app_public.posts_search(p_page_size => 200) -> 'results') x),
          (select array_agg(p.code order by e.name, lower(p.code), p.id) from app_public.posts p
           join app_public.establishments e on e.id = p.establishment_id),
          'posts_search: by establishment name, then code');

-- Choices: what row-level security lets the account read ---------------------------------------
select tests.authenticate_as('alice');
select is((select array_agg(label) from app_hidden.employee_choices('absences')),
          (select array_agg(e.last_name || ' ' || e.first_name) from app_public.employees e
           where e.id = tests.id('employees', 'alice') and exists (select 1 from app_public.absences a where a.employee_id = e.id)),
          'an employee is offered only herself among the employees with absences (or no one)');
select is((select count(*)::int from app_hidden.employee_choices('no such list')), 0, 'an unknown list offers no one');
select is((select count(*)::int from app_hidden.establishment_choices()), (select count(*)::int from app_public.establishments),
          'the establishments offered are those the account reads');
select tests.authenticate_as('rh2');
select ok(not exists (select 1 from app_hidden.employee_choices('counters') c
                      where c.value::int not in (select co.employee_id from app_public.counters co)),
          'RH n2 is offered no employee whose counters it does not read');
select ok(not exists (select 1 from app_hidden.employee_choices('counters') c where c.value::int = tests.id('employees', 'alice')),
          'RH n2 of E2 is not offered alice (E1) in the counters filter');
select tests.authenticate_as('admin');
select ok(exists (select 1 from app_hidden.absence_type_choices('all') c where c.label like '% (inactif)')
          = exists (select 1 from app_public.absence_types where not is_active),
          'every absence type is offered to the associations, the inactive ones marked');
select tests.as_owner();
-- A type that no counter needs, deactivated.
create temporary table inactive as
  select t.id, t.code from app_public.absence_types t
  where t.is_active and not exists (select 1 from app_public.counter_associations ca where ca.absence_type_id = t.id)
  order by t.code limit 1;
grant select on inactive to public;
update app_public.absence_types set is_active = false where id = (select id from inactive);
select tests.authenticate_as('admin');
select ok(not exists (select 1 from app_hidden.absence_type_choices('kept') c where c.value::int = (select id from inactive)),
          'an inactive type is not offered to correct an absence of another type');
select ok(exists (select 1 from app_hidden.absence_type_choices('kept', (select id from inactive)) c
                  where c.value::int = (select id from inactive)), 'but it is kept for an absence of that type');
select is((select array_agg(value) from app_hidden.contract_type_choices(true)),
          (select array_agg(id::text order by code) from app_public.contract_types), 'contract types by code');
select is((select array_agg(value) from app_hidden.contract_type_choices()),
          (select array_agg(id::text order by id) from app_public.contract_types), 'contract types in creation order');

-- Abilities answer true or false for every kind of caller ------------------------------------
select tests.authenticate_as('nx-mgr1');
select ok((select bool_and(jsonb_typeof(value) = 'boolean') and count(*) = 3
           from jsonb_each(app_hidden.employee_abilities(tests.id('employees', 'alice')))),
          'no employee record: the three abilities answer true or false, never null');
select is(app_hidden.employee_abilities(tests.id('employees', 'alice')) ->> 'edit', 'false',
          'and a manager writes no record');
select is(app_hidden.team_writable(tests.id('teams', 'T3')), false, 'no employee record: a team of E3 is not writable (not null)');
select tests.authenticate_as('rh1');
select is(app_hidden.employee_abilities(tests.id('employees', 'alice')) ->> 'edit', 'true', 'HR of the perimeter writes the record');
select is(app_hidden.employee_abilities(tests.id('employees', 'rh1')) ->> 'activation', 'false', 'never the activation of one''s own account');
select is(app_hidden.employee_abilities(tests.id('employees', 'farid')) ->> 'remove_certificate', 'false',
          'an employee without a main workplace: no certificate to remove, false not null');
select ok(app_hidden.employee_with_contracts_version(tests.id('employees', 'alice')) ->> 'contracts_version' ~ '^[0-9a-f]{32}$',
          'the record read for HR carries the version of its contract list');
select throws_ok('select app_hidden.employee_with_contracts_version(-1)', 'WN001', null, 'a record that does not exist: 404, as employee_get');
select tests.authenticate_as('alice');
select is(app_hidden.employee_with_contracts_version(tests.id('employees', 'alice')) -> 'contracts_version', 'null'::jsonb,
          'an employee reads her record without a version: she writes no contract');
select tests.authenticate_as('nx-closed');
select is(app_hidden.team_writable(tests.id('teams', 'T1')), false, 'a closed account writes no team');

select * from finish();
rollback;
