-- Audited tables of the foundation. Other concerns attach their own triggers next to their
-- tables (absence, shift_change_request, day_modification).

-- Opening and closing an account (PUT /api/employees/<id>/account-activation/ and the
-- back-office) is audited as model 'account'. Logins (last_login_at) and other account
-- columns are not: only a change of is_active writes a line.
create or replace trigger _500_audit after update of is_active on app_public.accounts
  for each row when (old.is_active is distinct from new.is_active)
  execute function app_private.tg__audit('account');
