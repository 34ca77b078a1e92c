-- Row-level security of the organisation and reference tables.
-- Request roles: wfm_visitor (reads) and wfm_api (owner of the API functions, so that their
-- reads and writes go through the same policies). The table owner bypasses RLS: only
-- app_private/app_hidden security definer helpers run as owner.

-- Reference data, readable by every authenticated account.
do $$
declare
  t text;
begin
  foreach t in array array['divisions', 'establishments', 'teams', 'team_establishments', 'posts',
                           'contract_types', 'roles', 'permissions', 'role_permissions',
                           'absence_categories', 'absence_types', 'absence_type_contract_types',
                           'counter_kinds', 'counter_associations', 'shift_change_reasons'] loop
    execute format('alter table app_public.%I enable row level security', t);
    execute format('drop policy if exists select_authenticated on app_public.%I', t);
    execute format('create policy select_authenticated on app_public.%I for select to wfm_visitor, wfm_api
                    using ((select app_hidden.current_account_id()) is not null)', t);
  end loop;
end;
$$;

-- Directory readers: their own record, the directory (encadrement reads the whole
-- association, CONTRACT: lists are entire without scope=perimeter), and the payroll
-- perimeter (Service Paie reads the people it pays). Policies test the directory
-- permission first, in an init plan: for the encadrement the row test is then a constant
-- true and the list of readable employees is never built.
create or replace function app_hidden.readable_employee_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  if app_hidden.current_account_has('employee.view_employee_directory') then
    -- The directory is every employee: the other branches add nothing to it.
    return query select e.id from app_public.employees e;
    return;
  end if;
  if not app_hidden.current_account_has('employee.view_payroll')
     and not app_hidden.current_account_has('absences.view_absence_queue') then
    -- Without the payroll permission its perimeter is empty (most employees): no scope to compute.
    return query select x.id from (select app_hidden.current_employee_id()) x(id) where x.id is not null;
    return;
  end if;
  -- The queue without the directory: a delegate (issue 30; every role holding the queue holds
  -- the directory) reads the employees of the perimeter it decides for, as its delegator does.
  return query
    select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
    union
    select app_hidden.perimeter_employee_ids('employee.view_payroll')
    where app_hidden.current_account_has('employee.view_payroll')
    union
    select app_hidden.perimeter_employee_ids('absences.view_absence_queue')
    where app_hidden.current_account_has('absences.view_absence_queue');
end;
$$;

alter table app_public.employees enable row level security;
drop policy if exists select_readable on app_public.employees;
create policy select_readable on app_public.employees for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or id in (select app_hidden.readable_employee_ids()));

alter table app_public.employee_social_security_numbers enable row level security;
drop policy if exists select_ssn_permission on app_public.employee_social_security_numbers;
create policy select_ssn_permission on app_public.employee_social_security_numbers for select to wfm_visitor, wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('employee.view_social_security_number')));

alter table app_public.employee_secondary_establishments enable row level security;
drop policy if exists select_readable on app_public.employee_secondary_establishments;
create policy select_readable on app_public.employee_secondary_establishments for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));

alter table app_public.team_assignments enable row level security;
drop policy if exists select_readable on app_public.team_assignments;
create policy select_readable on app_public.team_assignments for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));

alter table app_public.contracts enable row level security;
drop policy if exists select_readable on app_public.contracts;
create policy select_readable on app_public.contracts for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));

alter table app_public.planning_templates enable row level security;
drop policy if exists select_readable on app_public.planning_templates;
create policy select_readable on app_public.planning_templates for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));

alter table app_public.planning_template_slots enable row level security;
drop policy if exists select_readable on app_public.planning_template_slots;
create policy select_readable on app_public.planning_template_slots for select to wfm_visitor, wfm_api
  using (exists (select 1 from app_public.planning_templates t where t.id = planning_template_slots.template_id));

-- Accounts: one's own, and the directory readers (who see the account of a record).
alter table app_public.accounts enable row level security;
drop policy if exists select_own_or_directory on app_public.accounts;
create policy select_own_or_directory on app_public.accounts for select to wfm_visitor, wfm_api
  using (id = (select app_hidden.current_account_id())
         or (select app_hidden.current_account_has('employee.view_employee_directory')));

alter table app_public.role_attributions enable row level security;
drop policy if exists select_own_or_directory on app_public.role_attributions;
create policy select_own_or_directory on app_public.role_attributions for select to wfm_visitor, wfm_api
  using (account_id = (select app_hidden.current_account_id())
         or (select app_hidden.current_account_has('employee.view_employee_directory')));

alter table app_public.role_attribution_establishments enable row level security;
drop policy if exists select_visible_attribution on app_public.role_attribution_establishments;
create policy select_visible_attribution on app_public.role_attribution_establishments for select to wfm_visitor, wfm_api
  using (attribution_id in (select ra.id from app_public.role_attributions ra));

alter table app_public.account_permissions enable row level security;
drop policy if exists select_own_or_directory on app_public.account_permissions;
create policy select_own_or_directory on app_public.account_permissions for select to wfm_visitor, wfm_api
  using (account_id = (select app_hidden.current_account_id())
         or (select app_hidden.current_account_has('employee.view_employee_directory')));

-- Private tables: RLS on and no policy, so only the owner (security definer helpers) reads them.
alter table app_private.account_secrets enable row level security;
alter table app_private.password_tokens enable row level security;
alter table app_private.settings enable row level security;
