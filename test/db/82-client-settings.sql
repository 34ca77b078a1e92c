-- GET /api/settings/ (app_public.client_settings()): every limit of the input contract under its
-- snake_case name, the document formats and the longest absence, the same for every account.
begin;
select plan(7);

select tests.authenticate_as('alice');
create temporary table settings_seen on commit drop as select app_public.client_settings() as value;
grant select on settings_seen to public;

select is_empty($$
  select c.key from jsonb_each(app_hidden.input_contract()) c
  where (select value from settings_seen) -> lower(regexp_replace(c.key, '([A-Z])', '_\1', 'g')) is distinct from c.value
$$, 'every value of the input contract, under its snake_case name');
select is((select count(*)::int from settings_seen, jsonb_object_keys(value)),
          (select count(*)::int + 2 from jsonb_object_keys(app_hidden.input_contract())),
          'the input contract, the document formats and the longest absence: nothing else');
select is((select value -> 'comment_max_length' from settings_seen), to_jsonb(app_hidden.comment_max_length()),
          'the comment length of sql/core/input_contract.sql');
select is((select value -> 'document_max_bytes' from settings_seen), to_jsonb(10 * 1024 * 1024),
          'documents: 10 MB');
select is((select value -> 'absence_max_days' from settings_seen), to_jsonb(app_hidden.absence_max_days()),
          'the longest absence of sql/core/limits.sql');

-- The formats are those the document tables accept (their CHECKs list them).
select tests.as_owner();
select is_empty($$
  select c.conrelid::regclass::text
  from pg_constraint c
  where c.conrelid in ('app_public.absence_documents'::regclass, 'app_public.employee_attachments'::regclass,
                       'app_public.honorability_certificates'::regclass)
    and c.contype = 'c' and pg_get_constraintdef(c.oid) like '%content_type%'
    and (select array_agg(m[1] order by m[1]) from regexp_matches(pg_get_constraintdef(c.oid), '''([^'']+)''::text', 'g') m)
        is distinct from (select array_agg(t order by t) from unnest(app_hidden.document_content_types()) t)
$$, 'the document formats are those of the document tables'' CHECKs');

-- An account without employee record reads the same.
select tests.authenticate_as('salarie_noemp');
select is(app_public.client_settings(), (select value from settings_seen), 'the same for an account without employee record');

select * from finish();
rollback;
