-- The team planning of a month (GET /api/planning/?establishment=&team=): the filters narrow
-- the readable employees and never widen them; the public holidays of the window come along.
begin;
select plan(12);
select tests.freeze('2026-11-16 10:00+01');

-- The names of the employees of a planning answer, in its order.
create function pg_temp.names(p_planning json) returns text language sql as $$
  select coalesce(string_agg(e ->> 'name', ', ' order by o), '')
  from json_array_elements(p_planning -> 'employees') with ordinality x(e, o);
$$;
grant execute on function pg_temp.names(json) to wfm_visitor;

select tests.authenticate_as('rh1');
select is(pg_temp.names(app_public.planning_read('2026-11-01', '2026-11-30', null, tests.id('establishments', 'E2'), null)),
          (select string_agg(e.first_name || ' ' || e.last_name, ', ' order by lower(e.last_name), lower(e.first_name), e.id)
           from app_public.employees e
           where e.id in (tests.id('employees', 'rh2'), tests.id('employees', 'mgr2'), tests.id('employees', 'chloe'),
                          tests.id('employees', 'gaelle'), tests.id('employees', 'bruno'))),
          'establishment: its main, secondary and team employees (bruno through E2 as secondary and team T2)');
select is(pg_temp.names(app_public.planning_read('2026-11-01', '2026-11-30', null, null, tests.id('teams', 'T1'))),
          'Alice Martin', 'team: the employees assigned to it');
select is(json_array_length(app_public.planning_read('2026-11-01', '2026-11-30', null, null, tests.id('teams', 'T1')) -> 'cells'),
          30, 'a cell per day of the month for each employee kept');
select is(pg_temp.names(app_public.planning_read('2026-11-01', '2026-11-30', null, tests.id('establishments', 'E2'), tests.id('teams', 'T1'))),
          '', 'both filters: the employees meeting both (none here)');
select is(pg_temp.names(app_public.planning_read('2026-11-01', '2026-11-30', null, 999999, null)), '',
          'an unknown establishment: nobody, no error');
select is(json_array_length(app_public.planning_read('2026-11-01', '2026-11-30', null, null, null) -> 'employees'),
          (select count(*)::int from app_public.employees), 'without a filter: the whole perimeter (RH n1, whole association)');

-- The filters never widen the perimeter.
select tests.authenticate_as('mgr1');
select is(pg_temp.names(app_public.planning_read('2026-11-01', '2026-11-30', null, tests.id('establishments', 'E3'), null)), '',
          'a manager of E1 filtering on E3 reads nobody');
select tests.authenticate_as('alice');
select is(pg_temp.names(app_public.planning_read('2026-11-01', '2026-11-30', null, tests.id('establishments', 'E1'), null)),
          'Alice Martin', 'an employee filtering on their establishment reads only themselves');
select is(pg_temp.names(app_public.planning_read('2026-11-01', '2026-11-30', null, tests.id('establishments', 'E2'), null)), '',
          'and nobody elsewhere');

-- Public holidays of the window.
select is((app_public.planning_read('2026-11-01', '2026-11-30', null, null, null) -> 'holidays')::jsonb,
          '[{"date": "2026-11-01", "name": "Toussaint"}, {"date": "2026-11-11", "name": "Armistice 1918"}]'::jsonb,
          'the holidays of November');
select is((app_public.planning_read('2026-12-20', '2027-01-10', null, null, null) -> 'holidays')::jsonb,
          '[{"date": "2026-12-25", "name": "Noël"}, {"date": "2027-01-01", "name": "Jour de l’an"}]'::jsonb,
          'across a change of year');
select is((app_public.planning_read('2026-11-16', '2026-11-22', null, null, null) -> 'holidays')::jsonb, '[]'::jsonb,
          'a week without holiday: an empty list');

select * from finish();
rollback;
