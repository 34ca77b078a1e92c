-- Day-change requests for the back-office (sql/shift_change/search.sql): the list's
-- establishment filter (main or secondary workplace) and what the reader may do on a request.
begin;
select plan(6);
select tests.freeze('2026-11-16 10:00+01');

select tests.authenticate_as('alice');   -- E1
select (app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'urgence', p_is_remote => true) ->> 'id')::int as ra \gset
select tests.authenticate_as('chloe');   -- E2
select (app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'urgence', p_is_remote => true) ->> 'id')::int as rc \gset
select tests.authenticate_as('rh1');     -- RH n1, whole association, employee of E1
select (app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'urgence', p_is_remote => true) ->> 'id')::int as rr \gset

create function pg_temp.ids(p_result jsonb) returns int[] language sql immutable as $$
  select coalesce(array_agg((x ->> 'id')::int order by (x ->> 'id')::int), '{}') from jsonb_array_elements(p_result -> 'results') x;
$$;
grant execute on function pg_temp.ids(jsonb) to public;

select tests.authenticate_as('rh1');
select is(pg_temp.ids(app_public.shift_change_search(p_establishment => tests.id('establishments', 'E2'), p_from => '2026-11-20', p_to => '2026-11-20')),
  array[:rc], 'establishment E2: the request of an E2 employee');
select is(pg_temp.ids(app_public.shift_change_search(p_establishment => tests.id('establishments', 'E1'), p_from => '2026-11-20', p_to => '2026-11-20')),
  array[:ra, :rr], 'establishment E1: the requests of E1 employees');
select is(pg_temp.ids(app_public.shift_change_search(p_from => '2026-11-20', p_to => '2026-11-20', p_status => 'pending')),
  array[:ra, :rc, :rr], 'without establishment: the whole perimeter');
select tests.authenticate_as('rh1');
select is(app_public.shift_change_abilities(:ra), '{"own": false, "decide": true, "correct": true}'::jsonb,
  'RH n1 decides and corrects a request of its perimeter');
select is(app_public.shift_change_abilities(:rr), '{"own": true, "decide": false, "correct": false}'::jsonb,
  'nor decides nor corrects its own request');
select tests.authenticate_as('mgr1');
select is(app_public.shift_change_abilities(:ra), '{"own": false, "decide": true, "correct": false}'::jsonb,
  'a manager decides, does not correct');

select * from finish();
rollback;
