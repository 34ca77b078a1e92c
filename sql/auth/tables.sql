-- Single-use tokens for password reset and set-password invitations. Only a SHA-256 of the
-- token is stored; the token itself travels once, by e-mail.
create table if not exists app_private.password_tokens (
  id bigint generated always as identity primary key,
  account_id int not null references app_public.accounts on delete cascade,
  purpose text not null check (purpose in ('reset', 'invitation')),
  token_hash bytea not null unique,
  created_at timestamptz not null default app_hidden.now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index if not exists password_tokens_account_idx on app_private.password_tokens (account_id);
