-- Referentials (divisions, establishments, contract types): readable by every authenticated
-- account (sql/org/policies.sql), written by staff accounts only (SPEC, Permissions rule 6).
do $$
declare
  t text;
begin
  foreach t in array array['divisions', 'establishments', 'contract_types'] loop
    execute format('drop policy if exists insert_staff on app_public.%I', t);
    execute format('create policy insert_staff on app_public.%I for insert to wfm_api
                    with check ((select app_hidden.current_account_is_staff()))', t);
    execute format('drop policy if exists update_staff on app_public.%I', t);
    execute format('create policy update_staff on app_public.%I for update to wfm_api
                    using ((select app_hidden.current_account_is_staff()))
                    with check ((select app_hidden.current_account_is_staff()))', t);
    execute format('drop policy if exists delete_staff on app_public.%I', t);
    execute format('create policy delete_staff on app_public.%I for delete to wfm_api
                    using ((select app_hidden.current_account_is_staff()))', t);
    execute format('create or replace trigger _500_audit after insert or update on app_public.%I
                    for each row execute function app_private.tg__audit(%L)', t, left(t, -1));
    execute format('create or replace trigger _500_audit_delete before delete on app_public.%I
                    for each row execute function app_private.tg__audit(%L)', t, left(t, -1));
  end loop;
end;
$$;

