-- The orphan sweep's question (app_private.storage_keys_unreferenced): among stored keys, those
-- no row names. Keys of absence documents, honorability certificates and employee attachments
-- are kept; an unknown key is an orphan; NULL input gives no key (never a NULL key); only the
-- owner (the worker) may ask.
begin;
select plan(7);
select tests.freeze('2026-11-16 10:00+01');
select tests.authenticate_as('alice');
select set_config('tests.absence', tests.absence_create(jsonb_build_object(
  'employee', tests.id('employees', 'alice'), 'type', (select id from app_public.absence_types where code = 'FOR'),
  'date_start', '2026-12-07', 'date_end', '2026-12-07')) ->> 'id', true);
select tests.as_owner();

insert into app_public.honorability_certificates (employee_id, filename, content_type, size_bytes, storage_key, sha256, uploaded_by_name)
  values (tests.id('employees', 'bruno'), 'h.pdf', 'application/pdf', 10, md5('certificate'), md5('c') || md5('d'), 'Import');
insert into app_public.absence_documents (absence_id, filename, content_type, size_bytes, storage_key, sha256, uploaded_by_name)
  values (current_setting('tests.absence')::int, 'a.pdf', 'application/pdf', 10, md5('document'), md5('a') || md5('b'), 'Import');
insert into app_public.employee_attachments (employee_id, title, filename, content_type, size_bytes, storage_key, sha256, uploaded_by_name)
  values (tests.id('employees', 'chloe'), 'Contrat', 'c.pdf', 'application/pdf', 10, md5('attachment'), md5('e') || md5('f'), 'Import');

select is(
  (select array_agg(k order by k) from app_private.storage_keys_unreferenced(array[md5('certificate'), md5('document'), md5('attachment'), md5('orphan-1'), md5('orphan-2')]) k),
  (select array_agg(k order by k) from unnest(array[md5('orphan-1'), md5('orphan-2')]) k),
  'only the keys no row names are answered');
select is((select count(*)::int from app_private.storage_keys_unreferenced(array[md5('document')])), 0,
  'the file of an absence document is kept');
select is((select count(*)::int from app_private.storage_keys_unreferenced(null)), 0, 'no keys: no answer (not a NULL key)');
select is((select count(*)::int from app_private.storage_keys_unreferenced(array[null, md5('orphan-3')]) k where k is null), 0,
  'a NULL in the list is never answered');

delete from app_public.absence_documents where storage_key = md5('document');
select is((select count(*)::int from app_private.storage_keys_unreferenced(array[md5('document')])), 1,
  'once its row is deleted, the file is unreferenced');

select ok(not has_function_privilege('wfm_visitor', 'app_private.storage_keys_unreferenced(text[])', 'execute'),
  'the visitor may not ask');
select ok(not has_function_privilege('wfm_authenticator', 'app_private.storage_keys_unreferenced(text[])', 'execute'),
  'nor the authenticator (the worker sweeps, as the owner)');

select * from finish();
rollback;
