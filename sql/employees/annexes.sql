-- /api/employees/<pk>/emergency-contacts/ and /api/employees/<pk>/attachments/.
-- The employee reads their own; employee.view_* holders read their perimeter; HR
-- (employee.change_*) writes. An unreadable record, or a record outside the permission's
-- perimeter, answers 404; a caller without the permission at all, 403.

create or replace function app_hidden.employee_annex_access(p_employee int, p_view_permission text, p_change_permission text,
                                                 p_write boolean)
returns void
language plpgsql stable as $$
declare
  v_me int := app_hidden.current_account_id();
begin
  if not exists (select 1 from app_public.employees e where e.id = p_employee) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  if p_write then
    if not app_hidden.current_account_has(p_change_permission) then
      perform app_hidden.forbidden('Vous n’avez pas le droit de modifier ces informations de la fiche salarié.', 'WF560');
    end if;
    if not app_hidden.may(v_me, p_change_permission, p_employee) then
      perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
    end if;
    return;
  end if;
  if p_employee = app_hidden.current_employee_id() then
    return;
  end if;
  if not (app_hidden.current_account_has(p_view_permission) or app_hidden.current_account_has(p_change_permission)) then
    perform app_hidden.forbidden('Vous n’avez pas le droit de lire ces informations de la fiche salarié.', 'WF560');
  end if;
  if not (app_hidden.may(v_me, p_view_permission, p_employee) or app_hidden.may(v_me, p_change_permission, p_employee)) then
    perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
  end if;
end;
$$;

-- Emergency contacts -----------------------------------------------------------------------

create or replace function app_hidden.emergency_contact_json(c app_public.employee_emergency_contacts) returns jsonb
language sql immutable as $$
  select jsonb_build_object('id', c.id, 'employee', c.employee_id, 'name', c.name, 'relationship', c.relationship,
                            'phone', c.phone, 'alternate_phone', c.alternate_phone, 'email', c.email,
                            'position', c.position);
$$;

-- Thresholds of the annexes, named once.
create or replace function app_hidden.emergency_contacts_max() returns int
language sql immutable as $$ select 10 $$;
comment on function app_hidden.emergency_contacts_max() is
'Emergency contacts: at most 10 per employee.';

-- Problems of one contact, as (field, message) pairs (texts as sent: trimmed here).
create or replace function app_hidden.emergency_contact_refusals(p_name text, p_relationship text, p_phone text,
                                                                 p_alternate_phone text, p_email text)
returns table (field text, message text)
language plpgsql immutable as $$
declare
  v_phone_pattern constant text := app_hidden.phone_pattern();
  v text;
begin
  v := app_hidden.trimmed(p_name);
  if v is null then
    return query select 'name'::text, 'Le nom du contact est obligatoire.'::text;
  elsif char_length(v) > app_hidden.name_max_length() then
    return query select 'name'::text, app_hidden.max_length_message(app_hidden.name_max_length());
  end if;
  if char_length(btrim(p_relationship)) > app_hidden.relationship_max_length() then
    return query select 'relationship'::text, app_hidden.max_length_message(app_hidden.relationship_max_length());
  end if;
  v := app_hidden.trimmed(p_phone);
  if v is null then
    return query select 'phone'::text, 'Le numéro de téléphone est obligatoire.'::text;
  elsif v !~ v_phone_pattern then
    return query select 'phone'::text, 'Numéro de téléphone invalide (exemple : 06 12 34 56 78 ou +33 6 12 34 56 78).'::text;
  end if;
  v := app_hidden.trimmed(p_alternate_phone);
  if v is not null and v !~ v_phone_pattern then
    return query select 'alternate_phone'::text, 'Numéro de téléphone invalide (exemple : 06 12 34 56 78 ou +33 6 12 34 56 78).'::text;
  end if;
  v := app_hidden.trimmed(p_email);
  if v is not null and app_hidden.email_acceptable(v) is not true then
    return query select 'email'::text, 'Adresse e-mail invalide.'::text;
  end if;
end;
$$;

-- Problems of one contact object of the list of PUT .../emergency-contacts/ (a JSON list: a
-- GraphQL caller gives it without the route schema): an object whose fields are texts, then
-- emergency_contact_refusals.
drop function if exists app_hidden.emergency_contact_problems(jsonb);
create or replace function app_hidden.emergency_contact_item_problems(p_item jsonb) returns table (field text, message text)
language plpgsql immutable as $$
declare
  v text;
  v_bad boolean := false;
begin
  if jsonb_typeof(p_item) is distinct from 'object' then
    return query select 'non_field_errors'::text, 'Un objet est attendu.'::text;
    return;
  end if;
  foreach v in array array['name', 'relationship', 'phone', 'alternate_phone', 'email'] loop
    if p_item ? v and jsonb_typeof(p_item -> v) not in ('string', 'null') then
      field := v;
      message := 'Une chaîne de caractères est attendue.';
      v_bad := true;
      return next;
    end if;
  end loop;
  if v_bad then
    return;
  end if;
  return query select * from app_hidden.emergency_contact_refusals(p_item ->> 'name', p_item ->> 'relationship', p_item ->> 'phone',
                                                                  p_item ->> 'alternate_phone', p_item ->> 'email');
end;
$$;

-- GET /api/employees/<pk>/emergency-contacts/
create or replace function app_public.emergency_contacts_list(p_employee int, p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable as $$
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_emergency_contact',
                                           'employee.change_emergency_contact', false);
  return jsonb_build_object(
    'count', (select count(*) from app_public.employee_emergency_contacts c where c.employee_id = p_employee),
    'results', coalesce((select jsonb_agg(app_hidden.emergency_contact_json(c) order by c.position, c.id)
                         from (select * from app_public.employee_emergency_contacts c
                               where c.employee_id = p_employee
                               order by c.position, c.id
                               limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) c), '[]'::jsonb));
end;
$$;
comment on function app_public.emergency_contacts_list(integer, integer, integer) is
'SPEC Permissions, GET /api/employees/<pk>/emergency-contacts/: one page of an employee''s emergency
contacts; the employee reads their own, holders of employee.view_emergency_contact or
change_emergency_contact their perimeter (404 outside it, 403 without the permission).';

-- PUT /api/employees/<pk>/emergency-contacts/ {"contacts": [...]}: the list replaces the
-- employee's contacts, in that order (an item with id updates that contact, one without id
-- creates a contact, a contact left out is deleted); at most 10.
drop function if exists app_public.emergency_contacts_replace(int, jsonb);
create or replace function app_public.emergency_contacts_replace(p_employee int, p_contacts jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_items jsonb := nullif(p_contacts, 'null'::jsonb);
  v_item jsonb;
  v_errors jsonb := '{}';
  v_problem record;
  v_id int;
  i int;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_emergency_contact',
                                           'employee.change_emergency_contact', true);
  perform pg_advisory_xact_lock(hashtext('emergency-contacts:' || p_employee));
  if v_items is null then
    perform app_hidden.invalid('contacts', 'La liste des contacts est obligatoire (une liste vide les supprime tous).', 'WV560');
  end if;
  if jsonb_typeof(v_items) <> 'array' then
    perform app_hidden.invalid('contacts', 'Une liste est attendue.');
  end if;
  if jsonb_array_length(v_items) > app_hidden.emergency_contacts_max() then
    perform app_hidden.invalid('contacts', format('Au plus %s contacts d’urgence par salarié.', app_hidden.emergency_contacts_max()), 'WV560');
  end if;
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    v_item := v_items -> i;
    for v_problem in select * from app_hidden.emergency_contact_item_problems(v_item) loop
      v_errors := app_hidden.add_error(v_errors, 'contacts', format('Contact n° %s : %s', i + 1,
        case v_problem.field when 'non_field_errors' then '' when 'name' then 'nom : ' when 'relationship' then 'lien : '
                             when 'phone' then 'téléphone : ' when 'alternate_phone' then 'autre téléphone : '
                             else 'e-mail : ' end || lower(left(v_problem.message, 1)) || substr(v_problem.message, 2)));
    end loop;
    if jsonb_typeof(v_item) = 'object' and v_item ? 'id' and jsonb_typeof(v_item -> 'id') <> 'null' then
      if jsonb_typeof(v_item -> 'id') <> 'number'
         or not exists (select 1 from app_public.employee_emergency_contacts c
                        where c.employee_id = p_employee and c.id::text = v_item ->> 'id') then
        v_errors := app_hidden.add_error(v_errors, 'contacts', format('Contact n° %s : ce contact n’appartient pas à ce salarié.', i + 1));
      end if;
    end if;
  end loop;
  perform app_hidden.invalid_fields(v_errors, 'WV560') where v_errors <> '{}'::jsonb;

  delete from app_public.employee_emergency_contacts c
  where c.employee_id = p_employee
    and not c.id::text in (select x ->> 'id' from jsonb_array_elements(v_items) x where x ->> 'id' is not null);
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    v_item := v_items -> i;
    v_id := (v_item ->> 'id')::int;
    if v_id is null then
      insert into app_public.employee_emergency_contacts (employee_id, name, relationship, phone, alternate_phone, email, position)
      values (p_employee, btrim(v_item ->> 'name'), nullif(btrim(v_item ->> 'relationship'), ''), btrim(v_item ->> 'phone'),
              nullif(btrim(v_item ->> 'alternate_phone'), ''), nullif(btrim(v_item ->> 'email'), ''), i + 1);
    else
      update app_public.employee_emergency_contacts c
      set name = btrim(v_item ->> 'name'), relationship = nullif(btrim(v_item ->> 'relationship'), ''),
          phone = btrim(v_item ->> 'phone'), alternate_phone = nullif(btrim(v_item ->> 'alternate_phone'), ''),
          email = nullif(btrim(v_item ->> 'email'), ''), position = i + 1
      where c.id = v_id
        and (c.name, c.relationship, c.phone, c.alternate_phone, c.email, c.position)
            is distinct from (btrim(v_item ->> 'name'), nullif(btrim(v_item ->> 'relationship'), ''), btrim(v_item ->> 'phone'),
                              nullif(btrim(v_item ->> 'alternate_phone'), ''), nullif(btrim(v_item ->> 'email'), ''), i + 1);
    end if;
  end loop;
  return jsonb_build_object(
    'count', (select count(*) from app_public.employee_emergency_contacts c where c.employee_id = p_employee),
    'next', null, 'previous', null,
    'results', coalesce((select jsonb_agg(app_hidden.emergency_contact_json(c) order by c.position, c.id)
                         from app_public.employee_emergency_contacts c where c.employee_id = p_employee), '[]'::jsonb));
end;
$$;
comment on function app_public.emergency_contacts_replace(integer, jsonb) is
'SPEC Permissions, PUT /api/employees/<pk>/emergency-contacts/: a holder of
employee.change_emergency_contact on the employee replaces the list in that order (an item with id
updates, one without creates, one left out is deleted; at most 10).';

-- POST /api/employees/<pk>/emergency-contacts/: adds one contact at the end of the list.
drop function if exists app_public.emergency_contact_create(int, jsonb);
create or replace function app_public.emergency_contact_create(p_employee int, p_name text, p_phone text,
                                                               p_relationship text default null, p_alternate_phone text default null,
                                                               p_email text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_problem record;
  v_position int;
  v_row app_public.employee_emergency_contacts;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_emergency_contact',
                                           'employee.change_emergency_contact', true);
  for v_problem in select * from app_hidden.emergency_contact_refusals(p_name, p_relationship, p_phone, p_alternate_phone, p_email) loop
    v_errors := app_hidden.add_error(v_errors, v_problem.field, v_problem.message);
  end loop;
  perform app_hidden.invalid_fields(v_errors, 'WV560') where v_errors <> '{}'::jsonb;
  -- Serialise concurrent additions to the same record (the ten-contact bound holds under races).
  perform pg_advisory_xact_lock(hashtext('emergency-contacts:' || p_employee));
  select coalesce(max(c.position), 0) + 1 into v_position
  from app_public.employee_emergency_contacts c where c.employee_id = p_employee;
  if v_position > app_hidden.emergency_contacts_max() then
    perform app_hidden.invalid(null, format('Au plus %s contacts d’urgence par salarié : modifiez ou supprimez-en un.',
                                            app_hidden.emergency_contacts_max()), 'WV560');
  end if;
  insert into app_public.employee_emergency_contacts (employee_id, name, relationship, phone, alternate_phone, email, position)
  values (p_employee, btrim(p_name), app_hidden.trimmed(p_relationship), btrim(p_phone),
          app_hidden.trimmed(p_alternate_phone), app_hidden.trimmed(p_email), v_position)
  returning * into v_row;
  return app_hidden.emergency_contact_json(v_row);
end;
$$;
comment on function app_public.emergency_contact_create(integer, text, text, text, text, text) is
'SPEC Permissions, POST /api/employees/<pk>/emergency-contacts/: a holder of
employee.change_emergency_contact on the employee adds one contact at the end of the list.';

-- Attachments ------------------------------------------------------------------------------

create or replace function app_hidden.employee_attachment_json(a app_public.employee_attachments, p_public_url text) returns jsonb
language sql immutable as $$
  select jsonb_build_object(
    'id', a.id, 'employee', a.employee_id, 'title', a.title, 'filename', a.filename,
    'content_type', a.content_type, 'size_bytes', a.size_bytes, 'uploaded_at', a.uploaded_at,
    'uploaded_by', a.uploaded_by, 'uploaded_by_name', a.uploaded_by_name,
    'file', rtrim(coalesce(p_public_url, ''), '/') || format('/api/employees/%s/attachments/%s/file/', a.employee_id, a.id));
$$;

-- GET /api/employees/<pk>/attachments/
create or replace function app_public.employee_attachments_list(p_employee int, p_public_url text default null,
                                                     p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable as $$
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', false);
  return jsonb_build_object(
    'count', (select count(*) from app_public.employee_attachments a where a.employee_id = p_employee),
    'results', coalesce((select jsonb_agg(app_hidden.employee_attachment_json(a, p_public_url) order by a.uploaded_at desc, a.id desc)
                         from (select * from app_public.employee_attachments a
                               where a.employee_id = p_employee
                               order by a.uploaded_at desc, a.id desc
                               limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) a), '[]'::jsonb));
end;
$$;
comment on function app_public.employee_attachments_list(integer, text, integer, integer) is
'SPEC Permissions, GET /api/employees/<pk>/attachments/: one page of an employee''s attachments; the
employee reads their own, holders of employee.view_employee_attachment or change_employee_attachment
their perimeter (404 outside it, 403 without the permission).';

-- POST /api/employees/<pk>/attachments/ (multipart: one file under "file", optional title).
-- p_file: the stored files' metadata the multipart reader lists under "file" (SQL accepts only
-- files of this request, sql/documents/uploads.sql).
drop function if exists app_public.employee_attachment_create(int, jsonb, text);
create or replace function app_public.employee_attachment_create(p_employee int, p_file jsonb, p_title text default null,
                                                                 p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_files jsonb := nullif(p_file, 'null'::jsonb);
  v_file jsonb;
  v_title text;
  v_row app_public.employee_attachments;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', true);
  if jsonb_typeof(v_files) <> 'array' then
    perform app_hidden.invalid('file', 'Une liste est attendue.');
  end if;
  if v_files is null or jsonb_array_length(v_files) = 0 then
    perform app_hidden.invalid('file', 'Joignez un fichier PDF, JPG ou PNG (corps multipart/form-data, champ « file »).', 'WV560');
  elsif jsonb_array_length(v_files) > 1 then
    perform app_hidden.invalid('file', 'Une pièce jointe porte un seul fichier : déposez-les un par un.', 'WV560');
  end if;
  v_file := v_files -> 0;
  v_title := coalesce(app_hidden.trimmed(p_title), v_file ->> 'filename');
  if char_length(v_title) > app_hidden.attachment_title_max_length() then
    perform app_hidden.invalid('title', app_hidden.max_length_message(app_hidden.attachment_title_max_length()), 'WV560');
  end if;
  insert into app_public.employee_attachments (employee_id, title, filename, content_type, size_bytes, storage_key, sha256,
                                               uploaded_by, uploaded_by_name)
  values (p_employee, left(v_title, app_hidden.attachment_title_max_length()), v_file ->> 'filename', v_file ->> 'content_type', (v_file ->> 'size_bytes')::int,
          v_file ->> 'storage_key', v_file ->> 'sha256', app_hidden.current_account_id(),
          app_hidden.account_display_name(app_hidden.current_account_id()))
  returning * into v_row;
  return app_hidden.employee_attachment_json(v_row, p_public_url);
end;
$$;
comment on function app_public.employee_attachment_create(integer, jsonb, text, text) is
'SPEC Permissions, POST /api/employees/<pk>/attachments/: a holder of employee.change_employee_attachment
on the employee deposits one file with an optional title.';

-- PUT /api/employees/<pk>/attachments/<id>/ {"title"}
drop function if exists app_public.employee_attachment_update(int, int, jsonb, text);
create or replace function app_public.employee_attachment_update(p_employee int, p_id int, p_title text,
                                                                 p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_title text := app_hidden.trimmed(p_title);
  v_row app_public.employee_attachments;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', true);
  select * into v_row from app_public.employee_attachments a where a.id = p_id and a.employee_id = p_employee for update;
  if not found then
    perform app_hidden.not_found('Pièce jointe introuvable.');
  end if;
  if v_title is null then
    perform app_hidden.invalid('title', 'Le titre est obligatoire.', 'WV560');
  elsif char_length(v_title) > app_hidden.attachment_title_max_length() then
    perform app_hidden.invalid('title', app_hidden.max_length_message(app_hidden.attachment_title_max_length()), 'WV560');
  end if;
  update app_public.employee_attachments a set title = v_title
  where a.id = p_id and a.title is distinct from v_title
  returning * into v_row;
  if not found then
    select * into v_row from app_public.employee_attachments a where a.id = p_id;
  end if;
  return app_hidden.employee_attachment_json(v_row, p_public_url);
end;
$$;
comment on function app_public.employee_attachment_update(integer, integer, text, text) is
'SPEC Permissions, PUT /api/employees/<pk>/attachments/<id>/: a holder of
employee.change_employee_attachment on the employee renames an attachment (title).';

-- DELETE /api/employees/<pk>/attachments/<id>/ (the file is removed after commit).
create or replace function app_public.employee_attachment_delete(p_employee int, p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', true);
  delete from app_public.employee_attachments a where a.id = p_id and a.employee_id = p_employee;
  if not found then
    perform app_hidden.not_found('Pièce jointe introuvable.');
  end if;
  return null;
end;
$$;
comment on function app_public.employee_attachment_delete(integer, integer) is
'SPEC Permissions, DELETE /api/employees/<pk>/attachments/<id>/: a holder of
employee.change_employee_attachment on the employee deletes an attachment; its file is removed after
commit.';

-- GET /api/employees/<pk>/attachments/<id>/file/: what the download handler needs.
create or replace function app_public.employee_attachment_file(p_employee int, p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_row app_public.employee_attachments;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', false);
  select * into v_row from app_public.employee_attachments a where a.id = p_id and a.employee_id = p_employee;
  if not found then
    perform app_hidden.not_found('Pièce jointe introuvable.');
  end if;
  return jsonb_build_object('filename', v_row.filename, 'content_type', v_row.content_type,
                            'size_bytes', v_row.size_bytes, 'storage_key', v_row.storage_key);
end;
$$;
comment on function app_public.employee_attachment_file(integer, integer) is
'SPEC Permissions, GET /api/employees/<pk>/attachments/<id>/file/: what the HTTP handler needs to stream
an attachment, under the reading rules of the attachment list.';
