-- Triggers of absences: the state machine guard, the audit lines, and the storage garbage
-- of deleted documents. (Included after the audit machinery it calls.)

-- The SPEC's state table as a guard: an update must follow a legal transition and advance
-- the version by exactly one; a refused or cancelled absence is read-only; the employee
-- and the author never change. The API functions never hit it: it refuses direct writes
-- (back-office, scripts) that would bypass them.
create function app_private.tg_absences_guard() returns trigger
language plpgsql as $$
begin
  if old.status in ('refused', 'cancelled') then
    raise exception using errcode = 'WV910', detail = 'status',
      message = 'Une absence refusée ou annulée est en lecture seule.';
  end if;
  if (old.status, new.status) not in (('pending', 'pending'), ('pending', 'validated'), ('pending', 'refused'),
                                      ('validated', 'validated'), ('validated', 'cancellation_requested'),
                                      ('validated', 'cancelled'), ('cancellation_requested', 'validated'),
                                      ('cancellation_requested', 'cancellation_requested'),
                                      ('cancellation_requested', 'cancelled')) then
    raise exception using errcode = 'WV910', detail = 'status',
      message = format('Transition d''état interdite : %s → %s.', old.status, new.status);
  end if;
  if new.version <> old.version + 1 then
    raise exception using errcode = 'WV910', detail = 'version',
      message = 'Chaque écriture d''une absence avance sa version d''une unité.';
  end if;
  if new.employee_id <> old.employee_id or new.author_account_id is distinct from old.author_account_id
     or new.created_at <> old.created_at then
    raise exception using errcode = 'WV910', detail = 'employee',
      message = 'Le salarié et l''auteur d''une absence ne changent pas.';
  end if;
  return new;
end;
$$;
create trigger _200_guard before update on app_public.absences
  for each row execute function app_private.tg_absences_guard();

-- A request is erased only while pending (a withdrawal): a refused request is never
-- erased, a granted one is cancelled, not deleted. Deleting the employee record cascades.
create function app_private.tg_absences_guard_delete() returns trigger
language plpgsql as $$
begin
  if old.status <> 'pending' and pg_trigger_depth() = 1 then
    raise exception using errcode = 'WV910', detail = 'status',
      message = 'Seule une demande en attente peut être effacée.';
  end if;
  return old;
end;
$$;
create trigger _200_guard_delete before delete on app_public.absences
  for each row execute function app_private.tg_absences_guard_delete();

create trigger _500_audit after insert or update on app_public.absences
  for each row execute function app_private.tg_audit('absence');
create trigger _500_audit_delete before delete on app_public.absences
  for each row execute function app_private.tg_audit('absence');

create trigger _900_storage_garbage after delete on app_public.absence_documents
  for each row execute function app_private.tg_storage_garbage();
create trigger _900_storage_garbage after delete or update of storage_key on app_public.honorability_certificates
  for each row execute function app_private.tg_storage_garbage();
