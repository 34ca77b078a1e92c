-- A notification is read by its recipient only.
alter table app_public.notifications enable row level security;
create policy select_own on app_public.notifications for select to wfm_visitor, wfm_api
  using (account_id = (select app_hidden.current_account_id()));
create policy update_own on app_public.notifications for update to wfm_api
  using (account_id = (select app_hidden.current_account_id()));

alter table app_private.email_outbox enable row level security;
