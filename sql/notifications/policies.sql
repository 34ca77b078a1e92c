-- A notification is read, and marked read, by its recipient only. Notifications are
-- created by app_private.notify (owner) only: no insert or delete policy.
alter table app_public.notifications enable row level security;
drop policy if exists select_own on app_public.notifications;
create policy select_own on app_public.notifications for select to wfm_visitor, wfm_api
  using (account_id = (select app_hidden.current_account_id()));
drop policy if exists update_own on app_public.notifications;
create policy update_own on app_public.notifications for update to wfm_api
  using (account_id = (select app_hidden.current_account_id()))
  with check (account_id = (select app_hidden.current_account_id()));

-- The outbox is private; staff read it through app_public.email_outbox_list (as wfm_api).
alter table app_private.email_outbox enable row level security;
grant select on app_private.email_outbox to wfm_api;
drop policy if exists select_staff on app_private.email_outbox;
create policy select_staff on app_private.email_outbox for select to wfm_api
  using ((select app_hidden.current_account_is_staff()));

-- E-mail preferences: private, read and written through the API functions (owner) only.
alter table app_private.notification_preferences enable row level security;
