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

-- Creating, rotating and revoking a feed are writes of the account: audited (model calendar_feed),
-- without the hash of the secret (a verifier of a credential has no place in a log read by others).
insert into app_private.audit_models (model, label) values ('calendar_feed', 'Flux d’agenda')
on conflict (model) do nothing;

create or replace function app_private.tg_calendar_feeds__audit() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'INSERT' then
    perform app_private.write_audit('Creation', 'calendar_feed', new.id, null, to_jsonb(new) - 'token_hash');
    return new;
  elsif tg_op = 'UPDATE' then
    perform app_private.write_audit('Modification', 'calendar_feed', new.id, to_jsonb(old) - 'token_hash', to_jsonb(new) - 'token_hash');
    return new;
  end if;
  perform app_private.write_audit('Suppression', 'calendar_feed', old.id, to_jsonb(old) - 'token_hash', null);
  return old;
end;
$$;

create or replace trigger _500_audit after insert or update on app_private.calendar_feeds
  for each row execute function app_private.tg_calendar_feeds__audit();
create or replace trigger _500_audit_delete before delete on app_private.calendar_feeds
  for each row execute function app_private.tg_calendar_feeds__audit();
