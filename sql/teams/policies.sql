-- Teams: readable by every authenticated account (sql/org/policies.sql); written (edit,
-- delete, replace members, add a member, create) with employee.change_team, bounded to the
-- teams having at least one establishment in the writer's perimeter (SPEC, Permissions
-- rule 7).
--
-- | permission           | roles                                          |
-- |----------------------|------------------------------------------------|
-- | employee.change_team | Admin, RH n1, RH n2, DA, Manager n1, Manager n2 |
--
-- Team members are team_assignments: written through the team routes with this permission
-- (on employees of its perimeter), and through the employee record with
-- employee.change_employee_record (sql/employees/policies.sql).
-- Teams with at least one establishment in the perimeter of the permission (p_entirely:
-- every establishment in it). A perimeter of the whole association covers every team.
create or replace function app_hidden.team_ids_in_perimeter(p_permission text, p_entirely boolean default false)
returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with scope as (
    select app_hidden.perimeter_establishment_ids(p_permission) as ids,
           app_hidden.current_account_has(p_permission) as allowed
  )
  select t.id
  from app_public.teams t, scope
  where scope.allowed
    and (scope.ids is null
         or (not p_entirely and exists (select 1 from app_public.team_establishments te
                                        where te.team_id = t.id and te.establishment_id = any (scope.ids)))
         or (p_entirely and exists (select 1 from app_public.team_establishments te where te.team_id = t.id)
                        and not exists (select 1 from app_public.team_establishments te
                                        where te.team_id = t.id and not te.establishment_id = any (scope.ids))));
$$;

drop policy if exists insert_record_writer on app_public.teams;
create policy insert_record_writer on app_public.teams for insert to wfm_api
  with check ((select app_hidden.current_account_has('employee.change_team')));
drop policy if exists update_in_perimeter on app_public.teams;
create policy update_in_perimeter on app_public.teams for update to wfm_api
  using (id in (select app_hidden.team_ids_in_perimeter('employee.change_team')))
  with check (id in (select app_hidden.team_ids_in_perimeter('employee.change_team')));
drop policy if exists delete_entirely_in_perimeter on app_public.teams;
create policy delete_entirely_in_perimeter on app_public.teams for delete to wfm_api
  using (id in (select app_hidden.team_ids_in_perimeter('employee.change_team', true)));

-- An establishment is attached to or detached from a team only within the perimeter.
drop policy if exists insert_in_perimeter on app_public.team_establishments;
create policy insert_in_perimeter on app_public.team_establishments for insert to wfm_api
  with check ((select app_hidden.current_account_has('employee.change_team'))
              and ((select app_hidden.perimeter_establishment_ids('employee.change_team')) is null
                   or establishment_id = any (coalesce((select app_hidden.perimeter_establishment_ids('employee.change_team')), '{}'))));
drop policy if exists delete_in_perimeter on app_public.team_establishments;
create policy delete_in_perimeter on app_public.team_establishments for delete to wfm_api
  using ((select app_hidden.current_account_has('employee.change_team'))
         and ((select app_hidden.perimeter_establishment_ids('employee.change_team')) is null
              or establishment_id = any (coalesce((select app_hidden.perimeter_establishment_ids('employee.change_team')), '{}'))));

create or replace trigger _500_audit after insert or update on app_public.teams
  for each row execute function app_private.tg__audit('team');
create or replace trigger _500_audit_delete before delete on app_public.teams
  for each row execute function app_private.tg__audit('team');
create or replace trigger _500_audit after insert or update on app_public.team_establishments
  for each row execute function app_private.tg__audit_child('team_establishment', 'team_id');
create or replace trigger _500_audit_delete before delete on app_public.team_establishments
  for each row execute function app_private.tg__audit_child('team_establishment', 'team_id');

-- Members written through the team routes.
drop policy if exists insert_team_writer on app_public.team_assignments;
create policy insert_team_writer on app_public.team_assignments for insert to wfm_api
  with check (employee_id in (select app_hidden.perimeter_employee_ids('employee.change_team')));
drop policy if exists update_team_writer on app_public.team_assignments;
create policy update_team_writer on app_public.team_assignments for update to wfm_api
  using (team_id in (select app_hidden.team_ids_in_perimeter('employee.change_team')))
  with check (team_id in (select app_hidden.team_ids_in_perimeter('employee.change_team')));
drop policy if exists delete_team_writer on app_public.team_assignments;
create policy delete_team_writer on app_public.team_assignments for delete to wfm_api
  using (team_id in (select app_hidden.team_ids_in_perimeter('employee.change_team')));
