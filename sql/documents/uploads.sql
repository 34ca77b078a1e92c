-- A file row may only name a file uploaded by the current request. The HTTP layer streams
-- each upload to the storage directory, checks it (magic bytes, size), and lists what it
-- stored in app.uploaded_files for the transaction; API functions receive the same
-- metadata in their body. This trigger refuses any other metadata, so that no caller (a
-- staff account through GraphQL, a crafted JSON body) can point a row at another person's
-- file or at a file that was never checked. The owner (migrations, imports, a DBA) is not
-- concerned: only the API role writes through the API.
create or replace function app_private.tg__file_uploaded_by_request() returns trigger
language plpgsql volatile as $$
declare
  v_uploaded jsonb := coalesce(nullif(current_setting('app.uploaded_files', true), ''), '[]')::jsonb;
begin
  if current_user <> 'wfm_api' then
    return new;
  end if;
  if tg_op = 'UPDATE' and new.storage_key = old.storage_key then
    return new;
  end if;
  if not exists (select 1 from jsonb_array_elements(v_uploaded) f
                 where f ->> 'storage_key' = new.storage_key
                   and (f ->> 'size_bytes')::bigint = new.size_bytes
                   and f ->> 'sha256' = new.sha256
                   and f ->> 'content_type' = new.content_type) then
    raise exception using errcode = 'WV402', detail = tg_argv[0],
      message = 'Fichier illisible : déposez-le de nouveau (multipart/form-data).';
  end if;
  return new;
end;
$$;

create or replace trigger _200_uploaded_by_request before insert or update of storage_key on app_public.absence_documents
  for each row execute function app_private.tg__file_uploaded_by_request('add_documents');
create or replace trigger _200_uploaded_by_request before insert or update of storage_key on app_public.honorability_certificates
  for each row execute function app_private.tg__file_uploaded_by_request('file');
create or replace trigger _200_uploaded_by_request before insert or update of storage_key on app_public.employee_attachments
  for each row execute function app_private.tg__file_uploaded_by_request('file');
