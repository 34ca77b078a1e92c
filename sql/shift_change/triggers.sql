-- Guard and audit of day-change requests and day modifications.

-- A decided request (validated or refused) is read-only and cannot be deleted (400 under
-- status); a write never changes whose day it is, and each write advances the version by
-- exactly one. A deletion cascading from the deletion of the employee record is let through.
create or replace function app_private.tg_shift_change_requests__guard() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'DELETE' then
    if old.status <> 'pending'
       and exists (select 1 from app_public.employees e where e.id = old.employee_id) then
      perform app_hidden.invalid('status', 'Seule une demande en attente peut être retirée : une demande décidée est conservée.', 'WV106');
    end if;
    return old;
  end if;
  if old.status <> 'pending' then
    perform app_hidden.invalid('status', 'Cette demande a déjà été décidée : elle est en lecture seule.', 'WV106');
  end if;
  if new.employee_id <> old.employee_id or new.date <> old.date
     or new.author_account_id is distinct from old.author_account_id or new.created_at <> old.created_at then
    raise exception using errcode = 'WF190',
      message = 'Le salarié, la date et l’auteur d’une demande de modification ne changent pas.';
  end if;
  if new.version <> old.version + 1 then
    raise exception using errcode = 'WF190',
      message = 'Chaque écriture d’une demande de modification avance sa version d’une unité.';
  end if;
  return new;
end;
$$;
create or replace trigger _200_guard before update or delete on app_public.shift_change_requests
  for each row execute function app_private.tg_shift_change_requests__guard();

create or replace trigger _500_audit after insert or update on app_public.shift_change_requests
  for each row execute function app_private.tg__audit('shift_change_request');
create or replace trigger _500_audit_delete before delete on app_public.shift_change_requests
  for each row execute function app_private.tg__audit('shift_change_request');

create or replace trigger _500_audit after insert or update on app_public.day_modifications
  for each row execute function app_private.tg__audit('day_modification');
create or replace trigger _500_audit_delete before delete on app_public.day_modifications
  for each row execute function app_private.tg__audit('day_modification');

