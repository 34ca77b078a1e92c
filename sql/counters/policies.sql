-- Counters: the employee reads their own; holders of absences.view_absence_queue read their
-- perimeter; HR, who write counters (employee.change_employee_record), read theirs; payroll
-- readers read the counters of the people they pay (payroll consultation shows balances at
-- month end). GET /api/counters/ itself answers the CONTRACT's narrower rule (own or queue
-- perimeter, others 404) in app_public.counters_read.
-- Counters are written by migrations, imports and the back-office (owner); their journal
-- only through app_private functions.
alter table app_public.counters enable row level security;
drop policy if exists select_own_or_perimeter on app_public.counters;
create policy select_own_or_perimeter on app_public.counters for select to wfm_visitor, wfm_api
  using (employee_id = (select app_hidden.current_employee_id())
         or employee_id in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue'))
         or employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record'))
         or employee_id in (select app_hidden.perimeter_employee_ids('employee.view_payroll')));

alter table app_private.counter_movements enable row level security;
