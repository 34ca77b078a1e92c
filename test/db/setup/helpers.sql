-- Helpers for the pgTAP files, installed once in the pgTAP database by test/run-pgtap.ts.
-- Every pgTAP file runs in one transaction that it rolls back.
grant execute on all functions in schema public to public;

create schema tests;
grant usage on schema tests to public;

-- Back to the session user (postgres, owner: no RLS), with no acting account.
create function tests.as_owner() returns void language plpgsql as $$
begin
  perform set_config('role', 'none', true);
  perform set_config('app.account_id', '', true);
  perform set_config('app.employee_id', '', true);
end;
$$;

-- Acts as a fixture account for the following statements, exactly as an HTTP request does:
-- role wfm_visitor (RLS applies) and the acting account in app.account_id / app.employee_id.
create function tests.authenticate_as(p_username text) returns void language plpgsql as $$
declare
  v_id int;
  v_employee int;
begin
  perform tests.as_owner();
  select a.id, a.employee_id into v_id, v_employee from app_public.accounts a where a.username = p_username;
  if v_id is null then
    raise exception 'unknown account %', p_username;
  end if;
  perform set_config('app.account_id', v_id::text, true);
  perform set_config('app.employee_id', coalesce(v_employee::text, ''), true);
  perform set_config('role', 'wfm_visitor', true);
end;
$$;

-- Freezes the business clock for the rest of the transaction.
create function tests.freeze(p_now timestamptz) returns void language sql as $$
  select set_config('app.frozen_now', p_now::text, true);
$$;

-- Id of a fixture key (test/fixtures/organisation.json), e.g. tests.id('employees', 'alice').
create function tests.id(p_section text, p_key text) returns int language sql stable as $$
  select id from public.fixture_ids where section = p_section and key = p_key;
$$;
grant select on public.fixture_ids to public;

grant execute on all functions in schema tests to public;

-- File metadata as the HTTP layer hands it to SQL after storing an upload, registered in
-- app.uploaded_files like a real request (a file row may only name a file of its request).
create function tests.uploaded_file(p_name text, p_type text default 'application/pdf', p_size int default 1000)
returns jsonb language plpgsql volatile as $$
declare
  v_file jsonb := jsonb_build_object('filename', p_name, 'content_type', p_type, 'size_bytes', p_size,
                                     'storage_key', md5(p_name || random()::text),
                                     'sha256', md5(p_name) || md5(p_name || 'x'));
begin
  perform set_config('app.uploaded_files',
    (coalesce(nullif(current_setting('app.uploaded_files', true), ''), '[]')::jsonb || jsonb_build_array(v_file))::text, true);
  return v_file;
end;
$$;
grant execute on function tests.uploaded_file(text, text, int) to public;

-- POST /api/absences/ as the route calls it: each key of the JSON body to its typed argument
-- of app_public.absence_create (an absent key is null, as the manifest's body-field arguments;
-- other keys, such as a forged status, are not passed). The files keep their metadata list.
create function tests.absence_create(p_body jsonb, p_public_url text default null)
returns jsonb language sql volatile as $$
  select app_public.absence_create(
    p_employee => (p_body ->> 'employee')::int, p_type => (p_body ->> 'type')::int,
    p_date_start => (p_body ->> 'date_start')::date, p_date_end => (p_body ->> 'date_end')::date,
    p_start_half => p_body ->> 'start_half', p_end_half => p_body ->> 'end_half',
    p_start_time => (p_body ->> 'start_time')::time, p_end_time => (p_body ->> 'end_time')::time,
    p_comment => p_body ->> 'comment', p_add_documents => p_body -> 'add_documents', p_public_url => p_public_url);
$$;
grant execute on function tests.absence_create(jsonb, text) to public;

-- POST /api/absences/preview/ as the route calls it (the same mapping as tests.absence_create).
create function tests.absence_preview(p_body jsonb)
returns jsonb language sql stable as $$
  select app_public.absence_preview(
    p_employee => (p_body ->> 'employee')::int, p_type => (p_body ->> 'type')::int,
    p_date_start => (p_body ->> 'date_start')::date, p_date_end => (p_body ->> 'date_end')::date,
    p_start_half => p_body ->> 'start_half', p_end_half => p_body ->> 'end_half',
    p_start_time => (p_body ->> 'start_time')::time, p_end_time => (p_body ->> 'end_time')::time);
$$;
grant execute on function tests.absence_preview(jsonb) to public;

-- POST /api/absences/<id>/validate/ as the route calls it: version, reason, date_end and type
-- typed (absent: null), the hours as JSON values where an absent key (SQL null) keeps the
-- stored hour and a JSON null clears it.
create function tests.absence_validate(p_id int, p_body jsonb, p_public_url text default null)
returns jsonb language sql volatile as $$
  select app_public.absence_validate(
    p_id, p_version => (p_body ->> 'version')::int, p_reason => p_body ->> 'reason',
    p_date_end => (p_body ->> 'date_end')::date, p_type => (p_body ->> 'type')::int,
    p_start_time => p_body -> 'start_time', p_end_time => p_body -> 'end_time', p_public_url => p_public_url);
$$;
grant execute on function tests.absence_validate(int, jsonb, text) to public;

-- The keys of a JSON body, as the manifest's body-keys argument passes them (p_sent).
create function tests.keys_sent(p_body jsonb) returns text[] language sql immutable as $$
  select array(select jsonb_object_keys(p_body));
$$;
grant execute on function tests.keys_sent(jsonb) to public;

-- A JSON list of ids as an int[] argument (absent or not a list: null).
create function tests.int_array(p_value jsonb) returns int[] language sql immutable as $$
  select case when jsonb_typeof(p_value) = 'array' then array(select x::int from jsonb_array_elements_text(p_value) x) end;
$$;
grant execute on function tests.int_array(jsonb) to public;

-- POST /api/employees/ as the route calls it: each key of the JSON body to its typed argument,
-- the lists contracts and teams as JSON, and the keys sent.
create function tests.employee_create(p_body jsonb)
returns jsonb language sql volatile as $$
  select app_public.employee_create(
    p_first_name => p_body ->> 'first_name', p_last_name => p_body ->> 'last_name',
    p_professional_email => p_body ->> 'professional_email', p_birth_date => (p_body ->> 'birth_date')::date,
    p_is_polyvalent => (p_body ->> 'is_polyvalent')::boolean, p_main_establishment => (p_body ->> 'main_establishment')::int,
    p_secondary_establishments => tests.int_array(p_body -> 'secondary_establishments'),
    p_social_security_number => p_body ->> 'social_security_number', p_contracts => p_body -> 'contracts',
    p_teams => p_body -> 'teams', p_username => p_body ->> 'username', p_sent => tests.keys_sent(p_body));
$$;
grant execute on function tests.employee_create(jsonb) to public;

-- PATCH /api/employees/<id>/ as the route calls it (the same mapping as tests.employee_create).
create function tests.employee_update(p_id int, p_body jsonb)
returns jsonb language sql volatile as $$
  select app_public.employee_update(p_id,
    p_first_name => p_body ->> 'first_name', p_last_name => p_body ->> 'last_name',
    p_professional_email => p_body ->> 'professional_email', p_birth_date => (p_body ->> 'birth_date')::date,
    p_is_polyvalent => (p_body ->> 'is_polyvalent')::boolean, p_main_establishment => (p_body ->> 'main_establishment')::int,
    p_secondary_establishments => tests.int_array(p_body -> 'secondary_establishments'),
    p_social_security_number => p_body ->> 'social_security_number', p_contracts => p_body -> 'contracts',
    p_teams => p_body -> 'teams', p_sent => tests.keys_sent(p_body));
$$;
grant execute on function tests.employee_update(int, jsonb) to public;

-- PATCH /api/absences/<id>/ as the route calls it: each key of the JSON body to its typed
-- argument, the files' metadata as JSON, and the keys sent.
create function tests.absence_update(p_id int, p_body jsonb, p_public_url text default null)
returns jsonb language sql volatile as $$
  select app_public.absence_update(p_id,
    p_type => (p_body ->> 'type')::int, p_date_start => (p_body ->> 'date_start')::date,
    p_date_end => (p_body ->> 'date_end')::date, p_start_half => p_body ->> 'start_half', p_end_half => p_body ->> 'end_half',
    p_start_time => (p_body ->> 'start_time')::time, p_end_time => (p_body ->> 'end_time')::time,
    p_comment => p_body ->> 'comment', p_version => (p_body ->> 'version')::int,
    p_remove_document_ids => tests.int_array(p_body -> 'remove_document_ids'), p_add_documents => p_body -> 'add_documents',
    p_sent => tests.keys_sent(p_body), p_public_url => p_public_url);
$$;
grant execute on function tests.absence_update(int, jsonb, text) to public;
