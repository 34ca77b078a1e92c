-- A file row may only name a file uploaded by the current request (sql/documents/uploads.sql):
-- forged or replayed metadata is refused, whatever the path (REST, GraphQL, a direct call).
begin;
select plan(6);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.sick_leave(p_start date, p_files jsonb) returns jsonb language sql volatile as $$
  select tests.absence_create(jsonb_build_object(
    'employee', tests.id('employees', 'alice'), 'type', (select id from app_public.absence_types where code = 'MAL'),
    'date_start', p_start, 'date_end', p_start, 'add_documents', p_files));
$$;
grant execute on all functions in schema pg_temp to public;

select tests.authenticate_as('alice');
select throws_ok($$select pg_temp.sick_leave('2026-11-17', jsonb_build_array(jsonb_build_object(
    'filename', 'faux.pdf', 'content_type', 'application/pdf', 'size_bytes', 1000,
    'storage_key', md5('forged'), 'sha256', md5('a') || md5('b'))))$$,
  'WV402', null, 'metadata of a file this request did not upload is refused');
select is((select count(*)::int from app_public.absences where employee_id = tests.id('employees', 'alice')), 0,
  'and nothing of the absence is written');

select lives_ok($$select pg_temp.sick_leave('2026-11-18', jsonb_build_array(tests.uploaded_file('arret.pdf')))$$,
  'a file uploaded by the request is accepted');

-- The next "request": nothing uploaded; replaying the key of the stored document (changing
-- it so the unique key does not answer first) is refused by content.
select set_config('app.uploaded_files', '', true);
select throws_ok(format($$select pg_temp.sick_leave('2026-11-19', jsonb_build_array(jsonb_build_object(
    'filename', 'copie.pdf', 'content_type', 'application/pdf', 'size_bytes', 1000,
    'storage_key', %L, 'sha256', md5('c') || md5('d'))))$$,
    md5('not-stored-' || (select storage_key from app_public.absence_documents limit 1))),
  'WV402', null, 'a key not uploaded by this request is refused');
select throws_ok($$select pg_temp.sick_leave('2026-11-19', jsonb_build_array(
    (select jsonb_set(f, '{size_bytes}', '2000') from (select tests.uploaded_file('x.pdf') f) x)))$$,
  'WV402', null, 'metadata that differs from the stored file (size) is refused');

-- The owner (imports, migrations, a DBA) is not concerned.
select tests.as_owner();
select lives_ok($$insert into app_public.honorability_certificates (employee_id, filename, content_type, size_bytes, storage_key, sha256, uploaded_by_name)
  values (tests.id('employees', 'bruno'), 'h.pdf', 'application/pdf', 10, md5('owner'), md5('o') || md5('p'), 'Import')$$,
  'an owner insert (import) is not checked against the request''s uploads');

select * from finish();
rollback;
