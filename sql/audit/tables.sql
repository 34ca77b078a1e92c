-- The audit log, written by triggers only. Each line freezes the actor's identity so that a
-- DBA reads who did what without any join.
create table app_private.audit_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default app_hidden.now(),
  actor_account_id int,
  actor_username text,
  actor_display_name text,
  -- Set when an impersonating account acted for actor_account_id.
  impersonator_account_id int,
  impersonator_username text,
  verb text not null,
  model text not null,
  target_id bigint,
  before jsonb,
  after jsonb,
  transaction_id bigint not null default txid_current()
);
create index audit_log_target_idx on app_private.audit_log (model, target_id, at);
create index audit_log_at_idx on app_private.audit_log (at);
