-- Audited tables of the foundation. Other concerns attach their own triggers next to their
-- tables (absence, shift_change_request, day_modification).

-- The two audit triggers of a table whose every write is a line of model p_model (its row in
-- app_private.audit_models): after insert or update, before delete. Re-runnable.
create or replace function app_private.audit_writes(p_table text, p_model text) returns void
language plpgsql volatile as $$
begin
  execute format('create or replace trigger _500_audit after insert or update on app_public.%I
                  for each row execute function app_private.tg__audit(%L)', p_table, p_model);
  execute format('create or replace trigger _500_audit_delete before delete on app_public.%I
                  for each row execute function app_private.tg__audit(%L)', p_table, p_model);
end;
$$;

-- Opening and closing an account (PUT /api/employees/<id>/account-activation/ and the
-- back-office) is audited as model 'account'. Logins (last_login_at) and other account
-- columns are not: only a change of is_active writes a line.
create or replace trigger _500_audit after update of is_active on app_public.accounts
  for each row when (old.is_active is distinct from new.is_active)
  execute function app_private.tg__audit('account');
