-- Annexes of the employee record: emergency contacts and attachments (HR documents).

create table if not exists app_public.employee_emergency_contacts (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  name text not null check (btrim(name) <> '' and char_length(name) <= app_hidden.name_max_length()),
  relationship text check (char_length(relationship) <= app_hidden.relationship_max_length()),
  phone text not null check (phone ~ app_hidden.phone_pattern()),
  alternate_phone text check (alternate_phone ~ app_hidden.phone_pattern()),
  email text check (email ~ app_hidden.email_pattern() and char_length(email) <= app_hidden.email_max_length()),
  position smallint not null default 1 check (position between 1 and 10),
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now()
);
-- Their patterns and limits come from sql/core/input_contract.sql (a database created before: the CHECKs are replaced).
select app_private.ensure_check('app_public.employee_emergency_contacts', 'employee_emergency_contacts_name_check',
  '(((btrim(name) <> ''''::text) AND (char_length(name) <= app_hidden.name_max_length())))');
select app_private.ensure_check('app_public.employee_emergency_contacts', 'employee_emergency_contacts_relationship_check',
  '((char_length(relationship) <= app_hidden.relationship_max_length()))');
select app_private.ensure_check('app_public.employee_emergency_contacts', 'employee_emergency_contacts_phone_check',
  '((phone ~ app_hidden.phone_pattern()))');
select app_private.ensure_check('app_public.employee_emergency_contacts', 'employee_emergency_contacts_alternate_phone_check',
  '((alternate_phone ~ app_hidden.phone_pattern()))');
select app_private.ensure_check('app_public.employee_emergency_contacts', 'employee_emergency_contacts_email_check',
  '(((email ~ app_hidden.email_pattern()) AND (char_length(email) <= app_hidden.email_max_length())))');
create index if not exists employee_emergency_contacts_employee_idx on app_public.employee_emergency_contacts (employee_id, position);

create table if not exists app_public.employee_attachments (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  title text not null check (btrim(title) <> '' and char_length(title) <= app_hidden.attachment_title_max_length()),
  filename text not null check (length(filename) between 1 and 255),
  content_type text not null check (content_type in ('application/pdf', 'image/jpeg', 'image/png')),
  size_bytes int not null check (size_bytes > 0 and size_bytes <= app_hidden.document_max_bytes()),
  -- Name of the file in the storage directory (random, never derived from user input).
  storage_key text not null unique check (storage_key ~ '^[0-9a-f]{32}$'),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  uploaded_at timestamptz not null default app_hidden.now(),
  uploaded_by int references app_public.accounts on delete set null,
  uploaded_by_name text not null,
  updated_at timestamptz not null default app_hidden.now()
);
-- Its limit comes from sql/core/input_contract.sql (a database created before: the CHECK is replaced).
select app_private.ensure_check('app_public.employee_attachments', 'employee_attachments_title_check',
  '(((btrim(title) <> ''''::text) AND (char_length(title) <= app_hidden.attachment_title_max_length())))');
create index if not exists employee_attachments_employee_idx on app_public.employee_attachments (employee_id, uploaded_at desc);
-- The size limit is app_hidden.document_max_bytes(); an older database's CHECK held the number.
alter table app_public.employee_attachments drop constraint if exists employee_attachments_size_bytes_check,
  add constraint employee_attachments_size_bytes_check check (size_bytes > 0 and size_bytes <= app_hidden.document_max_bytes());

create or replace trigger _100_timestamps before insert or update on app_public.employee_emergency_contacts
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _100_timestamps before insert or update on app_public.employee_attachments
  for each row execute function app_hidden.tg__timestamps();

-- A deleted attachment's file is removed from the storage directory after commit (a
-- rolled-back deletion never loses a file).
create or replace function app_private.tg_employee_attachments__storage_garbage() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  insert into app_private.storage_garbage (storage_key) values (old.storage_key) on conflict do nothing;
  return old;
end;
$$;
create or replace trigger _900_storage_garbage after delete on app_public.employee_attachments
  for each row execute function app_private.tg_employee_attachments__storage_garbage();

-- Audit of every write of the employee record and its parts.
create or replace trigger _500_audit after insert or update on app_public.employees
  for each row execute function app_private.tg__audit('employee');
create or replace trigger _500_audit_delete before delete on app_public.employees
  for each row execute function app_private.tg__audit('employee');
create or replace trigger _500_audit after insert or update on app_public.contracts
  for each row execute function app_private.tg__audit('contract');
create or replace trigger _500_audit_delete before delete on app_public.contracts
  for each row execute function app_private.tg__audit('contract');
create or replace trigger _500_audit after insert or update on app_public.team_assignments
  for each row execute function app_private.tg__audit('team_assignment');
create or replace trigger _500_audit_delete before delete on app_public.team_assignments
  for each row execute function app_private.tg__audit('team_assignment');
create or replace trigger _500_audit after insert or update on app_public.employee_secondary_establishments
  for each row execute function app_private.tg__audit_child('employee_secondary_establishment', 'employee_id');
create or replace trigger _500_audit_delete before delete on app_public.employee_secondary_establishments
  for each row execute function app_private.tg__audit_child('employee_secondary_establishment', 'employee_id');
create or replace trigger _500_audit after insert or update on app_public.employee_emergency_contacts
  for each row execute function app_private.tg__audit('emergency_contact');
create or replace trigger _500_audit_delete before delete on app_public.employee_emergency_contacts
  for each row execute function app_private.tg__audit('emergency_contact');
create or replace trigger _500_audit after insert or update on app_public.employee_attachments
  for each row execute function app_private.tg__audit('employee_attachment');
create or replace trigger _500_audit_delete before delete on app_public.employee_attachments
  for each row execute function app_private.tg__audit('employee_attachment');

-- The social security number is audited without its value: the audit log is read by
-- accounts that may not read the number.
create or replace function app_private.tg_employee_social_security_numbers__audit() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_masked jsonb := jsonb_build_object('social_security_number', '(masqué)');
begin
  if tg_op = 'INSERT' then
    perform app_private.write_audit('Creation', 'employee_social_security_number', new.employee_id, null,
                                    v_masked || jsonb_build_object('employee_id', new.employee_id));
    return new;
  elsif tg_op = 'UPDATE' then
    perform app_private.write_audit('Modification', 'employee_social_security_number', new.employee_id,
                                    v_masked || jsonb_build_object('employee_id', old.employee_id),
                                    v_masked || jsonb_build_object('employee_id', new.employee_id));
    return new;
  else
    perform app_private.write_audit('Suppression', 'employee_social_security_number', old.employee_id,
                                    v_masked || jsonb_build_object('employee_id', old.employee_id), null);
    return old;
  end if;
end;
$$;
create or replace trigger _500_audit after insert or update on app_public.employee_social_security_numbers
  for each row execute function app_private.tg_employee_social_security_numbers__audit();
create or replace trigger _500_audit_delete before delete on app_public.employee_social_security_numbers
  for each row execute function app_private.tg_employee_social_security_numbers__audit();
