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
  ('absences.view_absence_queue', 'Lire les demandes d’absence et de modification du périmètre'),
  ('absences.decide_absence', 'Valider ou refuser une demande d’absence'),
  ('planning.decide_shift_change', 'Valider ou refuser une demande de modification de journée'),
  ('absences.view_absencedocument_file', 'Lire le contenu des justificatifs d’un tiers'),
  ('employee.change_employee_record', 'Modifier la fiche salarié, les contrats, les affectations et les compteurs'),
  ('employee.view_employee_directory', 'Lire l’annuaire (encadrement)'),
  ('employee.view_social_security_number', 'Lire le numéro de sécurité sociale'),
  ('employee.change_account_activation', 'Ouvrir ou fermer n’importe quel compte'),
  ('employee.change_interim_account_activation', 'Ouvrir ou fermer les comptes des intérimaires'),
  ('employee.view_payroll', 'Consulter les éléments de paie'),
  ('audit.view_actionlog', 'Lire le journal d’audit')
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
  ('employee.view_emergency_contact', 'Lire les contacts d’urgence des salariés du périmètre'),
  ('employee.change_emergency_contact', 'Modifier les contacts d’urgence des salariés du périmètre'),
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
