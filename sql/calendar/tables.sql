-- iCalendar feeds (issue 16): a secret address per account and kind, read by calendar
-- clients without a session. Only a SHA-256 of the secret is stored; the secret itself is
-- shown once, at creation or rotation. One live feed per account and kind: rotating
-- replaces the hash (the old address answers 404), revoking deletes the row.
create table if not exists app_private.calendar_feeds (
  id int generated always as identity primary key,
  account_id int not null references app_public.accounts on delete cascade,
  kind text not null check (kind in ('planning', 'perimeter')),
  token_hash bytea not null unique check (length(token_hash) = 32),
  created_at timestamptz not null default app_hidden.now(),
  constraint calendar_feeds_one_per_kind unique (account_id, kind)
);
-- No request role reads it (app_private); RLS on, without policies, as every table here.
alter table app_private.calendar_feeds enable row level security;
