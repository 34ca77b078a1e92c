-- Absences: the employee reads their own; queue readers read their perimeter; payroll
-- readers read the absences of the people they pay.
create function app_hidden.absence_reader_employee_ids() returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
  union
  select app_hidden.perimeter_employee_ids('absences.view_absence_queue')
  union
  select app_hidden.perimeter_employee_ids('employee.view_payroll');
$$;

alter table app_public.absences enable row level security;
create policy select_own_or_perimeter on app_public.absences for select to wfm_visitor, wfm_api
  using (employee_id in (select app_hidden.absence_reader_employee_ids()));

alter table app_public.absence_documents enable row level security;
create policy select_visible_absence on app_public.absence_documents for select to wfm_visitor, wfm_api
  using (absence_id in (select a.id from app_public.absences a));

alter table app_public.honorability_certificates enable row level security;
create policy select_own_or_directory on app_public.honorability_certificates for select to wfm_visitor, wfm_api
  using (employee_id in (select app_hidden.readable_employee_ids()));

alter table app_private.storage_garbage enable row level security;
