-- Row-level security of the employee record (reads: sql/org/policies.sql) and of its annexes.
-- Writes go through the API functions (role wfm_api): the record, its contracts, team
-- assignments and secondary workplaces are written with employee.change_employee_record on
-- employees of its perimeter; the social security number also needs
-- employee.view_social_security_number on that employee.

-- Creation: the main workplace must lie in the writer's perimeter (a writer of the whole
-- association may also create a record without main workplace).
drop policy if exists insert_record_writer on app_public.employees;
create policy insert_record_writer on app_public.employees for insert to wfm_api
  with check ((select app_hidden.perimeter_establishment_ids('employee.change_employee_record')) is null
              or main_establishment_id = any (coalesce((select app_hidden.perimeter_establishment_ids('employee.change_employee_record')), '{}')));
drop policy if exists update_record_writer on app_public.employees;
create policy update_record_writer on app_public.employees for update to wfm_api
  using (id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')))
  with check (id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')));

do $$
declare
  t text;
begin
  foreach t in array array['contracts', 'team_assignments', 'employee_secondary_establishments'] loop
    execute format('drop policy if exists insert_record_writer on app_public.%I', t);
    execute format('create policy insert_record_writer on app_public.%I for insert to wfm_api
                    with check (employee_id in (select app_hidden.perimeter_employee_ids(''employee.change_employee_record'')))', t);
    execute format('drop policy if exists update_record_writer on app_public.%I', t);
    execute format('create policy update_record_writer on app_public.%I for update to wfm_api
                    using (employee_id in (select app_hidden.perimeter_employee_ids(''employee.change_employee_record'')))
                    with check (employee_id in (select app_hidden.perimeter_employee_ids(''employee.change_employee_record'')))', t);
    execute format('drop policy if exists delete_record_writer on app_public.%I', t);
    execute format('create policy delete_record_writer on app_public.%I for delete to wfm_api
                    using (employee_id in (select app_hidden.perimeter_employee_ids(''employee.change_employee_record'')))', t);
  end loop;
end;
$$;

-- The number itself: written by whoever may both read it and write the record.
drop policy if exists insert_ssn_writer on app_public.employee_social_security_numbers;
create policy insert_ssn_writer on app_public.employee_social_security_numbers for insert to wfm_api
  with check (employee_id in (select app_hidden.perimeter_employee_ids('employee.view_social_security_number'))
              and employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')));
drop policy if exists update_ssn_writer on app_public.employee_social_security_numbers;
create policy update_ssn_writer on app_public.employee_social_security_numbers for update to wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('employee.view_social_security_number'))
         and employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')))
  with check (employee_id in (select app_hidden.perimeter_employee_ids('employee.view_social_security_number'))
              and employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')));
drop policy if exists delete_ssn_writer on app_public.employee_social_security_numbers;
create policy delete_ssn_writer on app_public.employee_social_security_numbers for delete to wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('employee.view_social_security_number'))
         and employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')));

-- Emergency contacts: the employee reads their own; view/change permission holders their perimeter.
alter table app_public.employee_emergency_contacts enable row level security;
drop policy if exists select_own_or_perimeter on app_public.employee_emergency_contacts;
create policy select_own_or_perimeter on app_public.employee_emergency_contacts for select to wfm_visitor, wfm_api
  using (employee_id = (select app_hidden.current_employee_id())
         or employee_id in (select app_hidden.perimeter_employee_ids('employee.view_emergency_contact'))
         or employee_id in (select app_hidden.perimeter_employee_ids('employee.change_emergency_contact')));
drop policy if exists insert_writer on app_public.employee_emergency_contacts;
create policy insert_writer on app_public.employee_emergency_contacts for insert to wfm_api
  with check (employee_id in (select app_hidden.perimeter_employee_ids('employee.change_emergency_contact')));
drop policy if exists update_writer on app_public.employee_emergency_contacts;
create policy update_writer on app_public.employee_emergency_contacts for update to wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('employee.change_emergency_contact')))
  with check (employee_id in (select app_hidden.perimeter_employee_ids('employee.change_emergency_contact')));
drop policy if exists delete_writer on app_public.employee_emergency_contacts;
create policy delete_writer on app_public.employee_emergency_contacts for delete to wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('employee.change_emergency_contact')));

-- Attachments: the employee reads their own; view/change permission holders their perimeter.
alter table app_public.employee_attachments enable row level security;
drop policy if exists select_own_or_perimeter on app_public.employee_attachments;
create policy select_own_or_perimeter on app_public.employee_attachments for select to wfm_visitor, wfm_api
  using (employee_id = (select app_hidden.current_employee_id())
         or employee_id in (select app_hidden.perimeter_employee_ids('employee.view_employee_attachment'))
         or employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_attachment')));
drop policy if exists insert_writer on app_public.employee_attachments;
create policy insert_writer on app_public.employee_attachments for insert to wfm_api
  with check (employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_attachment')));
drop policy if exists update_writer on app_public.employee_attachments;
create policy update_writer on app_public.employee_attachments for update to wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_attachment')))
  with check (employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_attachment')));
drop policy if exists delete_writer on app_public.employee_attachments;
create policy delete_writer on app_public.employee_attachments for delete to wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_attachment')));
