-- The per-state counts of absences (app_private.absence_status_counts) that give the queue its
-- total: they equal count(*) after every kind of write, and a reader sums its perimeter only.
begin;
select plan(24);
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

-- The REST route's list (app_public.absences_list_text: its results written straight as text by
-- app_hidden.absences_list_json_text) is absences_list's answer byte for byte, documents, quotes,
-- backslashes, line breaks and accents included, for every kind of reader and page.
insert into app_public.absence_documents (absence_id, filename, content_type, size_bytes, storage_key, sha256, uploaded_by_name)
select a.id, format('justif "%s" \ n°%s.pdf', chr(233), a.id), 'application/pdf', 10, md5('pq' || a.id), md5('a') || md5('b'), 'Import « RH »'
from (select id from app_public.absences order by id limit 3) a;
update app_public.absences set comment = e'Ligne 1\nLigne "2" \\ \u00e9\t\u20ac', version = version + 1
where id = (select min(id) from app_public.absences);
create function pg_temp.list_text_mismatches(p_username text) returns int language plpgsql as $$
declare
  v_bad int := 0;
  r record;
  v_json jsonb;
  v_text record;
begin
  perform tests.authenticate_as(p_username);
  for r in select * from (values (null::text, null::date, 1, 50), ('pending', null, 1, 50), ('validated', null, 1, 3),
                                 ('validated', null, 2, 3), (null, '1900-01-01'::date, 1, 200)) v(status, from_date, page, size) loop
    v_json := app_public.absences_list(p_status => r.status, p_from => r.from_date, p_page => r.page, p_page_size => r.size,
                                       p_public_url => 'http://x/');
    select * into v_text from app_public.absences_list_text(p_status => r.status, p_from => r.from_date, p_page => r.page,
                                                            p_page_size => r.size, p_public_url => 'http://x/');
    if (v_json ->> 'count')::int is distinct from v_text.count or (v_json -> 'results')::text is distinct from v_text.results then
      v_bad := v_bad + 1;
    end if;
  end loop;
  perform tests.as_owner();
  return v_bad;
end;
$$;
grant execute on function pg_temp.list_text_mismatches(text) to public;
select is(pg_temp.list_text_mismatches('rh1'), 0, 'absences_list_text = absences_list, byte for byte: a reader of the whole association');
select is(pg_temp.list_text_mismatches('mgr1'), 0, 'absences_list_text = absences_list: a manager (perimeter)');
select is(pg_temp.list_text_mismatches('alice'), 0, 'absences_list_text = absences_list: an employee (own record)');
select is(pg_temp.list_text_mismatches('paie'), 0, 'absences_list_text = absences_list: the payroll service');
select tests.authenticate_as('rh1');
set local role wfm_api;
select is(app_hidden.absences_list_json_text(array(select a.id from app_public.absences a order by a.id desc), 'http://x/'),
          app_hidden.absences_json(array(select a.id from app_public.absences a order by a.id desc), 'http://x/', true)::text,
          'absences_list_json_text = absences_json(..., true) as text for every absence of the fixture');
select ok((select count(*) from app_public.absence_documents) >= 3 and
          app_hidden.absences_list_json_text(array(select d.absence_id from app_public.absence_documents d), 'http://x/') like '%\\ n°%',
          'the comparison saw documents with quotes, a backslash and accents');
select tests.as_owner();

truncate app_public.absences cascade;
select is((select count(*)::int from app_private.absence_status_counts), 0, 'a truncation empties the counts');

select * from finish();
rollback;
