-- Counters: the employee reads their own; queue readers read their perimeter; HR writes
-- (employee.change_employee_record) and payroll read theirs.
alter table app_public.counters enable row level security;
create policy select_own_or_perimeter on app_public.counters for select to wfm_visitor, wfm_api
  using (employee_id = (select app_hidden.current_employee_id())
         or employee_id in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue'))
         or employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record'))
         or employee_id in (select app_hidden.perimeter_employee_ids('employee.view_payroll')));

alter table app_private.counter_movements enable row level security;
