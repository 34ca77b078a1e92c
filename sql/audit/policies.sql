alter table app_private.audit_log enable row level security;
