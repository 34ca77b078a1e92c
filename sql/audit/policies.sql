-- The audit log lives in app_private: no request role reads it directly. The API function
-- app_public.audit_log_search (sql/audit/search.sql) runs as wfm_api, which reads it through this policy only when
-- the acting account holds audit.view_actionlog with back-office access (whole association).
alter table app_private.audit_log enable row level security;
grant select on app_private.audit_log to wfm_api;
drop policy if exists read_with_permission on app_private.audit_log;
create policy read_with_permission on app_private.audit_log for select to wfm_api
  using ((select app_hidden.current_account_reads_audit_log()));

alter table app_private.audit_models enable row level security;
grant select on app_private.audit_models to wfm_api;
drop policy if exists select_all on app_private.audit_models;
create policy select_all on app_private.audit_models for select to wfm_api using (true);
