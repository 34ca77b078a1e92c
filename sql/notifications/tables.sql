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
  ('email_max_attempts', '10', 'Nombre de tentatives d’envoi d’un e-mail avant abandon (il reste visible dans la boîte d’envoi)')
on conflict do nothing;

-- ---------------------------------------------------------------------------------------
-- E-mail notifications (issue 28): every notification also goes by e-mail, at once or in a
-- daily digest, per kind and per account (app_private.notification_preferences).
--   kind: own (my requests and my account), decide (requests of others to decide or follow),
--         planning (planning alerts: an event against an absence);
--   path: the address of the item in the web application for this recipient (web/src/lib/paths.ts);
--   email: what the e-mail of this notification is: immediate (written into the outbox by the
--          worker's drain_email_outbox, seconds later), digest (waits for the account's daily digest), none (no address,
--          closed account, or the kind set to never);
--   emailed_at: when it went into the outbox (alone or in a digest).
alter table app_public.notifications add column if not exists kind text not null default 'own';
alter table app_public.notifications add column if not exists path text;
alter table app_public.notifications add column if not exists email text not null default 'none';
alter table app_public.notifications add column if not exists emailed_at timestamptz;
do $$
begin
  if not exists (select 1 from pg_constraint where conname = 'notifications_kind_check'
                 and conrelid = 'app_public.notifications'::regclass) then
    alter table app_public.notifications add constraint notifications_kind_check
      check (kind in ('own', 'decide', 'planning'));
  end if;
  if not exists (select 1 from pg_constraint where conname = 'notifications_path_check'
                 and conrelid = 'app_public.notifications'::regclass) then
    alter table app_public.notifications add constraint notifications_path_check
      check (path ~ '^/[a-z0-9/]*$');
  end if;
  if not exists (select 1 from pg_constraint where conname = 'notifications_email_check'
                 and conrelid = 'app_public.notifications'::regclass) then
    alter table app_public.notifications add constraint notifications_email_check
      check (email in ('immediate', 'digest', 'none'));
  end if;
end;
$$;
-- The worker's queue of the e-mails sent at once (app_private.queue_notification_emails).
create index if not exists notifications_email_waiting_idx on app_public.notifications (id)
  where email = 'immediate' and emailed_at is null;
-- The daily digest reads the waiting notifications of an account.
create index if not exists notifications_digest_idx on app_public.notifications (account_id, id)
  where email = 'digest' and emailed_at is null;

-- The e-mail preferences of an account, per kind: immediate (at once), digest (one e-mail a
-- day at digest_hour, business time zone) or never. No row: every kind at once, digest at 7 h.
-- unsubscribe_token: the secret of the List-Unsubscribe address of its e-mails (it only turns
-- e-mails off; kept in clear so that each e-mail can carry it).
create table if not exists app_private.notification_preferences (
  account_id int primary key references app_public.accounts on delete cascade,
  own text not null default 'immediate' check (own in ('immediate', 'digest', 'never')),
  decide text not null default 'immediate' check (decide in ('immediate', 'digest', 'never')),
  planning text not null default 'immediate' check (planning in ('immediate', 'digest', 'never')),
  digest_hour smallint not null default 7 check (digest_hour between 0 and 23),
  -- Digests count from here: the last digest sent, or when the digest hour or a kind in digest
  -- was chosen (the next digest is due at the first digest hour after it).
  digest_since timestamptz not null default app_hidden.now(),
  unsubscribe_token text not null unique default encode(public.gen_random_bytes(24), 'hex')
    check (unsubscribe_token ~ '^[0-9a-f]{48}$'),
  updated_at timestamptz not null default app_hidden.now()
);

-- An e-mail of a notification has an HTML part and headers (List-Unsubscribe) besides its text.
alter table app_private.email_outbox add column if not exists body_html text;
alter table app_private.email_outbox add column if not exists headers jsonb not null default '{}'::jsonb;
