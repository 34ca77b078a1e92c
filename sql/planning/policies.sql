-- Day-change requests are read through absences.view_absence_queue on the same perimeter
-- as absences (SPEC, Permissions rule 2); the requester reads their own.
alter table app_public.shift_change_requests enable row level security;
drop policy if exists select_own_or_perimeter on app_public.shift_change_requests;
create policy select_own_or_perimeter on app_public.shift_change_requests for select to wfm_visitor, wfm_api
  using (employee_id = (select app_hidden.current_employee_id())
         or (select app_hidden.perimeter_is_whole('absences.view_absence_queue'))
         or employee_id in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue')));
-- Filing: only for the requester's own record, born pending at version 1.
drop policy if exists insert_own on app_public.shift_change_requests;
create policy insert_own on app_public.shift_change_requests for insert to wfm_api
  with check (employee_id = (select app_hidden.current_employee_id()) and status = 'pending' and version = 1);
-- Decisions (planning.decide_shift_change) and back-office corrections (HR,
-- employee.change_employee_record), each on its perimeter; the transition functions check
-- the finer rules (own request, version, state).
drop policy if exists update_decider_or_hr on app_public.shift_change_requests;
create policy update_decider_or_hr on app_public.shift_change_requests for update to wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('planning.decide_shift_change'))
         or employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')));
-- Withdrawal: the requester only (the guard trigger keeps decided requests).
drop policy if exists delete_own on app_public.shift_change_requests;
create policy delete_own on app_public.shift_change_requests for delete to wfm_api
  using (employee_id = (select app_hidden.current_employee_id()));

-- Day modifications: read like the planning's other rows; written by the deciders of the
-- employee (a validated request) and by HR (back-office).
alter table app_public.day_modifications enable row level security;
drop policy if exists select_readable on app_public.day_modifications;
-- (A decider of the employee's day changes reads them too: a delegate without the directory,
-- issue 30, writes the day of the request it grants.)
create policy select_readable on app_public.day_modifications for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids())
         or employee_id in (select app_hidden.perimeter_employee_ids('planning.decide_shift_change')));
drop policy if exists insert_decider_or_hr on app_public.day_modifications;
create policy insert_decider_or_hr on app_public.day_modifications for insert to wfm_api
  with check (employee_id in (select app_hidden.perimeter_employee_ids('planning.decide_shift_change'))
              or employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')));
drop policy if exists update_decider_or_hr on app_public.day_modifications;
create policy update_decider_or_hr on app_public.day_modifications for update to wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('planning.decide_shift_change'))
         or employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')));
drop policy if exists delete_hr on app_public.day_modifications;
create policy delete_hr on app_public.day_modifications for delete to wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')));
