-- Row-level security of absences, documents, certificates and counters: the policies
-- express the SPEC's perimeters even for writes that bypass the API functions.
begin;
select plan(22);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.as_api(p_username text) returns void language plpgsql as $$
begin
  perform tests.authenticate_as(p_username);
  perform set_config('role', 'wfm_api', true);
end;
$$;
create function pg_temp.affected(p_sql text) returns int language plpgsql as $$
declare
  v int;
begin
  execute p_sql;
  get diagnostics v = row_count;
  return v;
end;
$$;
grant execute on all functions in schema pg_temp to public;

select tests.as_owner();
insert into app_public.absences (employee_id, type_id, date_start, date_end, status)
values (tests.id('employees', 'alice'), (select id from app_public.absence_types where code = 'FOR'), '2026-12-01', '2026-12-01', 'pending'),
       (tests.id('employees', 'david'), (select id from app_public.absence_types where code = 'FOR'), '2026-12-01', '2026-12-01', 'pending');

select ok((select relrowsecurity from pg_class where oid = 'app_private.reminders_sent'::regclass), 'reminders_sent has RLS');
select policies_are('app_public', 'absences',
  array['select_own_or_perimeter', 'insert_own_or_decider', 'update_own_or_perimeter', 'delete_own'], 'absences: the four policies');
select policies_are('app_public', 'absence_documents', array['select_visible_absence', 'insert_writer', 'delete_writer'],
  'absence_documents: read with the absence, written by the owner and the manager perimeter');
select policies_are('app_public', 'counters', array['select_own_or_perimeter'], 'counters: read only');
select has_index('app_public', 'absences', 'absences_employee_dates_idx', 'absences indexed by employee and dates');
select has_index('app_public', 'absence_documents', 'absence_documents_absence_idx', 'documents indexed by absence');
select has_index('app_private', 'counter_movements', 'counter_movements_absence_idx', 'journal indexed by absence');

-- The visitor role only reads.
select tests.authenticate_as('alice');
select throws_ok($$insert into app_public.absences (employee_id, type_id, date_start, date_end)
  values (tests.id('employees', 'alice'), 1, '2026-12-02', '2026-12-02')$$, '42501', null, 'the visitor cannot insert');
select throws_ok($$select * from app_private.counter_movements$$, '42501', null, 'the visitor cannot read the journal');
select is((select count(*)::int from app_public.absences), 1, 'alice reads her own absence only');

-- wfm_api (the API functions) writes through the policies.
select pg_temp.as_api('da');
select throws_ok($$insert into app_public.absences (employee_id, type_id, date_start, date_end, status, version)
  values (tests.id('employees', 'alice'), 1, '2026-12-03', '2026-12-03', 'validated', 1)$$, '42501', null,
  'the DA, who does not decide, cannot insert for another');
select pg_temp.as_api('bruno');
select is(pg_temp.affected($$update app_public.absences set comment = 'x', version = version + 1
           where employee_id = tests.id('employees', 'alice')$$), 0, 'a colleague updates nothing');
select is(pg_temp.affected($$delete from app_public.absences where employee_id = tests.id('employees', 'alice')$$), 0,
  'nor deletes');
select pg_temp.as_api('mgr1');
select is(pg_temp.affected($$delete from app_public.absences where employee_id = tests.id('employees', 'alice')$$), 0,
  'a manager does not delete an employee''s row (cancellation is an update)');
select is(pg_temp.affected($$update app_public.absences set comment = 'x', version = version + 1
           where employee_id = tests.id('employees', 'david')$$), 0, 'nor updates outside the perimeter');
select pg_temp.as_api('bruno');
-- The file itself is registered as uploaded by this request: only the policy can refuse.
select set_config('app.uploaded_files', jsonb_build_array(jsonb_build_object('storage_key', md5('x'), 'size_bytes', 1,
  'sha256', md5('x') || md5('y'), 'content_type', 'application/pdf'))::text, true);
select throws_ok($$insert into app_public.honorability_certificates (employee_id, filename, content_type, size_bytes, storage_key, sha256, uploaded_by_name)
  values (tests.id('employees', 'alice'), 'x.pdf', 'application/pdf', 1, md5('x'), md5('x') || md5('y'), 'Bruno')$$, '42501', null,
  'a colleague cannot deposit a certificate');

-- Counters: own, queue perimeter, HR and payroll readers (payroll consultation shows
-- balances); the counters route itself answers only the employee and the queue perimeter.
select tests.authenticate_as('paie');
select isnt((select count(*)::int from app_public.counters where employee_id = tests.id('employees', 'alice')), 0,
  'Service Paie reads the counters of the people it pays (payroll consultation)');
select throws_ok(format('select app_public.counters_read(%s, 2026)', tests.id('employees', 'alice')), 'WN001', null,
  'the counters route answers 404');
select tests.authenticate_as('alice');
select throws_ok(format('select app_public.counters_read(%s, 2026)', tests.id('employees', 'bruno')), 'WN001', null,
  'a colleague''s counters: 404');
select tests.authenticate_as('mgr1');
select is(app_public.counters_read(tests.id('employees', 'alice'), 2026) -> 'CP' ->> 'acquired', '25.00', 'a queue holder reads the perimeter');
select throws_ok(format('select app_public.counters_read(%s, 2026)', tests.id('employees', 'david')), 'WN001', null,
  'not outside it');
select is(app_public.counters_read(tests.id('employees', 'alice'), 2030), '{}'::jsonb, 'a year without counters: empty');

select * from finish();
rollback;
