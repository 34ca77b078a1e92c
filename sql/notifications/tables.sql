-- In-app notifications and the e-mail outbox.
create table app_public.notifications (
  id bigint generated always as identity primary key,
  account_id int not null references app_public.accounts on delete cascade,
  title text not null,
  body text not null,
  level text not null default 'info' check (level in ('info', 'warning', 'error')),
  -- What the notification is about, for links in clients.
  model text,
  target_id bigint,
  created_at timestamptz not null default app_hidden.now(),
  read_at timestamptz
);
create index notifications_account_idx on app_public.notifications (account_id, created_at desc);

-- E-mails are written here inside the business transaction and delivered by the worker
-- when SMTP settings exist; without them they stay here, visible to staff.
create table app_private.email_outbox (
  id bigint generated always as identity primary key,
  kind text not null,
  to_address text not null,
  subject text not null,
  body_text text not null,
  account_id int references app_public.accounts on delete set null,
  created_at timestamptz not null default app_hidden.now(),
  sent_at timestamptz,
  attempts int not null default 0,
  last_error text
);
create index email_outbox_unsent_idx on app_private.email_outbox (created_at) where sent_at is null;
