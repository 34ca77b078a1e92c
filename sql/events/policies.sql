-- Events and on-call periods (refined by the events/on-call work).
alter table app_public.events enable row level security;
create policy select_directory on app_public.events for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory')));

alter table app_public.event_participants enable row level security;
create policy select_visible_event on app_public.event_participants for select to wfm_visitor, wfm_api
  using (event_id in (select e.id from app_public.events e)
         or employee_id = (select app_hidden.current_employee_id()));

alter table app_public.on_call_periods enable row level security;
create policy select_own_or_directory on app_public.on_call_periods for select to wfm_visitor, wfm_api
  using (account_id = (select app_hidden.current_account_id())
         or (select app_hidden.current_account_has('employee.view_employee_directory')));

alter table app_public.on_call_period_establishments enable row level security;
create policy select_visible_period on app_public.on_call_period_establishments for select to wfm_visitor, wfm_api
  using (period_id in (select p.id from app_public.on_call_periods p));
