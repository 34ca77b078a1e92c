-- The per-state counts of absences (app_private.absence_status_counts) that give the queue its
-- total: they equal count(*) after every kind of write, and a reader sums its perimeter only.
begin;
select plan(18);
select tests.freeze('2026-11-16 10:00+01');

-- Pairs (state, employee) where the kept count and a count of the rows differ.
create function pg_temp.mismatches() returns int language sql stable security definer as $$
  select count(*)::int
  from (select a.status, a.employee_id, count(*)::int as n from app_public.absences a group by 1, 2) real
  full join app_private.absence_status_counts c on c.status = real.status and c.employee_id = real.employee_id
  where real.n is distinct from c.n;
$$;
create function pg_temp.body(p_employee text, p_type text, p_start date) returns jsonb language sql stable as $$
  select jsonb_build_object('employee', tests.id('employees', p_employee),
                            'type', (select t.id from app_public.absence_types t where t.code = p_type),
                            'date_start', p_start, 'date_end', p_start);
$$;
create function pg_temp.version_of(p_id int) returns int language sql stable security definer as $$
  select a.version from app_public.absences a where a.id = p_id;
$$;
-- The queue's total as the kept counts give it, and as the exact count over the rows gives it
-- (a date filter that keeps every row takes the exact path).
create function pg_temp.queue_counts(p_username text, p_status text) returns text language plpgsql as $$
declare
  v_fast int;
  v_exact int;
begin
  perform tests.authenticate_as(p_username);
  v_fast := (app_public.absences_list(p_status => p_status) ->> 'count')::int;
  v_exact := (app_public.absences_list(p_status => p_status, p_from => '1900-01-01') ->> 'count')::int;
  perform tests.as_owner();
  return format('%s/%s', v_fast, v_exact);
end;
$$;
grant execute on all functions in schema pg_temp to public;

select ok((select relrowsecurity from pg_class where oid = 'app_private.absence_status_counts'::regclass),
  'absence_status_counts has RLS');
select policies_are('app_private', 'absence_status_counts', array['select_own_or_perimeter'],
  'absence_status_counts: read through the perimeter of absences');
select is(pg_temp.mismatches(), 0, 'the migration counted the absences already there');

-- Creations through the API: requests (pending) and a declaration (validated).
select tests.authenticate_as('alice');
select tests.absence_create(pg_temp.body('alice', 'CP', '2026-11-30'));
select tests.absence_create(pg_temp.body('alice', 'CP', '2026-12-01'));
select tests.authenticate_as('bruno');
select tests.absence_create(pg_temp.body('bruno', 'CP', '2026-11-30'));
select tests.authenticate_as('david');
select tests.absence_create(pg_temp.body('david', 'CP', '2026-11-30'));
select tests.authenticate_as('mgr1');
select tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-10'));
select tests.as_owner();
select is(pg_temp.mismatches(), 0, 'after creations (requests and a declaration)');
select is((select c.n from app_private.absence_status_counts c
           where c.status = 'pending' and c.employee_id = tests.id('employees', 'alice')), 2,
  'alice: two pending requests');

-- Transitions: validation, refusal, withdrawal (a deletion).
create temp table ids on commit drop as
select a.id, a.date_start, e.key from app_public.absences a join public.fixture_ids e
  on e.section = 'employees' and e.id = a.employee_id where a.status = 'pending';
grant select on ids to public;
select tests.authenticate_as('mgr1');
select tests.absence_validate(i.id, jsonb_build_object('version', pg_temp.version_of(i.id)))
from ids i where i.key = 'alice' and i.date_start = '2026-11-30';
select app_public.absence_refuse(i.id, pg_temp.version_of(i.id), 'Effectif insuffisant')
from ids i where i.key = 'bruno';
select tests.as_owner();
select is(pg_temp.mismatches(), 0, 'after a validation and a refusal');
select tests.authenticate_as('alice');
select app_public.absence_delete(i.id) from ids i where i.key = 'alice' and i.date_start = '2026-12-01';
select tests.as_owner();
select is(pg_temp.mismatches(), 0, 'after a withdrawal (the row is deleted)');
select is((select count(*)::int from app_private.absence_status_counts c
           where c.status = 'pending' and c.employee_id = tests.id('employees', 'alice')), 0,
  'a count that reaches zero leaves no row');

-- Writes outside the API (owner): bulk insert, bulk transition, bulk delete.
insert into app_public.absences (employee_id, type_id, date_start, date_end, status)
select e.id, (select id from app_public.absence_types where code = 'FOR'), d::date, d::date, s
from public.fixture_ids e
cross join (values ('2027-02-01', 'pending'), ('2027-02-02', 'pending'), ('2027-02-03', 'validated'),
                   ('2027-02-04', 'refused')) v(d, s)
where e.section = 'employees';
select is(pg_temp.mismatches(), 0, 'after a bulk insert');
update app_public.absences set status = 'validated', version = version + 1
where status = 'pending' and date_start = '2027-02-01';
select is(pg_temp.mismatches(), 0, 'after a bulk transition');
delete from app_public.absences where status = 'pending' and date_start = '2027-02-02';
select is(pg_temp.mismatches(), 0, 'after a bulk deletion');

-- The queue's total: the kept counts and the exact count agree for every kind of reader.
select is(pg_temp.queue_counts('rh1', 'pending'), (select format('%s/%1$s', count(*)) from app_public.absences where status = 'pending'),
  'RH n1 (whole association): every pending request');
select is(pg_temp.queue_counts('mgr1', 'pending'), (select format('%s/%1$s', count(*))
    from app_public.absences a
    where a.status = 'pending' and a.employee_id in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue',
                                                       tests.id('accounts', 'mgr1')))),
  'Manager n1: the requests of its perimeter only');
select is(pg_temp.queue_counts('mgr1', null), (select format('%s/%1$s', count(*))
    from app_public.absences a
    where a.employee_id in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue',
                                                       tests.id('accounts', 'mgr1')))),
  'Manager n1, every state');
select is(pg_temp.queue_counts('alice', 'validated'), (select format('%s/%1$s', count(*))
    from app_public.absences a where a.status = 'validated' and a.employee_id = tests.id('employees', 'alice')),
  'an employee: their own absences');
select is(pg_temp.queue_counts('mgr1_noemp', 'pending'), (select format('%s/%1$s', count(*))
    from app_public.absences a
    where a.status = 'pending' and a.employee_id in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue',
                                                       tests.id('accounts', 'mgr1_noemp')))),
  'a manager without an employee record: its perimeter');

-- Read directly (as the API functions do), the counts are limited to the perimeter.
select tests.authenticate_as('bruno');
set local role wfm_api;
select is((select count(distinct c.employee_id)::int from app_private.absence_status_counts c), 1,
  'an employee reads only their own counts');
select tests.as_owner();

truncate app_public.absences cascade;
select is((select count(*)::int from app_private.absence_status_counts), 0, 'a truncation empties the counts');

select * from finish();
rollback;
