--! Previous: sha1:8f772891ea595e335c64d21f332d093c8095141e
--! Hash: sha1:65045fa6643809443da384e92b0173e18781cc32
--! Message: Issue 25 findings 3-6: credential generation ending sessions and tokens, account security events audited, impersonator in the audit list, sessions opened through the debug bypass refused

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included org/accounts.sql
-- Accounts, roles, permissions, role attributions and on-call periods.

create table if not exists app_public.accounts (
  id int generated always as identity primary key,
  username text not null check (username ~ app_hidden.username_pattern()),
  employee_id int unique references app_public.employees on delete set null,
  is_active boolean not null default true,
  is_staff boolean not null default false,
  is_superuser boolean not null default false,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  last_login_at timestamptz
);
-- Its limit comes from sql/core/input_contract.sql (a database created before: the CHECK is replaced).
select app_private.ensure_check('app_public.accounts', 'accounts_username_check', '((username ~ app_hidden.username_pattern()))');
create unique index if not exists accounts_username_key on app_public.accounts (lower(username));
-- The generation of the account's credentials (issue 25 finding 4): every API token carries the
-- generation it was issued under (claim `gen`) and each request's prelude refuses a token of an
-- earlier one (app_private.begin_request). A password change or reset, a closure and the removal
-- of a second factor raise it (app_private.end_account_sessions): every earlier token dies at once.
alter table app_public.accounts add column if not exists token_generation int not null default 0;
-- The few superusers (routing of filings asks whether a decider is one): no scan of every account.
create index if not exists accounts_superuser_idx on app_public.accounts (id) where is_superuser;

-- Secrets never leave app_private. A null hash is an unusable password (invited account).
create table if not exists app_private.account_secrets (
  account_id int primary key references app_public.accounts on delete cascade,
  password_hash text,
  password_changed_at timestamptz
);

create table if not exists app_public.roles (
  id smallint primary key,
  name text not null unique,
  -- Display precedence of GET /api/auth/me/ (1 wins).
  precedence smallint not null unique,
  -- Roles that open the manager workspace restrict by establishment; the others do not.
  opens_manager_workspace boolean not null
);

create table if not exists app_public.permissions (
  code text primary key check (code ~ '^[a-z_]+\.[a-z_]+$'),
  description text not null
);

create table if not exists app_public.role_permissions (
  role_id smallint not null references app_public.roles on delete cascade,
  permission_code text not null references app_public.permissions on delete cascade,
  primary key (role_id, permission_code)
);

create table if not exists app_public.role_attributions (
  id int generated always as identity primary key,
  account_id int not null references app_public.accounts on delete cascade,
  role_id smallint not null references app_public.roles on delete restrict,
  -- Inclusive dates in the business time zone; null = unbounded.
  start_date date,
  end_date date,
  created_at timestamptz not null default app_hidden.now(),
  constraint role_attributions_dates check (end_date is null or start_date is null or end_date >= start_date)
);
create index if not exists role_attributions_account_idx on app_public.role_attributions (account_id);
create index if not exists role_attributions_role_idx on app_public.role_attributions (role_id);

-- No row for an attribution: the role covers the whole association.
create table if not exists app_public.role_attribution_establishments (
  attribution_id int not null references app_public.role_attributions on delete cascade,
  establishment_id int not null references app_public.establishments on delete cascade,
  primary key (attribution_id, establishment_id)
);
create index if not exists role_attribution_establishments_establishment_idx
  on app_public.role_attribution_establishments (establishment_id);

-- Explicit permissions (e.g. audit.view_actionlog); they carry no establishment restriction.
create table if not exists app_public.account_permissions (
  account_id int not null references app_public.accounts on delete cascade,
  permission_code text not null references app_public.permissions on delete cascade,
  primary key (account_id, permission_code)
);

-- An on-call period extends the perimeter of the account's manager roles over its
-- establishments during [start_at, end_at).
create table if not exists app_public.on_call_periods (
  id int generated always as identity primary key,
  account_id int not null references app_public.accounts on delete cascade,
  start_at timestamptz not null,
  end_at timestamptz not null,
  comment text,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  constraint on_call_periods_interval check (end_at > start_at)
);
create index if not exists on_call_periods_account_idx on app_public.on_call_periods (account_id, start_at, end_at);

create table if not exists app_public.on_call_period_establishments (
  period_id int not null references app_public.on_call_periods on delete cascade,
  establishment_id int not null references app_public.establishments on delete cascade,
  primary key (period_id, establishment_id)
);
create index if not exists on_call_period_establishments_establishment_idx
  on app_public.on_call_period_establishments (establishment_id);

create or replace trigger _100_timestamps before insert or update on app_public.accounts
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _100_timestamps before insert or update on app_public.on_call_periods
  for each row execute function app_hidden.tg__timestamps();

-- Nine roles; the order is the display precedence of CONTRACT section 2.
insert into app_public.roles (id, name, precedence, opens_manager_workspace) values
  (1, 'Admin', 1, true),
  (2, 'RH n1', 2, true),
  (3, 'RH n2', 3, true),
  (4, 'DA', 4, true),
  (5, 'Manager n1', 5, true),
  (6, 'Manager n2', 6, true),
  (7, 'Salarié', 7, false),
  (8, 'Intérimaire', 8, false),
  (9, 'Service Paie', 9, true)
on conflict do nothing;

insert into app_public.permissions (code, description) values
  ('absences.view_absence_queue', 'Lire les demandes d''absence et de modification du périmètre'),
  ('absences.decide_absence', 'Valider ou refuser une demande d''absence'),
  ('planning.decide_shift_change', 'Valider ou refuser une demande de modification de journée'),
  ('absences.view_absencedocument_file', 'Lire le contenu des justificatifs d''un tiers'),
  ('employee.change_employee_record', 'Modifier la fiche salarié, les contrats, les affectations et les compteurs'),
  ('employee.view_employee_directory', 'Lire l''annuaire (encadrement)'),
  ('employee.view_social_security_number', 'Lire le numéro de sécurité sociale'),
  ('employee.change_account_activation', 'Ouvrir ou fermer n''importe quel compte'),
  ('employee.change_interim_account_activation', 'Ouvrir ou fermer les comptes des intérimaires'),
  ('employee.view_payroll', 'Consulter les éléments de paie'),
  ('audit.view_actionlog', 'Lire le journal d''audit')
on conflict do nothing;

-- The SPEC's permission table, as data.
insert into app_public.role_permissions (role_id, permission_code)
select r.id, p.code
from app_public.roles r
join (values
  ('absences.view_absence_queue', array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2']),
  ('absences.decide_absence', array['Admin', 'RH n1', 'RH n2', 'Manager n1', 'Manager n2']),
  ('planning.decide_shift_change', array['Admin', 'RH n1', 'RH n2', 'Manager n1', 'Manager n2']),
  ('absences.view_absencedocument_file', array['Admin', 'RH n1', 'RH n2']),
  ('employee.change_employee_record', array['Admin', 'RH n1', 'RH n2']),
  ('employee.view_employee_directory', array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2']),
  ('employee.view_social_security_number', array['Admin', 'RH n1', 'RH n2']),
  ('employee.change_account_activation', array['Admin', 'RH n1', 'RH n2']),
  ('employee.change_interim_account_activation', array['DA', 'Manager n1', 'Manager n2']),
  ('employee.view_payroll', array['Admin', 'RH n1', 'RH n2', 'Service Paie'])
) as p(code, roles) on r.name = any (p.roles)
on conflict do nothing;

-- Permissions the SPEC leaves to the project ("own permissions" of the employee record's
-- annexes, teams, events, on-call screens). Encadrement = Admin, RH n1, RH n2, DA,
-- Manager n1, Manager n2. Each applies on the perimeter of the role; the employee always
-- reads their own contacts and attachments.
insert into app_public.permissions (code, description) values
  ('employee.view_emergency_contact', 'Lire les contacts d''urgence des salariés du périmètre'),
  ('employee.change_emergency_contact', 'Modifier les contacts d''urgence des salariés du périmètre'),
  ('employee.view_employee_attachment', 'Lire les pièces jointes des fiches salariés du périmètre'),
  ('employee.change_employee_attachment', 'Déposer, renommer et supprimer les pièces jointes des fiches salariés'),
  ('employee.change_team', 'Modifier les équipes du périmètre et leurs membres'),
  ('events.change_event', 'Créer, modifier et supprimer les événements du périmètre'),
  ('on_call.view_on_call_period', 'Consulter les astreintes du périmètre'),
  ('on_call.change_on_call_period', 'Créer, modifier et supprimer les astreintes du périmètre')
on conflict do nothing;

insert into app_public.role_permissions (role_id, permission_code)
select r.id, p.code
from app_public.roles r
join (values
  ('employee.view_emergency_contact', array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2']),
  ('employee.change_emergency_contact', array['Admin', 'RH n1', 'RH n2']),
  ('employee.view_employee_attachment', array['Admin', 'RH n1', 'RH n2']),
  ('employee.change_employee_attachment', array['Admin', 'RH n1', 'RH n2']),
  ('employee.change_team', array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2']),
  ('events.change_event', array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2']),
  ('on_call.view_on_call_period', array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2', 'Service Paie']),
  ('on_call.change_on_call_period', array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2'])
) as p(code, roles) on r.name = any (p.roles)
on conflict do nothing;

-- Opening an account on an employee record always grants Salarié (once).
create or replace function app_private.tg_accounts__grant_salarie() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.employee_id is not null
     and (tg_op = 'INSERT' or old.employee_id is distinct from new.employee_id)
     and not exists (select 1 from app_public.role_attributions ra
                     where ra.account_id = new.id and ra.role_id = 7 and ra.end_date is null) then
    insert into app_public.role_attributions (account_id, role_id) values (new.id, 7);
  end if;
  return new;
end;
$$;
create or replace trigger _800_grant_salarie after insert or update of employee_id on app_public.accounts
  for each row execute function app_private.tg_accounts__grant_salarie();
--! EndIncluded org/accounts.sql
--! Included audit/tables.sql
-- The audit log, written by triggers only (app_private.tg__audit). Each line freezes the
-- actor's identity (username and display name at that time) so that a DBA reads who did
-- what without any join; app_private.audit_log_readable adds the changed fields.

-- Models that may be audited. A table's trigger names its model (tg__audit('<model>')); the
-- foreign key refuses a misspelt model at the first write, and GET /api/audit-log/?model=
-- accepts only these names. A concern that audits a new table adds its model here.
create table if not exists app_private.audit_models (
  model text primary key check (model ~ '^[a-z][a-z0-9_]{1,62}$'),
  label text not null check (btrim(label) <> '')
);
insert into app_private.audit_models (model, label) values
  ('absence', 'Absence'),
  ('shift_change_request', 'Demande de modification de journée'),
  ('day_modification', 'Modification de journée'),
  ('account', 'Compte (ouverture et fermeture, substitution)'),
  ('employee', 'Fiche salarié'),
  ('employee_social_security_number', 'Numéro de sécurité sociale (valeur masquée)'),
  ('employee_secondary_establishment', 'Lieu de travail secondaire'),
  ('contract', 'Contrat'),
  ('team_assignment', 'Affectation à une équipe'),
  ('emergency_contact', 'Personne à prévenir'),
  ('employee_attachment', 'Pièce du dossier salarié'),
  ('division', 'Pôle'),
  ('establishment', 'Établissement'),
  ('contract_type', 'Type de contrat'),
  ('team', 'Équipe'),
  ('team_establishment', 'Établissement d''une équipe'),
  ('event', 'Événement'),
  ('event_participant', 'Participant à un événement'),
  ('on_call_period', 'Période d''astreinte'),
  ('on_call_period_establishment', 'Établissement d''une astreinte'),
  ('account_security', 'Sécurité du compte')
on conflict do nothing;

create table if not exists app_private.audit_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default app_hidden.now(),
  -- The acting account (app.account_id) and its identity frozen at that time. Null when
  -- the write came from no account (a DBA in psql, a migration, a job): db_user says who.
  actor_account_id int,
  actor_username text,
  actor_display_name text,
  -- Set when an impersonating account acted for actor_account_id (app.impersonator_id).
  impersonator_account_id int,
  impersonator_username text,
  impersonator_display_name text,
  -- The database login of the session (wfm_authenticator for the API, the worker's or a DBA's login).
  db_user text not null default session_user,
  verb text not null constraint audit_log_verb_check
    check (verb in ('Creation', 'Modification', 'Suppression', 'Validation', 'Refus',
                    'Correction', 'Demande d''annulation', 'Annulation', 'Impersonation', 'Securite')),
  model text not null references app_private.audit_models on update cascade on delete restrict,
  target_id bigint,
  before jsonb,
  after jsonb,
  transaction_id bigint not null default txid_current(),
  constraint audit_log_values check (
    (verb in ('Creation', 'Impersonation', 'Securite') and before is null and after is not null)
    or (verb = 'Suppression' and before is not null and after is null)
    or (verb not in ('Creation', 'Impersonation', 'Securite', 'Suppression') and before is not null and after is not null)),
  -- The client address of the request that wrote the line (app.client_address), when known.
  client_address text
);
-- Issue 25: the security events of accounts (verb Securite, sql/auth/security_events.sql) and
-- the client address of every line, on a database created before.
alter table app_private.audit_log add column if not exists client_address text;
do $$
begin
  if not exists (select 1 from pg_constraint c where c.conrelid = 'app_private.audit_log'::regclass
                 and c.conname = 'audit_log_verb_check' and pg_get_constraintdef(c.oid) like '%Securite%') then
    alter table app_private.audit_log drop constraint if exists audit_log_verb_check;
    alter table app_private.audit_log add constraint audit_log_verb_check
      check (verb in ('Creation', 'Modification', 'Suppression', 'Validation', 'Refus',
                      'Correction', 'Demande d''annulation', 'Annulation', 'Impersonation', 'Securite'));
  end if;
  if not exists (select 1 from pg_constraint c where c.conrelid = 'app_private.audit_log'::regclass
                 and c.conname = 'audit_log_values' and pg_get_constraintdef(c.oid) like '%Securite%') then
    alter table app_private.audit_log drop constraint if exists audit_log_values;
    alter table app_private.audit_log add constraint audit_log_values check (
      (verb in ('Creation', 'Impersonation', 'Securite') and before is null and after is not null)
      or (verb = 'Suppression' and before is not null and after is null)
      or (verb not in ('Creation', 'Impersonation', 'Securite', 'Suppression') and before is not null and after is not null));
  end if;
end;
$$;
-- GET /api/audit-log/?model=&target_id= (newest first), and the weekly purge by age.
create index if not exists audit_log_target_idx on app_private.audit_log (model, target_id, at desc, id desc);
create index if not exists audit_log_at_idx on app_private.audit_log (at);
create index if not exists audit_log_actor_idx on app_private.audit_log (actor_account_id, at);

comment on table app_private.audit_log is
  'Audit lines written by triggers (app_private.tg__audit), append-only; purged after audit_retention_days by the purge_audit_log job.';
--! EndIncluded audit/tables.sql
--! Included auth/functions.sql
-- Authentication support. Password hashing (argon2id) happens in the HTTP layer; the
-- database only stores and hands back hashes, and never sees a clear password.

-- Display name of an account: the employee's name, else the username.
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_hidden.account_display_name(p_account int) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select coalesce(e.first_name || ' ' || e.last_name, a.username)
          from app_public.accounts a
          left join app_public.employees e on e.id = a.employee_id
          where a.id = p_account);
end;
$$;

-- Start of every authenticated request (called by the authenticator before switching to
-- the visitor role): reloads the account, refuses an inactive one (null), and records the
-- acting account for the transaction. p_generation, when given, is the credential generation
-- the token or session was issued under (app_public.accounts.token_generation): a token of
-- an earlier generation is refused (null) like a closed account's. It is the generation of the
-- account holding the token: the impersonator's for an impersonation token. Without it
-- (a calendar feed, whose secret is no session) the generation is not read.
drop function if exists app_private.begin_request(int, int);
create or replace function app_private.begin_request(p_account_id int, p_impersonator_id int default null,
                                                     p_generation int default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account app_public.accounts;
  v_impersonator app_public.accounts;
begin
  select * into v_account from app_public.accounts a where a.id = p_account_id;
  if not found or not v_account.is_active then
    return null;
  end if;
  if p_impersonator_id is not null then
    select * into v_impersonator from app_public.accounts a where a.id = p_impersonator_id;
    if not found or not v_impersonator.is_active or not v_impersonator.is_superuser then
      return null;
    end if;
    if p_generation is not null and p_generation <> v_impersonator.token_generation then
      return null;
    end if;
    perform set_config('app.impersonator_id', p_impersonator_id::text, true);
  elsif p_generation is not null and p_generation <> v_account.token_generation then
    return null;
  end if;
  perform set_config('app.account_id', v_account.id::text, true);
  perform set_config('app.employee_id', coalesce(v_account.employee_id::text, ''), true);
  return jsonb_build_object('id', v_account.id, 'username', v_account.username,
                            'employee_id', v_account.employee_id, 'is_staff', v_account.is_staff,
                            'is_superuser', v_account.is_superuser);
end;
$$;

-- The prelude of every authenticated API request (src/db/transaction.ts): the reload of
-- begin_request, where an inactive or unknown account, or a token or session of an earlier
-- credential generation (p_generation, never null here: a null is refused), is an error
-- (WA001, answered 401) that aborts the transaction, so that the statements sent behind it do
-- nothing and the commit rolls back. A route the manifest reserves to staff (auth 'staff')
-- passes p_staff_only: an account that is neither staff nor superuser is refused here (WF002,
-- 403), before the route's function and before its input is read (the router asks this
-- prelude alone when the input is refused, so that such a caller gets 403, not 400).
-- p_client_address: the request's client address, recorded in the audit lines it writes.
drop function if exists app_private.begin_request_or_fail(int, int);
drop function if exists app_private.begin_request_or_fail(int, int, boolean);
create or replace function app_private.begin_request_or_fail(p_account_id int, p_impersonator_id int,
                                                             p_staff_only boolean, p_generation int,
                                                             p_client_address text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account jsonb;
begin
  if p_generation is null then
    raise exception using errcode = 'WA001', message = 'Jeton sans génération : reconnectez-vous.';
  end if;
  v_account := app_private.begin_request(p_account_id, p_impersonator_id, p_generation);
  if v_account is null then
    raise exception using errcode = 'WA001', message = 'Compte inactif ou inconnu.';
  end if;
  perform app_private.set_client_address(p_client_address);
  if p_staff_only and not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Réservé aux comptes du personnel d’administration.', 'WF002');
  end if;
  return v_account;
end;
$$;

-- The client address of the request, for the audit lines of its transaction (app.client_address):
-- only a well-formed address is kept, anything else is no address.
create or replace function app_private.set_client_address(p_address text) returns void
language plpgsql volatile as $$
begin
  perform set_config('app.client_address',
    case when p_address ~ '^[0-9A-Fa-f:.]{2,45}$' then p_address else '' end, true);
end;
$$;

-- Login: the stored hash of an active account (case-insensitive username).
-- token_generation: the generation the token issued after this login carries (claim gen).
drop function if exists app_private.login_lookup(text);
create or replace function app_private.login_lookup(p_username text)
returns table (account_id int, password_hash text, is_active boolean, token_generation int)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.id, s.password_hash, a.is_active, a.token_generation
  from app_public.accounts a
  left join app_private.account_secrets s on s.account_id = a.id
  where lower(a.username) = lower(p_username);
$$;

create or replace function app_private.record_login(p_account_id int) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  update app_public.accounts set last_login_at = app_hidden.now() where id = p_account_id;
$$;

-- Creates a single-use token and returns it (the clear token leaves only by e-mail).
create or replace function app_private.create_password_token(p_account_id int, p_purpose text, p_lifetime_minutes int)
returns text
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_token text := encode(public.gen_random_bytes(32), 'hex');
begin
  insert into app_private.password_tokens (account_id, purpose, token_hash, expires_at)
  values (p_account_id, p_purpose, public.digest(v_token, 'sha256'),
          app_hidden.now() + make_interval(mins => p_lifetime_minutes));
  return v_token;
end;
$$;

create or replace function app_private.password_link(p_token text) returns text
language sql stable as $$
  select rtrim(coalesce(nullif(current_setting('app.public_url', true), ''), 'http://localhost:8000'), '/')
         || '/password-reset/confirm/?token=' || p_token;
$$;

-- E-mail address of an account: the professional e-mail of its employee record.
create or replace function app_private.account_email(p_account_id int) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select e.professional_email
  from app_public.accounts a join app_public.employees e on e.id = a.employee_id
  where a.id = p_account_id;
$$;

-- Set-password invitation for an account created without a usable password, when an
-- e-mail exists (otherwise the person uses password reset later).
create or replace function app_private.queue_invitation(p_account_id int) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_email text := app_private.account_email(p_account_id);
  v_username text;
  v_token text;
begin
  if v_email is null then
    return false;
  end if;
  select a.username into v_username from app_public.accounts a where a.id = p_account_id;
  v_token := app_private.create_password_token(p_account_id, 'invitation',
               (app_hidden.setting('invitation_lifetime_minutes'))::int);
  insert into app_private.email_outbox (kind, to_address, subject, body_text, account_id)
  values ('invitation', v_email, 'Votre compte a été créé',
          format(E'Bonjour,\n\nUn compte a été ouvert pour vous (identifiant : %s).\n'
                 'Définissez votre mot de passe en suivant ce lien :\n%s\n\n'
                 'Ce lien est à usage unique.', v_username, app_private.password_link(v_token)),
          p_account_id);
  return true;
end;
$$;

-- Password reset request: the same outcome whether or not the account exists; an e-mail
-- is queued only for an active account with an e-mail. p_login is a username or an e-mail.
create or replace function app_private.password_reset_request(p_login text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account_id int;
  v_email text;
  v_token text;
  v_minutes int := (app_hidden.setting('password_reset_lifetime_minutes'))::int;
begin
  select a.id into v_account_id
  from app_public.accounts a
  left join app_public.employees e on e.id = a.employee_id
  where a.is_active
    and (lower(a.username) = lower(btrim(p_login)) or lower(e.professional_email) = lower(btrim(p_login)))
  order by (lower(a.username) = lower(btrim(p_login))) desc
  limit 1;
  if v_account_id is null then
    return;
  end if;
  v_email := app_private.account_email(v_account_id);
  if v_email is null then
    return;
  end if;
  v_token := app_private.create_password_token(v_account_id, 'reset', v_minutes);
  insert into app_private.email_outbox (kind, to_address, subject, body_text, account_id)
  values ('password_reset', v_email, 'Réinitialisation de votre mot de passe',
          format(E'Bonjour,\n\nUne réinitialisation de mot de passe a été demandée pour votre compte.\n'
                 'Suivez ce lien dans les %s minutes :\n%s\n\n'
                 'Si vous n''êtes pas à l''origine de cette demande, ignorez ce message.',
                 v_minutes, app_private.password_link(v_token)),
          v_account_id);
end;
$$;

-- Is this token usable? Returns the username (for the password policy) or raises 400.
create or replace function app_private.password_token_check(p_token text) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_username text;
begin
  select a.username into v_username
  from app_private.password_tokens t
  join app_public.accounts a on a.id = t.account_id
  where t.token_hash = public.digest(coalesce(p_token, ''), 'sha256')
    and t.used_at is null and t.expires_at > app_hidden.now() and a.is_active;
  if v_username is null then
    perform app_hidden.invalid('token', 'Ce lien n''est plus valide : il a expiré ou a déjà servi. Demandez un nouveau lien.', 'WV030');
  end if;
  return v_username;
end;
$$;

-- Consumes the token and sets the new hash. All other open tokens of the account die too.
create or replace function app_private.password_reset_confirm(p_token text, p_password_hash text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account_id int;
  v_purpose text;
begin
  update app_private.password_tokens t set used_at = app_hidden.now()
  from app_public.accounts a
  where a.id = t.account_id and a.is_active
    and t.token_hash = public.digest(coalesce(p_token, ''), 'sha256')
    and t.used_at is null and t.expires_at > app_hidden.now()
  returning t.account_id, t.purpose into v_account_id, v_purpose;
  if v_account_id is null then
    perform app_hidden.invalid('token', 'Ce lien n''est plus valide : il a expiré ou a déjà servi. Demandez un nouveau lien.', 'WV030');
  end if;
  update app_private.password_tokens set used_at = app_hidden.now()
  where account_id = v_account_id and used_at is null;
  -- The change of the hash is audited and ends every session of the account
  -- (app_private.tg_account_secrets__password_changed, sql/auth/security_events.sql), which
  -- reads here that the link set it.
  perform set_config('app.password_change', v_purpose, true);
  insert into app_private.account_secrets (account_id) values (v_account_id) on conflict (account_id) do nothing;
  update app_private.account_secrets set password_hash = p_password_hash, password_changed_at = app_hidden.now()
  where account_id = v_account_id;
  perform set_config('app.password_change', '', true);
end;
$$;

-- GET /api/auth/me/
-- can_impersonate: the interface hint for the impersonation button. True only when the server
-- turned impersonation on for this transaction (app.allow_impersonation, set by the REST route
-- when ALLOW_IMPERSONATION is on, as for impersonation_start), for a superuser who is not
-- already speaking for someone else: the same conditions impersonation_start checks first.
create or replace function app_public.me() returns jsonb
language sql stable as $$
  select jsonb_build_object(
           'id', a.id,
           'username', a.username,
           'employee_id', a.employee_id,
           'can_view_absence_queue', app_hidden.current_account_has('absences.view_absence_queue'),
           'can_decide_absences', app_hidden.current_account_has('absences.decide_absence'),
           'can_decide_shift_changes', app_hidden.current_account_has('planning.decide_shift_change'),
           'can_view_payroll', app_hidden.current_account_has('employee.view_payroll'),
           'can_impersonate', coalesce(current_setting('app.allow_impersonation', true), '') = 'on'
                              and coalesce(current_setting('app.impersonator_id', true), '') = ''
                              and a.is_superuser and a.is_active)
         || coalesce((select jsonb_build_object('role', r.name)
                      from app_public.role_attributions ra
                      join app_public.roles r on r.id = ra.role_id
                      where ra.account_id = a.id
                        and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date)
                      order by r.precedence
                      limit 1), '{}'::jsonb)
  from app_public.accounts a
  where a.id = app_hidden.current_account_id();
$$;
comment on function app_public.me() is
'SPEC Account, GET /api/auth/me/: the signed-in account with employee_id, the role of highest display
precedence among those held today, and the interface hints can_view_absence_queue, can_decide_absences,
can_decide_shift_changes, can_view_payroll and can_impersonate (the API enforces the rules anyway).';

-- PUT /api/employees/<id>/account-activation/
-- HR (change_account_activation) opens or closes any account of its perimeter; DA and
-- managers (change_interim_account_activation) only accounts holding Intérimaire; nobody
-- changes their own account.
create or replace function app_public.account_activation_set(p_employee_id int, p_is_active boolean) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account app_public.accounts;
  v_is_interim boolean;
begin
  -- Without either right: 403 on a record of the caller's reach (own, or in the perimeter of
  -- a permission it holds), 404 on a colleague's or any other record (SPEC Errors).
  if not (app_hidden.current_account_has('employee.change_account_activation')
          or app_hidden.current_account_has('employee.change_interim_account_activation')) then
    perform app_hidden.refuse_outside_or_forbid(p_employee_id,
      'Vous n''avez pas le droit d''ouvrir ou de fermer ce compte.', 'WF011');
  end if;
  if not exists (select 1 from app_public.employees e where e.id = p_employee_id) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  select * into v_account from app_private.account_of_employee(p_employee_id);
  if v_account.id is null then
    perform app_hidden.not_found('Ce salarié n''a pas de compte.');
  end if;
  if v_account.id = app_hidden.current_account_id() then
    perform app_hidden.forbidden('Vous ne pouvez pas ouvrir ou fermer votre propre compte.', 'WF010');
  end if;
  if not app_hidden.may(app_hidden.current_account_id(), 'employee.change_account_activation', p_employee_id) then
    v_is_interim := exists (select 1 from app_public.role_attributions ra
                            where ra.account_id = v_account.id and ra.role_id = 8
                              and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date));
    -- A right held, but not over this employee: outside the perimeter, not found.
    if not app_hidden.may(app_hidden.current_account_id(), 'employee.change_interim_account_activation', p_employee_id) then
      perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
    end if;
    if not v_is_interim then
      perform app_hidden.forbidden('Vous ne pouvez ouvrir ou fermer que les comptes des intérimaires.', 'WF012');
    end if;
  end if;
  perform app_private.set_account_active(v_account.id, p_is_active);
  return jsonb_build_object('id', p_employee_id, 'account_id', v_account.id, 'is_active', p_is_active);
end;
$$;
comment on function app_public.account_activation_set(integer, boolean) is
'SPEC Permissions (change_account_activation, change_interim_account_activation), PUT
/api/employees/<id>/account-activation/: HR opens or closes any account of its perimeter, DA and
managers only accounts of temporary workers; nobody changes their own. A closed account stops its tokens
at the next request (Authentication rule 1).';

-- The account of an employee, whatever the caller may see of accounts (for activation).
create or replace function app_private.account_of_employee(p_employee_id int) returns app_public.accounts
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.* from app_public.accounts a where a.employee_id = p_employee_id;
$$;

create or replace function app_private.set_account_active(p_account_id int, p_is_active boolean) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  update app_public.accounts set is_active = p_is_active where id = p_account_id;
$$;
--! EndIncluded auth/functions.sql
--! Included audit/functions.sql
-- Audit lines, written by triggers only (never by application code).
--
-- Attach to a table with:
--   create trigger _500_audit after insert or update on <table>
--     for each row execute function app_private.tg__audit('<model>');
--   create trigger _500_audit_delete before delete on <table>
--     for each row execute function app_private.tg__audit('<model>');
-- (the model must be registered in app_private.audit_models).
-- The deletion line is written by the BEFORE trigger, before the row is erased, in the same
-- transaction. Inserts are Creation and deletions Suppression. A transition function names
-- the verb of its update (Validation, Refus, Correction, Demande d'annulation, Annulation)
-- with app_private.set_audit_verb(verb, model) before the update and
-- app_private.set_audit_verb(null) after it; other updates are Modification. Naming the
-- model keeps the verb off the other tables written by the same transition (the day
-- modification written by a validation stays Creation/Modification).

create or replace function app_private.set_audit_verb(p_verb text, p_model text default null) returns void
language plpgsql volatile as $$
begin
  if nullif(p_verb, '') is not null
     and p_verb not in ('Modification', 'Validation', 'Refus', 'Correction', 'Demande d''annulation', 'Annulation') then
    raise exception 'set_audit_verb: "%" is not an update verb of the audit log', p_verb;
  end if;
  perform set_config('app.audit_verb', coalesce(p_verb, ''), true);
  perform set_config('app.audit_verb_model', case when nullif(p_verb, '') is null then '' else coalesce(p_model, '') end, true);
end;
$$;

-- The verb of an update of p_model: the one named by set_audit_verb (for that model, or for
-- any model when none was named), else Modification.
create or replace function app_private.audit_update_verb(p_model text) returns text
language sql stable as $$
  select case
           when nullif(current_setting('app.audit_verb', true), '') is not null
                and coalesce(nullif(current_setting('app.audit_verb_model', true), ''), p_model) = p_model
           then current_setting('app.audit_verb', true)
           else 'Modification'
         end;
$$;

create or replace function app_private.write_audit(p_verb text, p_model text, p_target_id bigint, p_before jsonb, p_after jsonb)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_private.write_audit_as(app_hidden.current_account_id(),
                                     nullif(current_setting('app.impersonator_id', true), '')::int,
                                     p_verb, p_model, p_target_id, p_before, p_after);
end;
$$;

-- One audit line by a named actor (and impersonator): write_audit names the acting account of
-- the request; the security events of a login (no acting account yet) name the account that
-- signs in (sql/auth/security_events.sql). The client address is the request's (app.client_address).
create or replace function app_private.write_audit_as(p_actor int, p_impersonator int, p_verb text, p_model text,
                                                      p_target_id bigint, p_before jsonb, p_after jsonb)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- One statement; the names of each account read once (an absent account: nulls, as before).
  insert into app_private.audit_log (actor_account_id, actor_username, actor_display_name,
                                     impersonator_account_id, impersonator_username, impersonator_display_name,
                                     verb, model, target_id, before, after, client_address)
  select p_actor, act.username, act.display_name, p_impersonator, imp.username, imp.display_name,
         p_verb, p_model, p_target_id, p_before, p_after, nullif(current_setting('app.client_address', true), '')
  from (select 1) one
  left join lateral (select a.username, coalesce(e.first_name || ' ' || e.last_name, a.username) as display_name
                     from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
                     where a.id = p_actor) act on true
  left join lateral (select a.username, coalesce(e.first_name || ' ' || e.last_name, a.username) as display_name
                     from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
                     where a.id = p_impersonator) imp on true;
end;
$$;

create or replace function app_private.tg__audit() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_model text := tg_argv[0];
  v_old jsonb;
  v_new jsonb;
  v_verb text;
begin
  if v_model is null then
    raise exception 'tg__audit on %.%: the model is missing (tg__audit(''<model>''))', tg_table_schema, tg_table_name;
  end if;
  if tg_op = 'INSERT' then
    v_new := to_jsonb(new);
    perform app_private.write_audit('Creation', v_model, (v_new ->> 'id')::bigint, null, v_new);
    return new;
  elsif tg_op = 'UPDATE' then
    v_old := to_jsonb(old);
    v_new := to_jsonb(new);
    v_verb := app_private.audit_update_verb(v_model);
    -- An update that changes nothing but its timestamp leaves no line (unless a transition named it).
    if v_verb = 'Modification' and (v_old - 'updated_at') = (v_new - 'updated_at') then
      return new;
    end if;
    perform app_private.write_audit(v_verb, v_model, (v_new ->> 'id')::bigint, v_old, v_new);
    return new;
  elsif tg_op = 'DELETE' then
    if tg_when <> 'BEFORE' then
      raise exception 'tg__audit on %.%: a deletion is audited by a BEFORE DELETE trigger', tg_table_schema, tg_table_name;
    end if;
    v_old := to_jsonb(old);
    perform app_private.write_audit('Suppression', v_model, (v_old ->> 'id')::bigint, v_old, null);
    return old;
  end if;
  raise exception 'tg__audit: % is not audited', tg_op;
end;
$$;

-- The log is append-only: lines are never changed, and only the retention purge deletes them.
create or replace function app_private.tg_audit_log__append_only() returns trigger
language plpgsql volatile as $$
begin
  if tg_op = 'DELETE' and current_setting('app.audit_purge', true) = 'on' then
    return old;
  end if;
  raise exception using errcode = 'WF901',
    message = 'Le journal d''audit est en ajout seul : ses lignes ne se modifient pas et ne sont supprimées que par la purge de rétention.';
end;
$$;
create or replace trigger _200_append_only before update or delete on app_private.audit_log
  for each row execute function app_private.tg_audit_log__append_only();
create or replace function app_private.tg_audit_log__no_truncate() returns trigger
language plpgsql volatile as $$
begin
  raise exception using errcode = 'WF901',
    message = 'Le journal d''audit est en ajout seul : il ne se vide pas.';
end;
$$;
create or replace trigger _200_no_truncate before truncate on app_private.audit_log
  for each statement execute function app_private.tg_audit_log__no_truncate();

-- Retention: deletes the lines older than audit_retention_days before p_now. Idempotent
-- (a second run finds nothing more to delete); returns the number of lines deleted.
create or replace function app_private.purge_audit_log(p_now timestamptz) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_days int := (app_hidden.setting('audit_retention_days') #>> '{}')::int;
  v_count int;
begin
  if p_now is null then
    raise exception 'purge_audit_log: p_now is required';
  end if;
  if v_days is null or v_days < 1 then
    raise exception 'purge_audit_log: the setting audit_retention_days must be a positive number of days (got %)',
      app_hidden.setting('audit_retention_days');
  end if;
  perform set_config('app.audit_purge', 'on', true);
  delete from app_private.audit_log l where l.at < p_now - make_interval(days => v_days);
  get diagnostics v_count = row_count;
  perform set_config('app.audit_purge', '', true);
  return v_count;
end;
$$;

-- Back-office access (SPEC, Authentication rule 3): staff status, superuser, or an active
-- RH n1 / RH n2 role attribution, on an active account.
create or replace function app_hidden.account_has_backoffice_access(p_account int, p_at timestamptz default null)
returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (
    select 1 from app_public.accounts a
    where a.id = p_account and a.is_active
      and (a.is_staff or a.is_superuser
           or exists (select 1 from app_public.role_attributions ra
                      join app_public.roles r on r.id = ra.role_id
                      where ra.account_id = a.id and r.name in ('RH n1', 'RH n2')
                        and app_hidden.date_in(app_hidden.business_date(coalesce(p_at, app_hidden.now())),
                                               ra.start_date, ra.end_date))));
$$;

-- Who reads the audit log: holders of audit.view_actionlog (explicit permission, or
-- superuser) WITH back-office access. The permission is explicit and carries no
-- establishment restriction, so a reader reads the lines of the whole association.
create or replace function app_hidden.current_account_reads_audit_log() returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.current_account_id() is not null
     and app_hidden.current_account_has('audit.view_actionlog')
     and app_hidden.account_has_backoffice_access(app_hidden.current_account_id());
$$;

-- One line as the API shows it (CONTRACT section 4).
create or replace function app_hidden.audit_line_json(p_line app_private.audit_log) returns jsonb
language sql immutable as $$
  select jsonb_build_object(
    'id', p_line.id,
    'at', p_line.at,
    'actor', p_line.actor_account_id,
    'actor_identity', case when p_line.actor_account_id is not null or p_line.actor_username is not null then
                        jsonb_build_object('username', p_line.actor_username, 'display_name', p_line.actor_display_name)
                      end,
    -- The superuser who acted for the actor (impersonation), with its identity frozen too
    -- (issue 25 finding 5: « par l'impersonateur, pour le compte de l'acteur »).
    'impersonator', p_line.impersonator_account_id,
    'impersonator_identity', case when p_line.impersonator_account_id is not null or p_line.impersonator_username is not null then
                               jsonb_build_object('username', p_line.impersonator_username,
                                                  'display_name', p_line.impersonator_display_name)
                             end,
    'client_address', p_line.client_address,
    'verb', p_line.verb,
    'model', p_line.model,
    'target_id', p_line.target_id,
    'before', p_line.before,
    'after', p_line.after);
$$;

-- For a DBA: who did what, with the fields that changed, no join needed.
create or replace view app_private.audit_log_readable as
select l.id,
       l.at,
       (l.at at time zone 'Europe/Paris') as at_paris,
       coalesce(l.actor_display_name || ' (' || l.actor_username || ')', '(sans compte : ' || l.db_user || ')') as actor,
       l.actor_account_id,
       l.impersonator_username,
       l.verb,
       l.model,
       l.target_id,
       (select array_agg(k order by k)
        from (select jsonb_object_keys(coalesce(l.before, '{}'::jsonb)) as k
              union
              select jsonb_object_keys(coalesce(l.after, '{}'::jsonb))) keys
        where k <> 'updated_at'
          and (l.before -> k) is distinct from (l.after -> k)) as changed_fields,
       l.before,
       l.after,
       l.transaction_id
from app_private.audit_log l;
comment on view app_private.audit_log_readable is
  'The audit log for a DBA: the actor''s frozen identity, the verb, the target and the fields that changed.';
--! EndIncluded audit/functions.sql
--! Included impersonation/api.sql
-- Impersonation (POST /api/auth/impersonate/, only when ALLOW_IMPERSONATION is on): a
-- superuser obtains a token whose subject is another account and whose `act` claim names
-- the superuser. The start is audited (verb Impersonation, model account); every audit line
-- written with such a token carries the impersonator (app_private.begin_request sets
-- app.impersonator_id, app_private.write_audit records it).
-- Off unless the server turns it on for the transaction (app.allow_impersonation = 'on', set
-- by the REST route when ALLOW_IMPERSONATION is on): any other caller (GraphQL, a future
-- route) is refused as by an unknown address, and nothing is written.

-- The account to impersonate, whatever the caller may read of accounts.
create or replace function app_private.impersonation_target(p_account int)
returns table (id int, username text, employee_id int, is_active boolean, is_superuser boolean)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.id, a.username, a.employee_id, a.is_active, a.is_superuser from app_public.accounts a where a.id = p_account;
$$;

create or replace function app_public.impersonation_start(p_account int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_me int := app_hidden.current_account_id();
  v_target record;
begin
  if coalesce(current_setting('app.allow_impersonation', true), '') <> 'on' then
    perform app_hidden.not_found('L''emprunt d''identité n''est pas activé sur ce service.', 'WN570');
  end if;
  if nullif(current_setting('app.impersonator_id', true), '') is not null then
    perform app_hidden.forbidden('Vous empruntez déjà l''identité d''un compte : reprenez d''abord votre propre session.', 'WF571');
  end if;
  if not app_hidden.current_account_is_superuser() then
    perform app_hidden.forbidden('Seul un superutilisateur peut emprunter l''identité d''un compte.', 'WF570');
  end if;
  if p_account is null then
    perform app_hidden.invalid('account', 'Le compte est obligatoire.', 'WV570');
  end if;
  select * into v_target from app_private.impersonation_target(p_account);
  if v_target.id is null then
    perform app_hidden.invalid('account', format('Compte n° %s introuvable.', p_account), 'WV570');
  elsif v_target.id = v_me then
    perform app_hidden.invalid('account', 'Vous ne pouvez pas emprunter votre propre identité.', 'WV570');
  elsif not v_target.is_active then
    perform app_hidden.invalid('account', 'Ce compte est fermé : son identité ne peut pas être empruntée.', 'WV570');
  elsif v_target.is_superuser then
    perform app_hidden.forbidden('L''identité d''un autre superutilisateur ne peut pas être empruntée.', 'WF572');
  end if;
  perform app_private.write_audit('Impersonation', 'account', v_target.id, null,
    jsonb_build_object('account', v_target.id, 'username', v_target.username,
                       'impersonator', v_me,
                       'impersonator_username', (select t.username from app_private.impersonation_target(v_me) t)));
  return jsonb_build_object(
    'account', jsonb_build_object('id', v_target.id, 'username', v_target.username, 'employee_id', v_target.employee_id),
    'impersonator', jsonb_build_object('id', v_me, 'username', (select t.username from app_private.impersonation_target(v_me) t)));
end;
$$;

-- POST /api/auth/impersonate/end/: the superuser gives the borrowed identity back (the client
-- then takes its own token again). One audit line impersonation_ended (model account_security,
-- target the borrowed account, by the superuser). Off, like the start, unless the REST route
-- turned it on; called without an impersonation token: 400 under non_field_errors.
create or replace function app_public.impersonation_end() returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_impersonator int := nullif(current_setting('app.impersonator_id', true), '')::int;
  v_account int := app_hidden.current_account_id();
begin
  if coalesce(current_setting('app.allow_impersonation', true), '') <> 'on' then
    perform app_hidden.not_found('L''emprunt d''identité n''est pas activé sur ce service.', 'WN570');
  end if;
  if v_impersonator is null then
    perform app_hidden.invalid('non_field_errors', 'Vous n''empruntez aucune identité : il n''y a rien à terminer.', 'WV571');
  end if;
  perform app_private.audit_security_event(v_account, 'impersonation_ended',
    jsonb_build_object('impersonator', v_impersonator,
                       'impersonator_username', (select t.username from app_private.impersonation_target(v_impersonator) t)),
    v_impersonator);
  return jsonb_build_object('account', v_account, 'impersonator', v_impersonator, 'ended', true);
end;
$$;
-- Its comment (hidden from GraphQL) is in sql/graphql.sql.
--! EndIncluded impersonation/api.sql
--! Included graphql.sql
-- PostGraphile smart comments. /graphql offers the API functions only (src/graphql.ts leaves
-- every table out): the aggregates once opted in here on tables are gone with them.
comment on table app_public.absences is null;
comment on table app_public.shift_change_requests is null;
comment on table app_public.counters is null;
comment on table app_public.day_modifications is null;
comment on table app_public.events is null;
-- Impersonation hands out a token, which only the REST route signs: GraphQL does not offer it
-- (and the function refuses unless the server turned impersonation on, sql/impersonation/api.sql).
-- Smart tags come first: PostGraphile reads the first line that is not a tag, and all after it,
-- as the description.
comment on function app_public.impersonation_start(int) is
'@behavior -*
SPEC Authentication rule 5 (user impersonation, off by default): a superuser starts speaking for another
active account that is not a superuser; returns that account and the impersonator, which the REST route
signs into a token; audited. Refused unless the server turned impersonation on for the request.';
comment on function app_public.impersonation_end() is
'@behavior -*
Issue 25: the end of an impersonation (POST /api/auth/impersonate/end/ with the impersonation token), audited
as impersonation_ended by the superuser; refused unless the server turned impersonation on for the request.';
-- The planning as text, and in parts, is the REST route's (passed through as written);
-- GraphQL offers planningRead, typed JSON.
comment on function app_public.planning_read_text(date, date, int, int, int) is
'@behavior -*
SPEC Planning cell and Permissions rule 3, GET /api/planning/: planning_read''s answer as JSON text, as written
(no parse and serialise), which the REST route sends in parts (planning_read_chunks).';
comment on function app_public.planning_read_chunks(date, date, int, int, int) is
'@behavior -*
SPEC Planning cell and Permissions rule 3, GET /api/planning/: planning_read''s answer as UTF-8 bytes in parts of
at most 64 KiB, in order, which the REST route sends as they come.';
-- The list of absences as text is the REST route's (passed through as written); GraphQL offers
-- absencesList, typed JSON.
comment on function app_public.absences_list_text(text, int, date, date, int, int, text, int, int) is
'@behavior -*
SPEC Absences, GET /api/absences/ and Permissions rules 3 and 19: absences_list''s count, and its results as
JSON text, as written (no envelope, no parse and serialise), which the REST route sends as they come.';
--! EndIncluded graphql.sql
--! Included backoffice/sessions.sql
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
  ('backoffice_session_hours', '12', 'Durée maximale d''une session du back-office (heures)')
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
    raise exception using errcode = 'WF070', message = 'Ce compte n''a pas accès au back-office.';
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
--! EndIncluded backoffice/sessions.sql
--! Included auth/security_events.sql
-- Security events of accounts (issue 25, findings 3 and 4): each is one audit line (verb
-- Securite, model account_security, target the account concerned; who acted, when and from which
-- address; never a secret), and the events that put an account's credentials in doubt end
-- every session of that account: its back-office sessions are deleted and its credential
-- generation (app_public.accounts.token_generation) is raised, so that every API token issued
-- before is refused by the next request's prelude (app_private.begin_request).
--
-- The events (after.event):
--   login_refused            a right password on an account in a locked state (closed)
--   factor_enrolled          a second factor confirmed (its backup codes are new)
--   factor_removed           a verified superuser removed an account's second factor
--   backup_code_used         a backup code replaced the app's code at a back-office login
--   backup_codes_regenerated new backup codes replaced the unused ones
--   password_changed         the password hash changed otherwise than by a link
--   password_reset           the password was set through a reset or invitation link
--   sessions_ended           every session and token of the account ended (with the cause)
--   impersonation_ended      a superuser gave back the identity it had borrowed
-- (impersonation_started is the line of verb Impersonation, sql/impersonation/api.sql.)

create or replace function app_private.security_event_names() returns text[]
language sql immutable as $$
  select array['login_refused', 'factor_enrolled', 'factor_removed', 'backup_code_used', 'backup_codes_regenerated',
               'password_changed', 'password_reset', 'sessions_ended', 'impersonation_ended'];
$$;

-- Writes the line of one event on account p_account. p_actor: who acted (the account itself
-- at its own login, a superuser removing a factor); null takes the request's acting account.
-- p_details holds no secret (the callers pass counts and causes only).
create or replace function app_private.audit_security_event(p_account int, p_event text, p_details jsonb default '{}'::jsonb,
                                                            p_actor int default null)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_actor int := coalesce(p_actor, app_hidden.current_account_id());
begin
  if p_account is null then
    raise exception 'audit_security_event: the account is required';
  end if;
  if p_event is null or not (p_event = any (app_private.security_event_names())) then
    raise exception 'audit_security_event: unknown event %', p_event;
  end if;
  perform app_private.write_audit_as(
    v_actor,
    case when p_actor is null then nullif(current_setting('app.impersonator_id', true), '')::int end,
    'Securite', 'account_security', p_account, null,
    jsonb_build_object('event', p_event, 'account', p_account,
                       'username', (select a.username from app_public.accounts a where a.id = p_account),
                       'address', nullif(current_setting('app.client_address', true), ''))
      || coalesce(p_details, '{}'::jsonb));
end;
$$;

-- Ends every session of an account: its back-office sessions are deleted and its credential
-- generation raised (every API token issued before is refused from the next request on). One
-- audit line sessions_ended with the cause. Returns the number of back-office sessions ended.
-- p_raise_generation false: the caller raises it itself (the closing trigger, on the row it updates).
create or replace function app_private.end_account_sessions(p_account int, p_cause text, p_actor int default null,
                                                            p_raise_generation boolean default true)
returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_sessions int;
begin
  if p_cause is null or p_cause not in ('password_changed', 'password_reset', 'account_closed', 'factor_removed') then
    raise exception 'end_account_sessions: unknown cause %', p_cause;
  end if;
  if p_raise_generation then
    update app_public.accounts set token_generation = token_generation + 1 where id = p_account;
  end if;
  delete from app_private.backoffice_sessions s where s.account_id = p_account;
  get diagnostics v_sessions = row_count;
  perform app_private.audit_security_event(p_account, 'sessions_ended',
    jsonb_build_object('cause', p_cause, 'backoffice_sessions', v_sessions), p_actor);
  return v_sessions;
end;
$$;

-- Tells an account of a security event: an in-app notification, and an e-mail when its
-- employee record has a professional address.
create or replace function app_private.tell_account_security(p_account int, p_title text, p_body text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_email text := app_private.account_email(p_account);
begin
  perform app_private.notify(p_account, p_title, p_body, 'warning', 'account', p_account);
  if v_email is not null then
    insert into app_private.email_outbox (kind, to_address, subject, body_text, account_id)
    values ('security_notice', v_email, p_title,
            format(E'Bonjour,\n\n%s\n\nSi vous n''êtes pas à l''origine de ce changement et n''en avez pas été prévenu, '
                   'adressez-vous sans attendre au service des ressources humaines ou à l''administrateur.', p_body),
            p_account);
  end if;
end;
$$;

-- A password hash that changes ends the account's sessions (whatever writes it: the reset
-- link, a future change form, a DBA). The reset link names itself (app.password_change =
-- 'reset' or 'invitation', set by app_private.password_reset_confirm); any other change is
-- password_changed. Setting the first password of an account that had none ends nothing (it
-- had no session) but is audited the same; removing the password (a null hash) ends them.
create or replace function app_private.tg_account_secrets__password_changed() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_via text := nullif(current_setting('app.password_change', true), '');
  v_event text := case when v_via in ('reset', 'invitation') then 'password_reset' else 'password_changed' end;
begin
  perform app_private.audit_security_event(new.account_id, v_event,
    case when v_via in ('reset', 'invitation') then jsonb_build_object('via', v_via) else '{}'::jsonb end,
    -- Through a link, the person holding it acts for the account (there is no acting account yet).
    case when v_via in ('reset', 'invitation') then new.account_id end);
  if old.password_hash is not null then
    perform app_private.end_account_sessions(new.account_id, v_event,
      case when v_via in ('reset', 'invitation') then new.account_id end);
  end if;
  return new;
end;
$$;
create or replace trigger _600_password_changed after update of password_hash on app_private.account_secrets
  for each row when (old.password_hash is distinct from new.password_hash)
  execute function app_private.tg_account_secrets__password_changed();

-- Closing an account ends its sessions in the same update: the generation is raised on the row
-- itself (an AFTER trigger could not update it again without a second line), the back-office
-- sessions are deleted. Reopening it later revives no earlier token.
create or replace function app_private.tg_accounts__closed() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  new.token_generation := old.token_generation + 1;
  perform app_private.end_account_sessions(new.id, 'account_closed', null, false);
  return new;
end;
$$;
create or replace trigger _100_closed before update of is_active on app_public.accounts
  for each row when (old.is_active and not new.is_active)
  execute function app_private.tg_accounts__closed();

-- A right password given for a closed account (API token or back-office login): refused by
-- the caller with the same answer as a wrong password, and audited here.
create or replace function app_private.login_refused(p_account int, p_surface text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if p_surface is null or p_surface not in ('api', 'backoffice') then
    raise exception 'login_refused: unknown surface %', p_surface;
  end if;
  perform app_private.audit_security_event(p_account, 'login_refused',
    jsonb_build_object('reason', 'account_closed', 'surface', p_surface), p_account);
end;
$$;

grant execute on function app_private.login_refused(int, text) to wfm_authenticator;
--! EndIncluded auth/security_events.sql
--! Included backoffice/audit.sql
-- Audit log search (back-office viewer and GET /api/audit-log/): filters by model, target,
-- actor, verb and date window, newest first, for accounts holding audit.view_actionlog with
-- back-office access; RLS on the log filters again. It replaces app_public.audit_log_list
-- (model and target only) of the first migration.
drop function if exists app_public.audit_log_list(text, bigint, int, int);

-- Refuses (403) an account that does not read the audit log.
create or replace function app_hidden.audit_log_reader_check() returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_reads_audit_log() then
    perform app_hidden.forbidden(
      'La consultation du journal d''audit est réservée aux comptes ayant la permission audit.view_actionlog et l''accès au back-office.',
      'WF601');
  end if;
end;
$$;

-- Refuses a caller who does not read the log (403) and bad filters (400 under the field).
-- Returns true for use in a WHERE clause (evaluated once, before the first line).
create or replace function app_hidden.audit_log_filters_check(p_model text, p_target_id bigint, p_from date, p_to date)
returns boolean
language plpgsql stable as $$
declare
  v_models text;
begin
  perform app_hidden.audit_log_reader_check();
  if p_model is not null and not exists (select 1 from app_private.audit_models m where m.model = p_model) then
    select string_agg(m.model, ', ' order by m.model) into v_models from app_private.audit_models m;
    perform app_hidden.invalid('model', format('Modèle inconnu « %s ». Valeurs possibles : %s.', p_model, v_models), 'WV601');
  end if;
  if p_target_id is not null and p_target_id < 1 then
    perform app_hidden.invalid('target_id', 'L''identifiant de la cible est un entier strictement positif.', 'WV601');
  end if;
  if p_from is not null and p_to is not null and p_to < p_from then
    perform app_hidden.invalid('to', 'La fin de la période précède son début.', 'WV601');
  end if;
  return true;
end;
$$;

-- The lines of a search, written once for GET /api/audit-log/ and its export (inlined into
-- both: the callers are security definer, as the log lives in app_private). p_impersonator:
-- the lines written by that superuser for someone else (issue 25 finding 5), by the account
-- named now or the username frozen in the line.
drop function if exists app_hidden.audit_log_selection(text, bigint, text, text, date, date) cascade;
create or replace function app_hidden.audit_log_selection(
  p_model text, p_target_id bigint, p_actor text, p_verb text, p_from date, p_to date, p_impersonator text)
returns setof app_private.audit_log
language sql stable as $$
  select l.* from app_private.audit_log l
  where app_hidden.audit_log_filters_check(p_model, p_target_id, p_from, p_to)
    and (p_model is null or l.model = p_model)
    and (p_target_id is null or l.target_id = p_target_id)
    and (p_verb is null or l.verb = p_verb)
    and (p_from is null or l.at >= (p_from::timestamp at time zone app_hidden.business_timezone()))
    and (p_to is null or l.at < ((p_to + 1)::timestamp at time zone app_hidden.business_timezone()))
    -- The account named now, or the username frozen in the line at the time.
    and (nullif(lower(btrim(p_actor)), '') is null
         or l.actor_account_id in (select a.id from app_public.accounts a
                                   where lower(a.username) = nullif(lower(btrim(p_actor)), ''))
         or lower(l.actor_username) = nullif(lower(btrim(p_actor)), ''))
    and (nullif(lower(btrim(p_impersonator)), '') is null
         or l.impersonator_account_id in (select a.id from app_public.accounts a
                                          where lower(a.username) = nullif(lower(btrim(p_impersonator)), ''))
         or lower(l.impersonator_username) = nullif(lower(btrim(p_impersonator)), ''));
$$;

drop function if exists app_public.audit_log_search(text, bigint, text, text, date, date, int, int) cascade;
create or replace function app_public.audit_log_search(
  p_model text default null, p_target_id bigint default null, p_actor text default null, p_verb text default null,
  p_from date default null, p_to date default null, p_page int default 1, p_page_size int default 50,
  p_impersonator text default null)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- Checked first, also when the log is empty.
  perform app_hidden.audit_log_filters_check(p_model, p_target_id, p_from, p_to);
  return (
    with lines as (
      select l.* from app_hidden.audit_log_selection(p_model, p_target_id, p_actor, p_verb, p_from, p_to, p_impersonator) l
    )
    select jsonb_build_object(
      'count', (select count(*) from lines),
      'results', coalesce((
        select jsonb_agg(app_hidden.audit_line_json(p) order by p.at desc, p.id desc)
        from (select * from lines order by at desc, id desc
              limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) p), '[]'::jsonb)));
end;
$$;
comment on function app_public.audit_log_search(text, bigint, text, text, date, date, integer, integer, text) is
'SPEC Audit log and Permissions (audit.view_actionlog): for accounts holding audit.view_actionlog with
back-office access (else 403), one page of audit lines newest first, filtered by model, target, actor,
verb, date window and impersonator; each line names the impersonator who acted for its actor.';

-- GET /api/audit-log/export/?format=&<the search's filters>: the same lines, newest first;
-- before and after as JSON text; the impersonator and the client address of each line.
drop function if exists app_public.audit_log_export(text, bigint, text, text, date, date) cascade;
create or replace function app_public.audit_log_export(
  p_model text default null, p_target_id bigint default null, p_actor text default null, p_verb text default null,
  p_from date default null, p_to date default null, p_impersonator text default null)
returns table (id bigint, at timestamptz, actor int, actor_username text, actor_display_name text,
               impersonator int, impersonator_username text, impersonator_display_name text, verb text,
               model text, target_id bigint, before text, after text, client_address text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select l.id, l.at, l.actor_account_id, l.actor_username, l.actor_display_name,
         l.impersonator_account_id, l.impersonator_username, l.impersonator_display_name, l.verb, l.model, l.target_id,
         l.before::text, l.after::text, l.client_address
  from app_hidden.audit_log_selection(p_model, p_target_id, p_actor, p_verb, p_from, p_to, p_impersonator) l
  order by l.at desc, l.id desc;
$$;
comment on function app_public.audit_log_export(text, bigint, text, text, date, date, text) is 'SPEC Audit log and issue 16 exports, GET /api/audit-log/export/: every audit line the search shows for the same filters (its readers only: audit.view_actionlog), with the impersonator who acted for its author, for the CSV or XLSX file.';

-- The audited models and their French labels (the viewer's model filter), for the same readers.
create or replace function app_public.audit_log_models() returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.audit_log_reader_check();
  return (select coalesce(jsonb_agg(jsonb_build_object('model', m.model, 'label', m.label) order by m.label), '[]'::jsonb)
          from app_private.audit_models m);
end;
$$;
comment on function app_public.audit_log_models() is
'SPEC Audit log: the audited models with their French labels (the model filter of the viewer), for the
readers of the audit log.';
--! EndIncluded backoffice/audit.sql
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
grant execute on function app_private.begin_request(int, int, int), app_private.begin_request_or_fail(int, int, boolean, int, text),
  app_private.login_lookup(text), app_private.set_client_address(text),
  app_private.record_login(int), app_private.password_reset_request(text),
  app_private.password_token_check(text), app_private.password_reset_confirm(text, text),
  app_private.rate_limit_hit(text, int, interval), app_private.rate_limit_hit_or_fail(text, int, interval)
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
