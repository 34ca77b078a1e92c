-- On-call periods (astreintes): who reads and writes them (SPEC, Permissions rule 9).
--
-- | permission                    | roles                                                        |
-- |-------------------------------|--------------------------------------------------------------|
-- | on_call.view_on_call_period   | Admin, RH n1, RH n2, DA, Manager n1, Manager n2, Service Paie |
-- | on_call.change_on_call_period | Admin, RH n1, RH n2, DA, Manager n1, Manager n2               |
--
-- The routes follow the caller's perimeter of these permissions; Salarié and Intérimaire
-- hold neither (403). A period extends the perimeter of the manager roles of its account
-- over its establishments during [start_at, end_at) (app_hidden.permission_scope).
-- One account is never on call twice at the same time.
do $$
begin
  if not exists (select 1 from pg_constraint
                 where conname = 'on_call_periods_no_overlap' and conrelid = 'app_public.on_call_periods'::regclass) then
    alter table app_public.on_call_periods
      add constraint on_call_periods_no_overlap exclude using gist (account_id with =, tstzrange(start_at, end_at) with &&);
  end if;
end;
$$;

-- Periods with at least one establishment in the permission's perimeter (p_entirely: all
-- of them). Null scope (whole association): every period.
create or replace function app_hidden.on_call_period_ids_in_perimeter(p_permission text, p_entirely boolean default false)
returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with scope as (
    select app_hidden.perimeter_establishment_ids(p_permission) as ids,
           app_hidden.current_account_has(p_permission) as allowed
  )
  select op.id from app_public.on_call_periods op, scope
  where scope.allowed
    and (scope.ids is null
         or (not p_entirely and exists (select 1 from app_public.on_call_period_establishments ope
                                        where ope.period_id = op.id and ope.establishment_id = any (scope.ids)))
         or (p_entirely and not exists (select 1 from app_public.on_call_period_establishments ope
                                        where ope.period_id = op.id and not ope.establishment_id = any (scope.ids))));
$$;

-- Readers: one's own periods; directory holders (managers see who is on call); holders of
-- the view permission on their perimeter; and every account for the periods covering its
-- own workplaces (the planning shows the on-call periods of one's teams).
create or replace function app_hidden.readable_on_call_period_ids() returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select op.id from app_public.on_call_periods op where op.account_id = app_hidden.current_account_id()
  union
  select op.id from app_public.on_call_periods op where app_hidden.current_account_has('employee.view_employee_directory')
  union
  select app_hidden.on_call_period_ids_in_perimeter('on_call.view_on_call_period')
  union
  select ope.period_id from app_public.on_call_period_establishments ope
  where ope.establishment_id in (select app_hidden.employee_establishments(app_hidden.current_employee_id(), app_hidden.today()));
$$;

drop policy if exists select_readable on app_public.on_call_periods;
create policy select_readable on app_public.on_call_periods for select to wfm_visitor, wfm_api
  using (id in (select app_hidden.readable_on_call_period_ids()));
drop policy if exists insert_writer on app_public.on_call_periods;
create policy insert_writer on app_public.on_call_periods for insert to wfm_api
  with check ((select app_hidden.current_account_has('on_call.change_on_call_period')));
drop policy if exists update_in_perimeter on app_public.on_call_periods;
create policy update_in_perimeter on app_public.on_call_periods for update to wfm_api
  using (id in (select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period', true)))
  with check (id in (select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period', true)));
drop policy if exists delete_in_perimeter on app_public.on_call_periods;
create policy delete_in_perimeter on app_public.on_call_periods for delete to wfm_api
  using (id in (select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period', true)));

drop policy if exists select_readable on app_public.on_call_period_establishments;
create policy select_readable on app_public.on_call_period_establishments for select to wfm_visitor, wfm_api
  using (period_id in (select app_hidden.readable_on_call_period_ids()));
drop policy if exists insert_in_perimeter on app_public.on_call_period_establishments;
create policy insert_in_perimeter on app_public.on_call_period_establishments for insert to wfm_api
  with check ((select app_hidden.current_account_has('on_call.change_on_call_period'))
              and app_hidden.in_scope(establishment_id, (select app_hidden.perimeter_establishment_ids('on_call.change_on_call_period'))));
drop policy if exists delete_in_perimeter on app_public.on_call_period_establishments;
create policy delete_in_perimeter on app_public.on_call_period_establishments for delete to wfm_api
  using ((select app_hidden.current_account_has('on_call.change_on_call_period'))
         and app_hidden.in_scope(establishment_id, (select app_hidden.perimeter_establishment_ids('on_call.change_on_call_period'))));

create or replace trigger _500_audit after insert or update on app_public.on_call_periods
  for each row execute function app_private.tg__audit('on_call_period');
create or replace trigger _500_audit_delete before delete on app_public.on_call_periods
  for each row execute function app_private.tg__audit('on_call_period');
create or replace trigger _500_audit after insert or update on app_public.on_call_period_establishments
  for each row execute function app_private.tg__audit_child('on_call_period_establishment', 'period_id');
create or replace trigger _500_audit_delete before delete on app_public.on_call_period_establishments
  for each row execute function app_private.tg__audit_child('on_call_period_establishment', 'period_id');
