-- Removing an absence document needs the right to correct the absence (issue 11, finding 5):
-- a DA deposits but does not remove; every deposit and removal leaves an audit line naming
-- the document (model absence_document, target the absence).
begin;
select plan(12);
select tests.freeze('2026-11-16 10:00+01');

select tests.authenticate_as('alice');
do $$
begin
  perform tests.absence_create(jsonb_build_object(
    'employee', tests.id('employees', 'alice'), 'type', (select t.id from app_public.absence_types t where t.code = 'MAL'),
    'date_start', '2026-11-16', 'date_end', '2026-11-17',
    'add_documents', jsonb_build_array(tests.uploaded_file('arret-maladie.pdf'))));
end;
$$;
select tests.as_owner();
create function pg_temp.abs() returns int language sql stable security definer as $$
  select a.id from app_public.absences a where a.employee_id = tests.id('employees', 'alice') and a.date_start = '2026-11-16';
$$;
create function pg_temp.doc(p_name text) returns int language sql stable security definer as $$
  select d.id from app_public.absence_documents d where d.filename = p_name;
$$;
create function pg_temp.version() returns int language sql stable security definer as $$
  select a.version from app_public.absences a where a.id = pg_temp.abs();
$$;
create function pg_temp.audited(p_verb text, p_name text) returns boolean language sql stable security definer as $$
  select exists (select 1 from app_private.audit_log l
                 where l.model = 'absence_document' and l.target_id = pg_temp.abs() and l.verb = p_verb
                   and coalesce(l.after, l.before) ->> 'filename' = p_name);
$$;
grant execute on all functions in schema pg_temp to public;

select ok(pg_temp.audited('Creation', 'arret-maladie.pdf'), 'a deposit on creation is audited with the document''s name');

-- The DA of E1 deposits, but does not remove.
select tests.authenticate_as('da');
select lives_ok(format($$select app_public.absence_add_documents(%s,
  jsonb_build_array(tests.uploaded_file('complement.pdf')))$$, pg_temp.abs()), 'the DA deposits a document');
select ok(pg_temp.audited('Creation', 'complement.pdf'), 'the deposit is audited with the document''s name');
select throws_ok(format($$select tests.absence_update(%s, jsonb_build_object('remove_document_ids', jsonb_build_array(%s)))$$,
  pg_temp.abs(), pg_temp.doc('arret-maladie.pdf')), 'WF201', null, 'the DA may not remove a medical certificate (403)');
select isnt(pg_temp.doc('arret-maladie.pdf'), null, 'the certificate is still there');
select is(pg_temp.version(), 2, 'and the absence is unchanged (version 2: the deposit only)');
-- Nor through a deposit carrying a removal.
select throws_ok(format($$select tests.absence_update(%s, jsonb_build_object('remove_document_ids', jsonb_build_array(%s),
  'add_documents', jsonb_build_array(tests.uploaded_file('remplacement.pdf'))))$$, pg_temp.abs(), pg_temp.doc('complement.pdf')),
  'WF201', null, 'nor while depositing another one');

-- The policy says the same to any function running as wfm_api for the DA.
create temp table removed (n int);
grant all on removed to public;
select tests.authenticate_as('da');
select set_config('role', 'wfm_api', true);
with d as (delete from app_public.absence_documents doc where doc.filename = 'arret-maladie.pdf' returning 1)
insert into removed select count(*) from d;
select tests.as_owner();
select is((select n from removed), 0, 'the delete policy of absence_documents refuses the DA');
select isnt(pg_temp.doc('arret-maladie.pdf'), null, 'the certificate is still there after a direct delete');

-- The manager of E1 (decides absences) removes it; the removal is audited with the name.
select tests.authenticate_as('mgr1');
select lives_ok(format($$select tests.absence_update(%s, jsonb_build_object('remove_document_ids', jsonb_build_array(%s)))$$,
  pg_temp.abs(), pg_temp.doc('complement.pdf')), 'the manager of E1 removes a document');
select is(pg_temp.doc('complement.pdf'), null, 'it is gone');
select ok(pg_temp.audited('Suppression', 'complement.pdf'), 'the removal is audited with the document''s name');

select * from finish();
rollback;
