-- Back-office authentication (SPEC Authentication rule 3): sessions with a second factor.
-- Secrets are never stored in clear: a session token is kept as its SHA-256, backup codes
-- as a keyed hash computed by the HTTP layer; the TOTP secret is stored encrypted by the
-- HTTP layer (AES-256-GCM), so that a copy of the database alone opens no session.

-- One row per browser session. stage 'pre' is the pre-authentication: it holds only the
-- account and the method of the second factor, and lives 10 minutes; 'full' is the
-- authenticated session, which dies after its idle time or its absolute lifetime.
create table if not exists app_private.backoffice_sessions (
  id bigint generated always as identity primary key,
  token_hash bytea not null unique,
  account_id int not null references app_public.accounts on delete cascade,
  stage text not null check (stage in ('pre', 'full')),
  -- pre: 'totp' (enrolled: TOTP or backup code) or 'enrol' (first login);
  -- full: 'totp', 'backup_code' or 'password' (the DEBUG-only bypass).
  method text not null check (method in ('totp', 'enrol', 'backup_code', 'password')),
  created_at timestamptz not null default app_hidden.now(),
  last_seen_at timestamptz not null default app_hidden.now(),
  expires_at timestamptz not null
);
create index if not exists backoffice_sessions_account_idx on app_private.backoffice_sessions (account_id);
-- The account's credential generation read with the password that opened the session (issue 25):
-- a session opened with a password checked before a reset, a closure or the removal of a factor
-- is refused and deleted by backoffice_session_get, as are the sessions those events delete.
alter table app_private.backoffice_sessions add column if not exists token_generation int not null default 0;
alter table app_private.backoffice_sessions enable row level security;

-- The authenticator of an account. confirmed_at null: enrolment started, not confirmed.
-- last_step: the TOTP time step last accepted; a code of that step or an earlier one is refused.
create table if not exists app_private.backoffice_factors (
  account_id int primary key references app_public.accounts on delete cascade,
  secret_encrypted text not null,
  created_at timestamptz not null default app_hidden.now(),
  confirmed_at timestamptz,
  last_step bigint
);
alter table app_private.backoffice_factors enable row level security;

create table if not exists app_private.backoffice_backup_codes (
  id bigint generated always as identity primary key,
  account_id int not null references app_public.accounts on delete cascade,
  code_hash bytea not null,
  used_at timestamptz
);
create index if not exists backoffice_backup_codes_account_idx on app_private.backoffice_backup_codes (account_id);
alter table app_private.backoffice_backup_codes enable row level security;

insert into app_private.settings (key, value, description) values
  ('backoffice_preauth_minutes', '10', 'Durée de la pré-authentification du back-office (minutes)'),
  ('backoffice_idle_minutes', '30', 'Inactivité au-delà de laquelle une session du back-office expire (minutes)'),
  ('backoffice_session_hours', '12', 'Durée maximale d’une session du back-office (heures)')
on conflict (key) do nothing;

-- After a valid password: the state of the account's second factor.
create or replace function app_private.backoffice_login_state(p_account_id int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    -- The rule of SPEC Authentication rule 3, shared with the audit log's reader check.
    'may_enter', app_hidden.account_has_backoffice_access(p_account_id),
    'enrolled', exists (select 1 from app_private.backoffice_factors f
                        where f.account_id = p_account_id and f.confirmed_at is not null));
$$;

-- Opens a session (pre or full) under a token hash. A full session is opened only for an
-- account that may enter; a pre-authentication lives backoffice_preauth_minutes.
-- p_generation: the credential generation read with the password (the login's), or the
-- pre-authentication's for the full session that replaces it.
drop function if exists app_private.backoffice_session_open(bytea, int, text, text);
create or replace function app_private.backoffice_session_open(p_token_hash bytea, p_account_id int, p_stage text, p_method text,
                                                               p_generation int)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not app_hidden.account_has_backoffice_access(p_account_id) then
    raise exception using errcode = 'WF070', message = 'Ce compte n’a pas accès au back-office.';
  end if;
  if p_generation is null then
    raise exception 'backoffice_session_open: the credential generation is required';
  end if;
  insert into app_private.backoffice_sessions (token_hash, account_id, stage, method, token_generation, expires_at)
  values (p_token_hash, p_account_id, p_stage, p_method, p_generation,
          app_hidden.now() + case p_stage
            when 'pre' then make_interval(mins => (app_hidden.setting('backoffice_preauth_minutes'))::int)
            else make_interval(hours => (app_hidden.setting('backoffice_session_hours'))::int) end);
end;
$$;

-- The live session of a token hash, touched (idle expiry runs from the last request).
-- Expired sessions, and sessions of an account that may no longer enter, are deleted and
-- give no row. A session opened through the DEBUG-only password bypass (method 'password')
-- gives no row to an instance that does not allow the bypass (p_allow_password_only false),
-- whatever instance opened it (issue 25 finding 6); it is left for the instance that does.
-- token_generation: the session's credential generation (the account's, or the session is
-- refused and deleted), checked again by the prelude of each request the session makes
-- (app_private.begin_request_or_fail).
drop function if exists app_private.backoffice_session_get(bytea);
create or replace function app_private.backoffice_session_get(p_token_hash bytea, p_allow_password_only boolean)
returns table (account_id int, stage text, method text, username text, is_superuser boolean, token_generation int)
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_session app_private.backoffice_sessions;
begin
  select * into v_session from app_private.backoffice_sessions s where s.token_hash = p_token_hash;
  if not found then
    return;
  end if;
  if v_session.method = 'password' and p_allow_password_only is not true then
    return;
  end if;
  if v_session.expires_at <= app_hidden.now()
     or (v_session.stage = 'full' and v_session.last_seen_at
         + make_interval(mins => (app_hidden.setting('backoffice_idle_minutes'))::int) <= app_hidden.now())
     or not app_hidden.account_has_backoffice_access(v_session.account_id)
     or v_session.token_generation is distinct from (select a.token_generation from app_public.accounts a
                                                     where a.id = v_session.account_id) then
    delete from app_private.backoffice_sessions s where s.id = v_session.id;
    return;
  end if;
  update app_private.backoffice_sessions s set last_seen_at = app_hidden.now() where s.id = v_session.id;
  return query
    select v_session.account_id, v_session.stage, v_session.method, a.username, a.is_superuser, v_session.token_generation
    from app_public.accounts a where a.id = v_session.account_id;
end;
$$;

create or replace function app_private.backoffice_session_close(p_token_hash bytea) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  delete from app_private.backoffice_sessions where token_hash = p_token_hash;
$$;

-- The factor of an account (encrypted secret, confirmation, last accepted step).
create or replace function app_private.backoffice_factor(p_account_id int)
returns table (secret_encrypted text, confirmed boolean, last_step bigint)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select f.secret_encrypted, f.confirmed_at is not null, f.last_step
  from app_private.backoffice_factors f where f.account_id = p_account_id;
$$;

-- Enrolment: a new unconfirmed secret replaces an unconfirmed one; a confirmed factor is
-- never replaced here (only app_public.backoffice_factors_delete removes it).
create or replace function app_private.backoffice_enrol_start(p_account_id int, p_secret_encrypted text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if exists (select 1 from app_private.backoffice_factors f where f.account_id = p_account_id and f.confirmed_at is not null) then
    raise exception using errcode = 'WF071', message = 'Un authentificateur est déjà enregistré pour ce compte.';
  end if;
  insert into app_private.backoffice_factors (account_id, secret_encrypted)
  values (p_account_id, p_secret_encrypted)
  on conflict (account_id) do update set secret_encrypted = excluded.secret_encrypted, created_at = app_hidden.now(),
                                         last_step = null;
end;
$$;

-- Confirms the enrolment with the step of the code just verified and stores the hashes of
-- the backup codes (the previous ones die). False when the factor is already confirmed.
create or replace function app_private.backoffice_enrol_confirm(p_account_id int, p_step bigint, p_code_hashes bytea[])
returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  update app_private.backoffice_factors f set confirmed_at = app_hidden.now(), last_step = p_step
  where f.account_id = p_account_id and f.confirmed_at is null;
  if not found then
    return false;
  end if;
  delete from app_private.backoffice_backup_codes c where c.account_id = p_account_id;
  insert into app_private.backoffice_backup_codes (account_id, code_hash)
  select p_account_id, h from unnest(p_code_hashes) h;
  -- Audited (the account acts at its own login) and told to the account: an enrolment by
  -- someone else holding the password is seen by its owner.
  perform app_private.audit_security_event(p_account_id, 'factor_enrolled',
    jsonb_build_object('backup_codes', cardinality(p_code_hashes)), p_account_id);
  perform app_private.tell_account_security(p_account_id, 'Nouvel authentificateur enregistré',
    format('Un authentificateur (second facteur du back-office) a été enregistré pour votre compte le %s, avec de nouveaux codes de secours.',
           to_char(app_hidden.now() at time zone app_hidden.business_timezone(), 'DD/MM/YYYY à HH24:MI')));
  return true;
end;
$$;

-- Accepts a TOTP time step once: true only when it is later than the last accepted one
-- (a code is never accepted twice, even within its tolerance window).
create or replace function app_private.backoffice_totp_accept(p_account_id int, p_step bigint) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  update app_private.backoffice_factors f set last_step = p_step
  where f.account_id = p_account_id and f.confirmed_at is not null
    and (f.last_step is null or f.last_step < p_step);
  return found;
end;
$$;

-- The unused backup codes of an account (the HTTP layer compares them in constant time).
create or replace function app_private.backoffice_backup_codes(p_account_id int)
returns table (id bigint, code_hash bytea)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select c.id, c.code_hash from app_private.backoffice_backup_codes c
  where c.account_id = p_account_id and c.used_at is null order by c.id;
$$;

-- Uses a backup code once: false when it was used meanwhile.
create or replace function app_private.backoffice_backup_code_use(p_account_id int, p_code_id bigint) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  update app_private.backoffice_backup_codes c set used_at = app_hidden.now()
  where c.id = p_code_id and c.account_id = p_account_id and c.used_at is null;
  if not found then
    return false;
  end if;
  perform app_private.audit_security_event(p_account_id, 'backup_code_used',
    jsonb_build_object('backup_codes_left', (select count(*) from app_private.backoffice_backup_codes c
                                             where c.account_id = p_account_id and c.used_at is null)), p_account_id);
  return true;
end;
$$;

-- New backup codes for the account of a live full session that passed its second factor
-- (TOTP or backup code: never a session of the password-only bypass): the unused codes die,
-- the new hashes replace them, one audit line backup_codes_regenerated (by the account, no
-- code in it). Returns false, changing nothing, for any other session or an account without
-- a confirmed factor.
create or replace function app_private.backoffice_backup_codes_regenerate(p_token_hash bytea, p_code_hashes bytea[])
returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int;
  v_left int;
begin
  if cardinality(p_code_hashes) is distinct from 10 then
    raise exception 'backoffice_backup_codes_regenerate: 10 code hashes expected';
  end if;
  select s.account_id into v_account
  from app_private.backoffice_sessions s
  join app_private.backoffice_factors f on f.account_id = s.account_id and f.confirmed_at is not null
  where s.token_hash = p_token_hash and s.stage = 'full' and s.method in ('totp', 'backup_code')
    and s.expires_at > app_hidden.now() and app_hidden.account_has_backoffice_access(s.account_id);
  if v_account is null then
    return false;
  end if;
  delete from app_private.backoffice_backup_codes c where c.account_id = v_account and c.used_at is null;
  get diagnostics v_left = row_count;
  insert into app_private.backoffice_backup_codes (account_id, code_hash)
  select v_account, h from unnest(p_code_hashes) h;
  perform app_private.audit_security_event(v_account, 'backup_codes_regenerated',
    jsonb_build_object('backup_codes', cardinality(p_code_hashes), 'unused_codes_replaced', v_left), v_account);
  return true;
end;
$$;

-- Back-office accounts and the state of their second factor.
create or replace function app_private.backoffice_factor_list() returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(jsonb_agg(jsonb_build_object(
             'id', a.id, 'username', a.username, 'name', app_hidden.account_display_name(a.id),
             'enrolled', f.confirmed_at is not null, 'enrolled_at', f.confirmed_at,
             'backup_codes_left', (select count(*) from app_private.backoffice_backup_codes c
                                   where c.account_id = a.id and c.used_at is null))
           order by lower(a.username)), '[]'::jsonb)
  from app_public.accounts a
  left join app_private.backoffice_factors f on f.account_id = a.id
  where app_hidden.account_has_backoffice_access(a.id);
$$;

-- Removes the authenticator and the backup codes of an account, and ends every session and
-- token of that account (app_private.end_account_sessions). When a factor existed: one audit
-- line factor_removed (by the acting superuser), and the account is told (notification, e-mail).
create or replace function app_private.backoffice_factor_delete(p_account_id int) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_confirmed boolean;
begin
  delete from app_private.backoffice_factors f where f.account_id = p_account_id
  returning f.confirmed_at is not null into v_confirmed;
  delete from app_private.backoffice_backup_codes c where c.account_id = p_account_id;
  if v_confirmed is null then
    -- No factor: nothing to remove, nothing to tell; its sessions (pre-authentications) end.
    delete from app_private.backoffice_sessions s where s.account_id = p_account_id;
    return;
  end if;
  perform app_private.audit_security_event(p_account_id, 'factor_removed', jsonb_build_object('confirmed', v_confirmed));
  perform app_private.end_account_sessions(p_account_id, 'factor_removed');
  perform app_private.tell_account_security(p_account_id, 'Second facteur supprimé',
    format('Le second facteur (authentificateur et codes de secours) de votre compte a été supprimé le %s par %s ; '
           'vos sessions ont été fermées. Un nouvel authentificateur vous sera demandé à votre prochaine connexion au back-office.',
           to_char(app_hidden.now() at time zone app_hidden.business_timezone(), 'DD/MM/YYYY à HH24:MI'),
           coalesce(app_hidden.account_display_name(app_hidden.current_account_id()), 'un administrateur')));
end;
$$;

-- Is the acting account a superuser whose back-office session passed a second factor?
-- (app.second_factor_verified is set by the back-office for its own sessions only.)
create or replace function app_hidden.current_account_is_verified_superuser() returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce((select a.is_superuser from app_public.accounts a where a.id = app_hidden.current_account_id()), false)
     and coalesce(current_setting('app.second_factor_verified', true), '') = 'on';
$$;

-- The accounts that may enter the back-office, with their authenticator (verified superusers).
create or replace function app_public.backoffice_factor_accounts() returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not app_hidden.current_account_is_verified_superuser() then
    perform app_hidden.forbidden('Seul un superutilisateur connecté avec un second facteur gère les authentificateurs.', 'WF072');
  end if;
  return app_private.backoffice_factor_list();
end;
$$;
comment on function app_public.backoffice_factor_accounts() is
'SPEC Authentication rule 3: for a verified superuser only, the accounts that may enter the back-office
with their enrolled authenticator.';

-- A verified superuser deletes the factors of an account: the next login enrols again.
create or replace function app_public.backoffice_factors_delete(p_account_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not app_hidden.current_account_is_verified_superuser() then
    perform app_hidden.forbidden('Seul un superutilisateur connecté avec un second facteur gère les authentificateurs.', 'WF072');
  end if;
  if not exists (select 1 from app_public.accounts a where a.id = p_account_id) then
    perform app_hidden.not_found('Compte introuvable.');
  end if;
  perform app_private.backoffice_factor_delete(p_account_id);
  return jsonb_build_object('id', p_account_id, 'enrolled', false);
end;
$$;
comment on function app_public.backoffice_factors_delete(integer) is
'SPEC Authentication rule 3: a verified superuser deletes the second factors of an account, so that its
next back-office login enrols again.';

grant execute on function app_private.backoffice_login_state(int),
  app_private.backoffice_session_open(bytea, int, text, text, int), app_private.backoffice_session_get(bytea, boolean),
  app_private.backoffice_session_close(bytea), app_private.backoffice_factor(int),
  app_private.backoffice_enrol_start(int, text), app_private.backoffice_enrol_confirm(int, bigint, bytea[]),
  app_private.backoffice_totp_accept(int, bigint), app_private.backoffice_backup_codes(int),
  app_private.backoffice_backup_code_use(int, bigint), app_private.backoffice_backup_codes_regenerate(bytea, bytea[])
  to wfm_authenticator;
