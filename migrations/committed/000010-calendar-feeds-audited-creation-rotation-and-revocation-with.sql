--! Previous: sha1:d12f0bc82c9ff4234e94df15b35faf169589eae2
--! Hash: sha1:c6b6fdecfd26b0e5daaaf2af95154d93c453b729
--! Message: Calendar feeds audited: creation, rotation and revocation, without the hash of the secret

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included calendar/tables.sql
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
insert into app_private.audit_models (model, label) values ('calendar_feed', 'Flux d''agenda')
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
--! EndIncluded calendar/tables.sql
--! Included finalize.sql
-- Last file of sql/ORDER, included by every migration that changes sql/ (npm run db:current):
-- grants, ownership of API functions, RLS check.

grant select on all tables in schema app_public to wfm_visitor;
grant select, insert, update, delete on all tables in schema app_public to wfm_api;
grant usage on all sequences in schema app_public to wfm_api;
grant usage on schema app_private to wfm_api;
grant execute on all functions in schema app_public to wfm_visitor, wfm_api;
grant execute on all functions in schema app_hidden to wfm_visitor, wfm_api;
grant execute on all functions in schema app_private to wfm_api;
grant execute on function app_private.begin_request(int, int), app_private.begin_request_or_fail(int, int, boolean),
  app_private.login_lookup(text),
  app_private.record_login(int), app_private.password_reset_request(text),
  app_private.password_token_check(text), app_private.password_reset_confirm(text, text),
  app_private.rate_limit_hit(text, int, interval)
  to wfm_authenticator;

-- API functions that are security definer run as wfm_api, which does not own the tables:
-- row-level security applies to them exactly as to the visitor.
do $$
declare
  f record;
begin
  for f in
    select p.oid::regprocedure as signature
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'app_public' and p.prosecdef and p.proowner <> 'wfm_api'::regrole
  loop
    execute format('alter function %s owner to wfm_api', f.signature);
  end loop;
end;
$$;

-- Every table has row-level security enabled; a migration that forgets it fails here.
do $$
declare
  t record;
begin
  for t in
    select c.oid::regclass as rel
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname in ('app_public', 'app_private', 'app_hidden') and c.relkind in ('r', 'p')
      and not c.relrowsecurity
  loop
    raise exception 'Table % has no row-level security enabled', t.rel;
  end loop;
end;
$$;
--! EndIncluded finalize.sql
