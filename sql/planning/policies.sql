-- Day-change requests are read through absences.view_absence_queue on the same perimeter
-- as absences (SPEC, Permissions rule 2); the requester reads their own.
alter table app_public.shift_change_requests enable row level security;
create policy select_own_or_perimeter on app_public.shift_change_requests for select to wfm_visitor, wfm_api
  using (employee_id = (select app_hidden.current_employee_id())
         or employee_id in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue')));

alter table app_public.day_modifications enable row level security;
create policy select_readable on app_public.day_modifications for select to wfm_visitor, wfm_api
  using (employee_id in (select app_hidden.readable_employee_ids()));
