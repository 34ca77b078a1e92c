-- Documents (rule 18 and the reading rules): metadata checks, remove_document_ids of
-- another absence, who reads the content (the `file` key and the download check), who
-- deposits, deletion with the absence or the cancellation, the storage garbage, and the
-- honorability certificate.
begin;
select plan(43);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.body(p_employee text, p_type text, p_start date, p_end date default null,
                             p_extra jsonb default '{}') returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', tests.id('employees', p_employee),
                            'type', (select t.id from app_public.absence_types t where t.code = p_type),
                            'date_start', p_start, 'date_end', coalesce(p_end, p_start)) || p_extra;
$$;
-- Metadata of an uploaded file, as the HTTP layer hands it over.
create function pg_temp.file(p_name text, p_type text default 'application/pdf', p_size int default 1000) returns jsonb
language sql volatile as $$
  select tests.uploaded_file(p_name, p_type, p_size);
$$;
create function pg_temp.abs(p_employee text, p_start date) returns int language sql stable security definer as $$
  select a.id from app_public.absences a where a.employee_id = tests.id('employees', p_employee) and a.date_start = p_start
  order by a.id desc limit 1;
$$;
create function pg_temp.doc(p_name text) returns int language sql stable security definer as $$
  select d.id from app_public.absence_documents d where d.filename = p_name;
$$;
create function pg_temp.key(p_name text) returns text language sql stable security definer as $$
  select d.storage_key from app_public.absence_documents d where d.filename = p_name;
$$;
create function pg_temp.garbage() returns text[] language sql stable security definer as $$
  select coalesce(array_agg(g.storage_key order by g.storage_key), '{}') from app_private.storage_garbage g;
$$;
create function pg_temp.audit_count() returns int language sql stable security definer as $$
  select count(*)::int from app_private.audit_log;
$$;
create function pg_temp.docs_of(p_detail jsonb) returns jsonb language sql immutable as $$
  select p_detail -> 'documents';
$$;
grant execute on all functions in schema pg_temp to public;

-- Creation with documents; format and size are checked.
select tests.authenticate_as('alice');
select throws_ok($$select tests.absence_create(pg_temp.body('alice', 'MAL', '2026-11-16') ||
  jsonb_build_object('add_documents', jsonb_build_array(pg_temp.file('note.txt', 'text/plain'))))$$, 'WV200',
  'Format de fichier non accepté : seuls les fichiers PDF, JPG et PNG sont acceptés.', 'another format: 400 under add_documents');
select throws_ok($$select tests.absence_create(pg_temp.body('alice', 'MAL', '2026-11-16') ||
  jsonb_build_object('add_documents', jsonb_build_array(pg_temp.file('big.pdf', 'application/pdf', 10485761))))$$, 'WV200',
  'Fichier trop volumineux : 10 Mo au plus par fichier.', 'above 10 MB: 400 under add_documents');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'MAL', '2026-11-16', '2026-11-18') ||
  jsonb_build_object('add_documents', jsonb_build_array(pg_temp.file('arret.pdf'), pg_temp.file('arret-p2.png', 'image/png', 10485760))))$$,
  'a sick leave with two documents (10 MB exactly is allowed)');
select is(jsonb_array_length(pg_temp.docs_of(app_public.absence_get(pg_temp.abs('alice', '2026-11-16'), 'http://wfm.test'))), 2,
  'the detail lists them');
select is(pg_temp.docs_of(app_public.absence_get(pg_temp.abs('alice', '2026-11-16'), 'http://wfm.test')) -> 0 ->> 'file',
  format('http://wfm.test/api/absence-documents/%s/file/', pg_temp.doc('arret.pdf')), 'the employee reads their own: file URL');
select is(pg_temp.docs_of(app_public.absence_get(pg_temp.abs('alice', '2026-11-16'), 'http://wfm.test')) -> 0 ->> 'uploaded_by',
  'Alice Martin', 'depositor name');
select is(app_public.absence_document_file(pg_temp.doc('arret.pdf')) ->> 'storage_key', pg_temp.key('arret.pdf'),
  'the download check passes for the employee');

-- Third parties: the content needs absences.view_absencedocument_file and the perimeter.
create temporary table audit_before as select pg_temp.audit_count() as n;
grant select on audit_before to public;
select tests.authenticate_as('mgr1');
select ok(not (pg_temp.docs_of(app_public.absence_get(pg_temp.abs('alice', '2026-11-16'), 'http://wfm.test')) -> 0 ? 'file'),
  'a manager without the right sees filename, date and depositor, no file key');
select ok(pg_temp.docs_of(app_public.absence_get(pg_temp.abs('alice', '2026-11-16'), 'http://wfm.test')) -> 0 ?& array['filename', 'uploaded_at', 'uploaded_by'],
  'but the metadata');
select throws_ok(format('select app_public.absence_document_file(%s)', pg_temp.doc('arret.pdf')), 'WF401', null,
  'download without the right: 403');
select tests.authenticate_as('da');
select throws_ok(format('select app_public.absence_document_file(%s)', pg_temp.doc('arret.pdf')), 'WF401', null, 'the DA: 403');
select tests.authenticate_as('rh1');
select ok(pg_temp.docs_of(app_public.absence_get(pg_temp.abs('alice', '2026-11-16'), 'http://wfm.test')) -> 0 ? 'file',
  'HR with the right: file key');
select lives_ok(format('select app_public.absence_document_file(%s)', pg_temp.doc('arret.pdf')), 'and the download');
select tests.authenticate_as('rh2');
select throws_ok(format('select app_public.absence_document_file(%s)', pg_temp.doc('arret.pdf')), 'WN401', null,
  'HR of another establishment: 404');
select tests.authenticate_as('mgr2');
select throws_ok(format('select app_public.absence_document_file(%s)', pg_temp.doc('arret.pdf')), 'WN401', null,
  'a manager outside the perimeter: 404');
select tests.authenticate_as('bruno');
select throws_ok(format('select app_public.absence_document_file(%s)', pg_temp.doc('arret.pdf')), 'WN401', null, 'a colleague: 404');
select throws_ok('select app_public.absence_document_file(999999)', 'WN401', null, 'an absent document: 404');
select is(pg_temp.audit_count(), (select n from audit_before), 'consultation of documents is not audited');

-- Depositing is open to the manager perimeter without the read right.
select tests.authenticate_as('da');
select lives_ok(format($$select tests.absence_update(%s, jsonb_build_object('add_documents', jsonb_build_array(pg_temp.file('da.pdf'))))$$,
  pg_temp.abs('alice', '2026-11-16')), 'the DA deposits a document');
select throws_ok(format($$select tests.absence_update(%s, '{"date_end": "2026-11-17"}')$$, pg_temp.abs('alice', '2026-11-16')),
  'WF201', null, 'but does not correct the absence');
select tests.authenticate_as('alice');
select throws_ok(format($$select tests.absence_update(%s, '{"comment": "x"}')$$, pg_temp.abs('alice', '2026-11-16')),
  'WF203', null, 'an employee PATCH: 403');
select lives_ok(format($$select app_public.absence_add_documents(%s, jsonb_build_array(pg_temp.file('suite.pdf')))$$,
  pg_temp.abs('alice', '2026-11-16')), 'the employee deposits on their own absence through the documents route');
select throws_ok(format($$select app_public.absence_add_documents(%s, '[]')$$, pg_temp.abs('alice', '2026-11-16')),
  'WV002', 'Déposez au moins un fichier (PDF, JPG ou PNG).', 'at least one file');
select tests.authenticate_as('mgr1');
select throws_ok($$select tests.absence_update(999999, '{"comment": "x"}')$$, 'WN201', null, 'an unknown row: 404');

-- remove_document_ids must belong to the absence: refused, not ignored.
select tests.authenticate_as('bruno');
select lives_ok($$select tests.absence_create(pg_temp.body('bruno', 'MAL', '2026-11-16') ||
  jsonb_build_object('add_documents', jsonb_build_array(pg_temp.file('bruno.pdf'))))$$, 'bruno''s sick leave with a document');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select tests.absence_update(%s, jsonb_build_object('remove_document_ids', jsonb_build_array(%s, %s)))$$,
  pg_temp.abs('alice', '2026-11-16'), pg_temp.doc('da.pdf'), pg_temp.doc('bruno.pdf')), 'WV200',
  format('Le document n° %s n’appartient pas à cette absence : rien n’a été modifié.', pg_temp.doc('bruno.pdf')),
  'a document of another absence: 400 under remove_document_ids');
select isnt(pg_temp.doc('da.pdf'), null, 'nothing removed');
select lives_ok(format($$select tests.absence_update(%s, jsonb_build_object('remove_document_ids', jsonb_build_array(%s)))$$,
  pg_temp.abs('alice', '2026-11-16'), pg_temp.doc('da.pdf')), 'removing its own document');
select is(pg_temp.doc('da.pdf'), null, 'the row is gone');
select is(array_length(pg_temp.garbage(), 1), 1, 'its file is queued for removal after commit');

-- Deleting an absence deletes its documents; a granted cancellation too (the row stays).
select tests.authenticate_as('bruno');
select lives_ok(format('select app_public.absence_delete(%s)', pg_temp.abs('bruno', '2026-11-16')), 'bruno withdraws his request');
select is(array_length(pg_temp.garbage(), 1), 2, 'its document''s file is queued');
select tests.authenticate_as('mgr1');
select lives_ok(format($$select tests.absence_validate(%s, '{"version": 4}')$$, pg_temp.abs('alice', '2026-11-16')), 'alice''s leave granted');
select tests.authenticate_as('alice');
select lives_ok(format($$select app_public.absence_request_cancellation(%s)$$, pg_temp.abs('alice', '2026-11-16')), 'cancellation asked');
select tests.authenticate_as('mgr1');
select lives_ok(format($$select tests.absence_validate(%s, '{"version": 6}')$$, pg_temp.abs('alice', '2026-11-16')), 'and granted');
select is(jsonb_array_length(pg_temp.docs_of(app_public.absence_get(pg_temp.abs('alice', '2026-11-16'), null))), 0,
  'a granted cancellation deletes the documents');
select is(array_length(pg_temp.garbage(), 1), 5, 'their files are queued');
select tests.as_owner();
select is((select count(*)::int from app_private.storage_garbage_take(3)), 3, 'the purge takes keys in batches');
select is(array_length(pg_temp.garbage(), 1), 2, 'and forgets them');

-- Honorability certificate.
select tests.authenticate_as('alice');
select is(app_public.honorability_certificate_put(tests.id('employees', 'alice'),
  p_file => jsonb_build_array(pg_temp.file('honorabilite.pdf')), p_public_url => 'http://wfm.test') ->> 'file',
  format('http://wfm.test/api/employees/%s/honorability-certificate/file/', tests.id('employees', 'alice')),
  'the employee deposits their certificate and reads it');
select tests.authenticate_as('mgr1');
select ok(not (app_public.honorability_certificate_get(tests.id('employees', 'alice'), null) ? 'file'),
  'a manager sees the metadata without file key');
select throws_ok(format('select app_public.honorability_certificate_file(%s)', tests.id('employees', 'alice')), 'WF401', null,
  'and cannot download it');
select tests.authenticate_as('bruno');
select throws_ok(format('select app_public.honorability_certificate_file(%s)', tests.id('employees', 'alice')), 'WN001', null,
  'a colleague: 404');

select * from finish();
rollback;
