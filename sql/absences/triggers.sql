-- Triggers of absences: the state machine guard, the audit lines, and the storage garbage
-- of deleted documents. (Included after the audit machinery it calls.)

-- The SPEC's state table as a guard: an update must follow a legal transition and advance
-- the version by exactly one; a refused or cancelled absence is read-only; the employee
-- and the author never change. The API functions never hit it: it refuses direct writes
-- (back-office, scripts) that would bypass them.
create or replace function app_private.tg_absences__guard() returns trigger
language plpgsql volatile as $$
begin
  -- The back-office sets a decided absence back to pending (app_public.absence_set_pending
  -- marks its own update): the only way out of refused, and out of validated back to pending.
  if current_setting('app.absence_reopening', true) = 'on' then
    if not (old.status in ('validated', 'refused') and new.status = 'pending') then
      raise exception using errcode = 'WV910', detail = 'status',
        message = format('Transition d’état interdite : %s → %s.', old.status, new.status);
    end if;
  elsif old.status in ('refused', 'cancelled') then
    raise exception using errcode = 'WV910', detail = 'status',
      message = 'Une absence refusée ou annulée est en lecture seule.';
  elsif (old.status, new.status) not in (('pending', 'pending'), ('pending', 'validated'), ('pending', 'refused'),
                                      ('validated', 'validated'), ('validated', 'cancellation_requested'),
                                      ('validated', 'cancelled'), ('cancellation_requested', 'validated'),
                                      ('cancellation_requested', 'cancellation_requested'),
                                      ('cancellation_requested', 'cancelled')) then
    raise exception using errcode = 'WV910', detail = 'status',
      message = format('Transition d’état interdite : %s → %s.', old.status, new.status);
  end if;
  if new.version <> old.version + 1 then
    raise exception using errcode = 'WV910', detail = 'version',
      message = 'Chaque écriture d’une absence avance sa version d’une unité.';
  end if;
  if new.employee_id <> old.employee_id or new.author_account_id is distinct from old.author_account_id
     or new.created_at <> old.created_at then
    raise exception using errcode = 'WV910', detail = 'employee',
      message = 'Le salarié et l’auteur d’une absence ne changent pas.';
  end if;
  return new;
end;
$$;
drop trigger if exists _200_guard on app_public.absences;
create or replace trigger _200_guard before update on app_public.absences
  for each row execute function app_private.tg_absences__guard();

-- A request is erased only while pending (a withdrawal): a refused request is never
-- erased, a granted one is cancelled, not deleted. Deleting the employee record cascades.
create or replace function app_private.tg_absences__guard_delete() returns trigger
language plpgsql volatile as $$
begin
  if old.status <> 'pending' and pg_trigger_depth() = 1 then
    raise exception using errcode = 'WV910', detail = 'status',
      message = 'Seule une demande en attente peut être effacée.';
  end if;
  return old;
end;
$$;
drop trigger if exists _200_guard_delete on app_public.absences;
create or replace trigger _200_guard_delete before delete on app_public.absences
  for each row execute function app_private.tg_absences__guard_delete();

drop trigger if exists _500_audit on app_public.absences;
create or replace trigger _500_audit after insert or update on app_public.absences
  for each row execute function app_private.tg__audit('absence');
drop trigger if exists _500_audit_delete on app_public.absences;
create or replace trigger _500_audit_delete before delete on app_public.absences
  for each row execute function app_private.tg__audit('absence');

drop trigger if exists _900_storage_garbage on app_public.absence_documents;
create or replace trigger _900_storage_garbage after delete on app_public.absence_documents
  for each row execute function app_private.tg__storage_garbage();
drop trigger if exists _900_storage_garbage on app_public.honorability_certificates;
create or replace trigger _900_storage_garbage after delete or update of storage_key on app_public.honorability_certificates
  for each row execute function app_private.tg__storage_garbage();

-- Deposits and removals of absence documents, named (issue 11): one line per document under
-- the model absence_document, target the absence, with the document's name, type, size and
-- depositor (not its storage key).
insert into app_private.audit_models (model, label) values ('absence_document', 'Justificatif d’absence')
on conflict (model) do nothing;

create or replace function app_private.tg_absence_documents__audit() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_row app_public.absence_documents := case when tg_op = 'DELETE' then old else new end;
  v_doc jsonb := jsonb_build_object('id', v_row.id, 'absence_id', v_row.absence_id, 'filename', v_row.filename,
                                    'content_type', v_row.content_type, 'size_bytes', v_row.size_bytes,
                                    'uploaded_at', v_row.uploaded_at, 'uploaded_by', v_row.uploaded_by_name);
begin
  if tg_op = 'INSERT' then
    perform app_private.write_audit('Creation', 'absence_document', v_row.absence_id, null, v_doc);
  else
    perform app_private.write_audit('Suppression', 'absence_document', v_row.absence_id, v_doc, null);
  end if;
  return null;
end;
$$;
drop trigger if exists _500_audit on app_public.absence_documents;
create or replace trigger _500_audit after insert or delete on app_public.absence_documents
  for each row execute function app_private.tg_absence_documents__audit();
