-- In-app notifications and the e-mail outbox.
create table if not exists app_public.notifications (
  id bigint generated always as identity primary key,
  account_id int not null references app_public.accounts on delete cascade,
  title text not null check (btrim(title) <> '' and length(title) <= 200),
  body text not null check (length(body) <= 10000),
  level text not null default 'info' check (level in ('info', 'warning', 'error')),
  -- What the notification is about, for links in clients.
  model text,
  target_id bigint,
  created_at timestamptz not null default app_hidden.now(),
  read_at timestamptz
);
-- GET /api/notifications/ (own, newest first) and its unread=true filter.
create index if not exists notifications_account_idx on app_public.notifications (account_id, created_at desc, id desc);
create index if not exists notifications_account_unread_idx on app_public.notifications (account_id, created_at desc, id desc)
  where read_at is null;

-- E-mails are written here inside the business transaction and delivered by the worker
-- (task drain_email_outbox) when SMTP settings exist; without them they stay here, visible
-- to staff (GET /api/email-outbox/).
create table if not exists app_private.email_outbox (
  id bigint generated always as identity primary key,
  kind text not null check (kind ~ '^[a-z][a-z0-9_]{1,62}$'),
  to_address text not null check (to_address ~ '^[^@\s]+@[^@\s]+$'),
  subject text not null check (btrim(subject) <> ''),
  body_text text not null,
  account_id int references app_public.accounts on delete set null,
  created_at timestamptz not null default app_hidden.now(),
  sent_at timestamptz,
  -- Delivery attempts (failed or not) and the last SMTP error, for staff and retries.
  attempts int not null default 0 check (attempts >= 0),
  last_attempt_at timestamptz,
  last_error text
);
create index if not exists email_outbox_unsent_idx on app_private.email_outbox (id) where sent_at is null;
create index if not exists email_outbox_created_idx on app_private.email_outbox (created_at desc, id desc);

insert into app_private.settings (key, value, description) values
  ('email_max_attempts', '10', 'Nombre de tentatives d''envoi d''un e-mail avant abandon (il reste visible dans la boîte d''envoi)')
on conflict do nothing;
