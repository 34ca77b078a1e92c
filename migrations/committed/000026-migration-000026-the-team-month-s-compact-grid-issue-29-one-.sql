--! Previous: sha1:e0cf6bf307c92704ac556a0bf2ecb11b506fe51b
--! Hash: sha1:b3b8947b8dd37b9a846730433f4c63dec853966f
--! Message: Migration 000026: the team month's compact grid (issue 29), one apostrophe style (issue 29), the start's migration check (issue 31)

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included core/errors.sql
-- Error helpers. Codes are registered in docs/error-codes.md; the HTTP layer maps the
-- SQLSTATE class to a status (WV 400, WA 401, WF 403, WN 404, WM 405, WC 409) and the
-- DETAIL to the field key of the CONTRACT envelope.

-- 400 under one field (null field: non_field_errors).
create or replace function app_hidden.invalid(p_field text, p_message text, p_code text default 'WV001')
returns void language plpgsql volatile as $$
begin
  raise exception using errcode = p_code, message = p_message, detail = coalesce(p_field, 'non_field_errors');
end;
$$;

-- 400 with several fields at once: p_errors is {"field": ["message", ...], ...}.
create or replace function app_hidden.invalid_fields(p_errors jsonb, p_code text default 'WV002')
returns void language plpgsql volatile as $$
begin
  raise exception using errcode = p_code,
    message = (select string_agg(m, ' ') from jsonb_each(p_errors) e, jsonb_array_elements_text(e.value) m),
    detail = p_errors::text;
end;
$$;

create or replace function app_hidden.forbidden(p_message text, p_code text default 'WF001')
returns void language plpgsql volatile as $$
begin
  raise exception using errcode = p_code, message = p_message;
end;
$$;

create or replace function app_hidden.not_found(p_message text default 'Ressource introuvable.', p_code text default 'WN001')
returns void language plpgsql volatile as $$
begin
  raise exception using errcode = p_code, message = p_message;
end;
$$;

create or replace function app_hidden.conflict(p_message text, p_code text default 'WC001')
returns void language plpgsql volatile as $$
begin
  raise exception using errcode = p_code, message = p_message;
end;
$$;

-- Collects field errors in a jsonb accumulator: errors := app_hidden.add_error(errors, 'date', 'msg').
create or replace function app_hidden.add_error(p_errors jsonb, p_field text, p_message text)
returns jsonb language sql immutable as $$
  select coalesce(p_errors, '{}'::jsonb)
      || jsonb_build_object(coalesce(p_field, 'non_field_errors'),
           coalesce(p_errors -> coalesce(p_field, 'non_field_errors'), '[]'::jsonb) || to_jsonb(p_message));
$$;

-- Raises the accumulated errors, if any.
create or replace function app_hidden.raise_errors(p_errors jsonb)
returns void language plpgsql volatile as $$
begin
  if p_errors is not null and p_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(p_errors);
  end if;
end;
$$;

-- Formats used in messages and notification bodies.
-- stable, as to_char is: so they are inlined (an immutable wrapper of a stable body is called
-- through the SQL function machinery, parsed and planned at each call; docs/architecture.md,
-- Performance notes).
create or replace function app_hidden.fr_date(p_date date) returns text
language sql stable as $$ select to_char(p_date, 'DD/MM/YYYY') $$;

create or replace function app_hidden.fmt_quantity(p_value numeric) returns text
language sql stable as $$ select to_char(p_value, 'FM999999990.00') $$;

-- Paging of list functions (the HTTP layer validates its query string; GraphQL and other
-- SQL callers reach the functions directly): page from 1, page size from 1 to 200.
create or replace function app_hidden.page_limit(p_page_size int) returns int
language plpgsql immutable as $$
begin
  if p_page_size is null or p_page_size < 1 then
    perform app_hidden.invalid('page_size', 'La taille de page est un entier d’au moins 1.', 'WV003');
  end if;
  return least(p_page_size, 200);
end;
$$;

create or replace function app_hidden.page_offset(p_page int, p_page_size int) returns int
language plpgsql immutable as $$
begin
  if p_page is null or p_page < 1 then
    perform app_hidden.invalid('page', 'Le numéro de page est un entier d’au moins 1.', 'WV003');
  end if;
  return (p_page - 1) * app_hidden.page_limit(p_page_size);
end;
$$;
--! EndIncluded core/errors.sql
--! Included core/settings.sql
-- Service settings readable by SQL (retention, lifetimes). Secrets (SMTP password, JWT
-- secret) come from the environment, never from here.
create table if not exists app_private.settings (
  key text primary key,
  value jsonb not null,
  description text not null
);
insert into app_private.settings (key, value, description) values
  ('audit_retention_days', '1095', 'Durée de conservation du journal d’audit, en jours'),
  ('password_reset_lifetime_minutes', '60', 'Durée de validité d’un lien de réinitialisation'),
  ('invitation_lifetime_minutes', '10080', 'Durée de validité d’une invitation à définir son mot de passe')
on conflict do nothing;

create or replace function app_hidden.setting(p_key text) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select s.value from app_private.settings s where s.key = p_key;
$$;
--! EndIncluded core/settings.sql
--! Included core/arguments.sql
-- Typed arguments (docs/architecture.md, "One input contract", "Typed arguments"): an API
-- function takes one typed argument per key of its body. Two things a typed argument cannot
-- say are written once here:
--
-- * whether a key was sent at all. A write that keeps what the body leaves out (PATCH, PUT,
--   the correction preview of an absence) cannot tell an absent key from a null one by its
--   argument; it takes the body's keys in `p_sent text[]` (the REST router passes them, manifest
--   `from: 'body-keys'`). A caller that gives no list (GraphQL) sends the arguments it gives
--   non-null: only a list can clear a value.
-- * the checks of a list of ids that the route schema makes (integers, no repeat), for a caller
--   that reaches the function without it (GraphQL).

-- Was the key sent? Never NULL (app_private.never_null_guards).
create or replace function app_hidden.sent(p_sent text[], p_key text, p_given boolean) returns boolean
language sql immutable parallel safe as $$
  select case when p_sent is null then coalesce(p_given, false) else coalesce(p_key = any (p_sent), false) end;
$$;

-- The refusal of a list of ids that the route schema would not accept (a null item, an id
-- twice), in the words of the former JSON reader; null when the list is acceptable (or null).
create or replace function app_hidden.id_list_refusal(p_ids int[]) returns text
language sql immutable parallel safe as $$
  select case
    when array_position(p_ids, null) is not null then 'Une liste d’identifiants (nombres entiers) est attendue.'
    when cardinality(p_ids) <> (select count(distinct i) from unnest(p_ids) i) then 'La liste contient des doublons.'
  end;
$$;

-- A text argument as the rules read it: trimmed, an empty text counting as none.
create or replace function app_hidden.trimmed(p_text text) returns text
language sql immutable parallel safe as $$
  select nullif(btrim(p_text), '');
$$;

-- The keys a write takes as sent: the list given, or (no list: GraphQL) the keys of the
-- arguments given non-null (p_keys and p_given pair up). For a function that hands "was it
-- sent?" to helpers which no longer see the arguments (the absence draft).
create or replace function app_hidden.keys_sent(p_sent text[], p_keys text[], p_given boolean[]) returns text[]
language sql immutable parallel safe as $$
  select coalesce(p_sent, array(select k from unnest(p_keys, p_given) u(k, g) where g));
$$;
--! EndIncluded core/arguments.sql
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
--! EndIncluded org/accounts.sql
--! Included reference/tables.sql
-- Reference data of absences and counters: categories (two levels), reasons (absence
-- types), counter kinds and the associations between reasons and counters.

create table if not exists app_public.absence_categories (
  id int generated always as identity primary key,
  code text not null unique check (code ~ '^[A-Z][A-Z0-9_]{1,31}$'),
  name text not null,
  parent_id int references app_public.absence_categories on delete restrict,
  position smallint not null default 0
);
create index if not exists absence_categories_parent_idx on app_public.absence_categories (parent_id);

-- The tree has at most two levels: a sub-category's parent is a root.
create or replace function app_private.tg_absence_categories__depth() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.parent_id is not null and (
       new.parent_id = new.id
    or exists (select 1 from app_public.absence_categories c where c.id = new.parent_id and c.parent_id is not null)
    or exists (select 1 from app_public.absence_categories c where c.parent_id = new.id)) then
    perform app_hidden.invalid('parent', 'Une catégorie d’absence a au plus deux niveaux (catégorie, sous-catégorie).');
  end if;
  return new;
end;
$$;
create or replace trigger _200_guard before insert or update on app_public.absence_categories
  for each row execute function app_private.tg_absence_categories__depth();

create table if not exists app_public.counter_kinds (
  code text primary key check (code ~ '^[A-Z][A-Z0-9_+]{0,15}$'),
  name text not null,
  unit text not null check (unit in ('day', 'hour')),
  -- Consumable counters are debited by absences (CP, CT, ...); AN and HS are not.
  is_consumable boolean not null default true,
  position smallint not null default 0
);

create table if not exists app_public.absence_types (
  id int generated always as identity primary key,
  code text not null check (code ~ '^[A-Za-z0-9][A-Za-z0-9_+\-]{0,15}$'),
  name text not null,
  category_id int not null references app_public.absence_categories on delete restrict,
  unit text not null check (unit in ('day', 'hour')),
  paid boolean not null default false,
  splittable boolean not null default true,
  annual_cap numeric(8,2) check (annual_cap is null or annual_cap > 0),
  cap_overrun text not null default 'refuse' check (cap_overrun in ('refuse', 'warn')),
  is_active boolean not null default true,
  half_day_allowed boolean not null default true,
  documents_expected boolean not null default false,
  validation_required boolean not null default true,
  -- Effect on the annualisation: none, neutralises theoretical time, or imputed on it (R+).
  annualisation_effect text not null default 'none' check (annualisation_effect in ('none', 'neutralise', 'impute')),
  -- Missing-document reminders: deadline after the first day (hours) or after the last
  -- day (working days).
  document_deadline_hours int check (document_deadline_hours > 0),
  document_deadline_working_days_after_end int check (document_deadline_working_days_after_end > 0),
  -- Agreement rules (warnings only). Notice applies to an employee's own request.
  notice_period interval,
  notice_working_days int check (notice_working_days > 0),
  -- Parental leave: a longer notice when the leave does not follow a maternity leave.
  notice_period_long interval,
  warn_max_hours_per_absence numeric(6,2),
  warn_max_per_quarter int,
  warn_max_hours_per_year numeric(7,2),
  warn_min_duration interval,
  warn_max_duration interval,
  warn_min_seniority interval,
  position smallint not null default 0,
  constraint absence_types_hour_no_half_day check (unit = 'day' or not half_day_allowed)
);
create unique index if not exists absence_types_code_key on app_public.absence_types (lower(code));

-- « Demandable par le salarié » (issue 29): a reason the employee's own form offers. Others
-- (union mandates, employer-qualified absences, « Absence injustifiée ») are declared by the
-- encadrement or HR, who keep the full list. Written by staff at the back-office
-- (app_public.absence_type_save); read by app_public.absence_types_for_request.
-- The reference's default for a code (sql/reference/data.sql, and the databases that held the
-- reasons before the column: set once, when the column is added, never again).
create or replace function app_hidden.absence_type_requestable_default(p_code text) returns boolean
language sql immutable as $$
  select p_code is not null and p_code not in (
    -- Employer-qualified work stoppages and therapeutic part-time (HR qualifies them).
    'AT', 'ATJ', 'MP', 'TTH',
    -- Union activity on convocation: declared by the encadrement.
    'SYN_PAR', 'SYN_CON', 'SYN_ELU', 'FES',
    -- Training of the employer's plan, authorised absences granted, unjustified absence.
    'FOR', 'AANP', 'AAP', 'ABS');
$$;
comment on function app_hidden.absence_type_requestable_default(text) is
'Issue 29: the reference default of « demandable par le salarié » for a reason code: every reason but
the employer-qualified stoppages (AT, ATJ, MP, TTH), union activity (SYN_PAR, SYN_CON, SYN_ELU, FES),
the employer''s training plan (FOR), granted authorised absences (AANP, AAP) and ABS.';

do $$
begin
  if not exists (select 1 from information_schema.columns
                 where table_schema = 'app_public' and table_name = 'absence_types' and column_name = 'employee_requestable') then
    alter table app_public.absence_types add column employee_requestable boolean not null default true;
    -- The reasons already there take the reference default, once.
    update app_public.absence_types t set employee_requestable = app_hidden.absence_type_requestable_default(t.code)
    where not app_hidden.absence_type_requestable_default(t.code);
  end if;
end;
$$;
create index if not exists absence_types_category_idx on app_public.absence_types (category_id);

create table if not exists app_public.absence_type_contract_types (
  absence_type_id int not null references app_public.absence_types on delete cascade,
  contract_type_id int not null references app_public.contract_types on delete cascade,
  primary key (absence_type_id, contract_type_id)
);

create table if not exists app_public.counter_associations (
  id int generated always as identity primary key,
  absence_type_id int not null references app_public.absence_types on delete restrict,
  counter_code text not null references app_public.counter_kinds on delete restrict,
  is_active boolean not null default true,
  unique (absence_type_id, counter_code)
);
create index if not exists counter_associations_counter_idx on app_public.counter_associations (counter_code);

-- The format of a code of the shared namespace (the CHECK constraints of posts and
-- absence_types state it for every write; this is the rule the forms and the import ask).
create or replace function app_hidden.code_well_formed(p_code text) returns boolean
language sql immutable as $$ select p_code ~ '^[A-Za-z0-9][A-Za-z0-9_+\-]{0,15}$' $$;
comment on function app_hidden.code_well_formed(text) is
'Absence type and post codes: 1 to 16 letters, digits and _ + -, starting with a letter or a digit (null for null).';

-- Is a post code used by another post (p_except: the post being changed) of the establishment?
create or replace function app_hidden.post_code_used_in_establishment(p_establishment int, p_code text, p_except int default null)
returns boolean
language sql stable as $$
  select exists (select 1 from app_public.posts p
                 where p.establishment_id = p_establishment and lower(p.code) = lower(p_code) and p.id is distinct from p_except);
$$;
comment on function app_hidden.post_code_used_in_establishment(integer, text, integer) is
'Posts: a code is unique within its establishment, case-insensitively.';

-- Absence type codes and post codes share one namespace, compared case-insensitively.
-- The message refusing p_code for a row of p_table ('posts' or 'absence_types'), or null
-- when the other table holds no such code. The save functions of the back-office ask it to
-- show the clash with the other field errors; the trigger below is the guard of every write.
create or replace function app_hidden.code_namespace_clash(p_table text, p_code text) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case
    when p_table = 'posts' and exists (select 1 from app_public.absence_types t where lower(t.code) = lower(p_code))
      then format('Le code « %s » est déjà utilisé par un motif d’absence.', p_code)
    when p_table = 'absence_types' and exists (select 1 from app_public.posts p where lower(p.code) = lower(p_code))
      then format('Le code « %s » est déjà utilisé par un poste.', p_code)
  end;
$$;

-- The advisory lock on the lower-cased code makes the check safe under concurrent saves.
create or replace function app_private.tg__code_namespace() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_clash text;
begin
  if tg_op = 'UPDATE' and lower(old.code) = lower(new.code) then
    return new;
  end if;
  perform pg_advisory_xact_lock(hashtext('code-namespace:' || lower(new.code)));
  v_clash := app_hidden.code_namespace_clash(tg_table_name, new.code);
  if v_clash is not null then
    perform app_hidden.invalid('code', v_clash, 'WV010');
  end if;
  return new;
end;
$$;
create or replace trigger _200_code_namespace before insert or update of code on app_public.posts
  for each row execute function app_private.tg__code_namespace();
create or replace trigger _200_code_namespace before insert or update of code on app_public.absence_types
  for each row execute function app_private.tg__code_namespace();

-- French public holidays of a civil year, computed (Easter by the anonymous Gregorian
-- algorithm). Alsace-Moselle's extra days are not included.
create or replace function app_public.public_holidays(p_year int)
returns table (day date, name text)
language plpgsql immutable strict parallel safe as $$
declare
  a int := p_year % 19;
  b int := p_year / 100;
  c int := p_year % 100;
  d int := b / 4;
  e int := b % 4;
  f int := (b + 8) / 25;
  g int := (b - f + 1) / 3;
  h int := (19 * a + b - d - g + 15) % 30;
  i int := c / 4;
  k int := c % 4;
  l int := (32 + 2 * e + 2 * i - h - k) % 7;
  m int := (a + 11 * h + 22 * l) / 451;
  easter date := make_date(p_year, (h + l - 7 * m + 114) / 31, ((h + l - 7 * m + 114) % 31) + 1);
begin
  if p_year < 1583 or p_year > 9999 then
    raise exception using errcode = 'WV001', message = 'Année hors de la plage prise en charge (1583-9999).', detail = 'year';
  end if;
  return query values
    (make_date(p_year, 1, 1), 'Jour de l’an'),
    (easter + 1, 'Lundi de Pâques'),
    (make_date(p_year, 5, 1), 'Fête du Travail'),
    (make_date(p_year, 5, 8), 'Victoire 1945'),
    (easter + 39, 'Ascension'),
    (easter + 50, 'Lundi de Pentecôte'),
    (make_date(p_year, 7, 14), 'Fête nationale'),
    (make_date(p_year, 8, 15), 'Assomption'),
    (make_date(p_year, 11, 1), 'Toussaint'),
    (make_date(p_year, 11, 11), 'Armistice 1918'),
    (make_date(p_year, 12, 25), 'Noël');
end;
$$;
comment on function app_public.public_holidays(integer) is
'SPEC declaration rule 1: the French public holidays of a civil year, computed (Easter by the anonymous
Gregorian algorithm); the extra days of Alsace-Moselle are not included.';

create or replace function app_hidden.is_public_holiday(p_day date) returns boolean
language sql immutable strict parallel safe as $$
  select exists (select 1 from app_public.public_holidays(extract(year from p_day)::int) h where h.day = p_day);
$$;
--! EndIncluded reference/tables.sql
--! Included reference/data.sql
-- Reference data every database holds after migration (CONTRACT section 5).

insert into app_public.contract_types (code, name, is_temporary_work) values
  ('CDI', 'Contrat à durée indéterminée', false),
  ('CDD', 'Contrat à durée déterminée', false),
  ('Intérim', 'Mission d’intérim', true),
  ('Apprentissage', 'Contrat d’apprentissage', false),
  ('Stage', 'Convention de stage', false)
on conflict do nothing;

insert into app_public.counter_kinds (code, name, unit, is_consumable, position) values
  ('CP', 'Congés payés', 'day', true, 1),
  ('CT', 'Congés trimestriels', 'day', true, 2),
  ('ANC', 'Congés d’ancienneté', 'day', true, 3),
  ('JRS', 'Jours de repos supplémentaires', 'day', true, 4),
  ('CET', 'Compte épargne-temps', 'day', true, 5),
  ('FRAC', 'Jours de fractionnement', 'day', true, 6),
  ('RTT', 'Réduction du temps de travail', 'day', true, 7),
  ('JF', 'Jours fériés à récupérer', 'day', true, 8),
  ('RC', 'Repos compensateur', 'hour', true, 9),
  ('DLG_CSE', 'Heures de délégation CSE', 'hour', true, 10),
  ('DLG_DS', 'Heures de délégation syndicale', 'hour', true, 11),
  ('DLG_CS', 'Heures de conseiller du salarié', 'hour', true, 12),
  ('AN', 'Annualisation', 'hour', false, 13),
  ('HS', 'Heures supplémentaires', 'hour', false, 14)
on conflict do nothing;

-- Six canonical categories, each with its sub-categories (two levels at most).
insert into app_public.absence_categories (code, name, position) values
  ('CONGES', 'Congés', 1),
  ('MALADIE', 'Maladie et accidents', 2),
  ('FAMILLE', 'Famille', 3),
  ('REPRESENTATION', 'Représentation du personnel', 4),
  ('FORMATION', 'Formation', 5),
  ('AUTRES', 'Autres absences', 6)
on conflict do nothing;

insert into app_public.absence_categories (code, name, parent_id, position)
select s.code, s.name, p.id, s.position
from (values
  ('CONGES_ANNUELS', 'Congés annuels et conventionnels', 'CONGES', 1),
  ('CONGES_REPOS', 'Repos et récupérations', 'CONGES', 2),
  ('ARRETS', 'Arrêts de travail', 'MALADIE', 1),
  ('ENFANT_MALADE', 'Enfant malade', 'MALADIE', 2),
  ('PARENTALITE', 'Naissance et parentalité', 'FAMILLE', 1),
  ('EVENEMENTS', 'Événements familiaux', 'FAMILLE', 2),
  ('AIDANTS', 'Proches aidants', 'FAMILLE', 3),
  ('DELEGATION', 'Heures de délégation', 'REPRESENTATION', 1),
  ('SYNDICAL', 'Activité syndicale', 'REPRESENTATION', 2),
  ('FORMATION_PLAN', 'Plan de développement des compétences', 'FORMATION', 1),
  ('FORMATION_SALARIE', 'Formation à l’initiative du salarié', 'FORMATION', 2),
  ('SANS_SOLDE', 'Congés non rémunérés', 'AUTRES', 1),
  ('AUTORISATIONS', 'Autorisations d’absence', 'AUTRES', 2),
  ('CIVIQUE', 'Obligations civiques et citoyennes', 'AUTRES', 3)
) as s(code, name, parent_code, position)
join app_public.absence_categories p on p.code = s.parent_code
on conflict do nothing;

-- 52 reasons; « demandable par le salarié » from app_hidden.absence_type_requestable_default
-- (sql/reference/tables.sql). Columns: code, name, sub-category, unit, paid, splittable, half-day allowed,
-- annual cap, overrun, documents expected, validation required, annualisation effect,
-- document deadline (hours after the first day | working days after the last day),
-- notice (interval | working days | long interval), warnings (hours per absence, per
-- quarter, hours per year, min and max duration, min seniority).
insert into app_public.absence_types (
  code, name, category_id, unit, paid, splittable, half_day_allowed, annual_cap, cap_overrun,
  documents_expected, validation_required, annualisation_effect,
  document_deadline_hours, document_deadline_working_days_after_end,
  notice_period, notice_working_days, notice_period_long,
  warn_max_hours_per_absence, warn_max_per_quarter, warn_max_hours_per_year,
  warn_min_duration, warn_max_duration, warn_min_seniority, position, employee_requestable)
select t.code, t.name, c.id, t.unit, t.paid, t.splittable, t.half_day, t.cap, t.overrun,
       t.docs, t.validation, t.annualisation, t.deadline_hours, t.deadline_days_after_end,
       t.notice::interval, t.notice_working_days, t.notice_long::interval,
       t.max_hours, t.per_quarter, t.hours_per_year, t.min_duration::interval, t.max_duration::interval,
       t.min_seniority::interval, t.position, app_hidden.absence_type_requestable_default(t.code)
from (values
  -- code, name, category, unit, paid, splittable, half_day, cap, overrun, docs, validation, annualisation,
  -- deadline_hours, deadline_days_after_end, notice, notice_working_days, notice_long,
  -- max_hours, per_quarter, hours_per_year, min_duration, max_duration, min_seniority, position
  ('CP', 'Congés payés', 'CONGES_ANNUELS', 'day', true, true, false, null::numeric, 'refuse', false, true, 'none',
   null::int, null::int, '1 month', null::int, null, null::numeric, null::int, null::numeric, null, null, null, 1),
  ('CT', 'Congés trimestriels', 'CONGES_ANNUELS', 'day', true, true, false, null, 'refuse', false, true, 'none',
   null, null, null, null, null, null, null, null, null, null, null, 2),
  ('ANC', 'Congés d’ancienneté', 'CONGES_ANNUELS', 'day', true, true, false, null, 'refuse', false, true, 'none',
   null, null, null, null, null, null, null, null, null, null, null, 3),
  ('CET', 'Congé épargne-temps', 'CONGES_ANNUELS', 'day', true, true, false, null, 'refuse', false, true, 'none',
   null, null, null, null, null, null, null, null, null, null, null, 4),
  ('FRAC', 'Jours de fractionnement', 'CONGES_ANNUELS', 'day', true, true, true, null, 'refuse', false, true, 'none',
   null, null, null, null, null, null, null, null, null, null, null, 5),
  ('JRS', 'Jours de repos supplémentaires', 'CONGES_REPOS', 'day', true, true, false, null, 'refuse', false, true, 'none',
   null, null, null, null, null, null, null, null, null, null, null, 6),
  ('RTT', 'Réduction du temps de travail', 'CONGES_REPOS', 'day', true, true, true, null, 'refuse', false, true, 'none',
   null, null, null, null, null, null, null, null, null, null, null, 7),
  ('RJF', 'Récupération de jour férié', 'CONGES_REPOS', 'day', true, true, true, null, 'refuse', false, true, 'none',
   null, null, null, null, null, null, null, null, null, null, null, 8),
  ('R+', 'Repos plus', 'CONGES_REPOS', 'day', true, true, false, null, 'refuse', false, true, 'impute',
   null, null, null, null, null, null, null, null, null, null, null, 9),
  ('RC', 'Repos compensateur', 'CONGES_REPOS', 'hour', true, true, false, null, 'refuse', false, true, 'none',
   null, null, null, null, null, null, null, null, null, null, null, 10),
  ('MAL', 'Maladie', 'ARRETS', 'day', true, true, true, null, 'refuse', true, false, 'neutralise',
   48, null, null, null, null, null, null, null, null, null, null, 11),
  ('AT', 'Accident du travail', 'ARRETS', 'day', true, true, true, null, 'refuse', true, false, 'neutralise',
   48, null, null, null, null, null, null, null, null, null, null, 12),
  ('ATJ', 'Accident de trajet', 'ARRETS', 'day', true, true, true, null, 'refuse', true, false, 'neutralise',
   48, null, null, null, null, null, null, null, null, null, null, 13),
  ('MP', 'Maladie professionnelle', 'ARRETS', 'day', true, true, true, null, 'refuse', true, false, 'neutralise',
   48, null, null, null, null, null, null, null, null, null, null, 14),
  ('TTH', 'Temps partiel thérapeutique', 'ARRETS', 'day', true, true, true, null, 'refuse', true, false, 'neutralise',
   48, null, null, null, null, null, null, null, null, null, null, 15),
  ('HOS', 'Hospitalisation', 'ARRETS', 'day', true, true, true, null, 'refuse', true, false, 'neutralise',
   48, null, null, null, null, null, null, null, null, null, null, 16),
  ('ENF', 'Enfant malade', 'ENFANT_MALADE', 'day', true, true, true, null, 'refuse', true, true, 'neutralise',
   48, null, null, null, null, null, null, null, null, null, null, 17),
  ('MAT', 'Congé de maternité', 'PARENTALITE', 'day', true, false, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 18),
  ('PAT', 'Congé de paternité et d’accueil de l’enfant', 'PARENTALITE', 'day', true, true, false, null, 'refuse', true, true, 'neutralise',
   null, null, '1 month', null, null, null, null, null, null, null, null, 19),
  ('NAI', 'Congé de naissance', 'PARENTALITE', 'day', true, true, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 20),
  ('ADO', 'Congé d’adoption', 'PARENTALITE', 'day', true, false, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 21),
  ('PAR', 'Congé parental d’éducation', 'PARENTALITE', 'day', false, true, false, null, 'refuse', false, true, 'neutralise',
   null, null, '1 month', null, '2 months', null, null, null, null, '1 year', '1 year', 22),
  ('MAR', 'Mariage ou PACS du salarié', 'EVENEMENTS', 'day', true, false, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 23),
  ('MAE', 'Mariage d’un enfant', 'EVENEMENTS', 'day', true, false, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 24),
  ('DEC', 'Décès d’un proche', 'EVENEMENTS', 'day', true, false, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 25),
  ('DEE', 'Décès d’un enfant', 'EVENEMENTS', 'day', true, true, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 26),
  ('HAN', 'Annonce du handicap d’un enfant', 'EVENEMENTS', 'day', true, false, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 27),
  ('PRA', 'Congé de proche aidant', 'AIDANTS', 'hour', false, true, false, null, 'refuse', true, true, 'neutralise',
   null, 2, '72 hours', null, null, null, null, 21, null, null, null, 28),
  ('PRE', 'Congé de présence parentale', 'AIDANTS', 'day', false, true, true, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 29),
  ('SOL', 'Congé de solidarité familiale', 'AIDANTS', 'day', false, true, true, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 30),
  ('DLG_CSE', 'Délégation CSE', 'DELEGATION', 'hour', true, true, false, null, 'refuse', false, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 31),
  ('DLG_SEC', 'Délégation secrétaire du CSE', 'DELEGATION', 'hour', true, true, false, null, 'refuse', false, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 32),
  ('DLG_TRE', 'Délégation trésorier du CSE', 'DELEGATION', 'hour', true, true, false, null, 'refuse', false, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 33),
  ('DLG_RP', 'Délégation représentant de proximité', 'DELEGATION', 'hour', true, true, false, null, 'refuse', false, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 34),
  ('DLG_DS', 'Délégation délégué syndical', 'DELEGATION', 'hour', true, true, false, null, 'refuse', false, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 35),
  ('CNS_SAL', 'Conseiller du salarié', 'DELEGATION', 'hour', true, true, false, null, 'refuse', false, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 36),
  ('SYN_PAR', 'Réunion paritaire', 'SYNDICAL', 'day', true, true, true, null, 'refuse', false, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 37),
  ('SYN_CON', 'Congrès syndical', 'SYNDICAL', 'day', true, true, true, null, 'refuse', false, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 38),
  ('SYN_ELU', 'Mandat électif syndical', 'SYNDICAL', 'day', true, true, true, 10, 'refuse', false, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 39),
  ('FES', 'Formation économique, sociale et syndicale', 'SYNDICAL', 'day', true, true, true, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 40),
  ('FOR', 'Formation', 'FORMATION_PLAN', 'day', true, true, true, null, 'refuse', false, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 41),
  ('EXA', 'Examen', 'FORMATION_PLAN', 'day', true, true, true, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 42),
  ('CPF', 'Formation CPF sur le temps de travail', 'FORMATION_SALARIE', 'day', true, true, true, null, 'refuse', true, true, 'neutralise',
   null, null, '60 days', null, null, null, null, null, null, null, null, 43),
  ('PTP', 'Projet de transition professionnelle', 'FORMATION_SALARIE', 'day', true, true, true, null, 'refuse', true, true, 'neutralise',
   null, null, '120 days', null, null, null, null, null, null, null, null, 44),
  ('VAE', 'Validation des acquis de l’expérience', 'FORMATION_SALARIE', 'day', true, true, true, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 45),
  ('CSS', 'Congé sans solde', 'SANS_SOLDE', 'day', false, true, true, null, 'refuse', false, true, 'none',
   null, null, null, null, null, null, null, null, null, '3 months', null, 46),
  ('SAB', 'Congé sabbatique', 'SANS_SOLDE', 'day', false, false, false, null, 'refuse', false, true, 'none',
   null, null, null, null, null, null, null, null, '6 months', '11 months', null, 47),
  ('AANP', 'Absence autorisée non payée', 'SANS_SOLDE', 'day', false, true, true, null, 'refuse', false, true, 'none',
   null, null, null, null, null, null, null, null, null, null, null, 48),
  ('AAP', 'Absence autorisée payée', 'AUTORISATIONS', 'day', true, true, true, null, 'refuse', false, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 49),
  ('ABS', 'Absence injustifiée', 'AUTORISATIONS', 'day', false, true, true, null, 'refuse', false, false, 'none',
   null, null, null, null, null, null, null, null, null, null, null, 50),
  ('DON', 'Don du sang', 'CIVIQUE', 'hour', true, true, false, null, 'refuse', true, true, 'neutralise',
   48, null, null, 10, null, 1.5, 1, null, null, null, null, 51),
  ('JUR', 'Juré d’assises ou convocation judiciaire', 'CIVIQUE', 'day', true, true, true, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 52)
) as t(code, name, category, unit, paid, splittable, half_day, cap, overrun, docs, validation, annualisation,
       deadline_hours, deadline_days_after_end, notice, notice_working_days, notice_long,
       max_hours, per_quarter, hours_per_year, min_duration, max_duration, min_seniority, position)
join app_public.absence_categories c on c.code = t.category
on conflict do nothing;

-- Contract types concerned (no row: every contract).
insert into app_public.absence_type_contract_types (absence_type_id, contract_type_id)
select t.id, ct.id
from (values
  ('ANC', array['CDI', 'CDD']),
  ('CT', array['CDI', 'CDD']),
  ('JRS', array['CDI', 'CDD']),
  ('CET', array['CDI']),
  ('SAB', array['CDI']),
  ('PTP', array['CDI', 'CDD']),
  ('PAR', array['CDI', 'CDD', 'Apprentissage'])
) as x(code, contract_codes)
join app_public.absence_types t on t.code = x.code
join app_public.contract_types ct on ct.code = any (x.contract_codes)
on conflict do nothing;

-- 15 counter associations.
insert into app_public.counter_associations (absence_type_id, counter_code)
select t.id, x.counter_code
from (values
  ('CP', 'CP'), ('CT', 'CT'), ('ANC', 'ANC'), ('JRS', 'JRS'), ('CET', 'CET'),
  ('FRAC', 'FRAC'), ('RTT', 'RTT'), ('RJF', 'JF'), ('RC', 'RC'),
  ('DLG_CSE', 'DLG_CSE'), ('DLG_SEC', 'DLG_CSE'), ('DLG_TRE', 'DLG_CSE'), ('DLG_RP', 'DLG_CSE'),
  ('DLG_DS', 'DLG_DS'), ('CNS_SAL', 'DLG_CS')
) as x(type_code, counter_code)
join app_public.absence_types t on t.code = x.type_code
on conflict do nothing;
--! EndIncluded reference/data.sql
--! Included notifications/tables.sql
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
--! EndIncluded notifications/tables.sql
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
  ('team_establishment', 'Établissement d’une équipe'),
  ('event', 'Événement'),
  ('event_participant', 'Participant à un événement'),
  ('on_call_period', 'Période d’astreinte'),
  ('on_call_period_establishment', 'Établissement d’une astreinte'),
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
--! Included jobs/tables.sql
-- Scheduled jobs (graphile-worker, worker/crontab): their local schedule, the record of
-- their runs (one per job and period, so that a job never runs twice for a period) and the
-- idempotence record of the missing-document reminders.

-- When a job is meant to run, in local time. graphile-worker's cron runs in UTC: the
-- crontab schedules both UTC instants that can be the local time (winter and summer), and
-- app_private.job_is_due keeps the one whose local time is the intended one.
create table if not exists app_private.job_schedules (
  job text primary key check (job ~ '^[a-z][a-z0-9_]{1,62}$'),
  local_time time not null check (local_time = date_trunc('minute', local_time)),
  -- ISO day of the week (7 = Sunday) for a weekly job; null for a daily job.
  isodow smallint check (isodow between 1 and 7),
  time_zone text not null default 'Europe/Paris',
  description text not null
);
insert into app_private.job_schedules (job, local_time, isodow, description) values
  ('send_missing_document_reminders', '05:37', null, 'Relances des justificatifs manquants, chaque jour à 5 h 37'),
  ('purge_audit_log', '03:47', 7, 'Purge du journal d’audit au-delà de la rétention, le dimanche à 3 h 47'),
  ('consume_started_absences', '00:07', null, 'Passage des absences commencées de Planifiés à Pris, chaque jour à 0 h 07')
on conflict do nothing;

create table if not exists app_private.job_runs (
  id bigint generated always as identity primary key,
  job text not null check (job ~ '^[a-z][a-z0-9_]{1,62}$'),
  -- A scheduled run: the local date of its scheduled instant (one run per job and date).
  -- A run by hand (npm run job -- NAME): 'manual:' and its start time.
  period text not null,
  trigger text not null check (trigger in ('cron', 'manual')),
  scheduled_at timestamptz,
  started_at timestamptz not null default clock_timestamp(),
  finished_at timestamptz,
  result jsonb,
  unique (job, period)
);
create index if not exists job_runs_started_idx on app_private.job_runs (job, started_at desc);

-- Reminders already sent: one row per absence and kind of reminder; a second run of the
-- job finds the row and sends nothing twice.
create table if not exists app_private.reminders_sent (
  absence_id int not null references app_public.absences on delete cascade,
  kind text not null check (kind ~ '^[a-z][a-z0-9_]{1,62}$'),
  deadline_at timestamptz,
  sent_at timestamptz not null default app_hidden.now(),
  job_run_id bigint references app_private.job_runs on delete set null,
  primary key (absence_id, kind)
);
create index if not exists reminders_sent_job_run_idx on app_private.reminders_sent (job_run_id);
--! EndIncluded jobs/tables.sql
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
                 'Si vous n’êtes pas à l’origine de cette demande, ignorez ce message.',
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
    perform app_hidden.invalid('token', 'Ce lien n’est plus valide : il a expiré ou a déjà servi. Demandez un nouveau lien.', 'WV030');
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
    perform app_hidden.invalid('token', 'Ce lien n’est plus valide : il a expiré ou a déjà servi. Demandez un nouveau lien.', 'WV030');
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
           -- the person, for the header: the employee's name, else the account's username
           'display_name', coalesce((select e.first_name || ' ' || e.last_name from app_public.employees e where e.id = a.employee_id),
                                    a.username),
           -- every role held today, in display precedence (the header names them all: a payroll
           -- officer holding Salarié and Service Paie is not shown as « Salarié » only)
           'roles', coalesce((select jsonb_agg(x.name order by x.precedence)
                              from (select distinct r.name, r.precedence
                                    from app_public.role_attributions ra
                                    join app_public.roles r on r.id = ra.role_id
                                    where ra.account_id = a.id
                                      and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date)) x), '[]'::jsonb),
           'can_view_absence_queue', app_hidden.current_account_has('absences.view_absence_queue'),
           'can_decide_absences', app_hidden.current_account_has('absences.decide_absence'),
           'can_decide_shift_changes', app_hidden.current_account_has('planning.decide_shift_change'),
           'can_view_payroll', app_hidden.current_account_has('employee.view_payroll'),
           -- The decisions the account takes itself, which it may delegate (issue 30): a delegate
           -- decides by delegation but never delegates what it received.
           'can_delegate_absences', app_hidden.permission_in(app_hidden.account_own_permission_codes(a.id),
                                                             'absences.decide_absence'),
           'can_delegate_shift_changes', app_hidden.permission_in(app_hidden.account_own_permission_codes(a.id),
                                                                  'planning.decide_shift_change'),
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
'SPEC Account, GET /api/auth/me/: the signed-in account with employee_id, display_name (the employee''s
name, else the username), the role of highest display precedence among those held today, every role held
today (roles, in that precedence), and the interface hints can_view_absence_queue, can_decide_absences,
can_decide_shift_changes, can_view_payroll, can_delegate_absences, can_delegate_shift_changes (the
decisions held by the account itself, which it may delegate) and can_impersonate (the API enforces the
rules anyway).';

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
      'Vous n’avez pas le droit d’ouvrir ou de fermer ce compte.', 'WF011');
  end if;
  if not exists (select 1 from app_public.employees e where e.id = p_employee_id) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  select * into v_account from app_private.account_of_employee(p_employee_id);
  if v_account.id is null then
    perform app_hidden.not_found('Ce salarié n’a pas de compte.');
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
  -- A decision by delegation (sql/delegations/api.sql): « X, par délégation de Y ».
  left join lateral (select a.username, coalesce(e.first_name || ' ' || e.last_name, a.username)
                                        || coalesce(', par délégation de ' || (
                                             select coalesce(e2.first_name || ' ' || e2.last_name, a2.username)
                                             from app_public.accounts a2 left join app_public.employees e2 on e2.id = a2.employee_id
                                             where a2.id = nullif(current_setting('app.on_behalf_of', true), '')::int), '')
                                        as display_name
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
    message = 'Le journal d’audit est en ajout seul : ses lignes ne se modifient pas et ne sont supprimées que par la purge de rétention.';
end;
$$;
create or replace trigger _200_append_only before update or delete on app_private.audit_log
  for each row execute function app_private.tg_audit_log__append_only();
create or replace function app_private.tg_audit_log__no_truncate() returns trigger
language plpgsql volatile as $$
begin
  raise exception using errcode = 'WF901',
    message = 'Le journal d’audit est en ajout seul : il ne se vide pas.';
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
--! Included notifications/functions.sql
-- The notification service: in-app notifications created inside the caller's transaction
-- (a failure aborts the business write: nothing here catches an error), the routing of
-- filings to their deciders, the API of GET /api/notifications/ and the e-mail outbox.

-- The account of an employee record (recipient of "validée"/"refusée" notifications).
create or replace function app_private.employee_account_id(p_employee_id int) returns int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select a.id from app_public.accounts a where a.employee_id = p_employee_id);
end;
$$;

-- « de » before a name, elided before a vowel (issue 29 point 5): « d’Inès Boyer », « d’Yves
-- Martin », « de Yann Le Goff », « de Bruno Petit ». The typographic apostrophe, as every screen writes it.
create or replace function app_hidden.de_name(p_name text) returns text
language sql immutable as $$
  select case when p_name ~* '^([aeiouàâäéèêëîïôöùûüœæ]|y[^aeiouy])' then 'd’' else 'de ' end || p_name;
$$;

-- Display name of an employee, for notification bodies.
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_hidden.employee_name(p_employee_id int) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select e.first_name || ' ' || e.last_name from app_public.employees e where e.id = p_employee_id);
end;
$$;

-- Creates one in-app notification for an account, in the caller's transaction.
create or replace function app_private.notify(p_account_id int, p_title text, p_body text, p_level text default 'info',
                                   p_model text default null, p_target_id bigint default null)
returns bigint
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id bigint;
begin
  -- Programming errors of a caller: they abort the write (500), they are not user input.
  if p_account_id is null then
    raise exception 'notify: the recipient account is required';
  end if;
  if nullif(btrim(p_title), '') is null then
    raise exception 'notify: the title is required';
  end if;
  if p_level is null or p_level not in ('info', 'warning', 'error') then
    raise exception 'notify: level must be info, warning or error (got %)', p_level;
  end if;
  insert into app_public.notifications (account_id, title, body, level, model, target_id)
  values (p_account_id, p_title, coalesce(p_body, ''), p_level, p_model, p_target_id)
  returning id into v_id;
  return v_id;
end;
$$;

-- The same notification for several accounts, in one statement (in the order given): a filing
-- notifies its deciders at once instead of one call and one insert each. Returns how many.
create or replace function app_private.notify_each(p_account_ids int[], p_title text, p_body text, p_level text default 'info',
                                        p_model text default null, p_target_id bigint default null)
returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_count int;
begin
  -- Programming errors of a caller, as in notify.
  if array_position(p_account_ids, null) is not null then
    raise exception 'notify_each: a recipient account is null';
  end if;
  if nullif(btrim(p_title), '') is null then
    raise exception 'notify_each: the title is required';
  end if;
  if p_level is null or p_level not in ('info', 'warning', 'error') then
    raise exception 'notify_each: level must be info, warning or error (got %)', p_level;
  end if;
  insert into app_public.notifications (account_id, title, body, level, model, target_id)
  select r.account_id, p_title, coalesce(p_body, ''), p_level, p_model, p_target_id
  from unnest(p_account_ids) with ordinality as r(account_id, ord)
  order by r.ord;
  get diagnostics v_count = row_count;
  return v_count;
end;
$$;

-- Deciders of a filing about an employee on a date (p_on, the day concerned): active
-- accounts, never the author, that
--   * may decide it (p_decide_permission held through a role attribution active today or
--     explicitly, on a perimeter that covers the employee now; a superuser's flag alone never
--     makes it a decider, SPEC Events rule 1: a superuser counts only through a role), and
--   * whose queue shows the employee (absences.view_absence_queue on the same perimeter:
--     an account that can decide but cannot read the queue is not a decider).
-- attached = one of its restricted role attributions granting p_decide_permission (or an
-- on-call period active now, which extends such a role) covers an establishment of the
-- employee: main workplace, secondary workplace, or a team of the day (p_on or today).
-- The others (a role without establishments, e.g. an Admin of the whole association, or an
-- explicit permission, which carries no establishment restriction) are unattached.
-- Two statements (docs/architecture.md, Performance notes): the employee's establishments,
-- then the candidates with both perimeters tested on the employee, set-wise: the scope rule of
-- app_hidden.permission_scopes read for these few accounts and this one employee
-- (test/db/60-perimeter-shortcuts.sql checks it against app_hidden.may's definition).
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.decider_candidates(p_employee_id int, p_on date, p_decide_permission text,
                                               p_author_account_id int)
returns table (account_id int, attached boolean)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
declare
  v_at timestamptz := app_hidden.now();
  v_today date := app_hidden.business_date(v_at);
  v_exists boolean;
  -- The employee's establishments today (what app_hidden.may(decider, permission, employee,
  -- now) reads), and on either day (p_on or today: what attaches a decider).
  v_now_establishments int[];
  v_establishments int[];
  -- The permissions an on-call period extends (SPEC Permissions rule 9, as in permission_scopes).
  v_on_call_extends boolean := p_decide_permission in ('absences.view_absence_queue', 'absences.decide_absence',
                                                       'planning.decide_shift_change');
begin
  if p_employee_id is null then
    return;
  end if;
  select exists (select 1 from app_public.employees e where e.id = p_employee_id),
         coalesce(array_agg(x.establishment_id) filter (where x.today), '{}'),
         coalesce(array_agg(x.establishment_id), '{}')
    into v_exists, v_now_establishments, v_establishments
  from (select y.establishment_id, bool_or(y.today) as today
        from (select e.main_establishment_id as establishment_id, true as today
              from app_public.employees e
              where e.id = p_employee_id and e.main_establishment_id is not null
              union all
              select ses.establishment_id, true
              from app_public.employee_secondary_establishments ses
              where ses.employee_id = p_employee_id
              union all
              select te.establishment_id, app_hidden.date_in(v_today, ta.start_date, ta.end_date)
              from app_public.team_assignments ta
              join app_public.team_establishments te on te.team_id = ta.team_id
              where ta.employee_id = p_employee_id
                and (app_hidden.date_in(v_today, ta.start_date, ta.end_date)
                     or app_hidden.date_in(coalesce(p_on, v_today), ta.start_date, ta.end_date))) y
        group by y.establishment_id) x;
  return query
  with candidates as (
    -- The accounts whose decision perimeter can cover the employee, found from the
    -- attributions of the roles granting the decision (and explicit permissions), not by
    -- testing every account: an attribution of the whole association (or of a superuser), or
    -- one on an establishment of the employee, or extended to one by an on-call period. The
    -- perimeter checks below run on them only (a handful, whatever the number of managers).
    select ra.account_id
    from app_public.role_permissions rp
    join app_public.roles r on r.id = rp.role_id
    -- per granting role, its attributions through the role index: the Salarié attribution of
    -- every employee is never read
    cross join lateral (select x.id, x.account_id, x.start_date, x.end_date
                        from app_public.role_attributions x
                        where x.role_id = rp.role_id offset 0) ra
    where rp.permission_code = p_decide_permission
      and app_hidden.date_in(v_today, ra.start_date, ra.end_date)
      and (not r.opens_manager_workspace
           or not exists (select 1 from app_public.role_attribution_establishments rae
                          where rae.attribution_id = ra.id)
           or exists (select 1 from app_public.role_attribution_establishments rae
                      where rae.attribution_id = ra.id
                        and rae.establishment_id = any (v_now_establishments))
           or exists (select 1 from app_public.on_call_periods op
                      join app_public.on_call_period_establishments ope on ope.period_id = op.id
                      where op.account_id = ra.account_id and op.start_at <= v_at and v_at < op.end_at
                        and ope.establishment_id = any (v_now_establishments))
           or exists (select 1 from app_public.accounts x where x.id = ra.account_id and x.is_superuser))
    union
    select ap.account_id
    from app_public.account_permissions ap
    where ap.permission_code = p_decide_permission
      and not (select x.is_superuser from app_public.accounts x where x.id = ap.account_id)
  ),
  deciders as (
    -- Active, never the author; one primary-key lookup per candidate.
    select a.id, a.is_superuser
    from candidates c
    cross join lateral (select a.id, a.is_active, a.is_superuser from app_public.accounts a
                        where a.id = c.account_id offset 0) a
    where a.is_active and c.account_id is distinct from p_author_account_id
  ),
  grants as (
    -- Per decider, its role attributions active today granting the decision (d_) or the queue
    -- (q_), read as permission_scopes does: "open" (a role outside the manager workspace, or
    -- without establishments) covers the whole association; a restricted one covers its
    -- establishments, today's of the employee (here) or those of either day (attached).
    select ra.account_id,
           bool_or(rp.permission_code = p_decide_permission) as d_granted,
           bool_or(rp.permission_code = p_decide_permission
                   and (not r.opens_manager_workspace or rae.establishment_id is null)) as d_open,
           bool_or(rp.permission_code = p_decide_permission
                   and rae.establishment_id = any (v_now_establishments)) as d_here,
           bool_or(rp.permission_code = p_decide_permission and r.opens_manager_workspace
                   and rae.establishment_id is not null) as d_restricted,
           bool_or(rp.permission_code = p_decide_permission and r.opens_manager_workspace
                   and rae.establishment_id = any (v_establishments)) as d_attached,
           bool_or(rp.permission_code = 'absences.view_absence_queue') as q_granted,
           bool_or(rp.permission_code = 'absences.view_absence_queue'
                   and (not r.opens_manager_workspace or rae.establishment_id is null)) as q_open,
           bool_or(rp.permission_code = 'absences.view_absence_queue'
                   and rae.establishment_id = any (v_now_establishments)) as q_here
    from deciders d
    -- its attributions through the account index (offset 0: whatever the estimates)
    cross join lateral (select x.id, x.role_id, x.account_id, x.start_date, x.end_date
                        from app_public.role_attributions x where x.account_id = d.id offset 0) ra
    join app_public.role_permissions rp on rp.role_id = ra.role_id
                                       and rp.permission_code in (p_decide_permission, 'absences.view_absence_queue')
    join app_public.roles r on r.id = ra.role_id
    -- its establishments through the primary key (offset 0: not a scan of every attribution's)
    left join lateral (select x.establishment_id from app_public.role_attribution_establishments x
                       where x.attribution_id = ra.id offset 0) rae on true
    where app_hidden.date_in(v_today, ra.start_date, ra.end_date)
    group by ra.account_id
  ),
  scoped as (
    select d.id, g.*,
           d.is_superuser or exists (select 1 from app_public.account_permissions ap
                                     where ap.account_id = d.id and ap.permission_code = p_decide_permission
                                     offset 0) as d_explicit,
           d.is_superuser or exists (select 1 from app_public.account_permissions ap
                                     where ap.account_id = d.id and ap.permission_code = 'absences.view_absence_queue'
                                     offset 0) as q_explicit,
           oc.on_call_now, oc.on_call_either
    from deciders d
    left join grants g on g.account_id = d.id
    -- Its on-call periods active now, on the employee's establishments.
    cross join lateral (select coalesce(bool_or(ope.establishment_id = any (v_now_establishments)), false) as on_call_now,
                               coalesce(bool_or(ope.establishment_id = any (v_establishments)), false) as on_call_either
                        from app_public.on_call_periods op
                        join app_public.on_call_period_establishments ope on ope.period_id = op.id
                        where op.account_id = d.id and op.start_at <= v_at and v_at < op.end_at) oc
  )
  select s.id,
         coalesce(s.d_attached, false) or (coalesce(s.d_restricted, false) and s.on_call_either)
  from scoped s
  where ((s.d_explicit or coalesce(s.d_open, false)) and v_exists
         or coalesce(s.d_here, false)
         or (coalesce(s.d_granted, false) and v_on_call_extends and s.on_call_now))
    and ((s.q_explicit or coalesce(s.q_open, false)) and v_exists
         or coalesce(s.q_here, false)
         or (coalesce(s.q_granted, false) and s.on_call_now));
end;
$$;

-- The accounts to notify of a filing: the attached deciders, else the unattached ones, with the
-- delegates of those who delegated and without those away (app_private.route_filing_with_delegations).
create or replace function app_private.route_deciders(p_employee_id int, p_on date, p_decide_permission text,
                                           p_author_account_id int)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- Issue 30: presence and delegations (sql/delegations/routing.sql) on top of the SPEC routing.
  return query select app_private.route_filing_with_delegations(p_employee_id, p_on, p_decide_permission,
                                                                 p_author_account_id);
end;
$$;

-- Who hears of a filing nobody can decide: every Admin, else RH n1 and RH n2, else the
-- superusers (the author is added by notify_filing). Active accounts, roles active today.
create or replace function app_private.orphan_filing_recipients() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := app_hidden.today();
begin
  return query
  select distinct ra.account_id from app_public.role_attributions ra
  join app_public.roles r on r.id = ra.role_id
  join app_public.accounts a on a.id = ra.account_id
  where a.is_active and r.name = 'Admin' and app_hidden.date_in(v_today, ra.start_date, ra.end_date);
  if found then return; end if;
  return query
  select distinct ra.account_id from app_public.role_attributions ra
  join app_public.roles r on r.id = ra.role_id
  join app_public.accounts a on a.id = ra.account_id
  where a.is_active and r.name in ('RH n1', 'RH n2') and app_hidden.date_in(v_today, ra.start_date, ra.end_date);
  if found then return; end if;
  return query select a.id from app_public.accounts a where a.is_active and a.is_superuser;
end;
$$;

-- The cause written in a "sans valideur" notification.
create or replace function app_private.orphan_filing_cause(p_employee_id int, p_on date, p_decide_permission text,
                                                p_author_account_id int)
returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case
    when p_author_account_id is not null
         and exists (select 1 from app_private.decider_candidates(p_employee_id, p_on, p_decide_permission, null) c
                     where c.account_id = p_author_account_id)
    then 'Cause : l’auteur de la demande est le seul valideur possible, et personne ne décide sa propre demande.'
    else format('Cause : aucun compte actif ne peut à la fois voir et décider les demandes concernant %s (%s).',
                coalesce(app_hidden.employee_name(p_employee_id), 'ce salarié'),
                coalesce('établissements : ' || (select string_agg(e.name, ', ' order by e.name)
                                                  from app_public.establishments e
                                                  where e.id in (select app_hidden.employee_establishments(p_employee_id, p_on))),
                         'rattaché à aucun établissement'))
  end;
$$;

-- Notifies a filing and returns has_recipient. With deciders: each receives
-- (p_title, p_body). Without: the author and the fallback recipients (every Admin, else
-- RH n1 and n2, else the superusers) receive (p_orphan_title, p_orphan_body followed by the
-- cause), and the caller learns false. Any failure aborts the caller's write.
create or replace function app_private.notify_filing(p_employee_id int, p_on date, p_decide_permission text,
                                          p_author_account_id int, p_title text, p_body text,
                                          p_orphan_title text, p_orphan_body text,
                                          p_model text, p_target_id bigint)
returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_recipient int;
  v_body text;
begin
  if app_private.notify_each(array(select app_private.route_deciders(p_employee_id, p_on, p_decide_permission,
                                                                     p_author_account_id)),
                             p_title, p_body, 'info', p_model, p_target_id) > 0 then
    return true;
  end if;
  v_body := concat_ws(E'\n', nullif(btrim(p_orphan_body), ''),
                      app_private.orphan_filing_cause(p_employee_id, p_on, p_decide_permission, p_author_account_id));
  for v_recipient in
    select r from (select p_author_account_id as r union select app_private.orphan_filing_recipients()) x
    where r is not null
    order by r
  loop
    perform app_private.notify(v_recipient, p_orphan_title, v_body, 'warning', p_model, p_target_id);
  end loop;
  return false;
end;
$$;

-- Notifies every decider whose queue shows the employee (same routing), e.g. a cancellation
-- request. Returns the number of recipients.
create or replace function app_private.notify_deciders(p_employee_id int, p_on date, p_decide_permission text,
                                            p_author_account_id int, p_title text, p_body text,
                                            p_model text, p_target_id bigint)
returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_private.notify_each(array(select app_private.route_deciders(p_employee_id, p_on, p_decide_permission,
                                                                         p_author_account_id)),
                                 p_title, p_body, 'info', p_model, p_target_id);
end;
$$;

-- ---------------------------------------------------------------------------------------
-- API: GET /api/notifications/ and POST /api/notifications/<id>/read/

create or replace function app_hidden.notification_json(p_notification app_public.notifications) returns jsonb
language sql immutable as $$
  select jsonb_build_object(
    'id', p_notification.id,
    'title', p_notification.title,
    'body', p_notification.body,
    'level', p_notification.level,
    'created_at', p_notification.created_at,
    'read_at', p_notification.read_at,
    'kind', p_notification.kind,
    'path', p_notification.path);
$$;

-- The caller's notifications, newest first; p_unread true = unread only, false = read only.
create or replace function app_public.notifications_list(p_unread boolean default null, p_page int default 1,
                                              p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with mine as (
    select n.* from app_public.notifications n
    where n.account_id = app_hidden.current_account_id()   -- RLS says the same (select_own)
      and (p_unread is null or (n.read_at is null) = p_unread)
  )
  select jsonb_build_object(
    'count', (select count(*) from mine),
    'results', coalesce((
      select jsonb_agg(app_hidden.notification_json(p) order by p.created_at desc, p.id desc)
      from (select * from mine order by created_at desc, id desc
            limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) p), '[]'::jsonb));
$$;
comment on function app_public.notifications_list(boolean, integer, integer) is
'SPEC Notifications: one page of the caller''s in-app notifications, newest first; p_unread true keeps
the unread ones, false the read ones.';

-- Marks one of the caller's notifications read (idempotent: the first reading time stays)
-- and returns it. Another account's notification is not found.
create or replace function app_public.notification_mark_read(p_id bigint) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.notifications;
begin
  update app_public.notifications n set read_at = coalesce(n.read_at, app_hidden.now())
  where n.id = p_id and n.account_id = app_hidden.current_account_id()
  returning n.* into v;
  if not found then
    perform app_hidden.not_found('Notification introuvable.', 'WN601');
  end if;
  return app_hidden.notification_json(v);
end;
$$;
comment on function app_public.notification_mark_read(bigint) is
'SPEC Notifications: marks one of the caller''s notifications read (idempotent: the first reading time
stays) and returns it; another account''s notification is not found.';

-- ---------------------------------------------------------------------------------------
-- E-mail outbox. Rows are inserted by the business transactions (password reset,
-- invitations); the worker task drain_email_outbox delivers them.

-- Enqueues the drain job in the same transaction as the insert, so that mails leave
-- promptly; skipped silently when graphile-worker's schema is not installed (its
-- migrations run when the worker starts, and the worker drains the outbox at start).
create or replace function app_private.tg_email_outbox__enqueue() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if to_regnamespace('graphile_worker') is not null then
    perform graphile_worker.add_job('drain_email_outbox', json_build_object(), job_key => 'drain_email_outbox');
  end if;
  return null;
end;
$$;
create or replace trigger _900_enqueue after insert on app_private.email_outbox
  for each statement execute function app_private.tg_email_outbox__enqueue();

-- The next mail to deliver after p_after_id (id order), locked for this transaction so that
-- two drains never send the same mail; null when none is left. Mails that exhausted
-- email_max_attempts stay in the outbox, visible to staff, and are not retried.
-- (body_html and headers: the HTML part and the List-Unsubscribe headers of a notification's.)
drop function if exists app_private.email_outbox_next(bigint) cascade;
create or replace function app_private.email_outbox_next(p_after_id bigint default 0)
returns table (id bigint, to_address text, subject text, body_text text, body_html text, headers jsonb, attempts int)
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  select o.id, o.to_address, o.subject, o.body_text, o.body_html, o.headers, o.attempts
  from app_private.email_outbox o
  where o.sent_at is null and o.id > coalesce(p_after_id, 0)
    and o.attempts < coalesce((app_hidden.setting('email_max_attempts') #>> '{}')::int, 10)
  order by o.id
  limit 1
  for update skip locked;
$$;

create or replace function app_private.email_outbox_sent(p_id bigint) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  update app_private.email_outbox
  set sent_at = app_hidden.now(), attempts = attempts + 1, last_attempt_at = app_hidden.now(), last_error = null
  where id = p_id and sent_at is null;
$$;

create or replace function app_private.email_outbox_failed(p_id bigint, p_error text) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  update app_private.email_outbox
  set attempts = attempts + 1, last_attempt_at = app_hidden.now(), last_error = left(coalesce(p_error, 'erreur inconnue'), 2000)
  where id = p_id and sent_at is null;
$$;

-- Number of mails waiting (for the worker's log when SMTP is not configured).
create or replace function app_private.email_outbox_pending_count() returns bigint
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select count(*) from app_private.email_outbox o where o.sent_at is null;
$$;

-- Staff read the outbox (mails stay there without SMTP settings). The body carries
-- single-use password links: only superusers see it, so that staff status alone never
-- gives a way into another account.

create or replace function app_public.email_outbox_list(p_status text default null, p_page int default 1,
                                             p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_superuser boolean := exists (select 1 from app_public.accounts a
                                 where a.id = app_hidden.current_account_id() and a.is_superuser);
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('La boîte d’envoi des e-mails est réservée aux comptes du personnel d’administration.', 'WF602');
  end if;
  if p_status is not null and p_status not in ('pending', 'sent', 'failed') then
    perform app_hidden.invalid('status', 'Statut inconnu. Valeurs possibles : pending, sent, failed.', 'WV602');
  end if;
  return (
    with mails as (
      select o.* from app_private.email_outbox o
      where p_status is null
         or (p_status = 'pending' and o.sent_at is null)
         or (p_status = 'sent' and o.sent_at is not null)
         or (p_status = 'failed' and o.sent_at is null and o.last_error is not null)
    )
    select jsonb_build_object(
      'count', (select count(*) from mails),
      'results', coalesce((
        select jsonb_agg(jsonb_build_object(
                 'id', m.id, 'kind', m.kind, 'to_address', m.to_address, 'subject', m.subject,
                 'account', m.account_id, 'created_at', m.created_at, 'sent_at', m.sent_at,
                 'attempts', m.attempts, 'last_attempt_at', m.last_attempt_at, 'last_error', m.last_error)
               || case when v_superuser then jsonb_build_object('body_text', m.body_text) else '{}'::jsonb end
               order by m.created_at desc, m.id desc)
        from (select * from mails order by created_at desc, id desc
              limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) m), '[]'::jsonb)));
end;
$$;
comment on function app_public.email_outbox_list(text, integer, integer) is
'SPEC Authentication rule 4 (invitations and reset links), back-office: for staff accounts (else 403),
one page of the outgoing mails newest first, filtered by status pending, sent or failed; the body only
for superusers, as it carries single-use password links.';
--! EndIncluded notifications/functions.sql
--! Included notifications/emails.sql
-- E-mail notifications (issue 28). Every in-app notification also goes by e-mail to its
-- recipient when the account is active and has an address (the professional e-mail of its
-- employee record), through the outbox (app_private.email_outbox, delivered by the worker's
-- drain_email_outbox; printed on the console in the embedded mode):
--   * at once: the transaction that writes the notification only routes it and enqueues the
--     worker's drain_email_outbox job; the job writes the e-mail into the outbox
--     (app_private.queue_notification_emails) and sends it, seconds later: an e-mail never
--     slows, blocks or rolls back the request, and a failed send is retried by the worker;
--   * in a daily digest at the hour the account chose (send_notification_digests, hourly);
--   * never;
-- per kind: own (my requests and my account), decide (requests of others), planning (alerts).
-- An e-mail never says more than its reader may read in the application, and less: the title
-- of the notification (fixed words), the employee and the dates of the request, and the link
-- to the item. Never the type of an absence (it can be a health reason), a comment, a reason
-- or a document: those are read in the application, after the login.

-- ---------------------------------------------------------------------------------------
-- Routing: the kind and the address of a notification for its recipient.

-- The employee a notification's item is about (absence, day-change request), or null.
create or replace function app_private.notification_target_employee(p_model text, p_target_id bigint) returns int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if p_target_id is null or p_target_id > 2147483647 or p_target_id < 1 then
    return null;
  end if;
  return case p_model
    when 'absence' then (select a.employee_id from app_public.absences a where a.id = p_target_id::int)
    when 'shift_change_request' then (select r.employee_id from app_public.shift_change_requests r where r.id = p_target_id::int)
    when 'employee' then p_target_id::int
  end;
end;
$$;

-- Is the recipient the employee the item is about? (never null)
create or replace function app_private.notification_about_recipient(p_account_id int, p_model text, p_target_id bigint)
returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce((select a.employee_id = app_private.notification_target_employee(p_model, p_target_id)
                   from app_public.accounts a where a.id = p_account_id), false);
end;
$$;

-- own: about the recipient's own request or account (p_own: the recipient is the employee of
-- the item); decide: a request of somebody else (to decide, or a filing nobody can decide, or
-- HR's list of missing documents); planning: an alert of the planning (an event overlapping an
-- absence).
create or replace function app_hidden.notification_kind(p_model text, p_title text, p_own boolean) returns text
language sql immutable parallel safe as $$
  select case
    when p_model = 'event' or p_title like 'Conflit %' then 'planning'
    when p_model in ('absence', 'shift_change_request') then case when p_own then 'own' else 'decide' end
    when p_model is null and p_title = 'Justificatifs manquants' then 'decide'
    else 'own'
  end;
$$;

-- The address of the item in the web application for its recipient (web/src/lib/paths.ts:
-- myAbsence, queueAbsence, myDayChange, queueDayChange, teamPlanning, account, counters), or null (the
-- notification itself is all there is: the e-mail links to /notifications).
create or replace function app_hidden.notification_path(p_model text, p_target_id bigint, p_own boolean) returns text
language sql immutable parallel safe as $$
  select case
    when p_model = 'event' then '/equipe'
    when p_target_id is null then null
    when p_model = 'absence' then case when p_own then '/demandes/absences/' else '/file/absences/' end || p_target_id
    when p_model = 'shift_change_request' then case when p_own then '/demandes/journees/' else '/file/journees/' end || p_target_id
    when p_model = 'employee' and p_own then '/compte'
    -- A balance about to expire (issue 27): « Mes compteurs » (paths.counters).
    when p_model = 'counter' then '/compteurs'
  end;
$$;

-- What the e-mail of a notification of a kind is: immediate, digest, or none (closed account,
-- no address, or the kind set to never; no preferences row: immediate).
create or replace function app_hidden.notification_email_mode(p_active boolean, p_address text, p_kind text,
                                                   p_preferences app_private.notification_preferences)
returns text
language sql immutable parallel safe as $$
  select case when p_active is not true or p_address is null or x.mode = 'never' then 'none' else x.mode end
  from (select coalesce(case p_kind when 'own' then (p_preferences).own when 'decide' then (p_preferences).decide
                                    else (p_preferences).planning end, 'immediate') as mode) x;
$$;

-- The same for an account now (the worker checks again before writing an e-mail).
create or replace function app_private.notification_email_mode(p_account_id int, p_kind text) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_active boolean;
  v_address text;
  v_preferences app_private.notification_preferences;
begin
  select a.is_active, e.professional_email into v_active, v_address
  from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
  where a.id = p_account_id;
  select * into v_preferences from app_private.notification_preferences p where p.account_id = p_account_id;
  return app_hidden.notification_email_mode(v_active, v_address, p_kind, v_preferences);
end;
$$;

-- Before each new notification: its kind, its address and its e-mail, from two reads (the
-- recipient with its address and preferences; the employee of the item).
create or replace function app_private.tg_notifications__route() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
  v_active boolean;
  v_address text;
  v_preferences app_private.notification_preferences;
  v_own boolean;
begin
  select a.employee_id, a.is_active, e.professional_email into v_employee, v_active, v_address
  from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
  where a.id = new.account_id;
  select * into v_preferences from app_private.notification_preferences p where p.account_id = new.account_id;
  v_own := coalesce(v_employee = app_private.notification_target_employee(new.model, new.target_id), false);
  new.kind := app_hidden.notification_kind(new.model, new.title, v_own);
  new.path := app_hidden.notification_path(new.model, new.target_id, v_own);
  new.email := app_hidden.notification_email_mode(v_active, v_address, new.kind, v_preferences);
  new.emailed_at := null;
  return new;
end;
$$;
create or replace trigger _100_route before insert on app_public.notifications
  for each row execute function app_private.tg_notifications__route();

-- ---------------------------------------------------------------------------------------
-- Composition. Plain text and HTML, French, with the link and List-Unsubscribe.

create or replace function app_hidden.html_escape(p_text text) returns text
language sql immutable parallel safe as $$
  select replace(replace(replace(replace(replace(p_text, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;');
$$;

create or replace function app_private.public_url() returns text
language sql stable as $$
  select rtrim(coalesce(nullif(current_setting('app.public_url', true), ''), 'http://localhost:8000'), '/');
$$;

-- What an e-mail may say of the item to its reader, besides the title: the employee and the
-- dates; never the type of an absence, a comment, a reason or a document. Said only when the
-- reader is that employee, or reads that employee's requests now (absences.view_absence_queue
-- on a perimeter covering them: a digest is written hours after its notifications, and a
-- perimeter may have changed since). Null when there is nothing more to say.
create or replace function app_private.notification_email_line(p_account_id int, p_model text, p_target_id bigint)
returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int := app_private.notification_target_employee(p_model, p_target_id);
begin
  if v_employee is null or p_model not in ('absence', 'shift_change_request')
     or (app_private.notification_about_recipient(p_account_id, p_model, p_target_id)
         or app_hidden.may(p_account_id, 'absences.view_absence_queue', v_employee, app_hidden.now())) is not true then
    return null;
  end if;
  if p_model = 'absence' then
    return (select format('%s — absence %s', app_hidden.employee_name(a.employee_id),
                          app_hidden.absence_period_fr(a.date_start, a.date_end, a.start_half, a.end_half,
                                                       a.start_time, a.end_time))
            from app_public.absences a where a.id = p_target_id::int);
  end if;
  return (select format('%s — journée du %s', app_hidden.employee_name(r.employee_id), app_hidden.fr_date(r.date))
          from app_public.shift_change_requests r where r.id = p_target_id::int);
end;
$$;

create or replace function app_hidden.notification_kind_label(p_kind text) returns text
language sql immutable parallel safe as $$
  select case p_kind when 'own' then 'Mes demandes' when 'decide' then 'Demandes à décider' when 'planning' then 'Planning' end;
$$;

-- The unsubscribe secret of an account (its preferences row is created with the defaults
-- when it has none).
create or replace function app_private.notification_unsubscribe_token(p_account_id int) returns text
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_token text;
begin
  select p.unsubscribe_token into v_token from app_private.notification_preferences p where p.account_id = p_account_id;
  if v_token is null then
    insert into app_private.notification_preferences (account_id) values (p_account_id)
    on conflict (account_id) do nothing;
    select p.unsubscribe_token into v_token from app_private.notification_preferences p where p.account_id = p_account_id;
  end if;
  return v_token;
end;
$$;

-- One e-mail for an account: items [{title, line, path}] (one: a notification at once;
-- several: a digest), as {subject, text, html, headers}. kinds: the kinds it carries, which
-- its List-Unsubscribe address turns off.
create or replace function app_private.notification_email_compose(p_account_id int, p_subject text, p_intro text,
                                                       p_items jsonb, p_kinds text[])
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_base text := app_private.public_url();
  v_name text := coalesce(app_hidden.account_display_name(p_account_id), '');
  v_unsubscribe text := format('%s/api/notifications/unsubscribe/?token=%s&kinds=%s', v_base,
                               app_private.notification_unsubscribe_token(p_account_id), array_to_string(p_kinds, ','));
  v_settings text := v_base || '/compte';
  v_kinds text := (select string_agg('« ' || app_hidden.notification_kind_label(k) || ' »', ', ' order by k) from unnest(p_kinds) k);
  v_text text;
  v_html text;
begin
  v_text := concat_ws(E'\n',
    format('Bonjour %s,', v_name), '', p_intro, '',
    (select string_agg(concat_ws(E'\n', i ->> 'title', i ->> 'line',
                                 'Ouvrir : ' || v_base || coalesce(i ->> 'path', '/notifications')), E'\n\n' order by o)
     from jsonb_array_elements(p_items) with ordinality x(i, o)),
    '',
    'Le détail (type d’absence, motif, commentaires, justificatifs) ne part jamais par e-mail : il se lit dans l’application, après connexion.',
    '',
    '-- ',
    format('Vous recevez cet e-mail pour : %s. Tout de suite, un résumé quotidien ou jamais : choisissez dans « Mon compte » (%s),', v_kinds, v_settings),
    'ou désabonnez-vous en un clic avec le lien « Se désabonner » de votre messagerie.');
  v_html := concat(
    '<!doctype html><html lang="fr"><head><meta charset="utf-8"><title>', app_hidden.html_escape(p_subject), '</title></head>',
    '<body style="font-family:sans-serif;line-height:1.5;color:#1a1a1a;max-width:40em">',
    '<p>', app_hidden.html_escape(format('Bonjour %s,', v_name)), '</p>',
    '<p>', app_hidden.html_escape(p_intro), '</p>',
    (select string_agg(concat('<div style="margin:1em 0;padding:.75em;border-left:4px solid #1d4ed8;background:#f3f4f6">',
                              '<p style="margin:0;font-weight:bold">', app_hidden.html_escape(i ->> 'title'), '</p>',
                              case when i ->> 'line' is not null then '<p style="margin:.25em 0">' || app_hidden.html_escape(i ->> 'line') || '</p>' else '' end,
                              '<p style="margin:.25em 0"><a href="', app_hidden.html_escape(v_base || coalesce(i ->> 'path', '/notifications')),
                              '">Ouvrir dans l’application</a></p></div>'), '' order by o)
     from jsonb_array_elements(p_items) with ordinality x(i, o)),
    '<p>Le détail (type d’absence, motif, commentaires, justificatifs) ne part jamais par e-mail : il se lit dans l’application, après connexion.</p>',
    '<hr><p style="font-size:.9em;color:#4b5563">', app_hidden.html_escape(format('Vous recevez cet e-mail pour : %s.', v_kinds)),
    ' Tout de suite, un résumé quotidien ou jamais : <a href="', app_hidden.html_escape(v_settings), '">choisissez dans « Mon compte »</a>,',
    ' ou désabonnez-vous en un clic avec le lien « Se désabonner » de votre messagerie.</p></body></html>');
  return jsonb_build_object(
    'subject', p_subject, 'text', v_text, 'html', v_html,
    'headers', jsonb_build_object('List-Unsubscribe', '<' || v_unsubscribe || '>',
                                  'List-Unsubscribe-Post', 'List-Unsubscribe=One-Click'));
end;
$$;

-- The e-mail of one notification (sent at once).
create or replace function app_private.notification_email(p_notification app_public.notifications) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_private.notification_email_compose(
    p_notification.account_id, p_notification.title,
    'Vous avez une nouvelle notification dans l’application de planning.',
    jsonb_build_array(jsonb_build_object('title', p_notification.title,
                                         'line', app_private.notification_email_line(p_notification.account_id, p_notification.model,
                                                                                     p_notification.target_id),
                                         'path', p_notification.path)),
    array[p_notification.kind]);
end;
$$;

-- After the notifications of a statement: when one goes by e-mail at once, the worker's
-- drain_email_outbox job is enqueued in the same transaction (one job, by its key; skipped
-- silently when graphile-worker's schema is not installed: the worker drains at start).
create or replace function app_private.tg_notifications__email() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if to_regnamespace('graphile_worker') is not null and exists (select 1 from new_rows r where r.email = 'immediate') then
    perform graphile_worker.add_job('drain_email_outbox', json_build_object(), job_key => 'drain_email_outbox');
  end if;
  return null;
end;
$$;
create or replace trigger _800_email after insert on app_public.notifications
  referencing new table as new_rows
  for each statement execute function app_private.tg_notifications__email();

-- The worker's first step of drain_email_outbox (and npm run job -- drain_email_outbox): the
-- e-mails of the notifications sent at once that are not in the outbox yet, oldest first (at
-- most p_limit), composed now (what the reader may read now). One that cannot be written (an
-- address the outbox refuses, ...) is given up with a warning, and its notification says none
-- went. Returns how many were queued.
create or replace function app_private.queue_notification_emails(p_limit int default 500) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  n app_public.notifications;
  m jsonb;
  v_count int := 0;
begin
  for n in
    select * from app_public.notifications x
    where x.email = 'immediate' and x.emailed_at is null
    order by x.id
    limit greatest(coalesce(p_limit, 500), 1)
    for update skip locked
  loop
    -- Closed since, or without address since: no e-mail.
    if app_private.notification_email_mode(n.account_id, n.kind) = 'none' then
      update app_public.notifications x set email = 'none' where x.id = n.id;
      continue;
    end if;
    begin
      m := app_private.notification_email(n);
      insert into app_private.email_outbox (kind, to_address, subject, body_text, body_html, headers, account_id)
      values ('notification', app_private.account_email(n.account_id), m ->> 'subject', m ->> 'text', m ->> 'html',
              m -> 'headers', n.account_id);
      update app_public.notifications x set emailed_at = app_hidden.now() where x.id = n.id;
      v_count := v_count + 1;
    exception when others then
      raise warning 'notification %: its e-mail was not queued (%)', n.id, sqlerrm;
      update app_public.notifications x set email = 'none' where x.id = n.id;
    end;
  end loop;
  return v_count;
end;
$$;

-- ---------------------------------------------------------------------------------------
-- The daily digest (worker task send_notification_digests, every hour; npm run job).

-- The last digest instant of an hour at or before p_now (business time zone).
create or replace function app_hidden.last_digest_instant(p_now timestamptz, p_hour int) returns timestamptz
language sql stable as $$
  select case when x.today <= p_now then x.today
              else ((((p_now at time zone app_hidden.business_timezone())::date - 1) + make_time(p_hour, 0, 0))
                    at time zone app_hidden.business_timezone()) end
  from (select (((p_now at time zone app_hidden.business_timezone())::date + make_time(p_hour, 0, 0))
                at time zone app_hidden.business_timezone()) as today) x;
$$;

-- Sends the digests due at p_now: an account whose digest hour came since its last digest
-- (or since it chose the digest) gets one e-mail gathering its notifications waiting for the
-- digest, oldest first; each is marked e-mailed, so nothing is sent twice. Waiting
-- notifications of a kind now set to never, or of an account now closed or without an
-- address, are dropped from the digest. Returns the number of digests queued.
create or replace function app_private.send_notification_digests(p_now timestamptz) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  p app_private.notification_preferences;
  v_address text;
  v_items jsonb;
  v_ids bigint[];
  v_kinds text[];
  v_mail jsonb;
  v_count int := 0;
begin
  if p_now is null then
    raise exception 'send_notification_digests: the time is required';
  end if;
  for p in
    select x.* from app_private.notification_preferences x
    where exists (select 1 from app_public.notifications n
                  where n.account_id = x.account_id and n.email = 'digest' and n.emailed_at is null)
    order by x.account_id
    for update of x
  loop
    if app_hidden.last_digest_instant(p_now, p.digest_hour) <= p.digest_since then
      continue;
    end if;
    v_address := case when exists (select 1 from app_public.accounts a where a.id = p.account_id and a.is_active)
                      then app_private.account_email(p.account_id) end;
    update app_public.notifications n set email = 'none'
    where n.account_id = p.account_id and n.email = 'digest' and n.emailed_at is null
      and (v_address is null
           or case n.kind when 'own' then p.own when 'decide' then p.decide else p.planning end = 'never');
    select jsonb_agg(jsonb_build_object('title', n.title,
                                        'line', app_private.notification_email_line(n.account_id, n.model, n.target_id),
                                        'path', n.path) order by n.created_at, n.id),
           array_agg(n.id order by n.created_at, n.id),
           array_agg(distinct n.kind)
      into v_items, v_ids, v_kinds
    from app_public.notifications n
    where n.account_id = p.account_id and n.email = 'digest' and n.emailed_at is null and n.created_at <= p_now;
    if v_ids is null then
      continue;
    end if;
    begin
      v_mail := app_private.notification_email_compose(
        p.account_id,
        format('Résumé de vos notifications : %s nouvelle%s', cardinality(v_ids), case when cardinality(v_ids) > 1 then 's' else '' end),
        format('Résumé du %s : %s notification%s depuis le résumé précédent.',
               app_hidden.fr_date((p_now at time zone app_hidden.business_timezone())::date), cardinality(v_ids),
               case when cardinality(v_ids) > 1 then 's' else '' end),
        v_items, v_kinds);
      insert into app_private.email_outbox (kind, to_address, subject, body_text, body_html, headers, account_id)
      values ('notification_digest', v_address, v_mail ->> 'subject', v_mail ->> 'text', v_mail ->> 'html', v_mail -> 'headers',
              p.account_id);
      update app_public.notifications n set emailed_at = p_now where n.id = any (v_ids);
      update app_private.notification_preferences x set digest_since = p_now where x.account_id = p.account_id;
      v_count := v_count + 1;
    exception when others then
      -- One account's digest that cannot be written stays waiting; the others go.
      raise warning 'digest of account %: not queued (%)', p.account_id, sqlerrm;
    end;
  end loop;
  return v_count;
end;
$$;

-- ---------------------------------------------------------------------------------------
-- API: the preferences (« Mon compte »), « Tout marquer comme lu », the unsubscribe address.

create or replace function app_hidden.notification_preferences_json(p_account_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  p app_private.notification_preferences;
begin
  select * into p from app_private.notification_preferences x where x.account_id = p_account_id;
  return jsonb_build_object(
    'email', app_private.account_email(p_account_id),
    'own', coalesce(p.own, 'immediate'),
    'decide', coalesce(p.decide, 'immediate'),
    'planning', coalesce(p.planning, 'immediate'),
    'digest_hour', coalesce(p.digest_hour, 7));
end;
$$;

create or replace function app_public.notification_preferences_get() returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if app_hidden.current_account_id() is null then
    perform app_hidden.forbidden('Connectez-vous pour lire vos préférences d’e-mail.', 'WF603');
  end if;
  return app_hidden.notification_preferences_json(app_hidden.current_account_id());
end;
$$;
comment on function app_public.notification_preferences_get() is
'Issue 28: the caller''s e-mail preferences per kind of notification (own requests, requests to decide,
planning): immediate, digest (daily, at digest_hour) or never, and the address the e-mails go to (null: none is sent).';

-- Replaces the caller's preferences (every key required); answers them.
create or replace function app_public.notification_preferences_set(p_own text, p_decide text, p_planning text,
                                                        p_digest_hour int)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_errors jsonb := '{}'::jsonb;
  v_modes text[] := array['immediate', 'digest', 'never'];
  v_message text := 'Choisissez immediate (tout de suite), digest (résumé quotidien) ou never (jamais).';
begin
  if v_account is null then
    perform app_hidden.forbidden('Connectez-vous pour choisir vos préférences d’e-mail.', 'WF603');
  end if;
  if p_own is null or p_own <> all (v_modes) then v_errors := app_hidden.add_error(v_errors, 'own', v_message); end if;
  if p_decide is null or p_decide <> all (v_modes) then v_errors := app_hidden.add_error(v_errors, 'decide', v_message); end if;
  if p_planning is null or p_planning <> all (v_modes) then v_errors := app_hidden.add_error(v_errors, 'planning', v_message); end if;
  if p_digest_hour is null or p_digest_hour not between 0 and 23 then
    v_errors := app_hidden.add_error(v_errors, 'digest_hour', 'L’heure du résumé quotidien est une heure entière de 0 à 23.');
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV603');
  end if;
  perform app_private.notification_preferences_save(v_account, p_own, p_decide, p_planning, p_digest_hour);
  return app_hidden.notification_preferences_json(v_account);
end;
$$;
comment on function app_public.notification_preferences_set(text, text, text, integer) is
'Issue 28: replaces the caller''s e-mail preferences (own, decide, planning: immediate, digest or never;
digest_hour 0 to 23, business time zone) and answers them; a bad value is refused under its field.';

-- Saves preferences (owner). A digest counts from the moment its hour or a kind in digest was
-- chosen: the first digest comes at the next digest hour, never at once.
create or replace function app_private.notification_preferences_save(p_account_id int, p_own text, p_decide text,
                                                          p_planning text, p_digest_hour int)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  insert into app_private.notification_preferences as p (account_id, own, decide, planning, digest_hour, digest_since, updated_at)
  values (p_account_id, p_own, p_decide, p_planning, p_digest_hour, app_hidden.now(), app_hidden.now())
  on conflict (account_id) do update set
    own = excluded.own, decide = excluded.decide, planning = excluded.planning, digest_hour = excluded.digest_hour,
    digest_since = case when p.digest_hour <> excluded.digest_hour
                          or (excluded.own = 'digest' and p.own <> 'digest')
                          or (excluded.decide = 'digest' and p.decide <> 'digest')
                          or (excluded.planning = 'digest' and p.planning <> 'digest')
                        then excluded.digest_since else p.digest_since end,
    updated_at = excluded.updated_at;
end;
$$;

-- Marks every unread notification of the caller read; answers how many.
create or replace function app_public.notifications_mark_all_read() returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_count int;
begin
  update app_public.notifications n set read_at = app_hidden.now()
  where n.account_id = app_hidden.current_account_id() and n.read_at is null;
  get diagnostics v_count = row_count;
  return jsonb_build_object('count', v_count);
end;
$$;
comment on function app_public.notifications_mark_all_read() is
'Issue 28: « Tout marquer comme lu »: marks every unread notification of the caller read and answers how many.';

-- The List-Unsubscribe address of an e-mail (public: its secret is the account's unsubscribe
-- token): the kinds it names go to never. An unknown token or kind is not found.
create or replace function app_private.notification_unsubscribe(p_token text, p_kinds text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_kinds text[] := string_to_array(coalesce(p_kinds, ''), ',');
  v_account int;
begin
  if cardinality(v_kinds) = 0 or exists (select 1 from unnest(v_kinds) k where k not in ('own', 'decide', 'planning')) then
    perform app_hidden.not_found('Adresse de désabonnement introuvable.', 'WN602');
  end if;
  update app_private.notification_preferences p set
    own = case when 'own' = any (v_kinds) then 'never' else p.own end,
    decide = case when 'decide' = any (v_kinds) then 'never' else p.decide end,
    planning = case when 'planning' = any (v_kinds) then 'never' else p.planning end,
    updated_at = app_hidden.now()
  where p.unsubscribe_token = p_token
  returning p.account_id into v_account;
  if v_account is null then
    perform app_hidden.not_found('Adresse de désabonnement introuvable.', 'WN602');
  end if;
  return jsonb_build_object(
    'detail', format('Vous ne recevrez plus d’e-mail pour : %s. Vous pouvez changer d’avis dans « Mon compte ».',
                     (select string_agg('« ' || app_hidden.notification_kind_label(k) || ' »', ', ' order by k)
                      from unnest(v_kinds) k)));
end;
$$;

create or replace function app_public.notification_unsubscribe(p_token text, p_kinds text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_private.notification_unsubscribe(p_token, p_kinds);
end;
$$;
comment on function app_public.notification_unsubscribe(text, text) is
'Issue 28: the List-Unsubscribe address of the notification e-mails (RFC 8058 one-click, public: the
token is the secret): the kinds named go to never; an unknown token or kind is not found.';
--! EndIncluded notifications/emails.sql
--! Included planning/helpers.sql
-- Helpers of the planning domain built on day.sql: comparison of days, ranges of slots,
-- readable summaries, and the parsing of slots sent by clients (requests, adjusted grants,
-- back-office corrections).

-- Normal form of a slot, for comparisons: a break exists only with both bounds, "paid" only
-- with a break, options default to false.
create or replace function app_hidden.slot_normalized(p_slot app_public.slot) returns app_public.slot
language sql immutable parallel safe as $$
  select row(p_slot.start_time, p_slot.end_time,
             case when p_slot.break_start_time is not null and p_slot.break_end_time is not null
                  then p_slot.break_start_time end,
             case when p_slot.break_start_time is not null and p_slot.break_end_time is not null
                  then p_slot.break_end_time end,
             case when p_slot.break_start_time is not null and p_slot.break_end_time is not null
                  then coalesce(p_slot.break_paid, false) else false end,
             p_slot.post_id, p_slot.establishment_id, coalesce(p_slot.is_remote, false))::app_public.slot;
$$;

-- Two days are the same when their slots, in normal form and by start time, are equal
-- (hours, break, post, establishment and per-slot options).
create or replace function app_hidden.same_slots(p_a app_public.slot[], p_b app_public.slot[]) returns boolean
language sql immutable parallel safe as $$
  select array(select app_hidden.slot_normalized(s) from unnest(coalesce(p_a, '{}')) s
               order by s.start_time, s.end_time)
         = array(select app_hidden.slot_normalized(s) from unnest(coalesce(p_b, '{}')) s
                 order by s.start_time, s.end_time);
$$;

-- The local time span of a slot worked on a date (a slot ending at or before its start ends
-- the next day).
create or replace function app_hidden.slot_range(p_date date, p_slot app_public.slot) returns tsrange
language sql immutable parallel safe as $$
  select tsrange(p_date + p_slot.start_time,
                 p_date + p_slot.start_time
                   + make_interval(mins => app_hidden.span_minutes(p_slot.start_time, p_slot.end_time)));
$$;

-- "8 h", "7 h 30", "45 min".
create or replace function app_hidden.fmt_minutes(p_minutes int) returns text
language sql immutable parallel safe as $$
  select case when p_minutes < 60 then p_minutes || ' min'
              when p_minutes % 60 = 0 then (p_minutes / 60) || ' h'
              else (p_minutes / 60) || ' h ' || lpad((p_minutes % 60)::text, 2, '0') end;
$$;

-- JSON of a slot when the post's code and label are already at hand (set-based readers).
create or replace function app_hidden.slot_json_with(p_slot app_public.slot, p_post_code text, p_post_label text) returns jsonb
language sql immutable parallel safe as $$
  select jsonb_build_object(
    'start_time', to_char(p_slot.start_time, 'HH24:MI'),
    'end_time', to_char(p_slot.end_time, 'HH24:MI'),
    'break_start_time', to_char(p_slot.break_start_time, 'HH24:MI'),
    'break_end_time', to_char(p_slot.break_end_time, 'HH24:MI'),
    'break_paid', coalesce(p_slot.break_paid, false),
    'post', p_slot.post_id,
    'post_code', p_post_code,
    'post_label', p_post_label,
    'establishment', p_slot.establishment_id,
    'is_remote', coalesce(p_slot.is_remote, false),
    'minutes', app_hidden.slot_minutes(p_slot));
$$;

-- "J Journée 10:00-18:00 (pause 12:00-12:30), S Soir 18:00-21:00": the slots with their
-- breaks, for notification bodies.
create or replace function app_hidden.slots_summary(p_slots app_public.slot[]) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(string_agg(
           concat_ws(' ', p.code, p.label,
                     to_char((p_slots[i]).start_time, 'HH24:MI') || '-' || to_char((p_slots[i]).end_time, 'HH24:MI'))
           || case when (p_slots[i]).break_start_time is not null and (p_slots[i]).break_end_time is not null
                   then ' (pause ' || case when (p_slots[i]).break_paid then 'payée ' else '' end
                        || to_char((p_slots[i]).break_start_time, 'HH24:MI') || '-'
                        || to_char((p_slots[i]).break_end_time, 'HH24:MI') || ')'
                   else '' end,
           ', ' order by i), '')
  from generate_subscripts(p_slots, 1) i
  left join app_public.posts p on p.id = (p_slots[i]).post_id;
$$;

-- The label of a planned day: its posts and hours, or "Repos".
create or replace function app_hidden.day_label(p_slots app_public.slot[]) returns text
language sql stable as $$
  select case when coalesce(cardinality(p_slots), 0) = 0 then 'Repos'
              else app_hidden.slots_description(p_slots) end;
$$;

-- Display names of accounts (the employee's name, else the username), set-based.
create or replace function app_hidden.account_display_names(p_ids int[]) returns table (id int, name text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.id, coalesce(e.first_name || ' ' || e.last_name, a.username)
  from app_public.accounts a
  left join app_public.employees e on e.id = a.employee_id
  where a.id = any (p_ids);
$$;

-- Does this JSON value hold a time HH:MM (or nothing)?
create or replace function app_hidden.json_time_ok(p_value jsonb) returns boolean
language sql immutable parallel safe as $$
  select p_value is null or jsonb_typeof(p_value) = 'null'
         or (jsonb_typeof(p_value) = 'string' and (p_value #>> '{}') ~ app_hidden.time_pattern());
$$;

create or replace function app_hidden.json_time(p_value jsonb) returns time
language sql immutable parallel safe as $$
  select case when jsonb_typeof(p_value) = 'string' and (p_value #>> '{}') ~ app_hidden.time_pattern()
              then (p_value #>> '{}')::time end;
$$;

-- Does this JSON value hold an integer id (or nothing)?
create or replace function app_hidden.json_id_ok(p_value jsonb) returns boolean
language sql immutable parallel safe as $$
  select p_value is null or jsonb_typeof(p_value) = 'null'
         or (jsonb_typeof(p_value) = 'number' and (p_value #>> '{}') ~ '^[0-9]{1,9}$');
$$;

create or replace function app_hidden.json_id(p_value jsonb) returns int
language sql immutable parallel safe as $$
  select case when jsonb_typeof(p_value) = 'number' and (p_value #>> '{}') ~ '^[0-9]{1,9}$'
              then (p_value #>> '{}')::int end;
$$;

create or replace function app_hidden.json_bool_ok(p_value jsonb) returns boolean
language sql immutable parallel safe as $$
  select p_value is null or jsonb_typeof(p_value) in ('null', 'boolean');
$$;

-- The slots of a day as sent by a client (a request, an adjusted grant, a correction),
-- checked and normalised. Errors are French messages under p_field ("Créneau 2 : ..."),
-- overlaps under p_overlap_field. Rules:
--   * start_time and end_time make a slot complete; a row with neither is an emptied row and
--     is dropped; a row with only one of them is refused; a slot ending at or before its
--     start ends the next day (night), but start and end may not be equal;
--   * post defaults to the planned post of that day (same position, else the first), else
--     the first active post of the employee's main establishment; establishment defaults to
--     the post's; both must exist, and an inactive post is accepted only if planned that day;
--   * a break needs both bounds and a length; a break that is not strictly inside its slot
--     (the slot was shortened below it) is dropped; break_paid is meaningful only with one;
--   * at most 9 slots; a non-empty list whose rows are all emptied would remove every slot
--     of the day: refused (an absence is asked instead); slots of a day may not overlap.
-- Returns the slots ordered by start time; an absent or empty list gives '{}'.
create or replace function app_hidden.parse_day_slots(p_slots jsonb, p_field text, p_employee int, p_date date,
                                           p_planned app_public.slot[], p_overlap_field text default null)
returns app_public.slot[]
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_item jsonb;
  v_i int := 0;
  v_prefix text;
  v_start time;
  v_end time;
  v_break_start time;
  v_break_end time;
  v_paid boolean;
  v_post_id int;
  v_establishment_id int;
  v_remote boolean;
  v_post app_public.posts;
  v_length int;
  v_offset_start int;
  v_offset_end int;
  v_row_ok boolean;
  v_result app_public.slot[] := '{}';
  v_sorted app_public.slot[];
  v_prev_end timestamp;
  j int;
begin
  if p_slots is null or jsonb_typeof(p_slots) = 'null' then
    return '{}';
  end if;
  if jsonb_typeof(p_slots) <> 'array' then
    perform app_hidden.invalid(p_field, 'Une liste de créneaux est attendue.', 'WV104');
  end if;
  if jsonb_array_length(p_slots) = 0 then
    return '{}';
  end if;
  if jsonb_array_length(p_slots) > 9 then
    perform app_hidden.invalid(p_field, 'Une journée compte au plus 9 créneaux.', 'WV104');
  end if;

  for v_item in select e.value from jsonb_array_elements(p_slots) e loop
    v_i := v_i + 1;
    v_prefix := format('Créneau %s : ', v_i);
    if jsonb_typeof(v_item) <> 'object' then
      v_errors := app_hidden.add_error(v_errors, p_field, v_prefix || 'un objet est attendu.');
      continue;
    end if;
    v_row_ok := true;
    if not (app_hidden.json_time_ok(v_item -> 'start_time') and app_hidden.json_time_ok(v_item -> 'end_time')
            and app_hidden.json_time_ok(v_item -> 'break_start_time') and app_hidden.json_time_ok(v_item -> 'break_end_time')) then
      v_errors := app_hidden.add_error(v_errors, p_field, v_prefix || 'heure invalide, format attendu HH:MM.');
      continue;
    end if;
    if not (app_hidden.json_bool_ok(v_item -> 'break_paid') and app_hidden.json_bool_ok(v_item -> 'is_remote')) then
      v_errors := app_hidden.add_error(v_errors, p_field, v_prefix || 'break_paid et is_remote sont des booléens (true ou false).');
      continue;
    end if;
    if not (app_hidden.json_id_ok(v_item -> 'post') and app_hidden.json_id_ok(v_item -> 'establishment')) then
      v_errors := app_hidden.add_error(v_errors, p_field, v_prefix || 'post et establishment sont des identifiants entiers.');
      continue;
    end if;
    v_start := app_hidden.json_time(v_item -> 'start_time');
    v_end := app_hidden.json_time(v_item -> 'end_time');
    v_break_start := app_hidden.json_time(v_item -> 'break_start_time');
    v_break_end := app_hidden.json_time(v_item -> 'break_end_time');
    v_paid := coalesce((v_item ->> 'break_paid')::boolean, false);
    v_remote := coalesce((v_item ->> 'is_remote')::boolean, false);
    v_post_id := app_hidden.json_id(v_item -> 'post');
    v_establishment_id := app_hidden.json_id(v_item -> 'establishment');

    -- An emptied row: the slot is removed from the day.
    if v_start is null and v_end is null then
      continue;
    end if;
    if v_start is null or v_end is null then
      v_errors := app_hidden.add_error(v_errors, p_field,
                    v_prefix || 'indiquez l’heure de début et l’heure de fin du créneau.');
      v_row_ok := false;
    elsif v_start = v_end then
      v_errors := app_hidden.add_error(v_errors, p_field,
                    v_prefix || 'l’heure de fin doit être différente de l’heure de début.');
      v_row_ok := false;
    end if;

    if (v_break_start is null) <> (v_break_end is null) then
      v_errors := app_hidden.add_error(v_errors, p_field,
                    v_prefix || 'une pause a une heure de début et une heure de fin.');
      v_row_ok := false;
    elsif v_break_start is not null and v_break_start = v_break_end then
      v_errors := app_hidden.add_error(v_errors, p_field,
                    v_prefix || 'la fin de la pause doit être différente de son début.');
      v_row_ok := false;
    end if;

    -- Post and establishment.
    if v_post_id is null then
      v_post_id := coalesce((p_planned[v_i]).post_id, (p_planned[1]).post_id,
                            (select p.id from app_public.posts p
                             join app_public.employees e on e.main_establishment_id = p.establishment_id
                             where e.id = p_employee and p.is_active
                             order by p.id limit 1));
      if v_post_id is null then
        v_errors := app_hidden.add_error(v_errors, p_field,
                      v_prefix || 'précisez le poste (aucun poste n’est prévu ce jour-là ni rattaché à votre établissement).');
        v_row_ok := false;
      end if;
    end if;
    v_post := null;
    if v_post_id is not null then
      select * into v_post from app_public.posts p where p.id = v_post_id;
      if v_post.id is null then
        v_errors := app_hidden.add_error(v_errors, p_field, v_prefix || format('poste inconnu (%s).', v_post_id));
        v_row_ok := false;
      elsif not v_post.is_active
            and not exists (select 1 from unnest(coalesce(p_planned, '{}')) s where s.post_id = v_post.id) then
        v_errors := app_hidden.add_error(v_errors, p_field,
                      v_prefix || format('le poste %s %s n’est plus actif.', v_post.code, v_post.label));
        v_row_ok := false;
      end if;
    end if;
    if v_establishment_id is null then
      v_establishment_id := v_post.establishment_id;
    elsif not exists (select 1 from app_public.establishments x where x.id = v_establishment_id) then
      v_errors := app_hidden.add_error(v_errors, p_field,
                    v_prefix || format('établissement inconnu (%s).', v_establishment_id));
      v_row_ok := false;
    end if;

    if not v_row_ok then
      continue;
    end if;

    -- A break not strictly inside its slot is dropped (the slot was shortened below it).
    if v_break_start is not null then
      v_length := app_hidden.span_minutes(v_start, v_end);
      v_offset_start := (extract(epoch from v_break_start - v_start)::int / 60 + 1440) % 1440;
      v_offset_end := (extract(epoch from v_break_end - v_start)::int / 60 + 1440) % 1440;
      if not (v_offset_start > 0 and v_offset_start < v_offset_end and v_offset_end < v_length) then
        v_break_start := null;
        v_break_end := null;
      end if;
    end if;
    if v_break_start is null then
      v_paid := false;
    end if;

    v_result := v_result || row(v_start, v_end, v_break_start, v_break_end, v_paid,
                                v_post_id, v_establishment_id, v_remote)::app_public.slot;
  end loop;

  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV104');
  end if;

  if cardinality(v_result) = 0 then
    perform app_hidden.invalid(p_field,
      'Une demande ne peut pas retirer tous les créneaux de la journée : pour ne pas travailler ce jour-là, demandez une absence.',
      'WV104');
  end if;

  v_sorted := array(select s from unnest(v_result) s order by s.start_time, s.end_time);
  for j in 1 .. cardinality(v_sorted) loop
    if v_prev_end is not null and lower(app_hidden.slot_range(p_date, v_sorted[j])) < v_prev_end then
      v_errors := app_hidden.add_error(v_errors, coalesce(p_overlap_field, p_field),
                    format('Les créneaux se chevauchent : %s-%s commence avant la fin du créneau précédent.',
                           to_char((v_sorted[j]).start_time, 'HH24:MI'), to_char((v_sorted[j]).end_time, 'HH24:MI')));
    end if;
    v_prev_end := greatest(v_prev_end, upper(app_hidden.slot_range(p_date, v_sorted[j])));
  end loop;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV104');
  end if;
  return v_sorted;
end;
$$;

-- The slots actually worked on a date: the planned day, unless granted absences cover
-- both halves of it (a rest for the rules of the modulation).
create or replace function app_hidden.worked_slots(p_employee int, p_date date) returns app_public.slot[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case when coalesce(bool_or(not (p_date = a.date_start and a.start_half is not distinct from 'afternoon'))
                            and bool_or(not (p_date = a.date_end and a.end_half is not distinct from 'morning')), false)
              then '{}'::app_public.slot[]
              else app_hidden.planned_slots(p_employee, p_date) end
  from app_public.absences a
  where a.employee_id = p_employee and a.status in ('validated', 'cancellation_requested')
    and p_date between a.date_start and a.date_end and a.start_time is null;
$$;

-- The rules of the modulation a granted day must keep (an adjusted grant). Each broken rule
-- answers under its own key; the caller raises them all at once and writes nothing.
--   daily_duration : at most 12 h (720 min) of net work in the day;
--   rest_period    : at least 11 h of rest with the worked day before and the worked day
--                    after (planned slots, unless granted absences cover the whole day);
--   break_required : a day of more than 6 h (360 min) of net work has a pause of at least
--                    20 consecutive minutes (a break of a slot, paid or not, or the gap
--                    between two slots);
--   slots          : slots of the day do not overlap (checked while parsing).
create or replace function app_hidden.modulation_errors(p_employee int, p_date date, p_slots app_public.slot[])
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_total int := app_hidden.slots_minutes(p_slots);
  v_start timestamp;
  v_end timestamp;
  v_prev_end timestamp;
  v_next_start timestamp;
  v_pause int;
begin
  if v_total > 720 then
    v_errors := app_hidden.add_error(v_errors, 'daily_duration',
      format('La journée accordée compte %s de travail effectif : une journée ne peut pas dépasser 12 h.',
             app_hidden.fmt_minutes(v_total)));
  end if;

  select min(lower(app_hidden.slot_range(p_date, s))), max(upper(app_hidden.slot_range(p_date, s)))
  into v_start, v_end
  from unnest(p_slots) s;

  select max(upper(app_hidden.slot_range(p_date - 1, s))) into v_prev_end
  from unnest(app_hidden.worked_slots(p_employee, p_date - 1)) s;
  if v_prev_end is not null and v_start - v_prev_end < interval '11 hours' then
    v_errors := app_hidden.add_error(v_errors, 'rest_period',
      format('Repos insuffisant avec la veille : la journée du %s se termine à %s et la journée accordée commence à %s ; 11 h de repos au moins sont requises.',
             app_hidden.fr_date(p_date - 1), to_char(v_prev_end, 'HH24:MI'), to_char(v_start, 'HH24:MI')));
  end if;

  select min(lower(app_hidden.slot_range(p_date + 1, s))) into v_next_start
  from unnest(app_hidden.worked_slots(p_employee, p_date + 1)) s;
  if v_next_start is not null and v_next_start - v_end < interval '11 hours' then
    v_errors := app_hidden.add_error(v_errors, 'rest_period',
      format('Repos insuffisant avec le lendemain : la journée accordée se termine à %s et la journée du %s commence à %s ; 11 h de repos au moins sont requises.',
             to_char(v_end, 'HH24:MI'), app_hidden.fr_date(p_date + 1), to_char(v_next_start, 'HH24:MI')));
  end if;

  if v_total > 360 then
    select max(x.pause) into v_pause
    from (
      select app_hidden.span_minutes(s.break_start_time, s.break_end_time) as pause
      from unnest(p_slots) s
      where s.break_start_time is not null and s.break_end_time is not null
      union all
      select (extract(epoch from lower(g.r) - lag(upper(g.r)) over (order by lower(g.r))) / 60)::int
      from (select app_hidden.slot_range(p_date, s) as r from unnest(p_slots) s) g
    ) x;
    if coalesce(v_pause, 0) < 20 then
      v_errors := app_hidden.add_error(v_errors, 'break_required',
        format('La journée accordée compte %s de travail effectif : au-delà de 6 h, une pause d’au moins 20 minutes consécutives est obligatoire.',
               app_hidden.fmt_minutes(v_total)));
    end if;
  end if;
  return v_errors;
end;
$$;
--! EndIncluded planning/helpers.sql
--! Included planning/grid.sql
-- GET /api/planning/grid/ (issue 29 point 6): the team month as the grid draws it, compact.
-- The same window, checks, perimeter and filters as GET /api/planning/ (app_hidden.planning_scope),
-- the same days (the planned day: the day modification, else the template valid that day; a
-- granted absence prevails, a half-day one beside the worked half, an hourly one among the
-- slots by time; the pending request, the requested cancellation), but only what a cell of the
-- grid shows, each thing once:
--   posts    each post drawn ({code, label}), once;
--   reasons  each absence reason drawn ({code, name}), once;
--   blocks   each distinct block ({kind, post, reason, part, start_time, end_time, modified,
--            status, pending}: post and reason are indices in posts and reasons; pending is
--            null, "request" or "cancellation"), once;
--   cells    each distinct day (its blocks' indices in blocks, in their order), once;
--   rows     per employee (in the order of employees), per day from `from`: an index in cells.
-- A month of 200 employees is some 20 KB instead of 2.5 MB (BENCHMARKS.md, "The team month,
-- fast and light"). GET /api/planning/ stays the full read (the SPEC's cells and blocks), and
-- the grid's export keeps it (planning_export).
-- force_generic_plan: docs/architecture.md, Performance notes.
-- How it stays cheap (the full read's way, planning_parts): most cells are a day of their
-- employee's one template without anything of their own, so each template's week is computed
-- once (seven cells) and such a cell is its employee's week at its weekday; only the cells with a
-- day modification, granted absences or a pending request (and every cell of an employee with
-- several templates in the window) are computed one by one. Blocks and cells are numbered by
-- ranking their values (no text per block), and only the distinct ones are written.
create or replace function app_hidden.planning_grid(p_employee_ids int[], p_from date, p_to date) returns text
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
begin
  return (
    with days as (
      select d::date as date, extract(isodow from d)::int as weekday
      from generate_series(p_from, p_to, interval '1 day') d
    ),
    emp as (
      select e.id, e.first_name || ' ' || e.last_name as name,
             row_number() over (order by lower(e.last_name), lower(e.first_name), e.id) as ord
      from app_public.employees e
      where e.id = any (p_employee_ids)
    ),
    -- The templates valid at some day of the window.
    tpl as materialized (
      select t.id, t.employee_id, t.valid_from, t.valid_to
      from app_public.planning_templates t
      where t.employee_id = any (p_employee_ids) and t.valid_from <= p_to and (t.valid_to is null or t.valid_to >= p_from)
    ),
    -- Per employee, how many templates the window meets, and the first one (meaningful when one).
    emp_template as (
      select t.employee_id, count(*) as templates, min(t.id) as template_id, min(t.valid_from) as valid_from,
             min(coalesce(t.valid_to, 'infinity')) as valid_to
      from tpl t
      group by t.employee_id
    ),
    -- The worked blocks of each template's weekday (a template's slot is its post's).
    template_block as materialized (
      select ts.template_id, ts.weekday, p.code, p.label, p.start_time, p.end_time,
             extract(epoch from p.start_time)::int / 60 as k2, ts.position as k4
      from app_public.planning_template_slots ts
      join app_public.posts p on p.id = ts.post_id
      where ts.template_id in (select tpl.id from tpl)
    ),
    -- The blocks of each day modification (one rest block when it has no slot).
    modification as materialized (
      select m.employee_id, m.date, sl.n is null as rest, po.code, po.label, sl.start_time, sl.end_time,
             coalesce(extract(epoch from sl.start_time)::int / 60, 0) as k2, coalesce(sl.n, 0) as k4
      from app_public.day_modifications m
      left join lateral unnest(m.slots) with ordinality
        as sl(start_time, end_time, break_start_time, break_end_time, break_paid, post_id, establishment_id, is_remote, n) on true
      left join app_public.posts po on po.id = sl.post_id
      where m.employee_id = any (p_employee_ids) and m.date between p_from and p_to
    ),
    -- The absences of the window by day, with the part of the day they cover.
    absence_day as materialized (
      select a.employee_id, g.day::date as date, a.id, a.status, t.code, t.name, a.start_time, a.end_time,
             case when a.start_time is not null then 'hours'
                  when g.day::date = a.date_start and a.start_half is not distinct from 'afternoon' then 'afternoon'
                  when g.day::date = a.date_end and a.end_half is not distinct from 'morning' then 'morning'
                  else 'day' end as part
      from app_public.absences a
      join app_public.absence_types t on t.id = a.type_id
      cross join lateral generate_series(greatest(a.date_start, p_from), least(a.date_end, p_to), interval '1 day') as g(day)
      where a.employee_id = any (p_employee_ids) and a.date_start <= p_to and a.date_end >= p_from
        and a.status in ('pending', 'validated', 'cancellation_requested')
    ),
    -- The granted ones; whole: those of the cell cover the whole day.
    granted as materialized (
      select a.*,
             coalesce(bool_or(a.part in ('day', 'morning')) over w and bool_or(a.part in ('day', 'afternoon')) over w,
                      false) as whole
      from absence_day a
      where a.status in ('validated', 'cancellation_requested')
      window w as (partition by a.employee_id, a.date)
    ),
    -- The cells with a pending request: an absence request, or a day-change request.
    pending_cell as materialized (
      select a.employee_id, a.date from absence_day a where a.status = 'pending'
      union
      select r.employee_id, r.date
      from app_public.shift_change_requests r
      where r.employee_id = any (p_employee_ids) and r.date between p_from and p_to and r.status = 'pending'
    ),
    -- The cells computed one by one, with the template valid that day (the latest valid_from).
    special as materialized (
      select distinct on (s.employee_id, s.date) s.employee_id, s.date, t.id as template_id,
             pc.employee_id is not null as pending,
             exists (select 1 from granted g where g.employee_id = s.employee_id and g.date = s.date and g.whole) as whole,
             exists (select 1 from modification m where m.employee_id = s.employee_id and m.date = s.date) as modified
      from (select x.employee_id, x.date from modification x
            union select x.employee_id, x.date from granted x
            union select x.employee_id, x.date from pending_cell x
            union select et.employee_id, d.date from emp_template et cross join days d where et.templates > 1) s
      left join tpl t on t.employee_id = s.employee_id and t.valid_from <= s.date and (t.valid_to is null or t.valid_to >= s.date)
      left join pending_cell pc on pc.employee_id = s.employee_id and pc.date = s.date
      order by s.employee_id, s.date, t.valid_from desc
    ),
    -- Every block with its cell and its order in it. A cell is a special one (employee_id, date),
    -- a template's weekday (template_id, weekday), or the rest of an employee without template
    -- (template_id 0). Order: k1 (a morning or whole-day absence, then the worked or rest blocks
    -- and hourly absences, then the afternoon's absence), k2 (start minute), k3 (at the same
    -- start, the worked slot before the hourly absence). The planned blocks are hidden by a
    -- whole-day absence; pending on the absence blocks of a whole day and on the planned ones.
    block as (
      select g.employee_id, g.date, null::int as template_id, null::int as weekday, 'absence' as kind,
             null::text as code, null::text as label, g.code as reason_code, g.name as reason_name, g.part,
             g.start_time, g.end_time, false as modified, g.status,
             case when g.status = 'cancellation_requested' then 'cancellation'
                  when g.whole and s.pending then 'request' end as pending,
             case g.part when 'afternoon' then 2 when 'hours' then 1 else 0 end as k1,
             coalesce(extract(epoch from g.start_time)::int / 60, 0) as k2, 1 as k3, g.id as k4
      from granted g
      join special s on s.employee_id = g.employee_id and s.date = g.date
      union all
      select s.employee_id, s.date, null, null, case when m.rest then 'rest' else 'work' end, m.code, m.label,
             null, null, null, m.start_time, m.end_time, true, null, case when s.pending then 'request' end, 1, m.k2, 0, m.k4
      from special s
      join modification m on m.employee_id = s.employee_id and m.date = s.date
      where not s.whole
      union all
      select s.employee_id, s.date, null, null, case when tb.template_id is null then 'rest' else 'work' end, tb.code, tb.label,
             null, null, null, tb.start_time, tb.end_time, false, null, case when s.pending then 'request' end,
             1, coalesce(tb.k2, 0), 0, coalesce(tb.k4, 0)
      from special s
      left join template_block tb on tb.template_id = s.template_id and tb.weekday = extract(isodow from s.date)::int
      where not s.whole and not s.modified
      union all
      select null, null, t.id, wd.weekday, case when tb.template_id is null then 'rest' else 'work' end, tb.code, tb.label,
             null, null, null, tb.start_time, tb.end_time, false, null, null, 1, coalesce(tb.k2, 0), 0, coalesce(tb.k4, 0)
      from tpl t
      cross join generate_series(1, 7) as wd(weekday)
      left join template_block tb on tb.template_id = t.id and tb.weekday = wd.weekday
      where exists (select 1 from emp_template et where et.template_id = t.id and et.templates = 1)
      union all
      select null, null, 0, 0, 'rest', null, null, null, null, null, null, null, false, null, null, 1, 0, 0, 0
      where exists (select 1 from emp)
    ),
    -- Each distinct block numbered (its rank among the distinct values).
    ranked as materialized (
      -- (byte order: any order numbers them, and the collation's would cost more than the rest)
      select b.*, dense_rank() over (order by b.kind collate "C", b.code collate "C", b.label collate "C",
                                              b.reason_code collate "C", b.reason_name collate "C", b.part collate "C",
                                              b.start_time, b.end_time, b.modified, b.status collate "C", b.pending collate "C") - 1 as bi
      from block b
    ),
    post_dict as materialized (
      select x.code, x.label, row_number() over (order by x.code, x.label) - 1 as i
      from (select distinct r.code, r.label from ranked r where r.code is not null) x
    ),
    reason_dict as materialized (
      select x.code, x.name, row_number() over (order by x.code, x.name) - 1 as i
      from (select distinct r.reason_code as code, r.reason_name as name from ranked r where r.kind = 'absence') x
    ),
    block_dict as (
      select distinct on (r.bi) r.bi,
             '{"kind":"' || r.kind || '","post":' || app_hidden.json_int(pd.i) || ',"reason":' || app_hidden.json_int(rd.i)
             || ',"part":' || app_hidden.json_text(r.part) || ',"start_time":' || app_hidden.json_hm(r.start_time)
             || ',"end_time":' || app_hidden.json_hm(r.end_time) || ',"modified":' || r.modified
             || ',"status":' || app_hidden.json_text(r.status) || ',"pending":' || app_hidden.json_text(r.pending) || '}' as text
      from ranked r
      left join post_dict pd on pd.code = r.code and pd.label is not distinct from r.label
      left join reason_dict rd on rd.code = r.reason_code and rd.name = r.reason_name
      order by r.bi
    ),
    -- Each cell as its blocks' numbers in order, then each distinct one numbered.
    cell_blocks as (
      select r.employee_id, r.date, r.template_id, r.weekday, array_agg(r.bi order by r.k1, r.k2, r.k3, r.k4) as blocks
      from ranked r
      group by r.employee_id, r.date, r.template_id, r.weekday
    ),
    cell_ranked as materialized (
      select c.*, dense_rank() over (order by c.blocks) - 1 as ci
      from cell_blocks c
    ),
    special_of_employee as (
      select c.employee_id, array_agg(c.date) as dates, array_agg(c.ci) as cis
      from cell_ranked c
      where c.employee_id is not null
      group by c.employee_id
    ),
    template_week as (
      select c.template_id, array_agg(c.ci order by c.weekday) as week
      from cell_ranked c
      where c.template_id > 0
      group by c.template_id
    ),
    -- Each employee's row, in the order of the days: a special cell, else the day of its one
    -- template's week while the template is valid, else a rest.
    grid_row as (
      select e.ord,
             '[' || (select string_agg(coalesce(se.cis[array_position(se.dates, d.date)],
                                                case when d.date between et.valid_from and et.valid_to then tw.week[d.weekday] end,
                                                rest.ci)::text, ',' order by d.date)
                     from days d) || ']' as text
      from emp e
      left join emp_template et on et.employee_id = e.id and et.templates = 1
      left join template_week tw on tw.template_id = et.template_id
      left join special_of_employee se on se.employee_id = e.id
      left join (select c.ci from cell_ranked c where c.template_id = 0) rest on true
    )
    select '{"from":' || app_hidden.json_date(p_from) || ',"to":' || app_hidden.json_date(p_to)
           || ',"employees":[' || coalesce((select string_agg('{"id":' || e.id || ',"name":' || app_hidden.json_text(e.name) || '}',
                                                             ',' order by e.ord) from emp e), '')
           || '],"holidays":[' || coalesce((select string_agg(
                '{"date":' || app_hidden.json_date(h.day) || ',"name":' || app_hidden.json_text(h.name) || '}', ',' order by h.day)
                from generate_series(extract(year from p_from)::int, extract(year from p_to)::int) y,
                     lateral app_public.public_holidays(y) h
                where h.day between p_from and p_to), '')
           || '],"posts":[' || coalesce((select string_agg('{"code":' || app_hidden.json_text(pd.code)
                                                           || ',"label":' || app_hidden.json_text(pd.label) || '}', ',' order by pd.i)
                                         from post_dict pd), '')
           || '],"reasons":[' || coalesce((select string_agg('{"code":' || app_hidden.json_text(rd.code)
                                                             || ',"name":' || app_hidden.json_text(rd.name) || '}', ',' order by rd.i)
                                           from reason_dict rd), '')
           || '],"blocks":[' || coalesce((select string_agg(bd.text, ',' order by bd.bi) from block_dict bd), '')
           || '],"cells":[' || coalesce((select string_agg(x.text, ',' order by x.ci)
                                         from (select distinct on (c.ci) c.ci, '[' || array_to_string(c.blocks, ',') || ']' as text
                                               from cell_ranked c order by c.ci) x), '')
           || '],"rows":[' || coalesce((select string_agg(r.text, ',' order by r.ord) from grid_row r), '')
           || ']}'
  );
end;
$$;

-- GET /api/planning/grid/?from=&to=&establishment=&team=: the team month's grid (above), for the
-- window, perimeter and filters of GET /api/planning/ (the same checks and errors: to before
-- from, more than 62 days, under to). JSON text, sent as written.
create or replace function app_public.planning_grid(p_from date default null, p_to date default null,
                                                    p_establishment int default null, p_team int default null)
returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_scope record := app_hidden.planning_scope(p_from, p_to, null, p_establishment, p_team);
begin
  return app_hidden.planning_grid(v_scope.employee_ids, v_scope.from_date, v_scope.to_date);
end;
$$;
comment on function app_public.planning_grid(date, date, integer, integer) is
'@behavior -*
Issue 29 point 6, GET /api/planning/grid/: the team month''s grid, compact (each post, reason, block and day once,
then per employee the index of each day), for the window, perimeter and filters of GET /api/planning/.';
--! EndIncluded planning/grid.sql
--! Included shift_change/triggers.sql
-- Guard and audit of day-change requests and day modifications.

-- A decided request (validated or refused) is read-only and cannot be deleted (400 under
-- status); a write never changes whose day it is, and each write advances the version by
-- exactly one. A deletion cascading from the deletion of the employee record is let through.
create or replace function app_private.tg_shift_change_requests__guard() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'DELETE' then
    if old.status <> 'pending'
       and exists (select 1 from app_public.employees e where e.id = old.employee_id) then
      perform app_hidden.invalid('status', 'Seule une demande en attente peut être retirée : une demande décidée est conservée.', 'WV106');
    end if;
    return old;
  end if;
  if old.status <> 'pending' then
    perform app_hidden.invalid('status', 'Cette demande a déjà été décidée : elle est en lecture seule.', 'WV106');
  end if;
  if new.employee_id <> old.employee_id or new.date <> old.date
     or new.author_account_id is distinct from old.author_account_id or new.created_at <> old.created_at then
    raise exception using errcode = 'WF190',
      message = 'Le salarié, la date et l’auteur d’une demande de modification ne changent pas.';
  end if;
  if new.version <> old.version + 1 then
    raise exception using errcode = 'WF190',
      message = 'Chaque écriture d’une demande de modification avance sa version d’une unité.';
  end if;
  return new;
end;
$$;
create or replace trigger _200_guard before update or delete on app_public.shift_change_requests
  for each row execute function app_private.tg_shift_change_requests__guard();

create or replace trigger _500_audit after insert or update on app_public.shift_change_requests
  for each row execute function app_private.tg__audit('shift_change_request');
create or replace trigger _500_audit_delete before delete on app_public.shift_change_requests
  for each row execute function app_private.tg__audit('shift_change_request');

create or replace trigger _500_audit after insert or update on app_public.day_modifications
  for each row execute function app_private.tg__audit('day_modification');
create or replace trigger _500_audit_delete before delete on app_public.day_modifications
  for each row execute function app_private.tg__audit('day_modification');
--! EndIncluded shift_change/triggers.sql
--! Included shift_change/functions.sql
-- Day-change requests (/api/shift-change-requests/): filing, reading, withdrawal, the two
-- decisions and the back-office correction. One function per route and per transition;
-- each runs as wfm_api under row-level security (outside the perimeter = not found).

insert into app_private.settings (key, value, description) values
  ('shift_change_notice_days', '7', 'Délai de prévenance d’une modification de journée, en jours (avertissement au détail)')
on conflict (key) do nothing;

-- The records of a set of requests, built in one statement (requester's name, reason label,
-- slots with their posts, names of the decider and of the corrector).
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_hidden.shift_change_records(p_ids int[]) returns table (id int, record jsonb)
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    with req as (
      select r.* from app_public.shift_change_requests r where r.id = any (p_ids)
    ),
    names as (
      select n.id, n.name
      from app_hidden.account_display_names(
             array(select x from req, unnest(array[req.decided_by, req.corrected_by, req.on_behalf_of]) x where x is not null)) n
    ),
    -- The queue's mark « par délégation de X » (sql/delegations/api.sql), for a caller holding a delegation.
    marks as (
      select app_hidden.current_account_has_delegation() as has_any
    )
    select r.id, jsonb_build_object(
      'id', r.id,
      'employee', r.employee_id,
      'employee_name', e.first_name || ' ' || e.last_name,
      'date', r.date,
      'reason', r.reason,
      'reason_label', rs.label,
      'comment', r.comment,
      'is_remote', r.is_remote,
      'is_offsite', r.is_offsite,
      'slots', sl.slots,
      'status', r.status,
      'version', r.version,
      'planned_description', r.planned_description,
      'planned_minutes', r.planned_minutes,
      'requested_minutes', r.requested_minutes,
      'decided_by', r.decided_by,
      'decided_by_name', dn.name,
      'on_behalf_of', r.on_behalf_of,
      'on_behalf_of_name', bn.name,
      'by_delegation_of', case when mk.has_any then app_hidden.delegation_mark(r.employee_id) end,
      'decided_at', r.decided_at,
      'decision_reason', r.decision_reason,
      'corrected_by', r.corrected_by,
      'corrected_by_name', cn.name,
      'corrected_at', r.corrected_at,
      'granted_slots', gs.slots,
      'granted_minutes', r.granted_minutes,
      'granted_gap_minutes', r.granted_gap_minutes,
      'created_at', r.created_at,
      'updated_at', r.updated_at)
    from req r
    left join app_public.employees e on e.id = r.employee_id
    left join app_public.shift_change_reasons rs on rs.code = r.reason
    left join names dn on dn.id = r.decided_by
    left join names cn on cn.id = r.corrected_by
    left join names bn on bn.id = r.on_behalf_of
    cross join marks mk
    cross join lateral (
      select coalesce(jsonb_agg(app_hidden.slot_json_with(r.slots[i], p.code, p.label) order by i), '[]'::jsonb) as slots
      from generate_subscripts(r.slots, 1) i
      left join app_public.posts p on p.id = (r.slots[i]).post_id
    ) sl
    cross join lateral (
      select case when r.granted_slots is not null
                  then coalesce(jsonb_agg(app_hidden.slot_json_with(r.granted_slots[i], p.code, p.label) order by i),
                                '[]'::jsonb) end as slots
      from generate_subscripts(r.granted_slots, 1) i
      left join app_public.posts p on p.id = (r.granted_slots[i]).post_id
    ) gs;
end;
$$;

create or replace function app_hidden.shift_change_record(p_id int) returns jsonb
language sql stable as $$
  select x.record from app_hidden.shift_change_records(array[p_id]) x;
$$;

-- The day as planned now (detail's current_day): label, net duration, slots with their
-- breaks, options and comment of a day modification.
create or replace function app_hidden.current_day_json(p_employee int, p_date date) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    'date', p_date,
    'label', app_hidden.day_label(d.slots),
    'minutes', app_hidden.slots_minutes(d.slots),
    'slots', app_hidden.slots_json(d.slots),
    'is_remote', coalesce(m.is_remote, false),
    'is_offsite', coalesce(m.is_offsite, false),
    'modified', m.id is not null,
    'comment', m.comment)
  from (select app_hidden.planned_slots(p_employee, p_date) as slots) d
  left join app_public.day_modifications m on m.employee_id = p_employee and m.date = p_date;
$$;

-- Warnings of the detail, for a pending request only (null otherwise, and when there is
-- nothing to report): the granted absence of that day, once per reason (a pending absence
-- request is not named), and the notice period of the agreement (shift_change_notice_days).
create or replace function app_hidden.shift_change_warnings(p_request app_public.shift_change_requests) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_warnings text[];
  v_filed date := app_hidden.business_date(p_request.created_at);
  v_notice int := coalesce((app_hidden.setting('shift_change_notice_days') #>> '{}')::int, 7);
begin
  if p_request.status <> 'pending' then
    return null;
  end if;
  v_warnings := array(
    select format('Absence accordée ce jour : %s (%s). Une absence accordée prévaut sur la modification de la journée.',
                  t.name, t.code)
    from app_public.absence_types t
    where t.id in (select a.type_id from app_public.absences a
                   where a.employee_id = p_request.employee_id
                     and p_request.date between a.date_start and a.date_end
                     and a.status in ('validated', 'cancellation_requested'))
    order by t.code);
  if p_request.date < v_filed then
    v_warnings := v_warnings || format('Délai de prévenance : la demande a été déposée le %s, après la journée concernée (%s).',
                                       app_hidden.fr_date(v_filed), app_hidden.fr_date(p_request.date));
  elsif p_request.date - v_filed < v_notice then
    v_warnings := v_warnings || format('Délai de prévenance de %s jours non respecté : demande déposée le %s pour le %s.',
                                       v_notice, app_hidden.fr_date(v_filed), app_hidden.fr_date(p_request.date));
  end if;
  return case when cardinality(v_warnings) = 0 then null else to_jsonb(v_warnings) end;
end;
$$;

-- Why a requested day changes nothing (null when it changes something): no slot and no
-- option; an option alone on a rest day; slots and options equal to the planned day.
create or replace function app_hidden.day_change_noop(p_slots app_public.slot[], p_is_remote boolean, p_is_offsite boolean,
                                           p_planned app_public.slot[], p_planned_remote boolean,
                                           p_planned_offsite boolean)
returns text
language sql immutable as $$
  select case
    when cardinality(p_slots) = 0 and not p_is_remote and not p_is_offsite then
      'La demande ne change rien à la journée : ajoutez ou modifiez un créneau, ou choisissez une option.'
    when cardinality(p_slots) = 0 and cardinality(p_planned) = 0 then
      'Ce jour est un jour de repos : une option seule ne change rien, ajoutez un créneau.'
    when app_hidden.same_slots(case when cardinality(p_slots) = 0 then p_planned else p_slots end, p_planned)
         and p_is_remote = p_planned_remote and p_is_offsite = p_planned_offsite then
      'La journée demandée est identique à la journée prévue : la demande ne change rien.'
  end;
$$;

-- POST /api/shift-change-requests/
-- One typed argument per key of the body: date, reason, comment?, is_remote?, is_offsite?,
-- slots? (an employee key is not passed: the request is always on the caller's own record).
-- Returns the record with has_recipient.
drop function if exists app_public.shift_change_create(jsonb);
create or replace function app_public.shift_change_create(p_date date, p_reason text, p_comment text default null,
                                                          p_is_remote boolean default null,
                                                          p_is_offsite boolean default null,
                                                          p_slots jsonb default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_employee int := app_hidden.current_employee_id();
  v_today date := app_hidden.today();
  v_errors jsonb := '{}';
  v_date date := p_date;
  v_reason text;
  v_comment text := nullif(btrim(p_comment), '');
  v_remote boolean := coalesce(p_is_remote, false);
  v_offsite boolean := coalesce(p_is_offsite, false);
  v_planned app_public.slot[];
  v_modification app_public.day_modifications;
  v_slots app_public.slot[];
  v_noop text;
  v_id int;
  v_name text;
  v_has_recipient boolean;
begin
  if v_employee is null then
    perform app_hidden.forbidden('Votre compte n’est rattaché à aucune fiche salarié : vous ne pouvez pas demander de modification de journée.', 'WF106');
  end if;

  -- The route schema requires date and reason; a GraphQL caller may still send nulls.
  if v_date is null then
    v_errors := app_hidden.add_error(v_errors, 'date', 'Ce champ est obligatoire.');
  end if;
  if p_reason is null or btrim(p_reason) = '' then
    v_errors := app_hidden.add_error(v_errors, 'reason', 'Ce champ est obligatoire.');
  elsif not exists (select 1 from app_public.shift_change_reasons r where r.code = p_reason) then
    v_errors := app_hidden.add_error(v_errors, 'reason',
      'Motif inconnu. Valeurs possibles : '
      || (select string_agg(r.code, ', ' order by r.position) from app_public.shift_change_reasons r) || '.');
  else
    v_reason := p_reason;
  end if;
  if char_length(v_comment) > app_hidden.comment_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'comment', app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;
  perform app_hidden.raise_errors(v_errors);

  if v_date < app_hidden.employee_retroactivity_limit(v_today) then
    perform app_hidden.invalid('date',
      format('Une demande de modification ne peut pas porter sur un jour antérieur de plus de %s jours : au plus tôt le %s.',
             app_hidden.retroactivity_days(), app_hidden.fr_date(app_hidden.employee_retroactivity_limit(v_today))), 'WV101');
  end if;
  if exists (select 1 from app_public.shift_change_requests r
             where r.employee_id = v_employee and r.date = v_date and r.status = 'pending') then
    perform app_hidden.invalid('date',
      format('Une demande de modification est déjà en attente pour le %s : retirez-la ou attendez sa décision.',
             app_hidden.fr_date(v_date)), 'WV102');
  end if;

  v_planned := app_hidden.planned_slots(v_employee, v_date);
  select * into v_modification from app_public.day_modifications m
  where m.employee_id = v_employee and m.date = v_date;
  v_slots := app_hidden.parse_day_slots(p_slots, 'slots', v_employee, v_date, v_planned);

  v_noop := app_hidden.day_change_noop(v_slots, v_remote, v_offsite, v_planned,
                                       coalesce(v_modification.is_remote, false), coalesce(v_modification.is_offsite, false));
  if v_noop is not null then
    perform app_hidden.invalid(null, v_noop, 'WV103');
  end if;

  insert into app_public.shift_change_requests
    (employee_id, date, reason, comment, is_remote, is_offsite, slots,
     planned_description, planned_minutes, requested_minutes, author_account_id)
  values
    (v_employee, v_date, v_reason, v_comment, v_remote, v_offsite, v_slots,
     app_hidden.day_label(v_planned), app_hidden.slots_minutes(v_planned),
     case when cardinality(v_slots) > 0 then app_hidden.slots_minutes(v_slots) else app_hidden.slots_minutes(v_planned) end,
     v_account)
  returning id into v_id;

  v_name := app_hidden.employee_name(v_employee);
  v_has_recipient := app_private.notify_filing(
    v_employee, v_date, 'planning.decide_shift_change', v_account,
    'Nouvelle demande de modification',
    format('%s demande une modification de sa journée du %s.', v_name, app_hidden.fr_date(v_date)),
    'Demande de modification sans valideur',
    format('La demande de modification %s pour le %s n’a aucun valideur : aucun compte actif ne peut la décider dans le périmètre du salarié.',
           app_hidden.de_name(v_name), app_hidden.fr_date(v_date)),
    'shift_change_request', v_id);

  return app_hidden.shift_change_record(v_id) || jsonb_build_object('has_recipient', v_has_recipient);
end;
$$;
comment on function app_public.shift_change_create(date, text, text, boolean, boolean, jsonb) is
'SPEC Day-change requests, POST /api/shift-change-requests/ and creation rules 1-6: files a request on a
day of the caller''s own planning (an employee in the body is ignored), pending with version 1, audited,
deciders notified (nothing is created if notifying fails). Returns the record with has_recipient.';

-- The hint of the decision panel (detail's can_decide): a pending request that the caller
-- may decide, as shift_change_for_decision checks (the back-office's abilities, one source).
-- Never NULL. The transitions check again. plpgsql: shift_change_abilities comes later in sql/ORDER.
create or replace function app_hidden.shift_change_decidable(p_request app_public.shift_change_requests) returns boolean
language plpgsql stable as $$
begin
  return coalesce(p_request.status = 'pending'
                  and (app_public.shift_change_abilities(p_request.id) ->> 'decide')::boolean, false);
end;
$$;

-- GET /api/shift-change-requests/<id>/: the record with current_day, warnings and can_decide.
create or replace function app_public.shift_change_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.shift_change_requests;
begin
  select * into v from app_public.shift_change_requests r where r.id = p_id;
  if v.id is null then
    perform app_hidden.not_found('Demande de modification introuvable.', 'WN101');
  end if;
  return app_hidden.shift_change_record(v.id)
         || jsonb_build_object('current_day', app_hidden.current_day_json(v.employee_id, v.date),
                               'warnings', app_hidden.shift_change_warnings(v),
                               'can_decide', app_hidden.shift_change_decidable(v));
end;
$$;
comment on function app_public.shift_change_get(integer) is
'SPEC Day-change requests, GET /api/shift-change-requests/<id>/: one request the caller reads (its own,
or the absences.view_absence_queue perimeter; else 404) with current_day, warnings and can_decide.';

-- DELETE /api/shift-change-requests/<id>/: the requester withdraws a pending request
-- (audit line Suppression; nobody is notified).
create or replace function app_public.shift_change_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.shift_change_requests;
begin
  select * into v from app_public.shift_change_requests r where r.id = p_id;
  if v.id is null then
    perform app_hidden.not_found('Demande de modification introuvable.', 'WN101');
  end if;
  if v.employee_id is distinct from app_hidden.current_employee_id() then
    perform app_hidden.forbidden('Seul le demandeur peut retirer sa demande de modification.', 'WF103');
  end if;
  if v.status <> 'pending' then
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être retirée : une demande décidée est conservée.', 'WV106');
  end if;
  delete from app_public.shift_change_requests r where r.id = p_id and r.status = 'pending';
  if not found then
    -- Decided in the meantime (the deletion waited for the decision's lock).
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être retirée : une demande décidée est conservée.', 'WV106');
  end if;
  return null;
end;
$$;
comment on function app_public.shift_change_delete(integer) is
'SPEC Day-change requests, DELETE /api/shift-change-requests/<id>/ and decision rule 5: the requester
withdraws a pending request (audit line Suppression, nobody notified); anybody else who reads it gets
403, a decided request 400 under status.';

-- Locks a request for a transition after the caller's rights were checked: a stale version
-- is 409 before any other check of the row, then a request that is no longer pending is 400
-- under status.
create or replace function app_hidden.shift_change_lock(p_id int, p_version int, p_action text default 'décidée')
returns app_public.shift_change_requests
language plpgsql volatile as $$
declare
  v app_public.shift_change_requests;
begin
  select * into v from app_public.shift_change_requests r where r.id = p_id for update;
  if v.id is null then
    perform app_hidden.not_found('Demande de modification introuvable.', 'WN101');
  end if;
  if p_version is distinct from v.version then
    perform app_hidden.conflict('Quelqu’un a déjà décidé ou modifié cette demande entre-temps : rechargez la file des demandes.', 'WC101');
  end if;
  if v.status <> 'pending' then
    perform app_hidden.invalid('status', format('Seule une demande en attente peut être %s.', p_action), 'WV106');
  end if;
  return v;
end;
$$;

-- A decision: the request is visible (else 404), the caller holds
-- planning.decide_shift_change on the employee (else 403: DA, Service Paie, ...), it is not
-- their own request (403), then the row is locked and its version and state checked.
create or replace function app_hidden.shift_change_for_decision(p_id int, p_version int) returns app_public.shift_change_requests
language plpgsql volatile as $$
declare
  v app_public.shift_change_requests;
  v_account int := app_hidden.current_account_id();
begin
  select * into v from app_public.shift_change_requests r where r.id = p_id;
  if v.id is null then
    perform app_hidden.not_found('Demande de modification introuvable.', 'WN101');
  end if;
  if not app_hidden.may(v_account, 'planning.decide_shift_change', v.employee_id) then
    perform app_hidden.forbidden('Votre rôle ne permet pas de décider une demande de modification de journée.', 'WF101');
  end if;
  if v.employee_id = app_hidden.current_employee_id() or v.author_account_id = v_account then
    perform app_hidden.forbidden('Vous ne pouvez pas décider votre propre demande : un autre valideur doit la traiter.', 'WF102');
  end if;
  return app_hidden.shift_change_lock(p_id, p_version);
end;
$$;

-- POST /api/shift-change-requests/<id>/validate/ {"version", "reason"?, "adjusted_slots"?}
-- Without adjusted_slots the requested day is granted (its slots, or the planned slots for
-- a request of options only). adjusted_slots grants another day for the request's date
-- (whatever date the payload names): it is stored next to the request (granted_slots,
-- granted_minutes, granted_gap_minutes = granted - requested), needs a reason, and must keep
-- the rules of the modulation (app_hidden.modulation_errors), each broken rule under its
-- own key, nothing written. adjusted_slots equal to the requested day is no adjustment. A
-- request corrected at the back-office needs a reason too. The day modification is created
-- or replaced (slots, options; the comment it already carries is kept).
create or replace function app_public.shift_change_validate(p_id int, p_version int, p_reason text default null,
                                                 p_adjusted_slots jsonb default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.shift_change_requests;
  v_account int := app_hidden.current_account_id();
  v_reason text := nullif(btrim(p_reason), '');
  v_planned app_public.slot[];
  v_requested app_public.slot[];
  v_granted app_public.slot[];
  v_final app_public.slot[];
  v_adjusted boolean := false;
  v_errors jsonb := '{}';
  v_recipient int;
  v_body text;
begin
  v := app_hidden.shift_change_for_decision(p_id, p_version);
  if char_length(v_reason) > app_hidden.comment_max_length() then
    perform app_hidden.invalid('reason', app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;

  v_planned := app_hidden.planned_slots(v.employee_id, v.date);
  v_requested := case when cardinality(v.slots) > 0 then v.slots else v_planned end;

  if p_adjusted_slots is not null and jsonb_typeof(p_adjusted_slots) <> 'null' then
    if jsonb_typeof(p_adjusted_slots) = 'array' and jsonb_array_length(p_adjusted_slots) = 0 then
      perform app_hidden.invalid('adjusted_slots',
        'La journée accordée doit comporter au moins un créneau : pour ne rien accorder, refusez la demande.', 'WV104');
    end if;
    v_granted := app_hidden.parse_day_slots(p_adjusted_slots, 'adjusted_slots', v.employee_id, v.date,
                                            v_requested, 'slots');
    v_adjusted := not app_hidden.same_slots(v_granted, v_requested);
    if v_adjusted then
      v_errors := app_hidden.modulation_errors(v.employee_id, v.date, v_granted);
    end if;
  end if;

  if v_reason is null and v_adjusted then
    v_errors := app_hidden.add_error(v_errors, 'reason',
      'Vous accordez une journée différente de celle demandée : indiquez le motif de l’ajustement.');
  elsif v_reason is null and v.corrected_by is not null then
    v_errors := app_hidden.add_error(v_errors, 'reason',
      'Cette demande a été corrigée au back-office : indiquez le motif de la validation.');
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, case when v_errors - 'reason' = '{}'::jsonb then 'WV105' else 'WV107' end);
  end if;

  perform app_private.set_audit_verb('Validation');
  update app_public.shift_change_requests r
  set status = 'validated',
      version = r.version + 1,
      decided_by = v_account,
      decided_at = app_hidden.now(),
      decision_reason = v_reason,
      granted_slots = case when v_adjusted then v_granted end,
      granted_minutes = case when v_adjusted then app_hidden.slots_minutes(v_granted) end,
      granted_gap_minutes = case when v_adjusted then app_hidden.slots_minutes(v_granted) - r.requested_minutes end
  where r.id = v.id;
  perform app_private.set_audit_verb('');

  v_final := case when v_adjusted then v_granted else v_requested end;
  insert into app_public.day_modifications
    (employee_id, date, slots, is_remote, is_offsite, source_request_id, created_by, updated_by)
  values (v.employee_id, v.date, v_final, v.is_remote, v.is_offsite, v.id, v_account, v_account)
  on conflict (employee_id, date) do update
    set slots = excluded.slots,
        is_remote = excluded.is_remote,
        is_offsite = excluded.is_offsite,
        source_request_id = excluded.source_request_id,
        updated_by = excluded.updated_by;

  v_recipient := app_private.employee_account_id(v.employee_id);
  if v_recipient is not null then
    if v_adjusted or v.corrected_by is not null then
      v_body := format('Votre demande de modification du %s a été validée avec modification. Journée accordée : %s. Motif : %s',
                       app_hidden.fr_date(v.date), app_hidden.slots_summary(v_final), v_reason);
    else
      v_body := format('Votre demande de modification du %s a été validée.', app_hidden.fr_date(v.date))
                || coalesce(' Motif : ' || v_reason, '');
    end if;
    perform app_private.notify(v_recipient, 'Demande de modification validée', v_body, 'info',
                               'shift_change_request', v.id);
  end if;
  return app_hidden.shift_change_record(v.id);
end;
$$;
comment on function app_public.shift_change_validate(integer, integer, text, jsonb) is
'SPEC Day-change requests, POST /api/shift-change-requests/<id>/validate/, decision rules 2-4 and
creation rule 7: with the current version, a holder of planning.decide_shift_change who is not the
requester grants the request, or with adjusted_slots another day for its date (a reason and the
modulation rules required); the day modification is created or replaced, audited, and the requester
notified.';

-- POST /api/shift-change-requests/<id>/refuse/ {"version", "reason"}: the planned day is
-- unchanged; the requester is notified (error level, the body ends with the reason).
create or replace function app_public.shift_change_refuse(p_id int, p_version int, p_reason text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.shift_change_requests;
  v_account int := app_hidden.current_account_id();
  v_reason text := nullif(btrim(p_reason), '');
  v_recipient int;
begin
  v := app_hidden.shift_change_for_decision(p_id, p_version);
  if v_reason is null then
    perform app_hidden.invalid('reason', 'Indiquez le motif du refus.', 'WV105');
  end if;
  if char_length(v_reason) > app_hidden.comment_max_length() then
    perform app_hidden.invalid('reason', app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;

  perform app_private.set_audit_verb('Refus');
  update app_public.shift_change_requests r
  set status = 'refused',
      version = r.version + 1,
      decided_by = v_account,
      decided_at = app_hidden.now(),
      decision_reason = v_reason
  where r.id = v.id;
  perform app_private.set_audit_verb('');

  v_recipient := app_private.employee_account_id(v.employee_id);
  if v_recipient is not null then
    perform app_private.notify(v_recipient, 'Demande de modification refusée',
      format('Votre demande de modification du %s a été refusée. Motif : %s', app_hidden.fr_date(v.date), v_reason),
      'error', 'shift_change_request', v.id);
  end if;
  return app_hidden.shift_change_record(v.id);
end;
$$;
comment on function app_public.shift_change_refuse(integer, integer, text) is
'SPEC Day-change requests, POST /api/shift-change-requests/<id>/refuse/ and decision rules 1-3: with the
current version and a non-empty reason, a holder of planning.decide_shift_change who is not the
requester refuses a pending request; the planned day is unchanged and the requester notified.';

-- Is the account an HR account for the correction: employee.change_employee_record held
-- through an explicit permission or a role attribution active today (a superuser's flag
-- alone does not count, as for deciders: SPEC Events rule 1). Never NULL.
create or replace function app_private.holds_hr_permission(p_account int) returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(
    exists (select 1 from app_public.account_permissions ap
            where ap.account_id = p_account and ap.permission_code = 'employee.change_employee_record')
    or exists (select 1 from app_public.role_attributions ra
               join app_public.role_permissions rp on rp.role_id = ra.role_id
               where ra.account_id = p_account and rp.permission_code = 'employee.change_employee_record'
                 and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date)),
    false);
$$;
revoke all on function app_private.holds_hr_permission(int) from public;
grant execute on function app_private.holds_hr_permission(int) to wfm_api;

-- Back-office correction of a pending request (no REST route; the back-office calls it):
-- by an HR account (employee.change_employee_record on the employee, held through a role or
-- an explicit permission: a superuser's status alone makes no HR account), never on its own
-- request, whatever surface calls it (GraphQL included); the slots (and, when given, the options) replace the requested ones under the
-- same rules as a filing; version + 1, corrected_by, an audit line Correction with the slots
-- before and after. A corrected request then needs a reason to be validated.
create or replace function app_public.shift_change_correct(p_id int, p_version int, p_slots jsonb,
                                                p_is_remote boolean default null, p_is_offsite boolean default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.shift_change_requests;
  v_account int := app_hidden.current_account_id();
  v_planned app_public.slot[];
  v_modification app_public.day_modifications;
  v_slots app_public.slot[];
  v_remote boolean;
  v_offsite boolean;
  v_noop text;
begin
  select * into v from app_public.shift_change_requests r where r.id = p_id;
  if v.id is null then
    perform app_hidden.not_found('Demande de modification introuvable.', 'WN101');
  end if;
  if not coalesce(app_hidden.may(v_account, 'employee.change_employee_record', v.employee_id), false)
     or not app_private.holds_hr_permission(v_account) then
    perform app_hidden.forbidden('Seul un compte RH peut corriger une demande de modification.', 'WF104');
  end if;
  if v.employee_id is not distinct from app_hidden.current_employee_id() or v.author_account_id = v_account then
    perform app_hidden.forbidden('Vous ne pouvez pas corriger votre propre demande.', 'WF105');
  end if;
  v := app_hidden.shift_change_lock(p_id, p_version, 'corrigée');

  v_planned := app_hidden.planned_slots(v.employee_id, v.date);
  select * into v_modification from app_public.day_modifications m
  where m.employee_id = v.employee_id and m.date = v.date;
  -- No slots given: the requested slots stay; an empty list: the hours of the day stay.
  v_slots := case when p_slots is null then v.slots
                  else app_hidden.parse_day_slots(p_slots, 'slots', v.employee_id, v.date, v_planned) end;
  v_remote := coalesce(p_is_remote, v.is_remote);
  v_offsite := coalesce(p_is_offsite, v.is_offsite);
  v_noop := app_hidden.day_change_noop(v_slots, v_remote, v_offsite, v_planned,
                                       coalesce(v_modification.is_remote, false), coalesce(v_modification.is_offsite, false));
  if v_noop is not null then
    perform app_hidden.invalid(null, v_noop, 'WV103');
  end if;
  if app_hidden.same_slots(v_slots, v.slots) and v_remote = v.is_remote and v_offsite = v.is_offsite then
    perform app_hidden.invalid(null, 'La correction ne change rien à la demande.', 'WV103');
  end if;

  perform app_private.set_audit_verb('Correction');
  update app_public.shift_change_requests r
  set slots = v_slots,
      is_remote = v_remote,
      is_offsite = v_offsite,
      requested_minutes = case when cardinality(v_slots) > 0 then app_hidden.slots_minutes(v_slots)
                               else r.planned_minutes end,
      version = r.version + 1,
      corrected_by = v_account,
      corrected_at = app_hidden.now()
  where r.id = v.id;
  perform app_private.set_audit_verb('');
  return app_hidden.shift_change_record(v.id);
end;
$$;
comment on function app_public.shift_change_correct(integer, integer, jsonb, boolean, boolean) is
'SPEC States and transitions, Day-change request (back-office correction): an HR account replaces the
slots (and options) of a pending request that is not its own, under the filing rules; version + 1,
corrected_by set, audit line with the slots before and after. A corrected request then needs a reason to
be validated.';
--! EndIncluded shift_change/functions.sql
--! Included absences/rules.sql
-- Declaration and write rules of absences (SPEC, Absences, rules 1-17): counting, half-days,
-- hours, overlap, caps, splitting, contract types, counters, retroactivity, agreement
-- warnings and notice periods. One evaluation function serves creation, correction,
-- validation with requalification and preview, so every path applies the same rules.

-- What an absence would be: the fields the rules read.
do $$
begin
  if to_regtype('app_hidden.absence_draft') is null then
    create type app_hidden.absence_draft as (
      employee_id int,
      type_id int,
      date_start date,
      date_end date,
      start_half text,
      end_half text,
      start_time time,
      end_time time
    );
  end if;
end;
$$;

-- Counting base of an employee: the base of the main workplace; none → ouvrables.
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_hidden.employee_count_base(p_employee int) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce((select es.count_base
                   from app_public.employees e
                   join app_public.establishments es on es.id = e.main_establishment_id
                   where e.id = p_employee), 'ouvrables');
end;
$$;

-- A counted day: not a Sunday, not a public holiday, and not a Saturday on the ouvrés base.
create or replace function app_hidden.is_counted_day(p_day date, p_base text) returns boolean
language sql immutable parallel safe as $$
  select extract(isodow from p_day) <> 7
     and (p_base = 'ouvrables' or extract(isodow from p_day) <> 6)
     and app_hidden.is_public_holiday(p_day) is not true;
$$;

-- Counted days of a period per civil year; a half-day bound counts half (CONTRACT 7:
-- start_half 'afternoon' = the morning of date_start is worked; end_half 'morning' = the
-- afternoon of date_end is worked). A loop, not a query: its cost is known to the planner
-- of the queries that call it (a generate_series of unknown bounds made them look huge).
create or replace function app_hidden.counted_days(p_base text, p_start date, p_end date, p_start_half text, p_end_half text)
returns table (year int, quantity numeric)
language plpgsql immutable parallel safe rows 2 as $$
declare
  v_holidays date[];
  v_day date := p_start;
  v_year int;
begin
  if p_start is null or p_end is null or p_end < p_start then
    return;
  end if;
  select array_agg(h.day) into v_holidays
  from generate_series(extract(year from p_start)::int, extract(year from p_end)::int) y,
       lateral app_public.public_holidays(y) h;
  while v_day <= p_end loop
    if extract(isodow from v_day) <> 7
       and (p_base = 'ouvrables' or extract(isodow from v_day) <> 6)
       and not (v_day = any (v_holidays)) then
      if v_year is distinct from extract(year from v_day)::int then
        if v_year is not null then
          return next;
        end if;
        v_year := extract(year from v_day)::int;
        year := v_year;
        quantity := 0;
      end if;
      quantity := quantity + 1
                  - case when v_day = p_start and p_start_half = 'afternoon' then 0.5 else 0 end
                  - case when v_day = p_end and p_end_half = 'morning' then 0.5 else 0 end;
    end if;
    v_day := v_day + 1;
  end loop;
  if v_year is not null then
    return next;
  end if;
end;
$$;

-- The n-th counted day after p_from (p_from excluded).
create or replace function app_hidden.add_working_days(p_from date, p_n int, p_base text) returns date
language plpgsql immutable parallel safe as $$
declare
  v_day date := p_from;
  v_left int := greatest(p_n, 1);
begin
  loop
    v_day := v_day + 1;
    if app_hidden.is_counted_day(v_day, p_base) then
      v_left := v_left - 1;
      exit when v_left = 0;
    end if;
  end loop;
  return v_day;
end;
$$;

-- Hours between two times of one day, as a decimal with two digits.
create or replace function app_hidden.hours_between(p_start time, p_end time) returns numeric
language sql immutable parallel safe as $$
  select round((extract(epoch from (p_end - p_start)) / 3600)::numeric, 2);
$$;

-- Time covered by an absence (same expression as app_public.absences.period).
create or replace function app_hidden.absence_period(p_start date, p_end date, p_start_half text, p_end_half text,
                                          p_start_time time, p_end_time time) returns tsrange
language sql immutable parallel safe as $$
  select case when p_start_time is not null then
           tsrange(p_start + p_start_time, p_start + p_end_time)
         else
           tsrange(p_start + case when p_start_half = 'afternoon' then time '12:00' else time '00:00' end,
                   (p_end + case when p_end_half = 'morning' then 0 else 1 end)
                     + case when p_end_half = 'morning' then time '12:00' else time '00:00' end)
         end;
$$;

-- Quantity of an absence per civil year: counted days on the employee's base, or hours
-- (an hourly absence lies on one date).
create or replace function app_hidden.absence_shares(p_employee int, p_unit text, p_start date, p_end date,
                                          p_start_half text, p_end_half text,
                                          p_start_time time, p_end_time time)
returns table (year int, quantity numeric)
language sql stable as $$
  select extract(year from p_start)::int, app_hidden.hours_between(p_start_time, p_end_time)
  where p_unit = 'hour' and p_start_time is not null and p_end_time is not null
  union all
  select c.year, c.quantity
  from app_hidden.counted_days(app_hidden.employee_count_base(p_employee), p_start, p_end, p_start_half, p_end_half) c
  where p_unit = 'day';
$$;

-- Texts of messages and notification bodies.
create or replace function app_hidden.quantity_fr(p_quantity numeric, p_unit text) returns text
-- stable, like the to_char wrappers it calls: an immutable SQL function calling a stable one is never
-- inlined, and was parsed and planned at each call.
-- French, as the screens write it (issue 29 point 5: « (1 jour) », not « (1.00 jour) »): no
-- trailing zeros, a decimal comma, the singular below 2 (« 1,5 jour », « 0,5 jour », « 2 jours »).
language sql stable as $$
  select replace(rtrim(rtrim(app_hidden.fmt_quantity(p_quantity), '0'), '.'), '.', ',') || ' '
         || case when p_unit = 'hour' then case when abs(p_quantity) < 2 then 'heure' else 'heures' end
                 else case when abs(p_quantity) < 2 then 'jour' else 'jours' end end;
$$;

-- 1.5 → "1 h 30"
create or replace function app_hidden.hours_fr(p_hours numeric) returns text
language sql immutable as $$
  select floor(p_hours)::int || ' h ' || lpad(round((p_hours - floor(p_hours)) * 60)::int::text, 2, '0');
$$;

-- '1 month' → "1 mois", '72 hours' → "72 heures", '60 days' → "60 jours", '1 year' → "1 an".
create or replace function app_hidden.interval_fr(p_interval interval) returns text
language sql immutable as $$
  select case
    when extract(year from p_interval) >= 1 and extract(month from p_interval) = 0 and extract(day from p_interval) = 0 then
      extract(year from p_interval)::int || case when extract(year from p_interval) > 1 then ' ans' else ' an' end
    when extract(year from p_interval) * 12 + extract(month from p_interval) > 0 then
      (extract(year from p_interval) * 12 + extract(month from p_interval))::int || ' mois'
    when extract(day from p_interval) > 0 then
      extract(day from p_interval)::int || case when extract(day from p_interval) > 1 then ' jours' else ' jour' end
    else
      (extract(epoch from p_interval) / 3600)::int || ' heures'
  end;
$$;

-- "le 20/11/2026", "le 20/11/2026 (matin)", "le 20/11/2026 de 09:00 à 11:00",
-- "du 20/11/2026 (après-midi) au 24/11/2026".
create or replace function app_hidden.absence_period_fr(p_start date, p_end date, p_start_half text, p_end_half text,
                                             p_start_time time, p_end_time time) returns text
-- stable, like the to_char wrappers it calls: an immutable SQL function calling a stable one is never
-- inlined, and was parsed and planned at each call.
language sql stable as $$
  select case
    when p_start_time is not null then
      format('le %s de %s à %s', app_hidden.fr_date(p_start), to_char(p_start_time, 'HH24:MI'), to_char(p_end_time, 'HH24:MI'))
    when p_start = p_end then
      'le ' || app_hidden.fr_date(p_start)
      || case when p_start_half = 'afternoon' then ' (après-midi)' when p_end_half = 'morning' then ' (matin)' else '' end
    else
      'du ' || app_hidden.fr_date(p_start) || case when p_start_half = 'afternoon' then ' (après-midi)' else '' end
      || ' au ' || app_hidden.fr_date(p_end) || case when p_end_half = 'morning' then ' (matin)' else '' end
  end;
$$;

-- "l'absence n° 12 (Congés payés, du 20/11/2026 au 24/11/2026)"
create or replace function app_hidden.absence_label(p_absence app_public.absences) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select format('l’absence n° %s (%s, %s)', p_absence.id, t.name,
                app_hidden.absence_period_fr(p_absence.date_start, p_absence.date_end, p_absence.start_half,
                                             p_absence.end_half, p_absence.start_time, p_absence.end_time))
  from app_public.absence_types t where t.id = p_absence.type_id;
$$;

-- The active statuses: drawn in the planning, counted, overlapping refused.
create or replace function app_hidden.absence_is_active(p_status text) returns boolean
language sql immutable parallel safe as $$
  select p_status in ('pending', 'validated', 'cancellation_requested');
$$;

-- The counter bucket an active absence holds on business date p_today: a granted absence
-- (validated or cancellation requested) that has started is Pris, anything else Planifiés.
create or replace function app_hidden.absence_counter_bucket(p_status text, p_date_start date, p_today date) returns text
language sql immutable parallel safe as $$
  select case when p_status in ('validated', 'cancellation_requested') and p_date_start <= p_today
              then 'taken' else 'planned' end;
$$;

-- Counters an absence would move: one line per consumable counter associated with the
-- type and per civil year of the period (an absence spanning two years moves each year's
-- counter for its share). counter_id is null when the counter of that year is not open.
-- p_shares: the draft's quantity per civil year, [{"year", "quantity"}], when the caller has
-- already counted it (app_private.absence_evaluate); null: counted here.
-- force_generic_plan: docs/architecture.md, Performance notes.
drop function if exists app_private.absence_counter_plan(app_hidden.absence_draft);
create or replace function app_private.absence_counter_plan(p_draft app_hidden.absence_draft, p_shares jsonb default null)
returns table (code text, counter_unit text, type_unit text, year int, quantity numeric, counter_id int)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select ca.counter_code, k.unit, t.unit, s.year, s.quantity, c.id
    from app_public.absence_types t
    join app_public.counter_associations ca on ca.absence_type_id = t.id and ca.is_active
    join app_public.counter_kinds k on k.code = ca.counter_code and k.is_consumable
    cross join lateral (
      select (x ->> 'year')::int as year, (x ->> 'quantity')::numeric as quantity
      from jsonb_array_elements(p_shares) x
      union all
      select sh.year, sh.quantity
      from app_hidden.absence_shares(p_draft.employee_id, t.unit, p_draft.date_start, p_draft.date_end,
                                     p_draft.start_half, p_draft.end_half, p_draft.start_time, p_draft.end_time) sh
      where p_shares is null) s
    left join app_public.counters c on c.employee_id = p_draft.employee_id and c.code = ca.counter_code
                                    and c.year = s.year and c.is_active
    where t.id = p_draft.type_id and s.quantity > 0
    order by ca.counter_code, s.year;
end;
$$;

-- Net journal position of absences per counter and bucket (what they hold now).
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.absence_counter_nets(p_absence_ids int[])
returns table (absence_id int, counter_id int, code text, year int, bucket text, quantity numeric)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select m.absence_id, c.id, c.code, c.year::int, m.bucket, sum(m.quantity)::numeric(8,2)
    from app_private.counter_movements m
    join app_public.counters c on c.id = m.counter_id
    where m.absence_id = any (p_absence_ids)
    group by m.absence_id, c.id, c.code, c.year, m.bucket
    having sum(m.quantity) <> 0
    order by m.absence_id, c.code, c.year, m.bucket;
end;
$$;

-- The draft of a stored absence corrected by typed values (PATCH, the correction preview, the
-- validation's correction): a key sent (p_sent, the keys as app_hidden.keys_sent resolves them)
-- wins, null included; a key not sent keeps the stored value. The employee never changes.
drop function if exists app_hidden.absence_draft_of(jsonb, app_public.absences);
create or replace function app_hidden.absence_draft_of(p_base app_public.absences, p_sent text[], p_type int,
                                                       p_date_start date, p_date_end date, p_start_half text,
                                                       p_end_half text, p_start_time time, p_end_time time)
returns app_hidden.absence_draft
language plpgsql stable as $$
declare
  d app_hidden.absence_draft;
begin
  d.employee_id := p_base.employee_id;
  d.type_id := case when app_hidden.sent(p_sent, 'type', false) then p_type else p_base.type_id end;
  d.date_start := case when app_hidden.sent(p_sent, 'date_start', false) then p_date_start else p_base.date_start end;
  d.date_end := case when app_hidden.sent(p_sent, 'date_end', false) then p_date_end else p_base.date_end end;
  d.start_half := case when app_hidden.sent(p_sent, 'start_half', false) then p_start_half else p_base.start_half end;
  d.end_half := case when app_hidden.sent(p_sent, 'end_half', false) then p_end_half else p_base.end_half end;
  d.start_time := case when app_hidden.sent(p_sent, 'start_time', false) then p_start_time else p_base.start_time end;
  d.end_time := case when app_hidden.sent(p_sent, 'end_time', false) then p_end_time else p_base.end_time end;
  return d;
end;
$$;

-- After a requalification or an adjustment, fields the new type cannot carry are dropped
-- unless the correction sends them (p_sent; then the rules refuse them): an hourly type has no
-- half-day, a day type has no hours, and a whole-day type is taken whole ("an adjustment must
-- take it whole"). An unchanged absence keeps what it has (a half-day stored before the rule
-- stays as it is).
drop function if exists app_hidden.absence_draft_normalize(app_hidden.absence_draft, jsonb, app_public.absences);
create or replace function app_hidden.absence_draft_normalize(p_draft app_hidden.absence_draft, p_sent text[],
                                                   p_base app_public.absences)
returns app_hidden.absence_draft
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := p_draft;
  v_type app_public.absence_types;
  v_adjusted boolean;
begin
  select * into v_type from app_public.absence_types t where t.id = d.type_id;
  if not found then
    return d;
  end if;
  v_adjusted := p_base.id is null
    or d.type_id is distinct from p_base.type_id
    or d.date_start is distinct from p_base.date_start
    or d.date_end is distinct from p_base.date_end;
  if not v_adjusted then
    return d;
  end if;
  if v_type.unit = 'hour' then
    if not app_hidden.sent(p_sent, 'start_half', false) then d.start_half := null; end if;
    if not app_hidden.sent(p_sent, 'end_half', false) then d.end_half := null; end if;
  else
    if not app_hidden.sent(p_sent, 'start_time', false) then d.start_time := null; end if;
    if not app_hidden.sent(p_sent, 'end_time', false) then d.end_time := null; end if;
    if not v_type.half_day_allowed then
      if not app_hidden.sent(p_sent, 'start_half', false) then d.start_half := null; end if;
      if not app_hidden.sent(p_sent, 'end_half', false) then d.end_half := null; end if;
    end if;
  end if;
  return d;
end;
$$;

-- Events of the employee that the period meets: [{id, title, start_at, end_at}].
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_private.absence_event_conflicts(p_employee int, p_period tsrange) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select coalesce(jsonb_agg(jsonb_build_object('id', e.id, 'title', e.title, 'start_at', e.start_at, 'end_at', e.end_at)
                            order by e.start_at, e.id), '[]'::jsonb)
  from app_public.event_participants p
  join app_public.events e on e.id = p.event_id
  where p.employee_id = p_employee
    and tstzrange(e.start_at, e.end_at)
        && tstzrange(lower(p_period) at time zone app_hidden.business_timezone(),
                     upper(p_period) at time zone app_hidden.business_timezone()));
end;
$$;

-- "du 20/11/2026 15:00 au 20/11/2026 16:00" for an event.
create or replace function app_hidden.event_period_fr(p_start timestamptz, p_end timestamptz) returns text
language sql stable as $$
  select format('du %s %s au %s %s',
                app_hidden.fr_date(app_hidden.business_date(p_start)),
                to_char(p_start at time zone app_hidden.business_timezone(), 'HH24:MI'),
                app_hidden.fr_date(app_hidden.business_date(p_end)),
                to_char(p_end at time zone app_hidden.business_timezone(), 'HH24:MI'));
$$;

-- The declaration rules, one function each (docs/architecture.md, "Where each rule lives").
-- Each returns its outcome {"errors": {field: [message]}, "warnings": [message]} (a few add
-- what the caller needs next: "plan", "events"); app_private.absence_evaluate composes them in
-- the order of the messages. They take the rows the evaluation already read (type, employee)
-- instead of reading them again, answer an empty outcome when what they need is missing, and
-- run as their caller (absence_evaluate, security definer). The rules that read no table are
-- one SQL expression (inlined into the caller's), those that query are plpgsql (plans kept by
-- the connection): docs/architecture.md, Performance notes.

-- An outcome with nothing to say.
-- stable like jsonb_build_object: a function declared less volatile than its body is never
-- inlined, and a SQL function that is not inlined is planned again in every transaction.
create or replace function app_hidden.rule_outcome(p_errors jsonb default '{}'::jsonb, p_warnings jsonb default '[]'::jsonb)
returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object('errors', coalesce(p_errors, '{}'::jsonb), 'warnings', coalesce(p_warnings, '[]'::jsonb));
$$;

-- The messages of one field, in order, without the rules that said nothing (null when none).
create or replace function app_hidden.messages(variadic p_messages text[]) returns jsonb
language sql stable parallel safe as $$
  select nullif(to_jsonb(array_remove(p_messages, null)), '[]'::jsonb);
$$;

-- One outcome from several, in their order: each field's messages and the warnings follow
-- those of the outcomes before (a null outcome is a rule that was not called).
create or replace function app_hidden.outcomes_merge(p_outcomes jsonb[]) returns jsonb
language plpgsql stable parallel safe as $$
declare
  v_errors jsonb := '{}'::jsonb;
  v_warnings jsonb := '[]'::jsonb;
  v_outcome jsonb;
  v_field text;
  v_messages jsonb;
begin
  foreach v_outcome in array p_outcomes loop
    continue when v_outcome is null;
    if v_outcome -> 'errors' <> '{}'::jsonb then
      for v_field, v_messages in select e.key, e.value from jsonb_each(v_outcome -> 'errors') e loop
        v_errors := v_errors || jsonb_build_object(v_field, coalesce(v_errors -> v_field, '[]'::jsonb) || v_messages);
      end loop;
    end if;
    v_warnings := v_warnings || coalesce(v_outcome -> 'warnings', '[]'::jsonb);
  end loop;
  return app_hidden.rule_outcome(v_errors, v_warnings);
end;
$$;

create or replace function app_private.absence_rule_identity(p_draft app_hidden.absence_draft,
                                                             p_employee_found boolean, p_type_found boolean)
returns jsonb
language sql stable as $$
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object(
    'employee', app_hidden.messages(case when (p_draft).employee_id is null then 'Ce champ est obligatoire.'
                                         when p_employee_found is not true then 'Salarié introuvable.' end),
    'type', app_hidden.messages(case when (p_draft).type_id is null then 'Ce champ est obligatoire.'
                                     when p_type_found is not true then 'Motif d’absence inconnu ou inactif.' end))));
$$;
comment on function app_private.absence_rule_identity(app_hidden.absence_draft, boolean, boolean) is
'SPEC Absences, fields employee and type: both are required; p_employee_found and p_type_found say
whether the employee, and an active type, were found (otherwise refused under its field).';

create or replace function app_private.absence_rule_period(p_draft app_hidden.absence_draft) returns jsonb
language sql stable as $$
  -- A draft without date_end lies on one date.
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object(
    'date_start', app_hidden.messages(
      case when (p_draft).date_start is null then 'Ce champ est obligatoire.' end,
      case when extract(year from (p_draft).date_start)
                not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year()
           then format('Date hors de la plage acceptée (années %s à %s).',
                       app_hidden.first_accepted_year(), app_hidden.last_accepted_year()) end),
    'date_end', app_hidden.messages(
      case when extract(year from coalesce((p_draft).date_end, (p_draft).date_start))
                not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year()
           then format('Date hors de la plage acceptée (années %s à %s).',
                       app_hidden.first_accepted_year(), app_hidden.last_accepted_year()) end,
      case when (p_draft).date_start is not null
                and coalesce((p_draft).date_end, (p_draft).date_start) < (p_draft).date_start
           then 'La date de fin ne peut pas précéder la date de début.'
           when coalesce((p_draft).date_end, (p_draft).date_start) - (p_draft).date_start > app_hidden.absence_max_days()
           then 'Une absence ne peut pas dépasser trois ans : déposez des périodes successives.' end),
    'start_half', app_hidden.messages(
      case when (p_draft).start_half not in ('morning', 'afternoon') then 'Valeurs possibles : morning, afternoon ou null.' end),
    'end_half', app_hidden.messages(
      case when (p_draft).end_half not in ('morning', 'afternoon') then 'Valeurs possibles : morning, afternoon ou null.' end))));
$$;
comment on function app_private.absence_rule_period(app_hidden.absence_draft) is
'SPEC Absences, fields date_start and date_end: the start is required, both dates lie in the accepted
years, the end does not precede the start, one absence spans at most app_hidden.absence_max_days(), and
the half-day bounds are morning, afternoon or null.';

create or replace function app_private.absence_rule_hourly(p_draft app_hidden.absence_draft, p_type app_public.absence_types)
returns jsonb
language sql stable as $$
  -- Nothing to say without a type and a start (the identity and period rules say it).
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object(
    'start_half', app_hidden.messages(
      case when (p_type).id is not null and (p_draft).date_start is not null and (p_type).unit = 'hour'
                and ((p_draft).start_half is not null or (p_draft).end_half is not null)
           then format('Le motif « %s » se pose en heures : pas de demi-journée.', (p_type).name) end),
    'start_time', app_hidden.messages(
      case when (p_type).id is null or (p_draft).date_start is null then null
           when (p_type).unit = 'hour' and ((p_draft).start_time is null or (p_draft).end_time is null)
           then 'Un motif en heures demande une heure de début et une heure de fin.'
           when (p_type).unit <> 'hour' and ((p_draft).start_time is not null or (p_draft).end_time is not null)
           then format('Le motif « %s » se pose en jours : retirez les heures de début et de fin.', (p_type).name) end),
    'end_time', app_hidden.messages(
      case when (p_type).id is not null and (p_draft).date_start is not null and (p_type).unit = 'hour'
                and (p_draft).end_time <= (p_draft).start_time
           then 'L’heure de fin doit suivre l’heure de début.' end),
    'date_end', app_hidden.messages(
      case when (p_type).id is not null and (p_draft).date_start is not null and (p_type).unit = 'hour'
                and coalesce((p_draft).date_end, (p_draft).date_start) <> (p_draft).date_start
           then 'Une absence en heures porte sur une seule date : la date de fin doit être celle du début.' end))));
$$;
comment on function app_private.absence_rule_hourly(app_hidden.absence_draft, app_public.absence_types) is
'SPEC Absences, declaration rule 5: an hourly type needs start and end hours, the end after the start,
on a single date and without half-day; a type counted in days takes no hours.';

create or replace function app_private.absence_rule_half_days(p_draft app_hidden.absence_draft, p_type app_public.absence_types)
returns jsonb
language sql stable as $$
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object(
    'start_half', app_hidden.messages(
      case when (p_type).id is null or (p_draft).date_start is null or (p_type).unit = 'hour' then null
           when (p_draft).date_start = coalesce((p_draft).date_end, (p_draft).date_start)
                and (p_draft).start_half = 'afternoon' and (p_draft).end_half = 'morning'
           then 'Une absence d’une seule journée ne peut pas commencer l’après-midi et finir le matin.'
           when not (p_type).half_day_allowed and ((p_draft).start_half = 'afternoon' or (p_draft).end_half = 'morning')
           then format('Le motif « %s » se pose par journées entières : pas de demi-journée.', (p_type).name) end))));
$$;
comment on function app_private.absence_rule_half_days(app_hidden.absence_draft, app_public.absence_types) is
'SPEC Absences, declaration rules 2 and 4: one day cannot start in the afternoon and end in the morning,
and a whole-day type (half-day possible false) refuses a half-day bound, under start_half.';

create or replace function app_private.absence_rule_count(p_quantity numeric, p_base text) returns jsonb
language sql stable as $$
  select app_hidden.rule_outcome(p_warnings => case when p_quantity = 0 then jsonb_build_array(format(
    'Cette période ne compte aucun jour décompté (base %s : dimanches et jours fériés exclus%s).',
    case when p_base = 'ouvres' then 'jours ouvrés' else 'jours ouvrables' end,
    case when p_base = 'ouvres' then ', samedis exclus' else '' end)) end);
$$;
comment on function app_private.absence_rule_count(numeric, text) is
'SPEC Absences, declaration rule 1: a period that counts no day on the employee''s base (Sundays and
public holidays excluded, Saturdays too on the ouvrés base) is accepted with a warning.';

create or replace function app_private.absence_rule_retroactivity(p_draft app_hidden.absence_draft, p_retro text, p_today date)
returns jsonb
language sql stable as $$
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object('date_start', app_hidden.messages(
    case when p_retro = 'employee' and (p_draft).date_start < app_hidden.employee_retroactivity_limit(p_today)
         then format('Une demande ne peut pas remonter au-delà de %s jours : la date de début doit être au plus tôt le %s.',
                     app_hidden.retroactivity_days(), app_hidden.fr_date(app_hidden.employee_retroactivity_limit(p_today)))
         when p_retro = 'manager' and (p_draft).date_start < app_hidden.manager_retroactivity_limit(p_today)
         then format('Une déclaration ne peut pas remonter avant le 1er décembre de l’année précédente : la date de début doit être au plus tôt le %s.',
                     app_hidden.fr_date(app_hidden.manager_retroactivity_limit(p_today))) end))));
$$;
comment on function app_private.absence_rule_retroactivity(app_hidden.absence_draft, text, date) is
'SPEC Absences, declaration rule 13: an employee''s own request starts no earlier than
app_hidden.employee_retroactivity_limit(today); a declaration for another no earlier than
app_hidden.manager_retroactivity_limit(today) (1 December of the previous year); p_retro null: no bound.';

create or replace function app_private.absence_rule_contract_types(p_draft app_hidden.absence_draft,
                                                                   p_type app_public.absence_types)
returns jsonb
language plpgsql stable as $$
declare
  v_allowed text;
  v_contract record;
begin
  if p_type.id is null or p_draft.date_start is null or p_draft.employee_id is null then
    return app_hidden.rule_outcome();
  end if;
  select string_agg(ct.code, ', ' order by ct.code) into v_allowed
  from app_public.absence_type_contract_types x
  join app_public.contract_types ct on ct.id = x.contract_type_id
  where x.absence_type_id = p_type.id;
  if v_allowed is null then
    return app_hidden.rule_outcome();
  end if;
  -- The contract in force on the first day.
  select ct.id, ct.code into v_contract
  from app_public.contracts c join app_public.contract_types ct on ct.id = c.contract_type_id
  where c.employee_id = p_draft.employee_id and c.start_date <= p_draft.date_start
    and (c.end_date is null or c.end_date >= p_draft.date_start)
  order by c.start_date desc limit 1;
  if v_contract.id is null then
    return app_hidden.rule_outcome(jsonb_build_object('type', jsonb_build_array(format(
      'Le motif « %s » est réservé aux contrats %s ; aucun contrat n’est en vigueur le %s.',
      p_type.name, v_allowed, app_hidden.fr_date(p_draft.date_start)))));
  elsif not exists (select 1 from app_public.absence_type_contract_types x
                    where x.absence_type_id = p_type.id and x.contract_type_id = v_contract.id) then
    return app_hidden.rule_outcome(jsonb_build_object('type', jsonb_build_array(format(
      'Le motif « %s » est réservé aux contrats %s ; le contrat en vigueur le %s est : %s.',
      p_type.name, v_allowed, app_hidden.fr_date(p_draft.date_start), v_contract.code))));
  end if;
  return app_hidden.rule_outcome();
end;
$$;
comment on function app_private.absence_rule_contract_types(app_hidden.absence_draft, app_public.absence_types) is
'SPEC Absences, declaration rule 8: a type listing contract types is refused, under type, when the
contract in force on the first day is not among them (the message names the contract held, or none).';

create or replace function app_private.absence_rule_overlap(p_draft app_hidden.absence_draft, p_period tsrange,
                                                            p_exclude_id int)
returns jsonb
language plpgsql stable as $$
begin
  return app_hidden.rule_outcome(coalesce(
    (select jsonb_build_object('date_start', jsonb_agg(format('Cette période chevauche %s.', app_hidden.absence_label(a))
                                                       order by a.date_start, a.id))
     from app_public.absences a
     where a.employee_id = p_draft.employee_id and app_hidden.absence_is_active(a.status)
       and a.id is distinct from p_exclude_id and a.period && p_period
     having count(*) > 0),
    '{}'::jsonb));
end;
$$;
comment on function app_private.absence_rule_overlap(app_hidden.absence_draft, tsrange, integer) is
'SPEC Absences, declaration rules 2 and 3: a period (p_period, app_hidden.absence_period) meeting another
active absence of the employee is refused, naming each one and its number; the morning and the
afternoon of one date do not overlap. p_exclude_id: the absence itself.';

create or replace function app_private.absence_rule_annual_cap(p_draft app_hidden.absence_draft,
                                                               p_type app_public.absence_types, p_exclude_id int)
returns jsonb
language plpgsql stable as $$
declare
  v_errors jsonb := '{}'::jsonb;
  v_warnings jsonb := '[]'::jsonb;
  v_total numeric;
  v_message text;
  s record;
begin
  if p_type.annual_cap is null then
    return app_hidden.rule_outcome();
  end if;
  for s in
    select x.year, x.quantity from app_hidden.absence_shares(p_draft.employee_id, p_type.unit, p_draft.date_start, p_draft.date_end,
                                                            p_draft.start_half, p_draft.end_half, p_draft.start_time, p_draft.end_time) x
  loop
    select s.quantity + coalesce(sum(o.quantity), 0) into v_total
    from app_public.absences a
    cross join lateral app_hidden.absence_shares(a.employee_id, p_type.unit, a.date_start, a.date_end, a.start_half,
                                                 a.end_half, a.start_time, a.end_time) o
    where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and a.date_start <= make_date(s.year, 12, 31) and a.date_end >= make_date(s.year, 1, 1)
      and o.year = s.year;
    if v_total > p_type.annual_cap then
      v_message := format(
        'Plafond annuel dépassé pour le motif « %s » sur l’année %s : demande de %s, total de %s avec cette demande, pour un plafond de %s.',
        p_type.name, s.year, app_hidden.quantity_fr(s.quantity, p_type.unit), app_hidden.quantity_fr(v_total, p_type.unit),
        app_hidden.quantity_fr(p_type.annual_cap, p_type.unit));
      if p_type.cap_overrun = 'refuse' then
        v_errors := app_hidden.add_error(v_errors, 'date_end', v_message);
      else
        v_warnings := v_warnings || to_jsonb(v_message);
      end if;
    end if;
  end loop;
  return app_hidden.rule_outcome(v_errors, v_warnings);
end;
$$;
comment on function app_private.absence_rule_annual_cap(app_hidden.absence_draft, app_public.absence_types, integer) is
'SPEC Absences, declaration rules 6 and 17: the quantity of the type over each civil year, across the
employee''s active absences, above the annual cap is refused under date_end (overrun Refuser, giving the
request, the year total and the cap) or accepted with that warning (Avertir).';

create or replace function app_private.absence_rule_non_splittable(p_draft app_hidden.absence_draft,
                                                                   p_type app_public.absence_types, p_base text,
                                                                   p_period tsrange, p_exclude_id int)
returns jsonb
language plpgsql stable as $$
declare
  v_other app_public.absences;
begin
  if p_type.id is null or p_type.splittable then
    return app_hidden.rule_outcome();
  end if;
  -- Another period of the same civil year separated by a gap (a counted day between them).
  select a.* into v_other from app_public.absences a
  where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
    and a.id is distinct from p_exclude_id
    and extract(year from a.date_start) in (extract(year from p_draft.date_start), extract(year from p_draft.date_end))
    and not (a.period && p_period)
    and exists (select 1
                from generate_series(least(a.date_end, p_draft.date_end) + 1,
                                     greatest(a.date_start, p_draft.date_start) - 1, interval '1 day') g
                where app_hidden.is_counted_day(g::date, p_base))
  order by a.date_start limit 1;
  if not found then
    return app_hidden.rule_outcome();
  end if;
  return app_hidden.rule_outcome(p_warnings => jsonb_build_array(format(
    'Le motif « %s » n’est pas fractionnable : %s, de la même année, est séparée de cette période.',
    p_type.name, app_hidden.absence_label(v_other))));
end;
$$;
comment on function app_private.absence_rule_non_splittable(app_hidden.absence_draft, app_public.absence_types, text, tsrange, integer) is
'SPEC Absences, declaration rule 7: for a non-splittable type, another period of the same civil year
separated from this one by a counted day (on base p_base) gives a warning; contiguous periods do not.';

create or replace function app_private.absence_rule_counters(p_draft app_hidden.absence_draft,
                                                             p_type app_public.absence_types, p_exclude_id int,
                                                             p_shares jsonb default null)
returns jsonb
language plpgsql stable as $$
declare
  v_errors jsonb := '{}'::jsonb;
  v_plan jsonb := '[]'::jsonb;
  v_held numeric;
  v_error text;
  r record;
begin
  if p_type.id is null or p_draft.employee_id is null then
    return app_hidden.rule_outcome() || jsonb_build_object('plan', v_plan);
  end if;
  for r in select * from app_private.absence_counter_plan(p_draft, p_shares) loop
    v_held := 0;
    if p_exclude_id is not null and r.counter_id is not null then
      -- What the absence itself holds on the counter is released by its new position.
      select coalesce(sum(n.quantity), 0) into v_held
      from app_private.absence_counter_nets(array[p_exclude_id]) n where n.counter_id = r.counter_id;
    end if;
    v_error := app_private.counter_request_error(r.code, r.year, r.counter_id, r.counter_unit, r.type_unit, p_type.name,
                                                 r.quantity, v_held);
    if v_error is not null then
      v_errors := app_hidden.add_error(v_errors, 'counters', v_error);
    end if;
    if r.counter_unit = r.type_unit and r.counter_id is not null then
      v_plan := v_plan || jsonb_build_object('counter_id', r.counter_id, 'code', r.code, 'year', r.year,
                                             'quantity', r.quantity);
    end if;
  end loop;
  return app_hidden.rule_outcome(v_errors) || jsonb_build_object('plan', v_plan);
end;
$$;
comment on function app_private.absence_rule_counters(app_hidden.absence_draft, app_public.absence_types, integer, jsonb) is
'SPEC Absences, declaration rule 9: each counter the type consumes needs an open counter for each civil
year of the period, in the unit of the type, with enough remaining (app_private.counter_request_error),
else an error under counters; "plan" lists the movements the absence would make. p_shares: the count
per year when the caller has it (app_private.absence_counter_plan).';

create or replace function app_private.absence_rule_agreement_warnings(p_draft app_hidden.absence_draft,
                                                                       p_type app_public.absence_types,
                                                                       p_is_polyvalent boolean,
                                                                       p_quantity numeric, p_exclude_id int)
returns jsonb
language plpgsql stable as $$
declare
  v_warnings jsonb := '[]'::jsonb;
  v_count int;
  v_total numeric;
  v_trial_end date;
begin
  if p_type.id is null then
    return app_hidden.rule_outcome();
  end if;
  if p_type.warn_max_hours_per_absence is not null and p_quantity > p_type.warn_max_hours_per_absence then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : %s demandées, au-delà des %s (trajet compris) prévues par l’accord.',
      p_type.name, app_hidden.quantity_fr(p_quantity, 'hour'), app_hidden.hours_fr(p_type.warn_max_hours_per_absence)));
  end if;
  if p_type.warn_max_per_quarter is not null then
    select count(*) into v_count from app_public.absences a
    where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and date_trunc('quarter', a.date_start) = date_trunc('quarter', p_draft.date_start);
    if v_count + 1 > p_type.warn_max_per_quarter then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : l’accord en prévoit %s par trimestre civil ; %s autre(s) absence(s) de ce motif existe(nt) déjà au %se trimestre %s.',
        p_type.name, p_type.warn_max_per_quarter, v_count, extract(quarter from p_draft.date_start),
        extract(year from p_draft.date_start)));
    end if;
  end if;
  if p_type.warn_max_hours_per_year is not null then
    select p_quantity + coalesce(sum(a.counted_quantity), 0) into v_total from app_public.absences a
    where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and extract(year from a.date_start) = extract(year from p_draft.date_start);
    if v_total > p_type.warn_max_hours_per_year then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : %s sur l’année %s avec cette demande, au-delà des %s par an prévues par l’accord.',
        p_type.name, app_hidden.quantity_fr(v_total, p_type.unit), extract(year from p_draft.date_start),
        app_hidden.quantity_fr(p_type.warn_max_hours_per_year, p_type.unit)));
    end if;
  end if;
  if p_type.warn_min_duration is not null and p_type.warn_max_duration is not null then
    if p_draft.date_end + 1 < p_draft.date_start + p_type.warn_min_duration or p_draft.date_end + 1 > p_draft.date_start + p_type.warn_max_duration then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : l’accord prévoit une durée de %s à %s.', p_type.name,
        app_hidden.interval_fr(p_type.warn_min_duration), app_hidden.interval_fr(p_type.warn_max_duration)));
    end if;
  elsif p_type.warn_max_duration is not null and p_draft.date_end + 1 > p_draft.date_start + p_type.warn_max_duration then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : durée supérieure aux %s prévus par l’accord.', p_type.name,
      app_hidden.interval_fr(p_type.warn_max_duration)));
  elsif p_type.warn_min_duration is not null and p_draft.date_end + 1 < p_draft.date_start + p_type.warn_min_duration then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : durée inférieure aux %s prévus par l’accord.', p_type.name,
      app_hidden.interval_fr(p_type.warn_min_duration)));
  end if;
  if p_type.warn_min_seniority is not null
     and coalesce((select min(c.start_date) from app_public.contracts c where c.employee_id = p_draft.employee_id), p_draft.date_start)
         + p_type.warn_min_seniority > p_draft.date_start then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : moins de %s d’ancienneté au %s (condition de l’accord).', p_type.name,
      app_hidden.interval_fr(p_type.warn_min_seniority), app_hidden.fr_date(p_draft.date_start)));
  end if;
  if p_is_polyvalent then
    select c.trial_end_date into v_trial_end from app_public.contracts c
    where c.employee_id = p_draft.employee_id and c.trial_end_date is not null
      and c.start_date <= p_draft.date_end and c.trial_end_date >= p_draft.date_start
    order by c.start_date desc limit 1;
    if found then
      v_warnings := v_warnings || to_jsonb(format(
        'Absence pendant la période d’essai d’un agent polyvalent (fin de la période d’essai le %s).',
        app_hidden.fr_date(v_trial_end)));
    end if;
  end if;
  return app_hidden.rule_outcome(p_warnings => v_warnings);
end;
$$;
comment on function app_private.absence_rule_agreement_warnings(app_hidden.absence_draft, app_public.absence_types, boolean, numeric, integer) is
'SPEC Absences, declaration rule 16: the agreement rules of the type only warn, never refuse (hours per
absence, absences per civil quarter, hours per year, duration bounds, seniority, trial period of a
polyvalent agent: p_is_polyvalent). p_quantity is the count of the draft.';

create or replace function app_private.absence_rule_notice_periods(p_draft app_hidden.absence_draft,
                                                                   p_type app_public.absence_types, p_base text,
                                                                   p_notice_from timestamptz)
returns jsonb
language plpgsql stable as $$
declare
  v_warnings jsonb := '[]'::jsonb;
  v_filed_on date := app_hidden.business_date(p_notice_from);
  v_limit date;
  v_notice interval;
  v_start_at timestamptz;
begin
  if p_notice_from is null or p_type.id is null then
    return app_hidden.rule_outcome();
  end if;
  if p_type.notice_working_days is not null then
    v_limit := app_hidden.add_working_days(v_filed_on, p_type.notice_working_days, p_base);
    if p_draft.date_start < v_limit then
      v_warnings := v_warnings || to_jsonb(format(
        'Délai de prévenance de %s jours %s non respecté pour le motif « %s » : demande du %s pour le %s.',
        p_type.notice_working_days, case when p_base = 'ouvres' then 'ouvrés' else 'ouvrables' end, p_type.name,
        app_hidden.fr_date(v_filed_on), app_hidden.fr_date(p_draft.date_start)));
    end if;
  end if;
  v_notice := p_type.notice_period;
  if p_type.notice_period_long is not null
     and not exists (select 1 from app_public.absences a
                     join app_public.absence_types t on t.id = a.type_id
                     where a.employee_id = p_draft.employee_id and t.code in ('MAT', 'ADO')
                       and app_hidden.absence_is_active(a.status)
                       and a.date_end between p_draft.date_start - app_hidden.notice_follow_days() and p_draft.date_start - 1) then
    -- Parental leave that does not directly follow a maternity or adoption leave.
    v_notice := p_type.notice_period_long;
  end if;
  if v_notice is not null then
    v_start_at := (p_draft.date_start + coalesce(p_draft.start_time, case when p_draft.start_half = 'afternoon' then time '12:00' else time '00:00' end))
                  at time zone app_hidden.business_timezone();
    if p_notice_from + v_notice > v_start_at then
      v_warnings := v_warnings || to_jsonb(format(
        'Délai de prévenance de %s non respecté pour le motif « %s » : demande du %s pour le %s.',
        app_hidden.interval_fr(v_notice), p_type.name, app_hidden.fr_date(v_filed_on), app_hidden.fr_date(p_draft.date_start)));
    end if;
  end if;
  return app_hidden.rule_outcome(p_warnings => v_warnings);
end;
$$;
comment on function app_private.absence_rule_notice_periods(app_hidden.absence_draft, app_public.absence_types, text, timestamptz) is
'SPEC Absences, declaration rule 16: the notice periods of the type (working days on base p_base, or a
duration; parental leave takes the long one unless it directly follows a maternity or adoption leave)
come out as warnings, for an employee''s own request only (p_notice_from: when it was filed; null: none).';

create or replace function app_private.absence_rule_event_conflicts(p_draft app_hidden.absence_draft, p_period tsrange)
returns jsonb
language plpgsql stable as $$
declare
  v_events jsonb := app_private.absence_event_conflicts(p_draft.employee_id, p_period);
begin
  if v_events = '[]'::jsonb then
    return app_hidden.rule_outcome() || jsonb_build_object('events', v_events);
  end if;
  return app_hidden.rule_outcome(p_warnings => (
           select coalesce(jsonb_agg(format('Conflit avec l’événement « %s » %s.', x.e ->> 'title',
                                            app_hidden.event_period_fr((x.e ->> 'start_at')::timestamptz,
                                                                       (x.e ->> 'end_at')::timestamptz))
                                     order by x.n), '[]'::jsonb)
           from jsonb_array_elements(v_events) with ordinality x(e, n)))
         || jsonb_build_object('events', v_events);
end;
$$;
comment on function app_private.absence_rule_event_conflicts(app_hidden.absence_draft, tsrange) is
'SPEC Events: an event of the employee during the absence is an alert, not a refusal: one warning per
event; "events" lists them for the alerts sent after the write.';

/*
 * Evaluates a draft against every declaration rule: reads the employee and the type once,
 * then composes the rule functions above in the order of their messages. Returns
 *   {"quantity": numeric|null, "unit": "day"|"hour"|null, "errors": {field: [msg]},
 *    "warnings": [msg], "plan": [{"counter_id", "code", "year", "quantity"}],
 *    "events": [{"id", "title", "start_at", "end_at"}]}
 * quantity is null when a rule refuses the absence (a counters error alone keeps it).
 *   p_exclude_id : the absence itself (edit, preview of a row, validation): excluded from
 *                  overlap, caps and splitting, and its own counter position is available.
 *   p_retro      : 'employee', 'manager' or null (app_private.absence_rule_retroactivity).
 *   p_notice_from: submission time of an employee's own request (notice periods), or null.
 *   p_today      : the business date.
 */
create or replace function app_private.absence_evaluate(p_draft app_hidden.absence_draft, p_exclude_id int, p_retro text,
                                             p_notice_from timestamptz, p_today date)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := p_draft;
  v_errors jsonb;
  v_type app_public.absence_types;
  v_employee_found boolean := false;
  v_is_polyvalent boolean;
  v_base text;
  v_quantity numeric;
  v_shares jsonb;
  v_period tsrange;
  v_outcome jsonb;
  v_counters jsonb;
  v_events jsonb;
begin
  if d.employee_id is not null then
    select true, e.is_polyvalent into v_employee_found, v_is_polyvalent from app_public.employees e where e.id = d.employee_id;
  end if;
  if d.type_id is not null then
    select * into v_type from app_public.absence_types t where t.id = d.type_id and t.is_active;
  end if;
  if d.date_end is null then
    d.date_end := d.date_start;
  end if;
  v_outcome := app_hidden.outcomes_merge(array[
    app_private.absence_rule_identity(d, v_employee_found, v_type.id is not null),
    app_private.absence_rule_period(d),
    app_private.absence_rule_hourly(d, v_type),
    app_private.absence_rule_half_days(d, v_type)]);
  v_errors := v_outcome -> 'errors';

  -- Without a readable period and type, no other rule can run.
  if v_employee_found is not true or v_type.id is null or d.date_start is null
     or v_errors ?| array['date_start', 'date_end', 'start_half', 'end_half', 'start_time', 'end_time'] then
    return jsonb_build_object('quantity', null, 'unit', v_type.unit, 'errors', v_errors, 'warnings', '[]'::jsonb,
                              'plan', '[]'::jsonb, 'events', '[]'::jsonb);
  end if;

  -- Count (rules 1 and 5): app_hidden.absence_shares on the base read once, per civil year
  -- (the counters rule takes the shares instead of counting again).
  v_base := app_hidden.employee_count_base(d.employee_id);
  if v_type.unit = 'hour' then
    v_quantity := app_hidden.hours_between(d.start_time, d.end_time);
    v_shares := jsonb_build_array(jsonb_build_object('year', extract(year from d.date_start)::int, 'quantity', v_quantity));
  else
    select coalesce(sum(c.quantity), 0), coalesce(jsonb_agg(jsonb_build_object('year', c.year, 'quantity', c.quantity)), '[]'::jsonb)
      into v_quantity, v_shares
    from app_hidden.counted_days(v_base, d.date_start, d.date_end, d.start_half, d.end_half) c;
  end if;
  v_period := app_hidden.absence_period(d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time);

  -- The other rules, in the order of their messages. A rule that the type or the call rules out
  -- (its outcome would be empty) is not called: docs/architecture.md, Performance notes.
  v_counters := app_private.absence_rule_counters(d, v_type, p_exclude_id, v_shares);
  v_events := app_private.absence_rule_event_conflicts(d, v_period);
  v_outcome := app_hidden.outcomes_merge(array[
    v_outcome,
    case when v_quantity = 0 then app_private.absence_rule_count(v_quantity, v_base) end,
    case when p_retro is not null then app_private.absence_rule_retroactivity(d, p_retro, p_today) end,
    app_private.absence_rule_contract_types(d, v_type),
    app_private.absence_rule_overlap(d, v_period, p_exclude_id),
    case when v_type.annual_cap is not null then app_private.absence_rule_annual_cap(d, v_type, p_exclude_id) end,
    case when not v_type.splittable then app_private.absence_rule_non_splittable(d, v_type, v_base, v_period, p_exclude_id) end,
    v_counters,
    app_private.absence_rule_agreement_warnings(d, v_type, v_is_polyvalent, v_quantity, p_exclude_id),
    case when p_notice_from is not null then app_private.absence_rule_notice_periods(d, v_type, v_base, p_notice_from) end,
    v_events]);
  v_errors := v_outcome -> 'errors';

  return jsonb_build_object(
    'quantity', case when exists (select 1 from jsonb_object_keys(v_errors) k where k <> 'counters') then null
                     else v_quantity end,
    'unit', v_type.unit,
    'errors', v_errors,
    'warnings', v_outcome -> 'warnings',
    'plan', v_counters -> 'plan',
    'events', v_events -> 'events');
end;
$$;
--! EndIncluded absences/rules.sql
--! Included documents/functions.sql
-- Documents: absence documents (justificatifs) and honorability certificates.
--
-- Files live in the storage directory (outside any web root); rows hold their metadata.
-- The HTTP layer streams uploads to storage, checks their type by content and their size,
-- and hands the metadata {filename, content_type, size_bytes, storage_key, sha256} to SQL
-- in the same transaction. Deleting a row queues its file in app_private.storage_garbage;
-- files are removed after commit (request handler or worker), so a rolled-back deletion
-- never loses a file. Consultation is not audited.

-- May the caller read the content of this employee's documents? The employee concerned,
-- or a holder of absences.view_absencedocument_file whose perimeter covers the record
-- (main or secondary workplace, team assignment, on-call extension).
-- Never NULL (app_private.never_null_guards): false for a caller without an employee record
-- outside the right, or for a NULL record.
create or replace function app_hidden.can_read_document_file(p_employee int) returns boolean
language sql stable as $$
  select app_hidden.is_current_employee(p_employee)
      or app_hidden.may(app_hidden.current_account_id(), 'absences.view_absencedocument_file', p_employee);
$$;

-- Employees whose absences the caller reads through /api/absences/ (SPEC, Permissions
-- rule 3): their own, and for the manager workspace the queue perimeter.
create or replace function app_hidden.absence_api_reader_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  return query
    select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
    union
    select app_hidden.perimeter_employee_ids('absences.view_absence_queue');
end;
$$;

-- Errors of uploaded-file metadata under p_field ({} when fine). The HTTP layer already
-- checked the bytes; this guards every other caller of the API functions.
create or replace function app_hidden.document_metadata_errors(p_files jsonb, p_field text) returns jsonb
language plpgsql immutable as $$
declare
  v_errors jsonb := '{}'::jsonb;
  f jsonb;
begin
  if p_files is null or jsonb_typeof(p_files) = 'null' then
    return v_errors;
  end if;
  if jsonb_typeof(p_files) <> 'array' then
    return app_hidden.add_error(v_errors, p_field, 'Les fichiers se déposent dans un corps multipart/form-data.');
  end if;
  for f in select * from jsonb_array_elements(p_files) loop
    if jsonb_typeof(f) <> 'object'
       or coalesce(f ->> 'storage_key', '') !~ '^[0-9a-f]{32}$'
       or coalesce(f ->> 'sha256', '') !~ '^[0-9a-f]{64}$'
       or length(coalesce(f ->> 'filename', '')) not between 1 and 255
       or coalesce(f ->> 'size_bytes', '') !~ '^[0-9]{1,9}$' then
      v_errors := app_hidden.add_error(v_errors, p_field, 'Fichier illisible : déposez-le de nouveau.');
    elsif f ->> 'content_type' not in ('application/pdf', 'image/jpeg', 'image/png') then
      v_errors := app_hidden.add_error(v_errors, p_field,
        'Format de fichier non accepté : seuls les fichiers PDF, JPG et PNG sont acceptés.');
    elsif (f ->> 'size_bytes')::int > app_hidden.document_max_bytes() or (f ->> 'size_bytes')::int < 1 then
      v_errors := app_hidden.add_error(v_errors, p_field, format('Fichier trop volumineux : %s Mo au plus par fichier.',
                                                                 app_hidden.document_max_bytes() / (1024 * 1024)));
    end if;
  end loop;
  return v_errors;
end;
$$;

-- Adds documents to an absence (as the caller: the insert policy applies).
create or replace function app_hidden.absence_documents_insert(p_absence_id int, p_files jsonb) returns int
language plpgsql volatile as $$
declare
  v_count int;
begin
  -- Most filings carry no document: no insert to start (and its row-level-security check).
  if p_files is null or p_files in ('null'::jsonb, '[]'::jsonb) then
    return 0;
  end if;
  insert into app_public.absence_documents (absence_id, filename, content_type, size_bytes, storage_key, sha256,
                                            uploaded_at, uploaded_by, uploaded_by_name)
  select p_absence_id, f ->> 'filename', f ->> 'content_type', (f ->> 'size_bytes')::int, f ->> 'storage_key',
         f ->> 'sha256', app_hidden.now(), app_hidden.current_account_id(),
         coalesce(app_hidden.account_display_name(app_hidden.current_account_id()), 'Inconnu')
  from jsonb_array_elements(coalesce(nullif(p_files, 'null'::jsonb), '[]'::jsonb)) f;
  get diagnostics v_count = row_count;
  return v_count;
end;
$$;

-- Files removed after commit: takes (and forgets) up to p_limit queued keys. The caller
-- removes the files before committing; if it fails, the keys stay queued.
create or replace function app_private.storage_garbage_take(p_limit int default 500) returns setof text
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  delete from app_private.storage_garbage g
  where g.storage_key in (select x.storage_key from app_private.storage_garbage x
                          order by x.queued_at limit p_limit for update skip locked)
  returning g.storage_key;
$$;

-- Stored files that no row names (the orphan sweep of the worker job purge_storage_garbage):
-- among p_keys, those of no absence document, honorability certificate or employee
-- attachment. Such files come from uploads whose commit outcome the server could not know
-- (kept, since the row may exist) or from a process killed mid-upload. plpgsql: the
-- attachments table is created after this file.
create or replace function app_private.storage_keys_unreferenced(p_keys text[]) returns setof text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return query
    select k.key
      from unnest(coalesce(p_keys, '{}'::text[])) as k(key)
     where k.key is not null
       and not exists (select 1 from app_public.absence_documents d where d.storage_key = k.key)
       and not exists (select 1 from app_public.honorability_certificates h where h.storage_key = k.key)
       and not exists (select 1 from app_public.employee_attachments e where e.storage_key = k.key);
end;
$$;

create or replace function app_private.tg__storage_garbage() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'DELETE' or old.storage_key is distinct from new.storage_key then
    insert into app_private.storage_garbage (storage_key) values (old.storage_key) on conflict do nothing;
  end if;
  return null;
end;
$$;

-- GET /api/absence-documents/<id>/file/: the metadata the handler needs to stream the file.
-- 404 when the document is outside the caller's reading (or absent), 403 when the caller
-- reads the absence but not the content.
create or replace function app_public.absence_document_file(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v record;
begin
  select d.filename, d.content_type, d.size_bytes, d.storage_key, a.employee_id into v
  from app_public.absence_documents d
  join app_public.absences a on a.id = d.absence_id
  where d.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
  if not found then
    perform app_hidden.not_found('Document introuvable.', 'WN401');
  end if;
  if not app_hidden.can_read_document_file(v.employee_id) then
    perform app_hidden.forbidden('Vous n’avez pas le droit de lire le contenu de ce justificatif.', 'WF401');
  end if;
  return jsonb_build_object('filename', v.filename, 'content_type', v.content_type, 'size_bytes', v.size_bytes,
                            'storage_key', v.storage_key);
end;
$$;
comment on function app_public.absence_document_file(integer) is
'SPEC Documents and other routes, GET /api/absence-documents/<id>/file/ and Permissions rule 5: what the
HTTP handler needs to stream one absence document; 404 when the document is absent or outside what the
caller reads, 403 when the caller reads the absence but not the content.';

-- Honorability certificates ------------------------------------------------------------

create or replace function app_hidden.honorability_json(p_employee int, p_public_url text) returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', h.employee_id, 'filename', h.filename, 'content_type', h.content_type,
                            'size_bytes', h.size_bytes, 'uploaded_at', h.uploaded_at, 'uploaded_by', h.uploaded_by_name)
         || case when app_hidden.can_read_document_file(h.employee_id)
                 then jsonb_build_object('file', coalesce(rtrim(p_public_url, '/'), '')
                                                 || '/api/employees/' || h.employee_id || '/honorability-certificate/file/')
                 else '{}'::jsonb end
  from app_public.honorability_certificates h
  where h.employee_id = p_employee;
$$;

-- Who deposits a certificate: the employee, the manager perimeter (queue readers, without
-- the right to read the content) and HR (employee.change_employee_record).
create or replace function app_hidden.can_deposit_honorability(p_employee int) returns boolean
language sql stable as $$
  select app_hidden.is_current_employee(p_employee)
      or app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', p_employee)
      or app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', p_employee);
$$;

create or replace function app_hidden.honorability_target(p_employee int) returns void
language plpgsql stable as $$
begin
  -- The record must be readable (directory, own, payroll perimeter): otherwise 404.
  if not exists (select 1 from app_public.employees e where e.id = p_employee) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
end;
$$;

-- A refusal about an employee's record (SPEC Errors: "404: row outside perimeter or a
-- colleague's row"): 404 unless the record is the caller's own or lies in the perimeter of a
-- permission the caller holds (whatever that permission is), and only then 403 with the
-- message. So a refusal never tells a caller that a record it cannot reach exists, or holds a
-- certificate.
create or replace function app_hidden.refuse_outside_or_forbid(p_employee int, p_message text, p_code text)
returns void
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if app_hidden.is_current_employee(p_employee)
     or exists (select 1 from app_public.permissions p
                where app_hidden.may(app_hidden.current_account_id(), p.code, p_employee)) then
    perform app_hidden.forbidden(p_message, p_code);
  end if;
  perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
end;
$$;

-- GET /api/employees/<id>/honorability-certificate/
create or replace function app_public.honorability_certificate_get(p_employee int, p_public_url text default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v jsonb;
begin
  perform app_hidden.honorability_target(p_employee);
  v := app_hidden.honorability_json(p_employee, p_public_url);
  if v is null then
    perform app_hidden.not_found('Aucune attestation d’honorabilité n’a été déposée pour ce salarié.', 'WN402');
  end if;
  return v;
end;
$$;
comment on function app_public.honorability_certificate_get(integer, text) is
'SPEC Documents, GET /api/employees/<id>/honorability-certificate/: the metadata of the employee''s
honorability certificate (the file key only for readers of the content, Permissions rule 5); 404 when
the record is not readable or no certificate was deposited.';

-- PUT /api/employees/<id>/honorability-certificate/ (multipart, one file under `file`).
-- p_file: the stored files' metadata the multipart reader lists under "file" (SQL accepts
-- only files of this request, sql/documents/uploads.sql).
drop function if exists app_public.honorability_certificate_put(int, jsonb, text);
create or replace function app_public.honorability_certificate_put(p_employee int, p_file jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb;
  f jsonb := nullif(p_file, 'null'::jsonb);
begin
  perform app_hidden.honorability_target(p_employee);
  if not app_hidden.can_deposit_honorability(p_employee) then
    perform app_hidden.refuse_outside_or_forbid(p_employee,
      'Vous n’avez pas le droit de déposer l’attestation d’honorabilité de ce salarié.', 'WF402');
  end if;
  v_errors := app_hidden.document_metadata_errors(f, 'file');
  if v_errors = '{}'::jsonb and (f is null or jsonb_typeof(f) <> 'array' or jsonb_array_length(f) <> 1) then
    v_errors := app_hidden.add_error(v_errors, 'file', 'Déposez exactement un fichier (PDF, JPG ou PNG).');
  end if;
  perform app_hidden.raise_errors(v_errors);
  f := f -> 0;
  insert into app_public.honorability_certificates (employee_id, filename, content_type, size_bytes, storage_key,
                                                    sha256, uploaded_at, uploaded_by, uploaded_by_name)
  values (p_employee, f ->> 'filename', f ->> 'content_type', (f ->> 'size_bytes')::int, f ->> 'storage_key',
          f ->> 'sha256', app_hidden.now(), app_hidden.current_account_id(),
          coalesce(app_hidden.account_display_name(app_hidden.current_account_id()), 'Inconnu'))
  on conflict (employee_id) do update
    set filename = excluded.filename, content_type = excluded.content_type, size_bytes = excluded.size_bytes,
        storage_key = excluded.storage_key, sha256 = excluded.sha256, uploaded_at = excluded.uploaded_at,
        uploaded_by = excluded.uploaded_by, uploaded_by_name = excluded.uploaded_by_name;
  return app_hidden.honorability_json(p_employee, p_public_url);
end;
$$;
comment on function app_public.honorability_certificate_put(integer, jsonb, text) is
'SPEC Documents and Limits, PUT /api/employees/<id>/honorability-certificate/: deposits or replaces the
honorability certificate of an employee (exactly one PDF, JPG or PNG file); without the right to
deposit, 404 outside the caller''s perimeter and 403 inside it. Returns the certificate.';

-- DELETE /api/employees/<id>/honorability-certificate/
create or replace function app_public.honorability_certificate_delete(p_employee int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.honorability_target(p_employee);
  if not app_hidden.can_deposit_honorability(p_employee) then
    perform app_hidden.refuse_outside_or_forbid(p_employee,
      'Vous n’avez pas le droit de retirer l’attestation d’honorabilité de ce salarié.', 'WF402');
  end if;
  if not exists (select 1 from app_public.honorability_certificates h where h.employee_id = p_employee) then
    perform app_hidden.not_found('Aucune attestation d’honorabilité n’a été déposée pour ce salarié.', 'WN402');
  end if;
  delete from app_public.honorability_certificates h where h.employee_id = p_employee;
  return null;
end;
$$;
comment on function app_public.honorability_certificate_delete(integer) is
'SPEC Documents, DELETE /api/employees/<id>/honorability-certificate/: removes the honorability
certificate of an employee (its file is deleted after commit); same refusals as the deposit, 404 when
none was deposited.';

-- GET /api/employees/<id>/honorability-certificate/file/
create or replace function app_public.honorability_certificate_file(p_employee int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.honorability_certificates;
begin
  perform app_hidden.honorability_target(p_employee);
  -- A reader without the right: 404 outside its perimeter, 403 inside, in both cases before
  -- saying whether a certificate exists.
  if not app_hidden.can_read_document_file(p_employee) then
    perform app_hidden.refuse_outside_or_forbid(p_employee,
      'Vous n’avez pas le droit de lire le contenu de cette attestation.', 'WF401');
  end if;
  select * into v from app_public.honorability_certificates h where h.employee_id = p_employee;
  if not found then
    perform app_hidden.not_found('Aucune attestation d’honorabilité n’a été déposée pour ce salarié.', 'WN402');
  end if;
  return jsonb_build_object('filename', v.filename, 'content_type', v.content_type, 'size_bytes', v.size_bytes,
                            'storage_key', v.storage_key);
end;
$$;
comment on function app_public.honorability_certificate_file(integer) is
'SPEC Documents and other routes, GET /api/employees/<id>/honorability-certificate/file/ and Permissions
rule 5: what the HTTP handler needs to stream the certificate; a reader without the right gets 404
outside its perimeter and 403 inside it, before learning whether a certificate exists.';

-- The request handlers purge the files of a request right after its commit, as the
-- authenticator (no acting account); the worker purges what they could not.
grant execute on function app_private.storage_garbage_take(int) to wfm_authenticator;
--! EndIncluded documents/functions.sql
--! Included absences/api.sql
-- The absence API (/api/absences/): one function per route and per state transition.
-- Each runs as wfm_api (security definer): reads and writes go through the policies, so a
-- row outside the caller's perimeter is simply not found. Rules live in
-- app_private.absence_evaluate (declaration rules) and app_private.absence_sync_counters
-- (counter journal); notifications go through the notification service in the same
-- transaction (a failed notification aborts the write).

-- Texts ---------------------------------------------------------------------------------

-- "« Congés payés » du 20/11/2026 au 24/11/2026"
-- (plpgsql: its plan is kept by the connection; a security definer SQL function is planned at
-- each call.)
create or replace function app_hidden.absence_subject(p_absence app_public.absences) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select format('« %s » %s', t.name,
                        app_hidden.absence_period_fr(p_absence.date_start, p_absence.date_end, p_absence.start_half,
                                                     p_absence.end_half, p_absence.start_time, p_absence.end_time))
          from app_public.absence_types t where t.id = p_absence.type_id);
end;
$$;

-- Guards shared by the transitions ------------------------------------------------------

-- The absence, locked, as the caller may write it (outside: 404).
create or replace function app_hidden.absence_lock(p_id int) returns app_public.absences
language plpgsql volatile as $$
declare
  v app_public.absences;
begin
  select * into v from app_public.absences a
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids())
  for update;
  if not found then
    perform app_hidden.not_found('Absence introuvable.', 'WN201');
  end if;
  return v;
end;
$$;

-- A decision sends the version it read; a stale one answers 409 before any other check.
create or replace function app_hidden.absence_check_version(p_absence app_public.absences, p_version int, p_required boolean)
returns void
language plpgsql stable as $$
begin
  if p_version is not null then
    if p_version <> p_absence.version then
      perform app_hidden.conflict(
        'Quelqu’un d’autre a déjà traité cette absence (version périmée) : rechargez la file et recommencez.', 'WC201');
    end if;
  elsif p_required then
    perform app_hidden.invalid('version', 'Ce champ est obligatoire.');
  end if;
end;
$$;

drop function if exists app_hidden.absence_check_version(app_public.absences, jsonb, boolean);

-- A comment or a reason over the limit of sql/core/input_contract.sql: the route schema
-- refuses it first; a GraphQL caller gets the same answer under the field.
create or replace function app_hidden.absence_check_text_length(p_field text, p_value text) returns void
language plpgsql immutable as $$
begin
  if char_length(p_value) > app_hidden.comment_max_length() then
    perform app_hidden.invalid(p_field, app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;
end;
$$;

-- The caller decides absences of this employee: the permission through a role, the
-- perimeter, and never their own request.
create or replace function app_hidden.absence_check_decider(p_absence app_public.absences) returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('absences.decide_absence') then
    perform app_hidden.forbidden('Votre rôle ne permet pas de décider des demandes d’absence.', 'WF201');
  end if;
  if not app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_absence.employee_id) then
    perform app_hidden.forbidden('Ce salarié est hors de votre périmètre de décision.', 'WF201');
  end if;
  if p_absence.employee_id = app_hidden.current_employee_id() then
    perform app_hidden.forbidden('Vous ne pouvez pas décider de votre propre demande d’absence.', 'WF202');
  end if;
end;
$$;

-- Whether the caller decides the absences of this employee, as absence_check_decider rules:
-- the right over the employee's perimeter, never on its own absence. Never NULL. Read by the
-- decision panel's hint (below) and the back-office's abilities (sql/absences/corrections.sql).
create or replace function app_hidden.may_decide_absence_of(p_employee int) returns boolean
language sql stable as $$
  select coalesce(app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_employee)
                  and app_hidden.is_current_employee(p_employee) is false, false);
$$;

-- The hint of the decision panel (GET detail's can_decide): would a decision of the caller
-- pass absence_check_decider, on a state a decision accepts (a pending request or a
-- requested cancellation)? Never NULL. The transitions check again.
create or replace function app_hidden.absence_decidable(p_absence app_public.absences) returns boolean
language sql stable as $$
  select coalesce(p_absence.status in ('pending', 'cancellation_requested')
                  and app_hidden.current_account_has('absences.decide_absence')
                  and app_hidden.may_decide_absence_of(p_absence.employee_id), false);
$$;

-- Manager-side corrections and previews of a row: never one's own absence, and only
-- inside the manager workspace's perimeter.
create or replace function app_hidden.absence_check_corrector(p_absence app_public.absences) returns void
language plpgsql stable as $$
begin
  if p_absence.employee_id = app_hidden.current_employee_id() then
    if app_hidden.current_account_has('absences.view_absence_queue') then
      perform app_hidden.forbidden(
        'Vous ne pouvez pas corriger votre propre absence : retirez-la et déposez une nouvelle demande.', 'WF204');
    end if;
    perform app_hidden.forbidden(
      'La correction d’une absence est réservée à l’encadrement : retirez votre demande en attente ou demandez l’annulation d’une absence accordée.',
      'WF203');
  end if;
  if not app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', p_absence.employee_id) then
    perform app_hidden.forbidden('La correction d’une absence est réservée à l’encadrement de son périmètre.', 'WF203');
  end if;
end;
$$;

-- May the caller file for this employee? For oneself always; for another, inside the
-- decision perimeter (a declaration). Returns the error under `employee`, or null.
create or replace function app_hidden.absence_filer_error(p_employee int) returns text
language sql stable as $$
  select case
    when p_employee is null or p_employee = app_hidden.current_employee_id() then null
    when app_hidden.employee_name(p_employee) is null then 'Salarié introuvable.'
    -- A delegation (issue 30) hands over the decisions, not the declarations: one's own rights only.
    when app_hidden.may_own(app_hidden.current_account_id(), 'absences.decide_absence', p_employee, app_hidden.now()) then null
    when app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_employee) then
      'Une délégation permet de décider des demandes, pas de déclarer une absence pour un autre salarié.'
    when app_hidden.current_account_has('absences.decide_absence') then
      'Ce salarié n’est pas dans votre périmètre : vous ne pouvez pas déclarer d’absence pour lui.'
    else 'Vous ne pouvez déposer une absence que pour vous-même.'
  end;
$$;

-- Writes that (re)check the rules across an employee's absences (overlap, annual caps,
-- splitting) take this lock first: parallel requests for one employee then see each other
-- and answer with the rule's message instead of racing (the exclusion constraint and the
-- counter row locks stay as the last guards).
create or replace function app_hidden.absence_lock_employee(p_employee int) returns void
language sql volatile as $$
  select pg_advisory_xact_lock(hashtext('absences:employee:' || p_employee));
$$;

-- The event-versus-absence alert: the author, and the employee when different.
create or replace function app_private.absence_alert_events(p_absence app_public.absences, p_events jsonb) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  e jsonb;
  v_recipient int;
begin
  for e in select * from jsonb_array_elements(coalesce(p_events, '[]'::jsonb)) loop
    for v_recipient in
      select distinct x from unnest(array[p_absence.author_account_id,
                                          app_private.employee_account_id(p_absence.employee_id)]) x
      where x is not null
    loop
      perform app_private.notify(v_recipient, 'Conflit entre une absence et un événement',
        format('L’absence %s %s chevauche l’événement « %s » %s.', app_hidden.absence_subject(p_absence),
               app_hidden.de_name(app_hidden.employee_name(p_absence.employee_id)), e ->> 'title',
               app_hidden.event_period_fr((e ->> 'start_at')::timestamptz, (e ->> 'end_at')::timestamptz)),
        'warning', 'absence', p_absence.id);
    end loop;
  end loop;
end;
$$;

-- Notifies the employee concerned (when they have an account).
create or replace function app_private.absence_notify_employee(p_absence app_public.absences, p_title text, p_body text,
                                                    p_level text)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_private.employee_account_id(p_absence.employee_id);
begin
  if v_account is not null then
    perform app_private.notify(v_account, p_title, p_body, p_level, 'absence', p_absence.id);
  end if;
end;
$$;

-- Grants a cancellation (decision or "Supprimer l'absence"): the row stays, with status
-- cancelled; its documents are deleted; its counters are recredited; the planning no
-- longer draws it.
create or replace function app_hidden.absence_cancel(p_absence app_public.absences, p_decision boolean)
returns app_public.absences
language plpgsql volatile as $$
declare
  v app_public.absences;
begin
  perform app_private.set_audit_verb('Annulation');
  update app_public.absences a set
    status = 'cancelled',
    version = a.version + 1,
    cancelled_by = app_hidden.current_account_id(),
    cancelled_at = app_hidden.now(),
    cancellation_decided_at = case when p_decision then app_hidden.now() else a.cancellation_decided_at end,
    cancellation_decided_by = case when p_decision then app_hidden.current_account_id() else a.cancellation_decided_by end
  where a.id = p_absence.id
  returning * into v;
  perform app_private.set_audit_verb('');
  delete from app_public.absence_documents d where d.absence_id = v.id;
  perform app_private.absence_sync_counters(v.id, 'cancel');
  return v;
end;
$$;

-- The retroactive window of a decider (app_hidden.manager_retroactivity_limit), applied when a
-- decider grants a cancellation or cancels a granted absence.
create or replace function app_hidden.absence_check_decider_window(p_absence app_public.absences) returns void
language plpgsql stable as $$
declare
  v_limit date := app_hidden.manager_retroactivity_limit(app_hidden.today());
begin
  if p_absence.date_start < v_limit then
    perform app_hidden.invalid('date_start', format(
      'Cette absence commence avant le %s : elle est hors de la période sur laquelle une décision peut revenir (1er décembre de l’année précédente).',
      app_hidden.fr_date(v_limit)), 'WV213');
  end if;
end;
$$;

-- Routes --------------------------------------------------------------------------------

-- GET /api/absences/?status=&employee=&from=&to=&establishment=&type=
-- establishment: the employee's main or secondary workplace (the back-office list's filter,
-- as for day-change requests); type: the absence type. Both come last so that positional
-- calls of the first signature keep their meaning.
drop function if exists app_public.absences_list(text, int, date, date, int, int, text);
-- The list's total and page of ids, for app_public.absences_list (jsonb, GraphQL and the
-- back-office) and app_public.absences_list_text (the REST route). Neither security definer nor
-- SET: it runs as its callers (wfm_api) with their plan_cache_mode, force_generic_plan, so that
-- its statements and those of its callees (perimeter, policies) keep their plans; the lists whose
-- index depends on each call's values are EXECUTEd, that is planned with those values
-- (docs/architecture.md, Performance notes).
create or replace function app_hidden.absences_list_page(p_status text, p_employee int, p_from date, p_to date,
                                                         p_page int, p_page_size int, p_establishment int, p_type int,
                                                         out o_count int, out o_ids int[])
language plpgsql stable as $$
declare
  v_limit int;
  v_offset int;
  -- Employees whose absences the list shows; null for the whole association (no filter).
  v_readers int[] := app_hidden.absences_list_readers();
begin
  -- The whole association's queue (one state, no other filter): the same plan at every call,
  -- the total a sum of the kept counts (app_private.absence_status_counts) of that state, the
  -- page a backward index-only scan of (status, date_start, id) that stops at its limit. The
  -- checks in the order of the general statement below: page, then filters.
  if v_readers is null and p_status is not null and p_employee is null and p_from is null and p_to is null
     and p_type is null and p_establishment is null then
    v_limit := app_hidden.page_limit(p_page_size);
    v_offset := app_hidden.page_offset(p_page, p_page_size);
    perform app_hidden.absences_filters_check(p_status, null, null);
    select coalesce(sum(c.n), 0)::int into o_count
    from app_private.absence_status_counts c
    where c.status = p_status;
    o_ids := array(select a.id from app_public.absences a
                   where a.status = p_status
                   order by a.date_start desc, a.id desc
                   limit v_limit offset v_offset);
    return;
  end if;
  -- Filters and perimeter: app_hidden.absences_selection (sql/absences/export.sql), shared
  -- with the export. Filtered by state and employee only, the total is a sum of the kept counts
  -- (app_private.absence_status_counts) rather than a count of every matching row.
  if p_from is null and p_to is null and p_type is null and p_establishment is null then
    execute 'select coalesce(sum(c.n), 0)::int
             from app_private.absence_status_counts c
             where ($1 is null or c.employee_id = any ($1))
               and ($2 is null or c.status = $2)
               and ($3 is null or c.employee_id = $3)'
      into o_count using v_readers, p_status, p_employee;
  end if;
  -- Not materialized: the page alone reads the index in date order and stops at its limit
  -- (the selection's filter check still runs: an unknown status is a 400 either way).
  execute 'with visible as not materialized (
             select a.id, a.date_start
             from app_hidden.absences_selection($1, $2, $3, $4, $5, $6, $7) a
           )
           select coalesce($8, (select count(*) from visible)),
                  array(select v.id from visible v order by v.date_start desc, v.id desc
                        limit app_hidden.page_limit($9) offset app_hidden.page_offset($10, $9))'
    into o_count, o_ids
    using v_readers, p_status, p_employee, p_from, p_to, p_establishment, p_type, o_count, p_page_size, p_page;
end;
$$;

create or replace function app_public.absences_list(p_status text default null, p_employee int default null,
                                         p_from date default null, p_to date default null,
                                         p_page int default 1, p_page_size int default 50,
                                         p_public_url text default null,
                                         p_establishment int default null, p_type int default null)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
-- force_generic_plan: for every statement it runs, nested ones included (app_hidden.absences_list_page).
set plan_cache_mode = force_generic_plan as $$
declare
  v_count int;
  v_ids int[];
begin
  select p.o_count, p.o_ids into v_count, v_ids
  from app_hidden.absences_list_page(p_status, p_employee, p_from, p_to, p_page, p_page_size, p_establishment, p_type) p;
  return jsonb_build_object('count', v_count, 'results', app_hidden.absences_json(v_ids, p_public_url, true));
end;
$$;
comment on function app_public.absences_list(text, integer, date, date, integer, integer, text, integer, integer) is
'SPEC Absences, GET /api/absences/ and Permissions rules 3 and 19: the absences the caller reads (its
own; for the manager workspace, the absences.view_absence_queue perimeter) filtered by status (an
unknown one gives 400 under status), employee, date window, establishment (main or secondary workplace)
and type, newest first; one page with the count, warnings null on every row.';

-- The same list for the REST route (GET /api/absences/): the total, and the page's records as the
-- JSON text absences_list holds under results, byte for byte (app_hidden.absences_list_json_text),
-- which the service sends as it comes (no jsonb built, printed, parsed and serialised again).
create or replace function app_public.absences_list_text(p_status text default null, p_employee int default null,
                                                         p_from date default null, p_to date default null,
                                                         p_page int default 1, p_page_size int default 50,
                                                         p_public_url text default null,
                                                         p_establishment int default null, p_type int default null,
                                                         out count int, out results text)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
declare
  v_ids int[];
begin
  select p.o_count, p.o_ids into count, v_ids
  from app_hidden.absences_list_page(p_status, p_employee, p_from, p_to, p_page, p_page_size, p_establishment, p_type) p;
  results := app_hidden.absences_list_json_text(v_ids, p_public_url);
end;
$$;

-- GET /api/absences/<id>/: the record, its documents, whether the caller may decide it now
-- (can_decide), and for the employee and the queue perimeter the planned day of the first day.
create or replace function app_public.absence_get(p_id int, p_public_url text default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
begin
  select * into v from app_public.absences a
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
  if not found then
    perform app_hidden.not_found('Absence introuvable.', 'WN201');
  end if;
  return app_hidden.absence_json(v.id, p_public_url)
         || jsonb_build_object('can_decide', app_hidden.absence_decidable(v))
         || case when v.employee_id = app_hidden.current_employee_id()
                   or app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', v.employee_id)
                 then jsonb_build_object('planned_day', app_hidden.planned_day_json(v.employee_id, v.date_start))
                 else '{}'::jsonb end;
end;
$$;
comment on function app_public.absence_get(integer, text) is
'SPEC Absences, GET /api/absences/<id>/: one absence the caller reads (else 404) with its documents (the
file key only for readers of the content, Permissions rule 5), whether the caller may decide it now
(can_decide) and, for the employee and the queue perimeter, the planned day of its first day.';

-- POST /api/absences/: an employee's request for themselves is born pending (deciders
-- notified); a manager's declaration for an employee of the decision perimeter is born
-- validated (nobody notified, no decision date). The author decides the state, not the role.
-- Typed arguments, one per field of the body (the route schema has checked their types);
-- the rules check what a GraphQL caller may still send (missing fields, a long comment).
drop function if exists app_public.absence_create(jsonb, text);
create or replace function app_public.absence_create(
  p_employee int, p_type int, p_date_start date, p_date_end date default null,
  p_start_half text default null, p_end_half text default null,
  p_start_time time default null, p_end_time time default null,
  p_comment text default null, p_add_documents jsonb default null, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp
-- force_generic_plan for every statement it runs, nested ones included (docs/architecture.md, Performance notes).
set plan_cache_mode = force_generic_plan as $$
declare
  v_account int := app_hidden.current_account_id();
  v_today date := app_hidden.today();
  v_now timestamptz := app_hidden.now();
  -- A creation without date_end lies on one date (hourly types, single days).
  d app_hidden.absence_draft := row(p_employee, p_type, p_date_start, coalesce(p_date_end, p_date_start),
                                    p_start_half, p_end_half, p_start_time, p_end_time);
  v_comment text := nullif(btrim(p_comment), '');
  v_own boolean;
  v_filer_error text;
  v_eval jsonb;
  v_errors jsonb;
  v_absence app_public.absences;
  v_has_recipient boolean;
  v_subject text;
  v_name text;
begin
  v_filer_error := app_hidden.absence_filer_error(d.employee_id);
  if v_filer_error is not null then
    perform app_hidden.invalid('employee', v_filer_error, 'WV200');
  end if;
  v_own := d.employee_id = app_hidden.current_employee_id();
  if d.employee_id is not null then
    perform app_hidden.absence_lock_employee(d.employee_id);
  end if;
  v_eval := app_private.absence_evaluate(d, null, case when v_own then 'employee' else 'manager' end,
                                         case when v_own then v_now end, v_today);
  v_errors := (v_eval -> 'errors') || app_hidden.document_metadata_errors(p_add_documents, 'add_documents');
  if char_length(v_comment) > app_hidden.comment_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'comment', app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV200');
  end if;

  insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, start_time,
                                   end_time, comment, status, counted_quantity, counted_unit, author_account_id,
                                   submitted_at, warnings)
  values (d.employee_id, d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time,
          v_comment, case when v_own then 'pending' else 'validated' end,
          (v_eval ->> 'quantity')::numeric, v_eval ->> 'unit', v_account,
          case when v_own then v_now end, v_eval -> 'warnings')
  returning * into v_absence;

  perform app_hidden.absence_documents_insert(v_absence.id, p_add_documents);
  -- The counters' target is the plan evaluated above (no error: its counters are open, in the type's unit).
  perform app_private.absence_sync_counters(v_absence.id, 'create', v_today, v_eval -> 'plan');
  perform app_private.absence_alert_events(v_absence, v_eval -> 'events');

  if v_own then
    v_subject := app_hidden.absence_subject(v_absence);
    v_name := app_hidden.employee_name(v_absence.employee_id);
    v_has_recipient := app_private.notify_filing(
      v_absence.employee_id, v_absence.date_start, 'absences.decide_absence', v_account,
      'Nouvelle demande d''absence',
      format('%s demande une absence %s (%s).', v_name, v_subject,
             app_hidden.quantity_fr(v_absence.counted_quantity, v_absence.counted_unit)),
      'Demande d''absence sans valideur',
      format('La demande d’absence %s %s n’a aucun valideur : aucun compte habilité à décider des absences ne couvre ce salarié. Un administrateur doit la traiter.',
             v_subject, app_hidden.de_name(v_name)),
      'absence', v_absence.id);
  end if;

  return app_hidden.absence_json(v_absence.id, p_public_url)
         || jsonb_build_object('has_recipient', v_has_recipient);
end;
$$;
comment on function app_public.absence_create(integer, integer, date, date, text, text, time, time, text, jsonb, text) is
'SPEC Absences, POST /api/absences/ and declaration rules 1-13: files an absence. The request of an
employee for their own record is born pending (counters reserved, deciders notified); the declaration of
a manager for an employee of the decision perimeter is born validated (nobody notified): the author
decides the state, not the role. Returns the absence with its warnings.';

-- The preview answer of CONTRACT section 4.
create or replace function app_hidden.absence_preview_answer(p_eval jsonb, p_effects jsonb) returns jsonb
-- stable, like the to_char wrappers it calls: an immutable SQL function calling a stable one is never
-- inlined, and was parsed and planned at each call.
language sql stable as $$
  select jsonb_build_object(
    'quantity', app_hidden.fmt_quantity((p_eval ->> 'quantity')::numeric),
    'unit', p_eval -> 'unit',
    'counter_effects', coalesce(p_effects, '[]'::jsonb),
    'warnings', coalesce(p_eval -> 'warnings', '[]'::jsonb),
    'errors', coalesce(p_eval -> 'errors', '{}'::jsonb));
$$;

-- POST /api/absences/preview/: what a creation would do, without writing anything. Always
-- answers (errors are part of the answer). Without `employee`, the caller's own record.
-- The typed arguments of absence_create (the comment, which changes nothing, aside).
drop function if exists app_public.absence_preview(jsonb);
create or replace function app_public.absence_preview(
  p_employee int, p_type int, p_date_start date, p_date_end date default null,
  p_start_half text default null, p_end_half text default null,
  p_start_time time default null, p_end_time time default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := row(p_employee, p_type, p_date_start, coalesce(p_date_end, p_date_start),
                                    p_start_half, p_end_half, p_start_time, p_end_time);
  v_today date := app_hidden.today();
  v_filer_error text;
  v_own boolean;
  v_eval jsonb;
  v_bucket text;
begin
  d.employee_id := coalesce(d.employee_id, app_hidden.current_employee_id());
  v_filer_error := app_hidden.absence_filer_error(d.employee_id);
  if v_filer_error is not null then
    return app_hidden.absence_preview_answer(
      jsonb_build_object('quantity', null,
                         'unit', (select t.unit from app_public.absence_types t where t.id = d.type_id and t.is_active),
                         'warnings', '[]'::jsonb,
                         'errors', jsonb_build_object('employee', jsonb_build_array(v_filer_error))),
      '[]'::jsonb);
  end if;
  v_own := d.employee_id = app_hidden.current_employee_id();
  v_eval := app_private.absence_evaluate(d, null, case when v_own then 'employee' else 'manager' end,
                                         case when v_own then app_hidden.now() end, v_today);
  v_bucket := case when not coalesce(v_own, false) and d.date_start <= v_today then 'taken' else 'planned' end;
  return app_hidden.absence_preview_answer(v_eval, app_private.absence_counter_effects(v_eval -> 'plan', v_bucket, null));
end;
$$;
comment on function app_public.absence_preview(integer, integer, date, date, text, text, time, time) is
'SPEC Absences, POST /api/absences/preview/ and preview rules 1-4: what creating this body would do
(quantity, unit, counter_effects, warnings, errors keyed by the field to correct), writing nothing;
without employee, for the caller''s own record.';

-- The correction keys of an absence, in the order of app_hidden.absence_draft_of's arguments.
create or replace function app_hidden.absence_correction_keys() returns text[]
language sql immutable parallel safe as $$
  select array['type', 'date_start', 'date_end', 'start_half', 'end_half', 'start_time', 'end_time'];
$$;

-- POST /api/absences/<id>/preview/: what a correction would do (manager side). The row
-- excludes itself from overlap, caps and splitting; effects are the difference with what
-- it holds now. The body of a creation, typed, with the keys sent (p_sent): a key left out
-- keeps the stored value; the employee never changes.
drop function if exists app_public.absence_preview_row(int, jsonb);
create or replace function app_public.absence_preview_row(
  p_id int, p_type int default null, p_date_start date default null, p_date_end date default null,
  p_start_half text default null, p_end_half text default null, p_start_time time default null,
  p_end_time time default null, p_sent text[] default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  d app_hidden.absence_draft;
  v_sent text[] := app_hidden.keys_sent(p_sent, app_hidden.absence_correction_keys(),
    array[p_type is not null, p_date_start is not null, p_date_end is not null, p_start_half is not null,
          p_end_half is not null, p_start_time is not null, p_end_time is not null]);
  v_today date := app_hidden.today();
  v_eval jsonb;
  v_bucket text;
begin
  select * into v from app_public.absences a
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
  if not found then
    perform app_hidden.not_found('Absence introuvable.', 'WN201');
  end if;
  perform app_hidden.absence_check_corrector(v);
  d := app_hidden.absence_draft_normalize(
    app_hidden.absence_draft_of(v, v_sent, p_type, p_date_start, p_date_end, p_start_half, p_end_half, p_start_time, p_end_time),
    v_sent, v);
  v_eval := app_private.absence_evaluate(d, v.id, 'manager',
                                         case when v.author_account_id = app_private.employee_account_id(v.employee_id)
                                              then v.submitted_at end, v_today);
  v_bucket := app_hidden.absence_counter_bucket(v.status, d.date_start, v_today);
  return app_hidden.absence_preview_answer(v_eval, app_private.absence_counter_effects(v_eval -> 'plan', v_bucket, v.id));
end;
$$;
comment on function app_public.absence_preview_row(integer, integer, date, date, text, text, time, time, text[]) is
'SPEC Absences, POST /api/absences/<id>/preview/ (manager side): what correcting this absence with the
keys sent (p_sent) would do, writing nothing; the row excludes itself from overlap, cap and splitting,
and counter effects are the difference with what it holds now.';

-- PATCH /api/absences/<id>/ (manager side): corrections of the period, the type, the hours
-- or the comment rerun every declaration rule and compensate the counters; documents may
-- be added (add_documents) and removed (remove_document_ids, which must belong to it).
-- Typed arguments with the keys sent (p_sent): a key left out keeps the stored value.
drop function if exists app_public.absence_update(int, jsonb, text);
create or replace function app_public.absence_update(
  p_id int, p_type int default null, p_date_start date default null, p_date_end date default null,
  p_start_half text default null, p_end_half text default null, p_start_time time default null,
  p_end_time time default null, p_comment text default null, p_version int default null,
  p_remove_document_ids int[] default null, p_add_documents jsonb default null, p_sent text[] default null,
  p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_new app_public.absences;
  d app_hidden.absence_draft;
  v_sent text[] := app_hidden.keys_sent(p_sent, app_hidden.absence_correction_keys() || 'comment'::text,
    array[p_type is not null, p_date_start is not null, p_date_end is not null, p_start_half is not null,
          p_end_half is not null, p_start_time is not null, p_end_time is not null, p_comment is not null]);
  v_comment text := app_hidden.trimmed(p_comment);
  v_add_documents jsonb := nullif(p_add_documents, 'null'::jsonb);
  v_today date := app_hidden.today();
  v_period_changed boolean;
  v_comment_changed boolean;
  v_remove int[] := p_remove_document_ids;
  v_errors jsonb := '{}'::jsonb;
  v_eval jsonb;
  v_bad int;
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_corrector(v);
  perform app_hidden.absence_check_version(v, p_version, false);

  d := app_hidden.absence_draft_normalize(
    app_hidden.absence_draft_of(v, v_sent, p_type, p_date_start, p_date_end, p_start_half, p_end_half, p_start_time, p_end_time),
    v_sent, v);
  v_period_changed := row(d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time)
    is distinct from row(v.type_id, v.date_start, v.date_end, v.start_half, v.end_half, v.start_time, v.end_time);
  v_comment_changed := app_hidden.sent(v_sent, 'comment', false) and v_comment is distinct from v.comment;

  if v.status in ('refused', 'cancelled') then
    perform app_hidden.invalid('status', format('Une absence %s ne se modifie plus.',
      case when v.status = 'refused' then 'refusée' else 'annulée' end), 'WV210');
  end if;
  if v.status = 'cancellation_requested' and (v_period_changed or v_comment_changed) then
    perform app_hidden.invalid('status',
      'Une demande d’annulation est en cours : décidez-la avant de corriger cette absence.', 'WV210');
  end if;
  -- Correcting, and removing a document (a medical certificate may be the proof of the
  -- absence), need the right to correct: depositing is open to the queue perimeter.
  if (v_period_changed or v_comment_changed or coalesce(cardinality(v_remove), 0) > 0)
     and not app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', v.employee_id) then
    perform app_hidden.forbidden(
      case when v_period_changed or v_comment_changed
           then 'Votre rôle ne permet pas de corriger une absence ; vous pouvez seulement y déposer des justificatifs.'
           else 'Votre rôle ne permet pas de retirer un justificatif ; vous pouvez seulement en déposer.' end, 'WF201');
  end if;

  select x into v_bad from unnest(v_remove) x
  where not exists (select 1 from app_public.absence_documents doc where doc.id = x and doc.absence_id = v.id)
  limit 1;
  if v_bad is not null then
    v_errors := app_hidden.add_error(v_errors, 'remove_document_ids',
      format('Le document n° %s n’appartient pas à cette absence : rien n’a été modifié.', v_bad));
  end if;
  v_errors := v_errors || app_hidden.document_metadata_errors(v_add_documents, 'add_documents');
  if v_period_changed then
    perform app_hidden.absence_lock_employee(v.employee_id);
    v_eval := app_private.absence_evaluate(d, v.id, 'manager',
                                           case when v.author_account_id = app_private.employee_account_id(v.employee_id)
                                                then v.submitted_at end, v_today);
    v_errors := (v_eval -> 'errors') || v_errors;
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV200');
  end if;

  if not v_period_changed and not v_comment_changed and coalesce(cardinality(v_remove), 0) = 0
     and coalesce(jsonb_array_length(v_add_documents), 0) = 0 then
    return app_hidden.absence_json(v.id, p_public_url);
  end if;

  perform app_private.set_audit_verb(case when v_period_changed or v_comment_changed then 'Correction' else 'Modification' end);
  update app_public.absences a set
    type_id = d.type_id, date_start = d.date_start, date_end = d.date_end, start_half = d.start_half,
    end_half = d.end_half, start_time = d.start_time, end_time = d.end_time,
    comment = case when v_comment_changed then v_comment else a.comment end,
    counted_quantity = case when v_period_changed then (v_eval ->> 'quantity')::numeric else a.counted_quantity end,
    counted_unit = case when v_period_changed then v_eval ->> 'unit' else a.counted_unit end,
    warnings = case when v_period_changed then v_eval -> 'warnings' else a.warnings end,
    corrected_by = case when v_period_changed or v_comment_changed then app_hidden.current_account_id() else a.corrected_by end,
    version = a.version + 1
  where a.id = v.id
  returning * into v_new;
  perform app_private.set_audit_verb('');

  delete from app_public.absence_documents doc where doc.absence_id = v.id and doc.id = any (v_remove);
  perform app_hidden.absence_documents_insert(v.id, v_add_documents);
  if v_period_changed then
    perform app_private.absence_sync_counters(v.id, 'edit', v_today);
    perform app_private.absence_alert_events(v_new, v_eval -> 'events');
  end if;
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_update(integer, integer, date, date, text, text, time, time, text, integer, integer[], jsonb, text[], text) is
'SPEC Absences, PATCH /api/absences/<id>/ and declaration rules 1-11 and 18 (manager side; an employee
gets 403): corrects the period, type, hours or comment (the keys sent, p_sent), rerunning every
declaration rule and compensating the counters, and adds (add_documents) or removes
(remove_document_ids, which must belong to it) documents. Returns the absence with its warnings and
documents.';

-- POST /api/absences/<id>/documents/ (multipart add_documents): the employee concerned
-- and the manager perimeter deposit documents on an absence that is not refused or
-- cancelled (e.g. after a missing-document reminder).
drop function if exists app_public.absence_add_documents(int, jsonb, text);
create or replace function app_public.absence_add_documents(p_id int, p_add_documents jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_errors jsonb;
begin
  v := app_hidden.absence_lock(p_id);
  if v.status in ('refused', 'cancelled') then
    perform app_hidden.invalid('status', format('Une absence %s ne reçoit plus de justificatif.',
      case when v.status = 'refused' then 'refusée' else 'annulée' end), 'WV210');
  end if;
  v_errors := app_hidden.document_metadata_errors(p_add_documents, 'add_documents');
  if v_errors = '{}'::jsonb and coalesce(jsonb_array_length(nullif(p_add_documents, 'null'::jsonb)), 0) = 0 then
    v_errors := app_hidden.add_error(v_errors, 'add_documents', 'Déposez au moins un fichier (PDF, JPG ou PNG).');
  end if;
  perform app_hidden.raise_errors(v_errors);
  perform app_private.set_audit_verb('Modification');
  update app_public.absences a set version = a.version + 1 where a.id = v.id;
  perform app_private.set_audit_verb('');
  perform app_hidden.absence_documents_insert(v.id, p_add_documents);
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_add_documents(integer, jsonb, text) is
'SPEC Absences, documents (Permissions rule 5, declaration rule 18): the employee concerned or the
manager perimeter deposits documents (add_documents) on an absence that is neither refused nor
cancelled, for example after a missing-document reminder. Returns the absence.';

-- DELETE /api/absences/<id>/
--   owner: a pending request is withdrawn (row erased, reservation released); any other
--          state answers 400 under status (a granted absence is cancelled on request);
--   decider of the perimeter: "Supprimer l'absence" on a granted absence cancels it (the
--          row stays, cancelled; documents deleted; counters recredited; employee told).
create or replace function app_public.absence_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
begin
  v := app_hidden.absence_lock(p_id);
  if v.employee_id = app_hidden.current_employee_id() then
    if v.status <> 'pending' then
      perform app_hidden.invalid('status', case v.status
        when 'validated' then 'Seule une demande en attente peut être retirée : une absence accordée ne se supprime pas, demandez son annulation.'
        when 'cancellation_requested' then 'Seule une demande en attente peut être retirée : l’annulation de cette absence est déjà demandée.'
        when 'refused' then 'Seule une demande en attente peut être retirée : une demande refusée reste au dossier.'
        else 'Seule une demande en attente peut être retirée : cette absence est annulée.' end, 'WV210');
    end if;
    delete from app_public.absences a where a.id = v.id;
    perform app_private.absence_sync_counters(v.id, 'withdraw');
    return null;
  end if;

  if v.status = 'pending' then
    perform app_hidden.forbidden(
      'Seul le salarié concerné peut retirer une demande en attente ; pour l’écarter, refusez-la.', 'WF206');
  end if;
  if v.status <> 'validated' then
    perform app_hidden.invalid('status', case v.status
      when 'cancellation_requested' then 'Une demande d’annulation est en cours : accordez-la ou refusez-la.'
      when 'refused' then 'Une demande refusée n’est jamais effacée.'
      else 'Cette absence est déjà annulée.' end, 'WV210');
  end if;
  perform app_hidden.absence_check_decider(v);
  perform app_hidden.absence_check_decider_window(v);
  v := app_hidden.absence_cancel(v, false);
  perform app_private.absence_notify_employee(v, 'Absence annulée',
    format('Votre absence %s a été annulée par %s.', app_hidden.absence_subject(v),
           app_hidden.account_display_name(app_hidden.current_account_id())), 'warning');
  return null;
end;
$$;
comment on function app_public.absence_delete(integer) is
'SPEC Absences, DELETE /api/absences/<id>/ and declaration rule 14: the owner withdraws a pending request
(row erased, counter reservation released; any other state gives 400 under status); a decider of the
perimeter cancels a granted absence (Supprimer l''absence: kept on file as cancelled, documents deleted,
counters recredited, employee notified).';

-- POST /api/absences/<id>/validate/ {version, date_end?, type?, start_time?, end_time?, reason?}
--   pending → validated, with an optional correction (end date, requalification, hours)
--             that reruns every declaration rule; a correction needs a reason;
--   cancellation_requested → cancelled (the cancellation is granted; it is not corrected).
-- Typed arguments, one per key of the body (an absent key is null), except the hours: they
-- stay jsonb because an absent key must be told from a null there. An absent start_time or
-- end_time keeps the stored hour, a JSON null clears it (the rules then refuse an hourly type
-- without hours), and a granted cancellation refuses a correction key sent, null included.
-- date_end and type are not nullable in the route schema: null is "not sent".
drop function if exists app_public.absence_validate(int, jsonb, text);
create or replace function app_public.absence_validate(p_id int, p_version int, p_reason text default null,
                                                      p_date_end date default null, p_type int default null,
                                                      p_start_time jsonb default null, p_end_time jsonb default null,
                                                      p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_new app_public.absences;
  d app_hidden.absence_draft;
  -- The correction's keys sent (the draft functions tell a key sent from one absent): the
  -- hours when given (a JSON null included), date_end and type when not null.
  v_sent text[] := app_hidden.keys_sent(null, array['date_end', 'type', 'start_time', 'end_time'],
                                        array[p_date_end is not null, p_type is not null, p_start_time is not null,
                                              p_end_time is not null]);
  v_reason text := nullif(btrim(p_reason), '');
  v_today date := app_hidden.today();
  v_corrected boolean;
  v_eval jsonb;
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_version, true);
  perform app_hidden.absence_check_decider(v);

  if v.status = 'cancellation_requested' then
    -- The first correction key sent, in the order of v_sent.
    if cardinality(v_sent) > 0 then
      perform app_hidden.invalid(v_sent[1], 'Une annulation ne se corrige pas : accordez-la ou refusez-la.', 'WV212');
    end if;
    perform app_hidden.absence_check_decider_window(v);
    v := app_hidden.absence_cancel(v, true);
    perform app_private.absence_notify_employee(v, 'Annulation d''absence acceptée',
      format('Votre demande d’annulation de l’absence %s a été acceptée : l’absence est annulée.',
             app_hidden.absence_subject(v)), 'info');
    return app_hidden.absence_json(v.id, p_public_url);
  end if;
  if v.status <> 'pending' then
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être décidée.', 'WV210');
  end if;
  perform app_hidden.absence_check_text_length('reason', v_reason);
  -- The route schema's format time-hm, for a GraphQL caller (a JSON value of any kind).
  if not app_hidden.json_time_ok(p_start_time) then
    perform app_hidden.invalid('start_time', app_hidden.time_format_message());
  end if;
  if not app_hidden.json_time_ok(p_end_time) then
    perform app_hidden.invalid('end_time', app_hidden.time_format_message());
  end if;

  d := app_hidden.absence_draft_normalize(
    app_hidden.absence_draft_of(v, v_sent, p_type, null, p_date_end, null, null,
                                (p_start_time #>> '{}')::time, (p_end_time #>> '{}')::time),
    v_sent, v);
  v_corrected := row(d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time)
    is distinct from row(v.type_id, v.date_start, v.date_end, v.start_half, v.end_half, v.start_time, v.end_time);
  if v_corrected then
    if v_reason is null then
      perform app_hidden.invalid('reason',
        'Un motif est obligatoire quand la décision corrige la demande (date de fin, motif d’absence ou heures).', 'WV211');
    end if;
    perform app_hidden.absence_lock_employee(v.employee_id);
    v_eval := app_private.absence_evaluate(d, v.id, 'manager',
                                           case when v.author_account_id = app_private.employee_account_id(v.employee_id)
                                                then v.submitted_at end, v_today);
    if v_eval -> 'errors' <> '{}'::jsonb then
      perform app_hidden.invalid_fields(v_eval -> 'errors', 'WV200');
    end if;
  end if;

  perform app_private.set_audit_verb('Validation');
  update app_public.absences a set
    type_id = d.type_id, date_start = d.date_start, date_end = d.date_end, start_half = d.start_half,
    end_half = d.end_half, start_time = d.start_time, end_time = d.end_time,
    counted_quantity = case when v_corrected then (v_eval ->> 'quantity')::numeric else a.counted_quantity end,
    counted_unit = case when v_corrected then v_eval ->> 'unit' else a.counted_unit end,
    warnings = case when v_corrected then v_eval -> 'warnings' else a.warnings end,
    status = 'validated',
    decided_by = app_hidden.current_account_id(),
    decided_at = app_hidden.now(),
    decision_reason = v_reason,
    version = a.version + 1
  where a.id = v.id
  returning * into v_new;
  perform app_private.set_audit_verb('');
  perform app_private.absence_sync_counters(v.id, 'validate', v_today);
  if v_corrected then
    perform app_private.absence_alert_events(v_new, v_eval -> 'events');
  end if;
  perform app_private.absence_notify_employee(v_new, 'Demande d''absence validée',
    case when v_corrected then
      format('Votre demande d’absence %s a été validée avec modification : %s accordé(e) (%s). Motif : %s',
             app_hidden.absence_subject(v), app_hidden.absence_subject(v_new),
             app_hidden.quantity_fr(v_new.counted_quantity, v_new.counted_unit), v_reason)
    else
      format('Votre demande d’absence %s a été validée.', app_hidden.absence_subject(v_new))
      || coalesce(' Motif : ' || v_reason, '')
    end, 'info');
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_validate(integer, integer, text, date, integer, jsonb, jsonb, text) is
'SPEC Absences, POST /api/absences/<id>/validate/ and declaration rules 10, 11, 15 and 20: with the
current version (else 409), a holder of absences.decide_absence who is not the author validates a
pending absence, optionally correcting end date, type or hours (every declaration rule rerun, a reason
required), or grants a requested cancellation (cancelled, counters recredited). The requester is
notified.';

-- POST /api/absences/<id>/refuse/ {version, reason}
--   pending → refused (the reservation is released; the request stays on file);
--   cancellation_requested → validated (the cancellation is refused; counters unchanged).
drop function if exists app_public.absence_refuse(int, jsonb, text);
create or replace function app_public.absence_refuse(p_id int, p_version int, p_reason text default null,
                                                     p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_reason text := nullif(btrim(p_reason), '');
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_version, true);
  perform app_hidden.absence_check_decider(v);
  if v.status not in ('pending', 'cancellation_requested') then
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être décidée.', 'WV210');
  end if;
  if v_reason is null then
    perform app_hidden.invalid('reason', 'Un refus doit être motivé : indiquez la raison.', 'WV211');
  end if;
  perform app_hidden.absence_check_text_length('reason', v_reason);

  perform app_private.set_audit_verb('Refus');
  if v.status = 'pending' then
    update app_public.absences a set
      status = 'refused', decided_by = app_hidden.current_account_id(), decided_at = app_hidden.now(),
      decision_reason = v_reason, version = a.version + 1
    where a.id = v.id
    returning * into v;
    perform app_private.set_audit_verb('');
    perform app_private.absence_sync_counters(v.id, 'refuse');
    perform app_private.absence_notify_employee(v, 'Demande d''absence refusée',
      format('Votre demande d’absence %s a été refusée. Motif : %s', app_hidden.absence_subject(v), v_reason), 'error');
  else
    update app_public.absences a set
      status = 'validated', cancellation_decided_at = app_hidden.now(),
      cancellation_decided_by = app_hidden.current_account_id(), cancellation_decision_reason = v_reason,
      version = a.version + 1
    where a.id = v.id
    returning * into v;
    perform app_private.set_audit_verb('');
    perform app_private.absence_notify_employee(v, 'Annulation d''absence refusée',
      format('Votre demande d’annulation de l’absence %s a été refusée : l’absence est maintenue. Motif : %s',
             app_hidden.absence_subject(v), v_reason), 'error');
  end if;
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_refuse(integer, integer, text, text) is
'SPEC Absences, POST /api/absences/<id>/refuse/: with the current version (else 409) and a non-empty
reason, a holder of absences.decide_absence refuses a pending absence (reservation released, the request
stays on file) or a requested cancellation (the absence stays validated, counters unchanged). The
requester is notified.';

-- POST /api/absences/<id>/request-cancellation/ {comment?, version?}: the owner of a
-- granted absence starting no earlier than app_hidden.employee_retroactivity_limit asks for
-- its cancellation. It stays drawn and counted until a decider grants it; the deciders are
-- notified.
drop function if exists app_public.absence_request_cancellation(int, jsonb, text);
create or replace function app_public.absence_request_cancellation(p_id int, p_version int default null,
                                                                   p_comment text default null,
                                                                   p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_limit date := app_hidden.employee_retroactivity_limit(app_hidden.today());
  v_comment text := nullif(btrim(p_comment), '');
begin
  v := app_hidden.absence_lock(p_id);
  if v.employee_id is distinct from app_hidden.current_employee_id() then
    perform app_hidden.forbidden('Seul le salarié concerné peut demander l’annulation de son absence.', 'WF205');
  end if;
  perform app_hidden.absence_check_version(v, p_version, false);
  if v.status <> 'validated' then
    perform app_hidden.invalid('status', case v.status
      when 'cancellation_requested' then 'L’annulation de cette absence est déjà demandée.'
      when 'pending' then 'Seule une absence accordée peut faire l’objet d’une demande d’annulation : retirez plutôt votre demande en attente.'
      else 'Seule une absence accordée peut faire l’objet d’une demande d’annulation.' end, 'WV210');
  end if;
  if v.date_start < v_limit then
    perform app_hidden.invalid('date_start', format(
      'L’annulation ne peut plus être demandée : l’absence a commencé avant le %s (%s jours au plus).',
      app_hidden.fr_date(v_limit), app_hidden.retroactivity_days()), 'WV214');
  end if;

  perform app_hidden.absence_check_text_length('comment', v_comment);
  perform app_private.set_audit_verb('Demande d''annulation');
  update app_public.absences a set
    status = 'cancellation_requested', cancellation_comment = v_comment,
    cancellation_requested_at = app_hidden.now(), cancellation_decided_at = null, cancellation_decided_by = null,
    cancellation_decision_reason = null, version = a.version + 1
  where a.id = v.id
  returning * into v;
  perform app_private.set_audit_verb('');
  perform app_private.notify_deciders(v.employee_id, v.date_start, 'absences.decide_absence',
    app_hidden.current_account_id(), 'Demande d''annulation d''absence',
    format('%s demande l’annulation de son absence %s.', app_hidden.employee_name(v.employee_id),
           app_hidden.absence_subject(v)) || coalesce(' Commentaire : ' || v.cancellation_comment, ''),
    'absence', v.id);
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_request_cancellation(integer, integer, text, text) is
'SPEC Absences, POST /api/absences/<id>/request-cancellation/ and declaration rule 15: the owner of a
granted absence starting no earlier than the employee retroactivity limit (SPEC Limits) asks for its
cancellation; it stays drawn in the planning and counted until a decider rules, and the deciders are
notified.';
--! EndIncluded absences/api.sql
--! Included absences/reasons.sql
-- Reasons an absence form offers (issue 29 point 2): for one's own request, the active reasons
-- « demandables par le salarié » whose contract types admit the contract in force; for a
-- declaration by the encadrement, every active reason. Each with its availability on the date:
-- a reason consuming a counter that is not open for that year (or held in another unit) is
-- unavailable, with the message the counter rule (SPEC Absences rule 9,
-- app_private.counter_request_error) would give; in the full list, a reason whose contract
-- types exclude the contract in force too (rule 8's message).

-- The reasons of the list and their availability, for an employee the caller may file for
-- (app_public.absence_types_for_request checks it first). Owner rights: reads the employee's
-- contracts and counters whatever the caller's reading policies.
create or replace function app_private.absence_type_choices(p_employee int, p_date date, p_full_list boolean)
returns table (type_id int, available boolean, unavailable_reason text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with contract as (
    select c.contract_type_id, ct.code
    from app_public.contracts c
    join app_public.contract_types ct on ct.id = c.contract_type_id
    where c.employee_id = p_employee and c.start_date <= p_date and (c.end_date is null or c.end_date >= p_date)
    order by c.start_date desc
    limit 1
  ),
  listed as (
    select t.id, t.name, t.unit, t.position, t.code,
           (select string_agg(ct.code, ', ' order by ct.code)
            from app_public.absence_type_contract_types x
            join app_public.contract_types ct on ct.id = x.contract_type_id
            where x.absence_type_id = t.id) as reserved_to,
           exists (select 1 from app_public.absence_type_contract_types x
                   join contract k on k.contract_type_id = x.contract_type_id
                   where x.absence_type_id = t.id) as contract_listed
    from app_public.absence_types t
    where t.is_active and (p_full_list or t.employee_requestable)
  ),
  judged as (
    select l.*,
           l.reserved_to is null or l.contract_listed as contract_fits,
           (select string_agg(app_private.counter_request_error(ca.counter_code, extract(year from p_date)::int, c.id, k.unit,
                                                                  l.unit, l.name, null, null), ' ' order by ca.counter_code)
            from app_public.counter_associations ca
            join app_public.counter_kinds k on k.code = ca.counter_code and k.is_consumable
            left join app_public.counters c on c.employee_id = p_employee and c.code = ca.counter_code
                                            and c.year = extract(year from p_date) and c.is_active
            where ca.absence_type_id = l.id and ca.is_active) as counter_error
    from listed l
  )
  select j.id,
         j.contract_fits and j.counter_error is null,
         case
           when not j.contract_fits and not exists (select 1 from contract) then
             format('Réservé aux contrats %s ; aucun contrat n’est en vigueur le %s.', j.reserved_to, app_hidden.fr_date(p_date))
           when not j.contract_fits then
             format('Réservé aux contrats %s ; le contrat en vigueur le %s est : %s.', j.reserved_to, app_hidden.fr_date(p_date),
                    (select k.code from contract k))
           else j.counter_error
         end
  from judged j
  -- One's own list leaves out the reasons one's contract does not admit.
  where p_full_list or j.contract_fits
  order by j.position, j.code;
$$;

drop function if exists app_public.absence_types_for_request(int, date, int, int) cascade;
create or replace function app_public.absence_types_for_request(p_employee int default null, p_date date default null,
                                                                p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int := coalesce(p_employee, app_hidden.current_employee_id());
  v_date date := coalesce(p_date, app_hidden.today());
  v_error text;
  v_full boolean;
begin
  if v_employee is null then
    perform app_hidden.invalid('employee', 'Votre compte n’a pas de fiche salarié : nommez le salarié pour qui l’absence est déclarée.');
  end if;
  -- Who may file for this employee: oneself, or the decision perimeter (a declaration).
  v_error := app_hidden.absence_filer_error(v_employee);
  if v_error is not null then
    perform app_hidden.invalid('employee', v_error);
  end if;
  if extract(year from v_date) not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year() then
    perform app_hidden.invalid('date', format('Date hors de la plage acceptée (années %s à %s).',
                                              app_hidden.first_accepted_year(), app_hidden.last_accepted_year()));
  end if;
  -- The encadrement declaring for somebody else keeps every reason.
  v_full := app_hidden.is_current_employee(v_employee) is false;
  return (
    with choices as (
      select c.type_id, c.available, c.unavailable_reason, c.n
      from app_private.absence_type_choices(v_employee, v_date, v_full) with ordinality c(type_id, available, unavailable_reason, n)
    )
    select jsonb_build_object(
      'count', (select count(*) from choices),
      'results', coalesce((
        select jsonb_agg(app_hidden.absence_type_json(p.type_id)
                         || jsonb_build_object('available', p.available, 'unavailable_reason', p.unavailable_reason)
                         order by p.n)
        from (select * from choices order by n
              limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) p), '[]'::jsonb)));
end;
$$;
comment on function app_public.absence_types_for_request(integer, date, integer, integer) is
'Issue 29 point 2, GET /api/absence-types/requestable/: the reasons an absence form offers for p_employee (default:
the caller''s record) on p_date (default: today). Oneself: the active reasons demandables par le salarié that the
contract in force admits; the encadrement declaring for an employee of its decision perimeter: every active reason.
Each says whether it is available and, if not, why (no open counter for the year, or the contract in force).';
--! EndIncluded absences/reasons.sql
--! Included absences/reminders.sql
-- Missing-document reminders (SPEC Events rule 5, CONTRACT section 7), run daily by the
-- worker task send_missing_document_reminders.
--
-- A reason that expects a document has a deadline: hours after the first day of the
-- absence (work stoppage, sick child, blood donation: 48 h), or working days after its last
-- day (family caregiver: 2 working days, on the employee's counting base). The run looks
-- only at deadlines that fell due in the week before p_now, reminds pending and validated
-- absences only, never twice (app_private.reminders_sent), and nothing when a document was
-- received for an absence of the same reason of the same employee.
-- The employee receives "Justificatif à transmettre" per absence; each RH n1 / RH n2
-- account whose perimeter covers the employee receives one "Justificatifs manquants"
-- listing the missing documents of the run.

-- app_private.reminders_sent (sql/jobs/tables.sql) records each reminder once.

-- When the document of an absence is due (null: the reason expects none).
create or replace function app_hidden.absence_document_deadline(p_absence app_public.absences, p_type app_public.absence_types)
returns timestamptz
language sql stable as $$
  select case
    when not p_type.documents_expected then null
    when p_type.document_deadline_hours is not null then
      (p_absence.date_start::timestamp at time zone app_hidden.business_timezone())
      + make_interval(hours => p_type.document_deadline_hours)
    when p_type.document_deadline_working_days_after_end is not null then
      ((app_hidden.add_working_days(p_absence.date_end, p_type.document_deadline_working_days_after_end,
                                    app_hidden.employee_count_base(p_absence.employee_id)) + 1)::timestamp
       at time zone app_hidden.business_timezone())
  end;
$$;

create or replace function app_private.send_missing_document_reminders(p_now timestamptz) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := app_hidden.business_date(p_now);
  v_run jsonb;
  v_absence app_public.absences;
  v_sent int := 0;
  r record;
begin
  -- Claim the due reminders (a concurrent run claims each at most once).
  with due as (
    select a.id, a.employee_id, a.type_id, t.name as type_name,
           app_hidden.absence_period_fr(a.date_start, a.date_end, a.start_half, a.end_half,
                                        a.start_time, a.end_time) as period_fr,
           app_hidden.absence_document_deadline(a, t) as deadline_at
    from app_public.absences a
    join app_public.absence_types t on t.id = a.type_id
    where a.status in ('pending', 'validated') and t.documents_expected
      and (t.document_deadline_hours is not null or t.document_deadline_working_days_after_end is not null)
      -- a cheap bound before the exact deadline (a deadline lies days, not weeks, after the dates)
      and a.date_start <= v_today and a.date_end >= v_today - 45
  ),
  missing as (
    select due.* from due
    where due.deadline_at > p_now - interval '7 days' and due.deadline_at <= p_now
      and not exists (select 1 from app_public.absence_documents doc
                      join app_public.absences same on same.id = doc.absence_id
                      where same.employee_id = due.employee_id and same.type_id = due.type_id)
  ),
  claimed as (
    insert into app_private.reminders_sent (absence_id, kind, deadline_at, sent_at, job_run_id)
    select m.id, 'missing_document', m.deadline_at, p_now, nullif(current_setting('app.job_run_id', true), '')::bigint
    from missing m
    on conflict (absence_id, kind) do nothing
    returning absence_id
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'absence_id', m.id, 'employee_id', m.employee_id, 'deadline_at', m.deadline_at,
           'line', format('%s : « %s » %s, justificatif attendu au plus tard le %s à %s',
                          app_hidden.employee_name(m.employee_id), m.type_name, m.period_fr,
                          app_hidden.fr_date(app_hidden.business_date(m.deadline_at)),
                          to_char(m.deadline_at at time zone app_hidden.business_timezone(), 'HH24:MI')))
           order by m.deadline_at, m.id), '[]'::jsonb)
    into v_run
  from missing m join claimed c on c.absence_id = m.id;

  for r in select (x ->> 'absence_id')::int as absence_id, (x ->> 'deadline_at')::timestamptz as deadline_at
           from jsonb_array_elements(v_run) x
  loop
    select * into v_absence from app_public.absences a where a.id = r.absence_id;
    perform app_private.absence_notify_employee(v_absence, 'Justificatif à transmettre',
      format('Le justificatif de votre absence %s était attendu au plus tard le %s à %s. Déposez-le sur l’absence ou transmettez-le au service RH.',
             app_hidden.absence_subject(v_absence), app_hidden.fr_date(app_hidden.business_date(r.deadline_at)),
             to_char(r.deadline_at at time zone app_hidden.business_timezone(), 'HH24:MI')),
      'warning');
    v_sent := v_sent + 1;
  end loop;

  -- One list per RH n1 / RH n2 account whose perimeter covers the employees concerned.
  for r in
    with run as (
      select (x ->> 'absence_id')::int as absence_id, (x ->> 'employee_id')::int as employee_id, x ->> 'line' as line,
             o as position
      from jsonb_array_elements(v_run) with ordinality as y(x, o)
    ),
    hr as (
      select ra.account_id,
             bool_or(rae.establishment_id is null) as whole,
             array_agg(rae.establishment_id) filter (where rae.establishment_id is not null) as establishments
      from app_public.role_attributions ra
      join app_public.accounts ac on ac.id = ra.account_id and ac.is_active
      left join app_public.role_attribution_establishments rae on rae.attribution_id = ra.id
      where ra.role_id in (select ro.id from app_public.roles ro where ro.name in ('RH n1', 'RH n2'))
        and app_hidden.date_in(v_today, ra.start_date, ra.end_date)
      group by ra.account_id
    )
    select hr.account_id, string_agg('- ' || run.line, E'\n' order by run.position) as lines, count(*) as n
    from hr
    join run on hr.whole
             or run.employee_id in (select app_hidden.employees_of_establishments(hr.establishments, v_today))
    group by hr.account_id
    order by hr.account_id
  loop
    perform app_private.notify(r.account_id, 'Justificatifs manquants',
      format(E'%s justificatif(s) manquant(s) à la date limite :\n%s', r.n, r.lines), 'warning', null, null);
    v_sent := v_sent + 1;
  end loop;
  -- The number of notifications sent (employees and HR), as the worker reports it.
  return v_sent;
end;
$$;
--! EndIncluded absences/reminders.sql
--! Included absences/triggers.sql
-- Triggers of absences: the state machine guard, the audit lines, and the storage garbage
-- of deleted documents. (Included after the audit machinery it calls.)

-- The SPEC's state table as a guard: an update must follow a legal transition and advance
-- the version by exactly one; a refused or cancelled absence is read-only; the employee
-- and the author never change. The API functions never hit it: it refuses direct writes
-- (back-office, scripts) that would bypass them.
create or replace function app_private.tg_absences__guard() returns trigger
language plpgsql volatile as $$
begin
  -- The back-office sets a decided absence back to pending (app_public.absence_set_pending
  -- marks its own update): the only way out of refused, and out of validated back to pending.
  if current_setting('app.absence_reopening', true) = 'on' then
    if not (old.status in ('validated', 'refused') and new.status = 'pending') then
      raise exception using errcode = 'WV910', detail = 'status',
        message = format('Transition d’état interdite : %s → %s.', old.status, new.status);
    end if;
  elsif old.status in ('refused', 'cancelled') then
    raise exception using errcode = 'WV910', detail = 'status',
      message = 'Une absence refusée ou annulée est en lecture seule.';
  elsif (old.status, new.status) not in (('pending', 'pending'), ('pending', 'validated'), ('pending', 'refused'),
                                      ('validated', 'validated'), ('validated', 'cancellation_requested'),
                                      ('validated', 'cancelled'), ('cancellation_requested', 'validated'),
                                      ('cancellation_requested', 'cancellation_requested'),
                                      ('cancellation_requested', 'cancelled')) then
    raise exception using errcode = 'WV910', detail = 'status',
      message = format('Transition d’état interdite : %s → %s.', old.status, new.status);
  end if;
  if new.version <> old.version + 1 then
    raise exception using errcode = 'WV910', detail = 'version',
      message = 'Chaque écriture d’une absence avance sa version d’une unité.';
  end if;
  if new.employee_id <> old.employee_id or new.author_account_id is distinct from old.author_account_id
     or new.created_at <> old.created_at then
    raise exception using errcode = 'WV910', detail = 'employee',
      message = 'Le salarié et l’auteur d’une absence ne changent pas.';
  end if;
  return new;
end;
$$;
drop trigger if exists _200_guard on app_public.absences;
create or replace trigger _200_guard before update on app_public.absences
  for each row execute function app_private.tg_absences__guard();

-- A request is erased only while pending (a withdrawal): a refused request is never
-- erased, a granted one is cancelled, not deleted. Deleting the employee record cascades.
create or replace function app_private.tg_absences__guard_delete() returns trigger
language plpgsql volatile as $$
begin
  if old.status <> 'pending' and pg_trigger_depth() = 1 then
    raise exception using errcode = 'WV910', detail = 'status',
      message = 'Seule une demande en attente peut être effacée.';
  end if;
  return old;
end;
$$;
drop trigger if exists _200_guard_delete on app_public.absences;
create or replace trigger _200_guard_delete before delete on app_public.absences
  for each row execute function app_private.tg_absences__guard_delete();

drop trigger if exists _500_audit on app_public.absences;
create or replace trigger _500_audit after insert or update on app_public.absences
  for each row execute function app_private.tg__audit('absence');
drop trigger if exists _500_audit_delete on app_public.absences;
create or replace trigger _500_audit_delete before delete on app_public.absences
  for each row execute function app_private.tg__audit('absence');

drop trigger if exists _900_storage_garbage on app_public.absence_documents;
create or replace trigger _900_storage_garbage after delete on app_public.absence_documents
  for each row execute function app_private.tg__storage_garbage();
drop trigger if exists _900_storage_garbage on app_public.honorability_certificates;
create or replace trigger _900_storage_garbage after delete or update of storage_key on app_public.honorability_certificates
  for each row execute function app_private.tg__storage_garbage();

-- Deposits and removals of absence documents, named (issue 11): one line per document under
-- the model absence_document, target the absence, with the document's name, type, size and
-- depositor (not its storage key).
insert into app_private.audit_models (model, label) values ('absence_document', 'Justificatif d’absence')
on conflict (model) do nothing;

create or replace function app_private.tg_absence_documents__audit() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_row app_public.absence_documents := case when tg_op = 'DELETE' then old else new end;
  v_doc jsonb := jsonb_build_object('id', v_row.id, 'absence_id', v_row.absence_id, 'filename', v_row.filename,
                                    'content_type', v_row.content_type, 'size_bytes', v_row.size_bytes,
                                    'uploaded_at', v_row.uploaded_at, 'uploaded_by', v_row.uploaded_by_name);
begin
  if tg_op = 'INSERT' then
    perform app_private.write_audit('Creation', 'absence_document', v_row.absence_id, null, v_doc);
  else
    perform app_private.write_audit('Suppression', 'absence_document', v_row.absence_id, v_doc, null);
  end if;
  return null;
end;
$$;
drop trigger if exists _500_audit on app_public.absence_documents;
create or replace trigger _500_audit after insert or delete on app_public.absence_documents
  for each row execute function app_private.tg_absence_documents__audit();
--! EndIncluded absences/triggers.sql
--! Included counters/triggers.sql
-- Consumable counters and their reasons (SPEC rule 17): a counter of a consumable kind is
-- active only while an active association ties it to an active reason; an association or
-- a reason whose deactivation or deletion would orphan an active counter is refused.

-- Does an active association to an active reason keep this counter code alive, leaving
-- aside one association or one reason (the one being deactivated or deleted)?
create or replace function app_private.counter_code_has_reason(p_code text, p_except_association int default null,
                                                    p_except_type int default null)
returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (
    select 1 from app_public.counter_associations ca
    join app_public.absence_types t on t.id = ca.absence_type_id
    where ca.counter_code = p_code and ca.is_active and t.is_active
      and ca.id is distinct from p_except_association
      and t.id is distinct from p_except_type);
$$;

create or replace function app_private.tg_counters__need_reason() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.is_active
     and (tg_op = 'INSERT' or not old.is_active or old.code <> new.code)
     and exists (select 1 from app_public.counter_kinds k where k.code = new.code and k.is_consumable)
     and not app_private.counter_code_has_reason(new.code) then
    perform app_hidden.invalid('is_active', format(
      'Le compteur %s ne peut pas être activé : aucun motif actif ne lui est associé par une association active.',
      new.code), 'WV310');
  end if;
  return new;
end;
$$;
create or replace trigger _200_guard before insert or update of is_active, code on app_public.counters
  for each row execute function app_private.tg_counters__need_reason();

-- Refuses when no other active association keeps an active counter of the code alive.
create or replace function app_private.counter_orphan_check(p_code text, p_except_association int, p_except_type int,
                                                 p_what text)
returns void
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_count int;
begin
  if not exists (select 1 from app_public.counter_kinds k where k.code = p_code and k.is_consumable)
     or app_private.counter_code_has_reason(p_code, p_except_association, p_except_type) then
    return;
  end if;
  select count(*) into v_count from app_public.counters c where c.code = p_code and c.is_active;
  if v_count > 0 then
    perform app_hidden.invalid('is_active', format(
      'Impossible de désactiver ou de supprimer %s : %s compteur(s) %s actif(s) n’aurai(en)t plus aucun motif associé. Fermez d’abord ces compteurs.',
      p_what, v_count, p_code), 'WV311');
  end if;
end;
$$;

create or replace function app_private.tg_counter_associations__no_orphan_counter() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if old.is_active
     and (tg_op = 'DELETE' or not new.is_active or new.counter_code <> old.counter_code
          or new.absence_type_id <> old.absence_type_id)
     and exists (select 1 from app_public.absence_types t where t.id = old.absence_type_id and t.is_active) then
    perform app_private.counter_orphan_check(old.counter_code, old.id, null,
                                             format('l’association au compteur %s', old.counter_code));
  end if;
  return case when tg_op = 'DELETE' then old else new end;
end;
$$;
create or replace trigger _200_guard before update or delete on app_public.counter_associations
  for each row execute function app_private.tg_counter_associations__no_orphan_counter();

create or replace function app_private.tg_absence_types__no_orphan_counter() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_code text;
begin
  if old.is_active and (tg_op = 'DELETE' or not new.is_active) then
    for v_code in
      select ca.counter_code from app_public.counter_associations ca
      where ca.absence_type_id = old.id and ca.is_active
    loop
      perform app_private.counter_orphan_check(v_code, null, old.id, format('le motif %s', old.code));
    end loop;
  end if;
  return case when tg_op = 'DELETE' then old else new end;
end;
$$;
create or replace trigger _210_counter_guard before update of is_active or delete on app_public.absence_types
  for each row execute function app_private.tg_absence_types__no_orphan_counter();
--! EndIncluded counters/triggers.sql
--! Included employees/helpers.sql
-- Helpers shared by the employee, referential, team, event, on-call and payroll API
-- functions: reading a JSON object field by field (a wrong type answers 400 under the field:
-- the items of the JSON lists the API functions take, contracts, team assignments and
-- members, and the stored files' metadata), the caller's establishment scope,
-- staff status, names across RLS, search patterns. An API function's body arrives as typed
-- arguments (sql/core/arguments.sql), not through these readers.

-- A field as text: null when absent or null; 400 under the field when not a string.
create or replace function app_hidden.in_text(p_body jsonb, p_key text, p_field text default null) returns text
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) <> 'string' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Une chaîne de caractères est attendue.');
  end if;
  return v #>> '{}';
end;
$$;

-- A trimmed text field; an empty string counts as null.
create or replace function app_hidden.in_trimmed(p_body jsonb, p_key text, p_field text default null) returns text
language sql immutable as $$
  select nullif(btrim(app_hidden.in_text(p_body, p_key, p_field)), '');
$$;

create or replace function app_hidden.in_int(p_body jsonb, p_key text, p_field text default null) returns int
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) <> 'number' or (v #>> '{}') !~ '^-?[0-9]{1,9}$' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Un nombre entier est attendu.');
  end if;
  return (v #>> '{}')::int;
end;
$$;

create or replace function app_hidden.in_numeric(p_body jsonb, p_key text, p_field text default null) returns numeric
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) = 'number' then
    return (v #>> '{}')::numeric;
  end if;
  if jsonb_typeof(v) = 'string' and (v #>> '{}') ~ '^-?[0-9]{1,6}(\.[0-9]{1,2})?$' then
    return (v #>> '{}')::numeric;
  end if;
  perform app_hidden.invalid(coalesce(p_field, p_key), 'Un nombre est attendu (par exemple 35 ou "35.00").');
end;
$$;

-- A date YYYY-MM-DD read from any JSON object; p_field names the field in the error.
create or replace function app_hidden.in_date(p_body jsonb, p_key text, p_field text default null) returns date
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
  v_text text;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  v_text := v #>> '{}';
  if jsonb_typeof(v) <> 'string' or v_text !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Date invalide : format attendu AAAA-MM-JJ.');
  end if;
  begin
    return v_text::date;
  exception when others then
    perform app_hidden.invalid(coalesce(p_field, p_key), format('Date invalide : %s n’existe pas.', v_text));
  end;
end;
$$;

drop function if exists app_hidden.in_timestamptz(jsonb, text, text);

-- The back-office's saves take typed arguments (issue 26): their booleans and id lists are no
-- longer read from a JSON body.
drop function if exists app_hidden.in_bool(jsonb, text, text);
drop function if exists app_hidden.in_ids(jsonb, text, text);
drop function if exists app_hidden.in_array(jsonb, text, text);

-- "%text%" for ILIKE, with the wildcards of the text escaped.
create or replace function app_hidden.like_pattern(p_search text) returns text
language sql immutable as $$
  select '%' || replace(replace(replace(btrim(p_search), '\', '\\'), '%', '\%'), '_', '\_') || '%';
$$;

-- Lower-case ASCII slug for usernames: accents removed, other characters dropped.
create or replace function app_hidden.ascii_slug(p_text text) returns text
language sql immutable as $$
  select regexp_replace(
           replace(replace(replace(replace(
             translate(lower(coalesce(p_text, '')),
                       'àáâãäåçèéêëìíîïñòóôõöùúûüýÿ’'' ',
                       'aaaaaaceeeeiiiinooooouuuuyy---'),
             'æ', 'ae'), 'œ', 'oe'), 'ß', 'ss'), '--', '-'),
           '[^a-z0-9.\-]', '', 'g');
$$;

create or replace function app_hidden.current_account_is_superuser() returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce((select a.is_superuser and a.is_active
                   from app_public.accounts a where a.id = app_hidden.current_account_id()), false);
$$;

-- The establishments of "scope=perimeter" (null = the whole association): those on which the
-- account holds absences.view_absence_queue (encadrement) or employee.view_payroll (payroll),
-- as app_hidden.permission_scope computes them (dated role attributions, a role without
-- establishment covering everything, on-call extensions start inclusive, end exclusive);
-- for an account holding neither, its own workplaces (main, secondary, teams of the day).
create or replace function app_hidden.scope_establishment_ids(p_account int default null, p_at timestamptz default null)
returns int[]
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := coalesce(p_account, app_hidden.current_account_id());
  v_at timestamptz := coalesce(p_at, app_hidden.now());
  v_queue record;
  v_payroll record;
  v_employee int;
begin
  select * into v_queue from app_hidden.permission_scope(v_account, 'absences.view_absence_queue', v_at);
  select * into v_payroll from app_hidden.permission_scope(v_account, 'employee.view_payroll', v_at);
  if v_queue.whole or v_payroll.whole then
    return null;
  end if;
  if cardinality(v_queue.establishment_ids) > 0 or cardinality(v_payroll.establishment_ids) > 0 then
    return array(select unnest(v_queue.establishment_ids) union select unnest(v_payroll.establishment_ids));
  end if;
  select a.employee_id into v_employee from app_public.accounts a where a.id = v_account and a.is_active;
  if v_employee is null then
    return '{}';
  end if;
  return array(select app_hidden.employee_establishments(v_employee, app_hidden.business_date(v_at)));
end;
$$;

-- Is the establishment within a scope (null scope = everything)?
-- Never NULL: a NULL establishment is within the whole association only.
create or replace function app_hidden.in_scope(p_establishment int, p_scope int[]) returns boolean
language sql immutable as $$
  select p_scope is null or coalesce(p_establishment = any (p_scope), false);
$$;

-- Names of employees by id, whatever the caller may read of their records: used to name the
-- participants of an event the caller sees, or the holder of an on-call period.
create or replace function app_hidden.employee_names(p_ids int[]) returns table (id int, name text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select e.id, e.first_name || ' ' || e.last_name from app_public.employees e where e.id = any (p_ids);
$$;

-- Display names of accounts (employee name, else username), whatever the caller may read.
create or replace function app_hidden.account_names(p_ids int[]) returns table (id int, name text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.id, coalesce(e.first_name || ' ' || e.last_name, a.username)
  from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
  where a.id = any (p_ids);
$$;

-- An audit trigger for tables whose line belongs to a parent (join tables without id):
-- tg_argv[0] is the model, tg_argv[1] the column holding the target id.
create or replace function app_private.tg__audit_child() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_model text := tg_argv[0];
  v_column text := tg_argv[1];
begin
  if tg_op = 'INSERT' then
    perform app_private.write_audit('Creation', v_model, (to_jsonb(new) ->> v_column)::bigint, null, to_jsonb(new));
    return new;
  elsif tg_op = 'UPDATE' then
    perform app_private.write_audit(coalesce(nullif(current_setting('app.audit_verb', true), ''), 'Modification'),
                                    v_model, (to_jsonb(new) ->> v_column)::bigint, to_jsonb(old), to_jsonb(new));
    return new;
  else
    perform app_private.write_audit('Suppression', v_model, (to_jsonb(old) ->> v_column)::bigint, to_jsonb(old), null);
    return old;
  end if;
end;
$$;

-- Does the acting account cover every right this account holds (issue 11)? Its contact
-- address receives the password-reset links, so changing it hands the account over: only an
-- editor who could do everything the account does may change it. Covered when the editor is
-- a superuser, or: the account is not a superuser; staff only under a staff editor; each role
-- the account holds (active or future) is matched by an editor's role of the same or a higher
-- rank among the manager roles (Admin > RH n1 > RH n2 > DA > Manager n1 > Manager n2; Admin
-- is the only one above RH n1); and each permission the account holds (roles and explicit
-- grants), over its establishments, lies within the editor's scope of that permission (or of
-- employee.change_account_activation for employee.change_interim_account_activation).
-- Never NULL (app_private.never_null_guards): an unknown or NULL account is covered (nothing
-- to take over), no acting account covers nothing.
create or replace function app_hidden.account_rights_covered(p_account int) returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_editor int := app_hidden.current_account_id();
  v_target app_public.accounts;
  v_now timestamptz := app_hidden.now();
  v_today date := app_hidden.today();
begin
  select * into v_target from app_public.accounts a where a.id = p_account;
  if not found then
    return true;
  end if;
  if app_hidden.current_account_is_superuser() then
    return true;
  end if;
  if v_editor is null or v_target.is_superuser
     or (v_target.is_staff and not app_hidden.current_account_is_staff()) then
    return false;
  end if;
  -- Ranks: a manager-workspace role of the account needs an editor's role ranked at least as high.
  if exists (select 1 from app_public.role_attributions ra
             join app_public.roles r on r.id = ra.role_id
             where ra.account_id = p_account and r.opens_manager_workspace and r.name <> 'Service Paie'
               and (ra.end_date is null or ra.end_date >= v_today)
               and not exists (select 1 from app_public.role_attributions er
                               join app_public.roles eroles on eroles.id = er.role_id
                               where er.account_id = v_editor and eroles.opens_manager_workspace
                                 and eroles.name <> 'Service Paie'
                                 and app_hidden.date_in(v_today, er.start_date, er.end_date)
                                 and eroles.precedence <= r.precedence)) then
    return false;
  end if;
  -- Permissions, over their establishments (a role outside the manager workspace, or without
  -- establishments, covers the whole association).
  return not exists (
    with held as (
      select rp.permission_code as permission,
             not r.opens_manager_workspace
             or not exists (select 1 from app_public.role_attribution_establishments rae where rae.attribution_id = ra.id)
               as whole,
             array(select rae.establishment_id from app_public.role_attribution_establishments rae
                   where rae.attribution_id = ra.id) as establishment_ids
      from app_public.role_attributions ra
      join app_public.roles r on r.id = ra.role_id
      join app_public.role_permissions rp on rp.role_id = ra.role_id
      where ra.account_id = p_account and (ra.end_date is null or ra.end_date >= v_today)
      union all
      select ap.permission_code, true, '{}'::int[] from app_public.account_permissions ap where ap.account_id = p_account
    )
    select 1 from held h
    where not exists (
      -- Opening any account covers opening temporary workers' accounts.
      select 1
      from unnest(case when h.permission = 'employee.change_interim_account_activation'
                       then array[h.permission, 'employee.change_account_activation'] else array[h.permission] end) q(p)
      cross join lateral app_hidden.permission_scope(v_editor, q.p, v_now) s
      where s.whole or (not h.whole and h.establishment_ids <@ s.establishment_ids)));
end;
$$;
--! EndIncluded employees/helpers.sql
--! Included employees/rules.sql
-- The rules of the employee record, one function each, named after the rule
-- (docs/architecture.md, "Where each rule lives"). SPEC leaves the record's body "not shown"
-- (Documents and other routes); its rules come from SPEC Permissions (who writes what), SPEC
-- Errors (404 before 403), SPEC Authentication rule 4 and the API's own field rules.
-- app_hidden.employee_save (sql/employees/api.sql) composes them in a fixed order; the
-- organisation import (sql/org/import.sql) and the emergency contacts (sql/employees/annexes.sql)
-- ask the shared ones (e-mail, social security number, username, weekly hours).
--
-- A field rule answers the message refusing the value (null when accepted); a list rule answers
-- its messages in order (empty when accepted). They write nothing, so pgTAP calls them directly.

-- Thresholds of the record, named once.
create or replace function app_hidden.birth_date_min() returns date
language sql immutable as $$ select date '1900-01-01' $$;
comment on function app_hidden.birth_date_min() is
'Employee record: the earliest birth date accepted.';

create or replace function app_hidden.weekly_hours_max() returns numeric
language sql immutable as $$ select 48::numeric $$;
comment on function app_hidden.weekly_hours_max() is
'Contract: the weekly working time is at most 48 hours (French legal maximum).';

-- Shared formats (API, import, emergency contacts).
create or replace function app_hidden.email_well_formed(p_email text) returns boolean
language sql immutable as $$ select p_email ~ app_hidden.email_pattern() $$;
comment on function app_hidden.email_well_formed(text) is
'An e-mail address has one @, no blank, and a dot in its domain (null for null).';

create or replace function app_hidden.email_acceptable(p_email text) returns boolean
language sql immutable as $$
  select app_hidden.email_well_formed(p_email) and char_length(p_email) <= app_hidden.email_max_length()
$$;
comment on function app_hidden.email_acceptable(text) is
'An e-mail address entered through the API: well formed and at most email_max_length() characters (null for null).';

create or replace function app_hidden.social_security_number_well_formed(p_number text) returns boolean
language sql immutable as $$
  select p_number ~ app_hidden.social_security_number_pattern()
$$;
comment on function app_hidden.social_security_number_well_formed(text) is
'SPEC Permissions (employee.view_social_security_number): a French social security number, 13 characters
(sex, year, month, department with 2A/2B, commune, order) or 15 with the key (null for null).';

create or replace function app_hidden.username_well_formed(p_username text) returns boolean
language sql immutable as $$
  select p_username ~ app_hidden.username_pattern()
$$;
comment on function app_hidden.username_well_formed(text) is
'An account username: username_min_length() to username_max_length() letters, digits and . _ @ + - (null for null).';

create or replace function app_hidden.weekly_hours_in_range(p_hours numeric) returns boolean
language sql immutable as $$ select round(p_hours, 2) > 0 and p_hours <= app_hidden.weekly_hours_max() $$;
comment on function app_hidden.weekly_hours_in_range(numeric) is
'Contract: the weekly working time is more than 0 as stored (two decimals) and at most weekly_hours_max()
hours (null for null).';

create or replace function app_hidden.add_error_list(p_errors jsonb, p_field text, p_messages text[])
returns jsonb
language sql immutable as $$
  select case when cardinality(p_messages) > 0
              then coalesce(p_errors, '{}'::jsonb)
                   || jsonb_build_object(coalesce(p_field, 'non_field_errors'),
                        coalesce(p_errors -> coalesce(p_field, 'non_field_errors'), '[]'::jsonb) || to_jsonb(p_messages))
              else p_errors end;
$$;
comment on function app_hidden.add_error_list(jsonb, text, text[]) is
'Field errors: a list of messages appended under one field (nothing when the list is empty).';

-- Appends the messages that are not null under a field (a rule that accepted adds nothing).
create or replace function app_hidden.add_refusals(p_errors jsonb, p_field text, variadic p_messages text[])
returns jsonb
language sql immutable as $$
  select coalesce((select app_hidden.add_error_list(p_errors, p_field, array_agg(m order by n))
                   from unnest(p_messages) with ordinality u(m, n) where m is not null), p_errors);
$$;
comment on function app_hidden.add_refusals(jsonb, text, text[]) is
'Field errors: the refusals of the rules of one field appended under it, in order; nulls (accepted) skipped.';

-- Access to the record, in this order (before any field is read).

create or replace function app_hidden.employee_refuse_ssn_key(p_id int) returns void
language plpgsql stable as $$
begin
  if p_id is null and not app_hidden.current_account_has('employee.view_social_security_number')
     or p_id is not null and not app_hidden.may(app_hidden.current_account_id(), 'employee.view_social_security_number', p_id) then
    perform app_hidden.forbidden('Vous n’avez pas le droit de lire ni d’écrire le numéro de sécurité sociale : '
                                 'retirez ce champ de la requête.', 'WF501');
  end if;
end;
$$;
comment on function app_hidden.employee_refuse_ssn_key(integer) is
'SPEC Permissions, employee.view_social_security_number: a write carrying the key social_security_number
by a caller who may not read the number of that record (p_id; null: a new record) is refused (403 WF501).';

create or replace function app_hidden.employee_refuse_ssn_on_created_record(p_id int) returns void
language plpgsql stable as $$
begin
  if not app_hidden.may(app_hidden.current_account_id(), 'employee.view_social_security_number', p_id) then
    perform app_hidden.forbidden('Vous n’avez pas le droit d’écrire le numéro de sécurité sociale de ce salarié : '
                                 'retirez ce champ de la requête.', 'WF501');
  end if;
end;
$$;
comment on function app_hidden.employee_refuse_ssn_on_created_record(integer) is
'SPEC Permissions, employee.view_social_security_number: the number of a record just created needs the
right on that record too (its workplace may lie outside the caller''s perimeter; 403 WF501).';

create or replace function app_hidden.employee_refuse_record_write(p_id int) returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('employee.change_employee_record') then
    if p_id is null then
      perform app_hidden.forbidden('Vous n’avez pas le droit de créer ou de modifier une fiche salarié.', 'WF502');
    end if;
    -- A record outside every perimeter of the caller: not found before forbidden (SPEC Errors).
    perform app_hidden.refuse_outside_or_forbid(p_id,
      'Vous n’avez pas le droit de créer ou de modifier une fiche salarié.', 'WF502');
  end if;
  if p_id is not null and not app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', p_id) then
    perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
  end if;
end;
$$;
comment on function app_hidden.employee_refuse_record_write(integer) is
'SPEC Permissions, employee.change_employee_record, and SPEC Errors (404 rather than 403): creating a
record needs the right (403 WF502); changing one needs it on that record, a record outside the perimeter
being not found.';

-- Field rules.

create or replace function app_hidden.employee_name_refusal(p_name text, p_required boolean, p_missing_message text)
returns text
language sql stable as $$
  select case when p_required and p_name is null then p_missing_message
              when char_length(p_name) > app_hidden.person_name_max_length()
              then app_hidden.max_length_message(app_hidden.person_name_max_length()) end;
$$;
comment on function app_hidden.employee_name_refusal(text, boolean, text) is
'Employee record, first_name and last_name: required (p_missing_message when p_required and absent), at
most person_name_max_length() characters.';

create or replace function app_hidden.employee_email_refusal(p_email text) returns text
language sql immutable as $$
  select 'Adresse e-mail invalide (exemple : prenom.nom@etablissement.fr).'
  where p_email is not null and app_hidden.email_acceptable(p_email) is not true;
$$;
comment on function app_hidden.employee_email_refusal(text) is
'Employee record, professional_email: empty or a well-formed address of at most email_max_length() characters.';

create or replace function app_hidden.employee_email_takeover_refusal(p_id int, p_old text, p_new text) returns text
language sql stable as $$
  select 'Ce compte détient des droits que vous ne couvrez pas : seul un responsable qui les couvre peut changer '
         'son adresse e-mail (elle reçoit les liens de réinitialisation du mot de passe).'
  where p_id is not null and p_new is distinct from p_old
    and app_hidden.account_rights_covered(app_private.employee_account_id(p_id)) is not true;
$$;
comment on function app_hidden.employee_email_takeover_refusal(integer, text, text) is
'SPEC Authentication rule 4 (the professional e-mail receives the password links): the address of a record
whose account holds rights the editor does not cover (account_rights_covered) is changed only by an editor
who covers them (issue 11).';

create or replace function app_hidden.employee_birth_date_refusal(p_birth_date date) returns text
language sql stable as $$
  select 'Date de naissance invalide : elle doit être passée et postérieure au 01/01/1900.'
  where p_birth_date >= app_hidden.today() or p_birth_date < app_hidden.birth_date_min();
$$;
comment on function app_hidden.employee_birth_date_refusal(date) is
'Employee record, birth_date: empty, or in the past and not before birth_date_min().';

create or replace function app_hidden.establishment_unknown_refusal(p_establishment int) returns text
language sql stable as $$
  select format('Établissement n° %s introuvable.', p_establishment)
  where p_establishment is not null
    and not exists (select 1 from app_public.establishments e where e.id = p_establishment);
$$;
comment on function app_hidden.establishment_unknown_refusal(integer) is
'Employee record, main_establishment: an establishment that exists (or none).';

create or replace function app_hidden.employee_main_workplace_perimeter_refusal(p_main int, p_changed boolean, p_scope int[])
returns text
language sql immutable as $$
  select case when p_main is null
              then 'Choisissez un établissement principal de votre périmètre : sans lui, la fiche sortirait de votre périmètre.'
              when not p_main = any (p_scope) then 'Cet établissement n’est pas dans votre périmètre.' end
  where p_scope is not null and p_changed;
$$;
comment on function app_hidden.employee_main_workplace_perimeter_refusal(integer, boolean, integer[]) is
'SPEC Permissions, employee.change_employee_record over a perimeter (p_scope; null: the whole association):
a restricted writer who sets the main workplace (p_changed) sets one of its establishments, never none (the
record would leave its perimeter).';

create or replace function app_hidden.employee_secondary_workplaces_unknown_refusal(p_secondaries int[]) returns text
language sql stable as $$
  select format('Établissement introuvable : %s.', string_agg(s.id::text, ', '))
  from unnest(p_secondaries) s(id)
  where not exists (select 1 from app_public.establishments e where e.id = s.id)
  having count(*) > 0;
$$;
comment on function app_hidden.employee_secondary_workplaces_unknown_refusal(integer[]) is
'Employee record, secondary_establishments: every establishment listed exists.';

create or replace function app_hidden.employee_main_not_secondary_refusal(p_main int, p_secondaries int[]) returns text
language sql immutable as $$
  select 'L’établissement principal ne peut pas être aussi un établissement secondaire.'
  where p_main = any (p_secondaries);
$$;
comment on function app_hidden.employee_main_not_secondary_refusal(integer, integer[]) is
'Employee record: the main workplace is not also a secondary workplace.';

create or replace function app_hidden.employee_secondary_workplaces_perimeter_refusal(
  p_secondaries int[], p_old_secondaries int[], p_scope int[]) returns text
language sql immutable as $$
  select 'Vous ne pouvez ajouter ou retirer que des établissements de votre périmètre.'
  where p_scope is not null and exists (
    select 1 from ((select unnest(p_secondaries) except select unnest(p_old_secondaries))
                   union
                   (select unnest(p_old_secondaries) except select unnest(p_secondaries))) d(id)
    where not d.id = any (p_scope));
$$;
comment on function app_hidden.employee_secondary_workplaces_perimeter_refusal(integer[], integer[], integer[]) is
'SPEC Permissions, employee.change_employee_record over a perimeter (p_scope): a restricted writer adds or
removes secondary workplaces of its establishments only.';

create or replace function app_hidden.employee_ssn_refusal(p_number text) returns text
language sql immutable as $$
  select 'Numéro de sécurité sociale invalide : 13 chiffres, ou 15 avec la clé (exemple : 2850175123456).'
  where p_number is not null and app_hidden.social_security_number_well_formed(p_number) is not true;
$$;
comment on function app_hidden.employee_ssn_refusal(text) is
'SPEC Permissions, employee.view_social_security_number: the number written is empty or well formed
(social_security_number_well_formed).';

-- Is a username free (case-insensitive), whatever accounts the caller may read?
create or replace function app_private.username_taken(p_username text) returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (select 1 from app_public.accounts a where lower(a.username) = lower(p_username));
$$;

create or replace function app_hidden.employee_username_refusal(p_creating boolean, p_username text) returns text
language sql stable as $$
  select case when not p_creating then 'L’identifiant se choisit à la création de la fiche seulement.'
              when app_hidden.username_well_formed(p_username) is false
              then format('Identifiant invalide : de %s à %s caractères parmi lettres, chiffres et . _ @ + -.',
                          app_hidden.username_min_length(), app_hidden.username_max_length())
              when app_private.username_taken(p_username)
              then format('L’identifiant « %s » est déjà utilisé.', p_username) end;
$$;
comment on function app_hidden.employee_username_refusal(boolean, text) is
'SPEC Authentication rule 4 (the account opened with the record): the username is chosen at creation only,
well formed (username_well_formed) and free, case-insensitively (empty: derived from the name).';

-- Contracts: the list sent replaces the record's contracts.

create or replace function app_hidden.contract_period_refusals(p_start date, p_end date, p_trial_end date) returns text[]
language sql immutable as $$
  select case when p_start is null then array['la date de début est obligatoire.']
              else array_remove(array[
                     case when p_end < p_start then 'la date de fin précède la date de début.' end,
                     case when p_trial_end < p_start then 'la fin de période d’essai précède la date de début.'
                          when p_trial_end > p_end then 'la fin de période d’essai dépasse la fin du contrat.' end],
                   null) end;
$$;
comment on function app_hidden.contract_period_refusals(date, date, date) is
'Contract: a start date; the end, when given, not before the start; the end of the trial period between
the start and the end.';

create or replace function app_hidden.employee_contract_refusals(p_employee int, p_rank int, p_item jsonb) returns text[]
language plpgsql stable as $$
declare
  v_label text := format('Contrat n° %s : ', p_rank);
  v_messages text[] := '{}';
  v_id int;
  v_type int;
  v_start date;
  v_end date;
  v_trial date;
  v_job text;
  v_hours numeric;
begin
  if jsonb_typeof(p_item) <> 'object' then
    return array[v_label || 'un objet est attendu.'];
  end if;
  v_id := app_hidden.in_int(p_item, 'id', 'contracts');
  if v_id is not null and (p_employee is null or not exists (select 1 from app_public.contracts c
                                                              where c.id = v_id and c.employee_id = p_employee)) then
    v_messages := v_messages || (v_label || 'ce contrat n’appartient pas à ce salarié.');
  end if;
  v_type := app_hidden.in_int(p_item, 'type', 'contracts');
  if v_type is null then
    v_messages := v_messages || (v_label || 'le type de contrat est obligatoire.');
  elsif not exists (select 1 from app_public.contract_types ct where ct.id = v_type) then
    v_messages := v_messages || (v_label || format('type de contrat n° %s introuvable.', v_type));
  end if;
  v_start := app_hidden.in_date(p_item, 'start_date', 'contracts');
  v_end := app_hidden.in_date(p_item, 'end_date', 'contracts');
  v_trial := app_hidden.in_date(p_item, 'trial_end_date', 'contracts');
  v_messages := v_messages || array(select v_label || m from unnest(app_hidden.contract_period_refusals(v_start, v_end, v_trial)) m);
  v_job := app_hidden.in_trimmed(p_item, 'job_title', 'contracts');
  if char_length(v_job) > app_hidden.job_title_max_length() then
    v_messages := v_messages || (v_label || format('l’intitulé de poste fait au plus %s caractères.', app_hidden.job_title_max_length()));
  end if;
  v_hours := app_hidden.in_numeric(p_item, 'weekly_hours', 'contracts');
  if v_hours is not null and app_hidden.weekly_hours_in_range(v_hours) is not true then
    v_messages := v_messages || (v_label || format('la durée hebdomadaire doit être comprise entre 0 et %s heures.',
                                                   app_hidden.weekly_hours_max()));
  end if;
  return v_messages;
end;
$$;
comment on function app_hidden.employee_contract_refusals(integer, integer, jsonb) is
'Employee record, one contract of the list (rank p_rank): an object; its id, when given, a contract of
this employee; a known contract type; a coherent period (contract_period_refusals); a job title of at most
job_title_max_length() characters; weekly hours in range (weekly_hours_in_range).';

-- The period of a contract item as the overlap rule reads it (empty when it has none or is incoherent).
create or replace function app_hidden.contract_item_period(p_item jsonb) returns daterange
language sql stable as $$
  select case when jsonb_typeof(p_item) = 'object' and (p_item ->> 'start_date') is not null
                   and ((p_item ->> 'end_date') is null or (p_item ->> 'end_date')::date >= (p_item ->> 'start_date')::date)
              then daterange((p_item ->> 'start_date')::date, (p_item ->> 'end_date')::date, '[]')
              else 'empty'::daterange end;
$$;
comment on function app_hidden.contract_item_period(jsonb) is
'Contract: the period of a contract item of a list already read (empty without a start or when it ends before it starts).';

create or replace function app_hidden.employee_contract_overlap_refusals(p_contracts jsonb, p_rank int) returns text[]
language sql stable as $$
  select coalesce(array_agg(format('Les contrats n° %s et n° %s se chevauchent : un salarié a un seul contrat à la fois.',
                                   x.rank, p_rank) order by x.rank), '{}')
  from jsonb_array_elements(p_contracts) with ordinality x(item, rank)
  where x.rank < p_rank and jsonb_typeof(x.item) = 'object'
    and app_hidden.contract_item_period(x.item) && app_hidden.contract_item_period(p_contracts -> (p_rank - 1));
$$;
comment on function app_hidden.employee_contract_overlap_refusals(jsonb, integer) is
'Employee record, contracts: an employee has one contract at a time (the contract of rank p_rank overlaps
no earlier one of the list).';

create or replace function app_hidden.employee_contracts_refusals(p_employee int, p_contracts jsonb) returns text[]
language plpgsql stable as $$
declare
  v_messages text[] := '{}';
  i int;
begin
  for i in 0 .. jsonb_array_length(p_contracts) - 1 loop
    v_messages := v_messages || app_hidden.employee_contract_refusals(p_employee, i + 1, p_contracts -> i)
                             || app_hidden.employee_contract_overlap_refusals(p_contracts, i + 1);
  end loop;
  return v_messages;
end;
$$;
comment on function app_hidden.employee_contracts_refusals(integer, jsonb) is
'Employee record, contracts (SPEC Permissions, employee.change_employee_record): the rules of each contract
and the overlap rule (employee_contract_overlap_refusals), contract after contract.';

-- Team assignments: the list sent replaces the record's assignments.

create or replace function app_hidden.employee_team_assignment_refusals(p_employee int, p_rank int, p_item jsonb, p_scope int[])
returns text[]
language plpgsql stable as $$
declare
  v_label text := format('Affectation n° %s : ', p_rank);
  v_messages text[] := '{}';
  v_id int;
  v_existing app_public.team_assignments;
  v_team int;
  v_start date;
  v_end date;
begin
  if jsonb_typeof(p_item) <> 'object' then
    return array[v_label || 'un objet est attendu.'];
  end if;
  v_id := app_hidden.in_int(p_item, 'id', 'teams');
  if v_id is not null then
    select * into v_existing from app_public.team_assignments ta where ta.id = v_id and ta.employee_id = p_employee;
    if p_employee is null or v_existing.id is null then
      v_messages := v_messages || (v_label || 'cette affectation n’appartient pas à ce salarié.');
    end if;
  end if;
  v_team := app_hidden.in_int(p_item, 'team', 'teams');
  v_start := app_hidden.in_date(p_item, 'start_date', 'teams');
  v_end := app_hidden.in_date(p_item, 'end_date', 'teams');
  if v_team is null then
    v_messages := v_messages || (v_label || 'l’équipe est obligatoire.');
  elsif not exists (select 1 from app_public.teams t where t.id = v_team) then
    v_messages := v_messages || (v_label || format('équipe n° %s introuvable.', v_team));
  elsif p_scope is not null
        and (v_existing.id is null or v_existing.team_id <> v_team or v_existing.start_date is distinct from v_start
             or v_existing.end_date is distinct from v_end)
        and not exists (select 1 from app_public.team_establishments te
                        where te.team_id = v_team and te.establishment_id = any (p_scope)) then
    v_messages := v_messages || (v_label || 'cette équipe n’a aucun établissement dans votre périmètre.');
  end if;
  if v_end < v_start then
    v_messages := v_messages || (v_label || 'la date de fin précède la date de début.');
  end if;
  return v_messages;
end;
$$;
comment on function app_hidden.employee_team_assignment_refusals(integer, integer, jsonb, integer[]) is
'Employee record, one team assignment of the list (rank p_rank): an object; its id, when given, an
assignment of this employee; a known team, which a restricted writer (p_scope) adds or changes only when
it has an establishment in its perimeter (SPEC Permissions rule 7); the end not before the start.';

-- The period of an assignment item as the overlap rule reads it (open bounds allowed; empty when it ends before it starts).
create or replace function app_hidden.team_assignment_item_period(p_item jsonb) returns daterange
language sql stable as $$
  select case when jsonb_typeof(p_item) = 'object'
                   and ((p_item ->> 'end_date') is null or (p_item ->> 'start_date') is null
                        or (p_item ->> 'end_date')::date >= (p_item ->> 'start_date')::date)
              then daterange((p_item ->> 'start_date')::date, (p_item ->> 'end_date')::date, '[]')
              else 'empty'::daterange end;
$$;
comment on function app_hidden.team_assignment_item_period(jsonb) is
'Team assignment: the period of an assignment item of a list already read (empty when it ends before it starts).';

create or replace function app_hidden.employee_team_assignment_overlap_refusals(p_teams jsonb, p_rank int) returns text[]
language sql stable as $$
  select coalesce(array_agg(format('Les affectations n° %s et n° %s à la même équipe se chevauchent.', x.rank, p_rank)
                            order by x.rank), '{}')
  from jsonb_array_elements(p_teams) with ordinality x(item, rank)
  where x.rank < p_rank and jsonb_typeof(x.item) = 'object'
    and (x.item ->> 'team')::int = (p_teams -> (p_rank - 1) ->> 'team')::int
    and app_hidden.team_assignment_item_period(x.item) && app_hidden.team_assignment_item_period(p_teams -> (p_rank - 1));
$$;
comment on function app_hidden.employee_team_assignment_overlap_refusals(jsonb, integer) is
'Employee record, teams: two assignments of the list to the same team do not overlap (the assignment of
rank p_rank against the earlier ones).';

create or replace function app_hidden.employee_team_removal_refusal(p_employee int, p_teams jsonb, p_scope int[]) returns text
language sql stable as $$
  select 'Vous ne pouvez pas retirer une affectation à une équipe hors de votre périmètre.'
  where p_scope is not null and p_employee is not null and exists (
    select 1 from app_public.team_assignments ta
    where ta.employee_id = p_employee
      and not ta.id in (select (x ->> 'id')::int from jsonb_array_elements(p_teams) x
                        where jsonb_typeof(x) = 'object' and jsonb_typeof(x -> 'id') = 'number')
      and not exists (select 1 from app_public.team_establishments te
                      where te.team_id = ta.team_id and te.establishment_id = any (p_scope)));
$$;
comment on function app_hidden.employee_team_removal_refusal(integer, jsonb, integer[]) is
'SPEC Permissions rule 7: a restricted writer (p_scope) does not remove an assignment of the employee to a
team with no establishment in its perimeter (an assignment left out of the list sent).';

create or replace function app_hidden.employee_team_assignments_refusals(p_employee int, p_teams jsonb, p_scope int[])
returns text[]
language plpgsql stable as $$
declare
  v_messages text[] := '{}';
  i int;
begin
  for i in 0 .. jsonb_array_length(p_teams) - 1 loop
    v_messages := v_messages || app_hidden.employee_team_assignment_refusals(p_employee, i + 1, p_teams -> i, p_scope)
                             || app_hidden.employee_team_assignment_overlap_refusals(p_teams, i + 1);
  end loop;
  return array_remove(v_messages || app_hidden.employee_team_removal_refusal(p_employee, p_teams, p_scope), null);
end;
$$;
comment on function app_hidden.employee_team_assignments_refusals(integer, jsonb, integer[]) is
'Employee record, teams (SPEC Permissions, employee.change_employee_record, and rule 7): the rules of each
assignment, the overlap rule assignment after assignment, then the removal rule of a restricted writer.';
--! EndIncluded employees/rules.sql
--! Included employees/api.sql
-- /api/employees/: the directory (list, detail) and the employee record (create, update).
--
-- Reading (RLS of sql/org/policies.sql): holders of employee.view_employee_directory read the
-- whole directory; Service Paie reads the people of its payroll perimeter; every account
-- reads its own record. scope=perimeter restricts a list to the employees attached (main,
-- secondary workplace, team of the day) to the caller's establishments
-- (app_hidden.scope_establishment_ids: its absences.view_absence_queue or employee.view_payroll
-- perimeter, on-call extensions included; else its own workplaces).
--
-- The key social_security_number is present only for readers holding
-- employee.view_social_security_number on that employee; any write carrying the key by
-- another caller is refused (403) before anything is written.

-- JSON of employees, set-based (one statement whatever the number of ids), with the
-- caller's rights.
create or replace function app_hidden.employees_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  with emp as (
    select e.* from app_public.employees e where e.id = any (p_ids)
  ),
  ssn_readable as (
    select x.id from app_hidden.perimeter_employee_ids('employee.view_social_security_number') x(id)
    where x.id = any (p_ids)
  ),
  secondaries as (
    select ses.employee_id, jsonb_agg(ses.establishment_id order by ses.establishment_id) as list
    from app_public.employee_secondary_establishments ses
    where ses.employee_id = any (p_ids)
    group by ses.employee_id
  ),
  assignments as (
    select ta.employee_id,
           jsonb_agg(jsonb_build_object('id', ta.id, 'team', ta.team_id, 'team_name', t.name,
                                        'start_date', ta.start_date, 'end_date', ta.end_date)
                     order by ta.start_date nulls first, ta.id) as list
    from app_public.team_assignments ta
    join app_public.teams t on t.id = ta.team_id
    where ta.employee_id = any (p_ids)
    group by ta.employee_id
  ),
  contracts as (
    select c.employee_id,
           jsonb_agg(jsonb_build_object('id', c.id, 'type', c.contract_type_id, 'type_code', ct.code,
                                        'type_name', ct.name, 'start_date', c.start_date, 'end_date', c.end_date,
                                        'trial_end_date', c.trial_end_date, 'job_title', c.job_title,
                                        'weekly_hours', app_hidden.fmt_quantity(c.weekly_hours))
                     order by c.start_date, c.id) as list
    from app_public.contracts c
    join app_public.contract_types ct on ct.id = c.contract_type_id
    where c.employee_id = any (p_ids)
    group by c.employee_id
  )
  select emp.id,
         jsonb_build_object(
           'id', emp.id,
           'first_name', emp.first_name,
           'last_name', emp.last_name,
           'name', emp.first_name || ' ' || emp.last_name,
           'professional_email', emp.professional_email,
           'birth_date', emp.birth_date,
           'is_polyvalent', emp.is_polyvalent,
           'main_establishment', emp.main_establishment_id,
           'main_establishment_name', est.name,
           'secondary_establishments', coalesce(sec.list, '[]'::jsonb),
           'teams', coalesce(asg.list, '[]'::jsonb),
           'contracts', coalesce(con.list, '[]'::jsonb),
           'account', case when acc.id is not null
                           then jsonb_build_object('id', acc.id, 'username', acc.username, 'is_active', acc.is_active) end,
           'created_at', emp.created_at,
           'updated_at', emp.updated_at)
         || case when emp.id in (select r.id from ssn_readable r)
                 then jsonb_build_object('social_security_number', ssn.social_security_number)
                 else '{}'::jsonb end
  from emp
  left join app_public.establishments est on est.id = emp.main_establishment_id
  left join app_public.employee_social_security_numbers ssn on ssn.employee_id = emp.id
  left join secondaries sec on sec.employee_id = emp.id
  left join assignments asg on asg.employee_id = emp.id
  left join contracts con on con.employee_id = emp.id
  left join app_public.accounts acc on acc.employee_id = emp.id;
$$;

-- GET /api/employees/
create or replace function app_public.employees_list(p_scope text default null, p_search text default null,
                                          p_establishment int default null, p_team int default null,
                                          p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  scope_employees as (
    select x.id from scope, lateral app_hidden.employees_of_establishments(scope.ids, app_hidden.today()) x(id)
    where scope.ids is not null
  ),
  establishment_employees as (
    select x.id from app_hidden.employees_of_establishments(array[p_establishment], app_hidden.today()) x(id)
    where p_establishment is not null
  ),
  filtered as (
    select e.id, e.first_name, e.last_name
    from app_public.employees e
    where (p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
           or e.id in (select se.id from scope_employees se))
      and (p_establishment is null or e.id in (select ee.id from establishment_employees ee))
      and (p_team is null or exists (select 1 from app_public.team_assignments ta
                                     where ta.employee_id = e.id and ta.team_id = p_team
                                       and app_hidden.date_in(app_hidden.today(), ta.start_date, ta.end_date)))
      and (coalesce(btrim(p_search), '') = ''
           or e.first_name || ' ' || e.last_name ilike app_hidden.like_pattern(p_search)
           or e.last_name || ' ' || e.first_name ilike app_hidden.like_pattern(p_search)
           or e.professional_email ilike app_hidden.like_pattern(p_search))
  ),
  page as (
    select f.id, row_number() over (order by lower(f.last_name), lower(f.first_name), f.id) as ord
    from filtered f
    order by ord
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p
                         join app_hidden.employees_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.employees_list(text, text, integer, integer, integer, integer) is
'SPEC Documents and other routes, GET /api/employees/: one page of the employee records the caller reads
(directory holders all, Service Paie its payroll perimeter, everyone their own), by name, searchable,
filtered by establishment or team of today; scope=perimeter keeps those attached to the caller''s
establishments. The social security number only for its readers.';

-- GET /api/employees/<id>/
create or replace function app_public.employee_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.employee_get(integer) is
'SPEC Permissions (employee.view_employee_directory, employee.view_social_security_number), GET
/api/employees/<id>/: one employee record the caller reads (else 404) with workplaces, teams, contracts
and account; the social security number only for its readers.';

-- The contact address of an employee's account changed: the old address is told by e-mail
-- (outbox) and the account in the application, so a takeover does not go unnoticed. (The
-- employee audit line carries the addresses before and after.)
create or replace function app_private.tell_email_changed(p_employee int, p_old text, p_new text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_private.employee_account_id(p_employee);
  v_by text := coalesce(app_hidden.account_display_name(app_hidden.current_account_id()), 'Inconnu');
  v_body text;
begin
  if v_account is null then
    return;
  end if;
  v_body := format('L’adresse e-mail de votre compte a été modifiée par %s le %s : %s. '
                   'Si vous n’êtes pas à l’origine de ce changement, prévenez immédiatement votre service RH.',
                   v_by, app_hidden.fr_date(app_hidden.today()), coalesce(p_new, 'aucune adresse'));
  perform app_private.notify(v_account, 'Adresse e-mail modifiée', v_body, 'warning', 'employee', p_employee);
  if p_old is not null then
    insert into app_private.email_outbox (kind, to_address, subject, body_text, account_id)
    values ('email_changed', p_old, 'Adresse e-mail de votre compte modifiée',
            E'Bonjour,\n\n' || v_body || E'\n\nCe message est envoyé à votre ancienne adresse.', v_account);
  end if;
end;
$$;

-- Opens the account of a new employee record: no usable password (null hash), the username
-- given or derived from the name (first.last, then first.last2, ...), Salarié granted by the
-- accounts trigger, and the set-password invitation queued when a professional e-mail exists.
create or replace function app_private.open_employee_account(p_employee_id int, p_username text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee app_public.employees;
  v_base text;
  v_username text := p_username;
  v_suffix int := 1;
  v_account_id int;
  v_invited boolean;
begin
  select * into v_employee from app_public.employees e where e.id = p_employee_id;
  if v_username is null then
    v_base := left(trim(both '.-' from app_hidden.ascii_slug(v_employee.first_name) || '.'
                                      || app_hidden.ascii_slug(v_employee.last_name)),
                  app_hidden.username_max_length() - 10);  -- room for the suffix of a homonym
    if length(v_base) < app_hidden.username_min_length() then
      v_base := 'salarie' || p_employee_id;
    end if;
    perform pg_advisory_xact_lock(hashtext('username:' || v_base));
    v_username := v_base;
    while app_private.username_taken(v_username) loop
      v_suffix := v_suffix + 1;
      v_username := v_base || v_suffix;
    end loop;
  end if;
  insert into app_public.accounts (username, employee_id) values (v_username, p_employee_id)
  returning id into v_account_id;
  insert into app_private.account_secrets (account_id, password_hash) values (v_account_id, null);
  v_invited := app_private.queue_invitation(v_account_id);
  return jsonb_build_object('id', v_account_id, 'username', v_username, 'invitation_queued', v_invited);
end;
$$;

-- The writes of the record's lists and number, once its rules have accepted the body.

-- The number sent (null removes it).
create or replace function app_hidden.employee_ssn_write(p_id int, p_number text) returns void
language plpgsql volatile as $$
begin
  if p_number is null then
    delete from app_public.employee_social_security_numbers s where s.employee_id = p_id;
  else
    insert into app_public.employee_social_security_numbers (employee_id, social_security_number)
    values (p_id, p_number)
    on conflict (employee_id) do update set social_security_number = excluded.social_security_number
    where app_public.employee_social_security_numbers.social_security_number is distinct from excluded.social_security_number;
  end if;
end;
$$;

-- The secondary workplaces become the list sent.
create or replace function app_hidden.employee_secondary_workplaces_write(p_id int, p_secondaries int[]) returns void
language plpgsql volatile as $$
begin
  delete from app_public.employee_secondary_establishments ses
  where ses.employee_id = p_id and not ses.establishment_id = any (p_secondaries);
  insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
  select p_id, s.id from unnest(p_secondaries) s(id)
  on conflict do nothing;
end;
$$;

-- The contracts become the list sent: an item with id updates that contract, an item without
-- id creates one, a contract left out is deleted.
create or replace function app_hidden.employee_contracts_write(p_id int, p_contracts jsonb) returns void
language plpgsql volatile as $$
declare
  v_item jsonb;
  v_item_id int;
begin
  delete from app_public.contracts c
  where c.employee_id = p_id
    and not c.id in (select (x ->> 'id')::int from jsonb_array_elements(p_contracts) x where x ? 'id' and x ->> 'id' is not null);
  for v_item in select x from jsonb_array_elements(p_contracts) x loop
    v_item_id := app_hidden.in_int(v_item, 'id', 'contracts');
    if v_item_id is null then
      insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, trial_end_date, job_title, weekly_hours)
      values (p_id, app_hidden.in_int(v_item, 'type'), app_hidden.in_date(v_item, 'start_date'),
              app_hidden.in_date(v_item, 'end_date'), app_hidden.in_date(v_item, 'trial_end_date'),
              app_hidden.in_trimmed(v_item, 'job_title'), app_hidden.in_numeric(v_item, 'weekly_hours'));
    else
      update app_public.contracts c
      set contract_type_id = app_hidden.in_int(v_item, 'type'), start_date = app_hidden.in_date(v_item, 'start_date'),
          end_date = app_hidden.in_date(v_item, 'end_date'), trial_end_date = app_hidden.in_date(v_item, 'trial_end_date'),
          job_title = app_hidden.in_trimmed(v_item, 'job_title'), weekly_hours = app_hidden.in_numeric(v_item, 'weekly_hours')
      where c.id = v_item_id
        and (c.contract_type_id, c.start_date, c.end_date, c.trial_end_date, c.job_title, c.weekly_hours)
            is distinct from (app_hidden.in_int(v_item, 'type'), app_hidden.in_date(v_item, 'start_date'),
                              app_hidden.in_date(v_item, 'end_date'), app_hidden.in_date(v_item, 'trial_end_date'),
                              app_hidden.in_trimmed(v_item, 'job_title'), app_hidden.in_numeric(v_item, 'weekly_hours'));
    end if;
  end loop;
end;
$$;

-- The team assignments become the list sent (same replacement as the contracts).
create or replace function app_hidden.employee_team_assignments_write(p_id int, p_teams jsonb) returns void
language plpgsql volatile as $$
declare
  v_item jsonb;
  v_item_id int;
begin
  delete from app_public.team_assignments ta
  where ta.employee_id = p_id
    and not ta.id in (select (x ->> 'id')::int from jsonb_array_elements(p_teams) x where x ? 'id' and x ->> 'id' is not null);
  for v_item in select x from jsonb_array_elements(p_teams) x loop
    v_item_id := app_hidden.in_int(v_item, 'id', 'teams');
    if v_item_id is null then
      insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
      values (p_id, app_hidden.in_int(v_item, 'team'), app_hidden.in_date(v_item, 'start_date'), app_hidden.in_date(v_item, 'end_date'));
    else
      update app_public.team_assignments ta
      set team_id = app_hidden.in_int(v_item, 'team'), start_date = app_hidden.in_date(v_item, 'start_date'),
          end_date = app_hidden.in_date(v_item, 'end_date')
      where ta.id = v_item_id
        and (ta.team_id, ta.start_date, ta.end_date)
            is distinct from (app_hidden.in_int(v_item, 'team'), app_hidden.in_date(v_item, 'start_date'),
                              app_hidden.in_date(v_item, 'end_date'));
    end if;
  end loop;
end;
$$;

-- Validation and write of the record, shared by creation (p_id null), PUT and PATCH: the
-- typed values of the body (p_sent: the keys it sent; a key left out keeps the record's value,
-- the lists contracts and teams are JSON lists read item by item), each rule of
-- sql/employees/rules.sql asked, every refusal answered together (400 WV501), then the writes.
-- Runs as the API function's role (wfm_api): every write goes through the policies.
drop function if exists app_hidden.employee_save(int, jsonb, boolean);
create or replace function app_hidden.employee_save(
  p_id int, p_partial boolean, p_sent text[], p_first_name text, p_last_name text, p_professional_email text,
  p_birth_date date, p_is_polyvalent boolean, p_main_establishment int, p_secondary_establishments int[],
  p_social_security_number text, p_contracts jsonb, p_teams jsonb, p_username text) returns int
language plpgsql volatile as $$
declare
  v_creating boolean := p_id is null;
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_employee_record');
  v_ssn_sent boolean := app_hidden.sent(p_sent, 'social_security_number', p_social_security_number is not null);
  v_email_sent boolean := app_hidden.sent(p_sent, 'professional_email', p_professional_email is not null);
  v_birth_date_sent boolean := app_hidden.sent(p_sent, 'birth_date', p_birth_date is not null);
  v_main_sent boolean := app_hidden.sent(p_sent, 'main_establishment', p_main_establishment is not null);
  v_old app_public.employees;
  v_errors jsonb := '{}';
  v_id int := p_id;
  v_first_name text;
  v_last_name text;
  v_name_required boolean;
  v_email text;
  v_birth_date date;
  v_polyvalent boolean;
  v_main int;
  v_secondaries int[] := p_secondary_establishments;
  v_old_secondaries int[];
  v_ssn text;
  v_contracts jsonb := nullif(p_contracts, 'null'::jsonb);
  v_teams jsonb := nullif(p_teams, 'null'::jsonb);
begin
  if not v_creating then
    select * into v_old from app_public.employees e where e.id = p_id;
    if not found then
      perform app_hidden.not_found('Salarié introuvable.');
    end if;
  end if;
  -- The key itself is refused to whoever may not read the number (before anything else).
  if v_ssn_sent then
    perform app_hidden.employee_refuse_ssn_key(p_id);
  end if;
  perform app_hidden.employee_refuse_record_write(p_id);
  -- What the route schema refuses, for a caller that reaches the function without it (GraphQL).
  if app_hidden.id_list_refusal(v_secondaries) is not null then
    perform app_hidden.invalid('secondary_establishments', app_hidden.id_list_refusal(v_secondaries));
  end if;
  if jsonb_typeof(v_contracts) <> 'array' then
    perform app_hidden.invalid('contracts', 'Une liste est attendue.');
  end if;
  if jsonb_typeof(v_teams) <> 'array' then
    perform app_hidden.invalid('teams', 'Une liste est attendue.');
  end if;

  -- A name is required when creating, replacing (PUT) or sent; else the record's stays (and is
  -- checked as it is).
  v_first_name := app_hidden.trimmed(p_first_name);
  v_name_required := v_creating or not p_partial or app_hidden.sent(p_sent, 'first_name', p_first_name is not null);
  if not v_name_required then
    v_first_name := v_old.first_name;
  end if;
  v_errors := app_hidden.add_refusals(v_errors, 'first_name',
    app_hidden.employee_name_refusal(v_first_name, v_name_required, 'Le prénom est obligatoire.'));
  v_last_name := app_hidden.trimmed(p_last_name);
  v_name_required := v_creating or not p_partial or app_hidden.sent(p_sent, 'last_name', p_last_name is not null);
  if not v_name_required then
    v_last_name := v_old.last_name;
  end if;
  v_errors := app_hidden.add_refusals(v_errors, 'last_name',
    app_hidden.employee_name_refusal(v_last_name, v_name_required, 'Le nom est obligatoire.'));

  v_email := case when v_email_sent then app_hidden.trimmed(p_professional_email) else v_old.professional_email end;
  v_errors := app_hidden.add_refusals(v_errors, 'professional_email', coalesce(
    app_hidden.employee_email_refusal(case when v_email_sent then v_email end),
    app_hidden.employee_email_takeover_refusal(p_id, v_old.professional_email, v_email)));

  v_birth_date := case when v_birth_date_sent then p_birth_date else v_old.birth_date end;
  v_errors := app_hidden.add_refusals(v_errors, 'birth_date',
    app_hidden.employee_birth_date_refusal(case when v_birth_date_sent then v_birth_date end));

  v_polyvalent := coalesce(p_is_polyvalent, v_old.is_polyvalent, false);

  v_main := case when v_main_sent then p_main_establishment else v_old.main_establishment_id end;
  v_errors := app_hidden.add_refusals(v_errors, 'main_establishment', coalesce(
    app_hidden.establishment_unknown_refusal(case when v_main_sent then v_main end),
    app_hidden.employee_main_workplace_perimeter_refusal(
      v_main, v_creating or v_main is distinct from v_old.main_establishment_id, v_scope)));

  v_old_secondaries := case when v_creating then '{}'::int[]
                            else array(select ses.establishment_id from app_public.employee_secondary_establishments ses
                                       where ses.employee_id = p_id) end;
  if v_secondaries is not null then
    v_errors := app_hidden.add_refusals(v_errors, 'secondary_establishments', coalesce(
      app_hidden.employee_secondary_workplaces_unknown_refusal(v_secondaries),
      app_hidden.employee_main_not_secondary_refusal(v_main, v_secondaries),
      app_hidden.employee_secondary_workplaces_perimeter_refusal(v_secondaries, v_old_secondaries, v_scope)));
  end if;

  if v_ssn_sent then
    v_ssn := upper(replace(app_hidden.trimmed(p_social_security_number), ' ', ''));
    v_errors := app_hidden.add_refusals(v_errors, 'social_security_number', app_hidden.employee_ssn_refusal(v_ssn));
  end if;

  if app_hidden.sent(p_sent, 'username', p_username is not null) then
    v_errors := app_hidden.add_refusals(v_errors, 'username', app_hidden.employee_username_refusal(
      v_creating, case when v_creating then app_hidden.trimmed(p_username) end));
  end if;

  if v_contracts is not null then
    v_errors := app_hidden.add_error_list(v_errors, 'contracts', app_hidden.employee_contracts_refusals(p_id, v_contracts));
  end if;

  if v_teams is not null then
    v_errors := app_hidden.add_error_list(v_errors, 'teams', app_hidden.employee_team_assignments_refusals(p_id, v_teams, v_scope));
  end if;

  perform app_hidden.invalid_fields(v_errors, 'WV501') where v_errors <> '{}'::jsonb;

  -- Writes.
  if v_creating then
    insert into app_public.employees (first_name, last_name, professional_email, birth_date, is_polyvalent,
                                      main_establishment_id)
    values (v_first_name, v_last_name, v_email, v_birth_date, v_polyvalent, v_main);
    -- Not RETURNING: the new row is not yet in the snapshot the read policy consults.
    v_id := currval(pg_get_serial_sequence('app_public.employees', 'id'));
  else
    update app_public.employees e
    set first_name = v_first_name, last_name = v_last_name, professional_email = v_email,
        birth_date = v_birth_date, is_polyvalent = v_polyvalent, main_establishment_id = v_main
    where e.id = p_id
      and (e.first_name, e.last_name, e.professional_email, e.birth_date, e.is_polyvalent, e.main_establishment_id)
          is distinct from (v_first_name, v_last_name, v_email, v_birth_date, v_polyvalent, v_main);
    if v_email is distinct from v_old.professional_email then
      perform app_private.tell_email_changed(p_id, v_old.professional_email, v_email);
    end if;
  end if;
  if v_ssn_sent then
    if v_creating then
      perform app_hidden.employee_refuse_ssn_on_created_record(v_id);
    end if;
    perform app_hidden.employee_ssn_write(v_id, v_ssn);
  end if;
  if v_secondaries is not null then
    perform app_hidden.employee_secondary_workplaces_write(v_id, v_secondaries);
  end if;
  if v_contracts is not null then
    perform app_hidden.employee_contracts_write(v_id, v_contracts);
  end if;
  if v_teams is not null then
    perform app_hidden.employee_team_assignments_write(v_id, v_teams);
  end if;
  return v_id;
end;
$$;

-- POST /api/employees/: the record, its contracts and assignments, and its account (no
-- usable password; invitation queued when a professional e-mail exists). p_sent: the keys
-- the body sent (the number's key, even null, is refused to whoever may not read it).
drop function if exists app_public.employee_create(jsonb);
create or replace function app_public.employee_create(
  p_first_name text, p_last_name text, p_professional_email text default null, p_birth_date date default null,
  p_is_polyvalent boolean default null, p_main_establishment int default null, p_secondary_establishments int[] default null,
  p_social_security_number text default null, p_contracts jsonb default null, p_teams jsonb default null,
  p_username text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
  v_account jsonb;
  v_doc jsonb;
begin
  v_id := app_hidden.employee_save(null, false, p_sent, p_first_name, p_last_name, p_professional_email, p_birth_date,
                                   p_is_polyvalent, p_main_establishment, p_secondary_establishments,
                                   p_social_security_number, p_contracts, p_teams, p_username);
  v_account := app_private.open_employee_account(v_id, app_hidden.trimmed(p_username));
  select j.doc into v_doc from app_hidden.employees_json(array[v_id]) j;
  return v_doc || jsonb_build_object('account', (v_account - 'invitation_queued') || jsonb_build_object('is_active', true),
                                     'invitation_queued', (v_account ->> 'invitation_queued')::boolean);
end;
$$;
comment on function app_public.employee_create(text, text, text, date, boolean, integer, integer[], text, jsonb, jsonb, text, text[]) is
'SPEC Permissions (employee.change_employee_record) and Authentication rule 4, POST /api/employees/: HR
creates an employee record with its contracts and team assignments, and opens its account (Salarié, no
usable password; a set-password invitation queued when a professional e-mail is given). Returns the
record with invitation_queued.';

-- PATCH /api/employees/<id>/: only the keys sent (p_sent).
drop function if exists app_public.employee_update(int, jsonb);
create or replace function app_public.employee_update(
  p_id int, p_first_name text default null, p_last_name text default null, p_professional_email text default null,
  p_birth_date date default null, p_is_polyvalent boolean default null, p_main_establishment int default null,
  p_secondary_establishments int[] default null, p_social_security_number text default null,
  p_contracts jsonb default null, p_teams jsonb default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.employee_save(p_id, true, p_sent, p_first_name, p_last_name, p_professional_email, p_birth_date,
                                   p_is_polyvalent, p_main_establishment, p_secondary_establishments,
                                   p_social_security_number, p_contracts, p_teams, null);
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  return v_doc;
end;
$$;
comment on function app_public.employee_update(integer, text, text, text, date, boolean, integer, integer[], text, jsonb, jsonb, text[]) is
'SPEC Permissions (employee.change_employee_record, employee.view_social_security_number), PATCH
/api/employees/<id>/: HR changes the keys sent (p_sent) of a record of its perimeter (a list sent replaces
contracts or team assignments; 404 outside the perimeter; the social security number key from a
non-reader gives 403).';

-- PUT /api/employees/<id>/: first_name and last_name required; other keys as PATCH (lists
-- absent stay as they are).
drop function if exists app_public.employee_replace(int, jsonb);
create or replace function app_public.employee_replace(
  p_id int, p_first_name text default null, p_last_name text default null, p_professional_email text default null,
  p_birth_date date default null, p_is_polyvalent boolean default null, p_main_establishment int default null,
  p_secondary_establishments int[] default null, p_social_security_number text default null,
  p_contracts jsonb default null, p_teams jsonb default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.employee_save(p_id, false, p_sent, p_first_name, p_last_name, p_professional_email, p_birth_date,
                                   p_is_polyvalent, p_main_establishment, p_secondary_establishments,
                                   p_social_security_number, p_contracts, p_teams, null);
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  return v_doc;
end;
$$;
comment on function app_public.employee_replace(integer, text, text, text, date, boolean, integer, integer[], text, jsonb, jsonb, text[]) is
'SPEC Permissions (employee.change_employee_record), PUT /api/employees/<id>/: as PATCH, with first_name
and last_name required; lists not sent stay as they are.';
--! EndIncluded employees/api.sql
--! Included employees/annexes.sql
-- /api/employees/<pk>/emergency-contacts/ and /api/employees/<pk>/attachments/.
-- The employee reads their own; employee.view_* holders read their perimeter; HR
-- (employee.change_*) writes. An unreadable record, or a record outside the permission's
-- perimeter, answers 404; a caller without the permission at all, 403.

create or replace function app_hidden.employee_annex_access(p_employee int, p_view_permission text, p_change_permission text,
                                                 p_write boolean)
returns void
language plpgsql stable as $$
declare
  v_me int := app_hidden.current_account_id();
begin
  if not exists (select 1 from app_public.employees e where e.id = p_employee) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  if p_write then
    if not app_hidden.current_account_has(p_change_permission) then
      perform app_hidden.forbidden('Vous n’avez pas le droit de modifier ces informations de la fiche salarié.', 'WF560');
    end if;
    if not app_hidden.may(v_me, p_change_permission, p_employee) then
      perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
    end if;
    return;
  end if;
  if p_employee = app_hidden.current_employee_id() then
    return;
  end if;
  if not (app_hidden.current_account_has(p_view_permission) or app_hidden.current_account_has(p_change_permission)) then
    perform app_hidden.forbidden('Vous n’avez pas le droit de lire ces informations de la fiche salarié.', 'WF560');
  end if;
  if not (app_hidden.may(v_me, p_view_permission, p_employee) or app_hidden.may(v_me, p_change_permission, p_employee)) then
    perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
  end if;
end;
$$;

-- Emergency contacts -----------------------------------------------------------------------

create or replace function app_hidden.emergency_contact_json(c app_public.employee_emergency_contacts) returns jsonb
language sql immutable as $$
  select jsonb_build_object('id', c.id, 'employee', c.employee_id, 'name', c.name, 'relationship', c.relationship,
                            'phone', c.phone, 'alternate_phone', c.alternate_phone, 'email', c.email,
                            'position', c.position);
$$;

-- Thresholds of the annexes, named once.
create or replace function app_hidden.emergency_contacts_max() returns int
language sql immutable as $$ select 10 $$;
comment on function app_hidden.emergency_contacts_max() is
'Emergency contacts: at most 10 per employee.';

-- Problems of one contact, as (field, message) pairs (texts as sent: trimmed here).
create or replace function app_hidden.emergency_contact_refusals(p_name text, p_relationship text, p_phone text,
                                                                 p_alternate_phone text, p_email text)
returns table (field text, message text)
language plpgsql immutable as $$
declare
  v_phone_pattern constant text := app_hidden.phone_pattern();
  v text;
begin
  v := app_hidden.trimmed(p_name);
  if v is null then
    return query select 'name'::text, 'Le nom du contact est obligatoire.'::text;
  elsif char_length(v) > app_hidden.name_max_length() then
    return query select 'name'::text, app_hidden.max_length_message(app_hidden.name_max_length());
  end if;
  if char_length(btrim(p_relationship)) > app_hidden.relationship_max_length() then
    return query select 'relationship'::text, app_hidden.max_length_message(app_hidden.relationship_max_length());
  end if;
  v := app_hidden.trimmed(p_phone);
  if v is null then
    return query select 'phone'::text, 'Le numéro de téléphone est obligatoire.'::text;
  elsif v !~ v_phone_pattern then
    return query select 'phone'::text, 'Numéro de téléphone invalide (exemple : 06 12 34 56 78 ou +33 6 12 34 56 78).'::text;
  end if;
  v := app_hidden.trimmed(p_alternate_phone);
  if v is not null and v !~ v_phone_pattern then
    return query select 'alternate_phone'::text, 'Numéro de téléphone invalide (exemple : 06 12 34 56 78 ou +33 6 12 34 56 78).'::text;
  end if;
  v := app_hidden.trimmed(p_email);
  if v is not null and app_hidden.email_acceptable(v) is not true then
    return query select 'email'::text, 'Adresse e-mail invalide.'::text;
  end if;
end;
$$;

-- Problems of one contact object of the list of PUT .../emergency-contacts/ (a JSON list: a
-- GraphQL caller gives it without the route schema): an object whose fields are texts, then
-- emergency_contact_refusals.
drop function if exists app_hidden.emergency_contact_problems(jsonb);
create or replace function app_hidden.emergency_contact_item_problems(p_item jsonb) returns table (field text, message text)
language plpgsql immutable as $$
declare
  v text;
  v_bad boolean := false;
begin
  if jsonb_typeof(p_item) is distinct from 'object' then
    return query select 'non_field_errors'::text, 'Un objet est attendu.'::text;
    return;
  end if;
  foreach v in array array['name', 'relationship', 'phone', 'alternate_phone', 'email'] loop
    if p_item ? v and jsonb_typeof(p_item -> v) not in ('string', 'null') then
      field := v;
      message := 'Une chaîne de caractères est attendue.';
      v_bad := true;
      return next;
    end if;
  end loop;
  if v_bad then
    return;
  end if;
  return query select * from app_hidden.emergency_contact_refusals(p_item ->> 'name', p_item ->> 'relationship', p_item ->> 'phone',
                                                                  p_item ->> 'alternate_phone', p_item ->> 'email');
end;
$$;

-- GET /api/employees/<pk>/emergency-contacts/
create or replace function app_public.emergency_contacts_list(p_employee int, p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable as $$
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_emergency_contact',
                                           'employee.change_emergency_contact', false);
  return jsonb_build_object(
    'count', (select count(*) from app_public.employee_emergency_contacts c where c.employee_id = p_employee),
    'results', coalesce((select jsonb_agg(app_hidden.emergency_contact_json(c) order by c.position, c.id)
                         from (select * from app_public.employee_emergency_contacts c
                               where c.employee_id = p_employee
                               order by c.position, c.id
                               limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) c), '[]'::jsonb));
end;
$$;
comment on function app_public.emergency_contacts_list(integer, integer, integer) is
'SPEC Permissions, GET /api/employees/<pk>/emergency-contacts/: one page of an employee''s emergency
contacts; the employee reads their own, holders of employee.view_emergency_contact or
change_emergency_contact their perimeter (404 outside it, 403 without the permission).';

-- PUT /api/employees/<pk>/emergency-contacts/ {"contacts": [...]}: the list replaces the
-- employee's contacts, in that order (an item with id updates that contact, one without id
-- creates a contact, a contact left out is deleted); at most 10.
drop function if exists app_public.emergency_contacts_replace(int, jsonb);
create or replace function app_public.emergency_contacts_replace(p_employee int, p_contacts jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_items jsonb := nullif(p_contacts, 'null'::jsonb);
  v_item jsonb;
  v_errors jsonb := '{}';
  v_problem record;
  v_id int;
  i int;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_emergency_contact',
                                           'employee.change_emergency_contact', true);
  perform pg_advisory_xact_lock(hashtext('emergency-contacts:' || p_employee));
  if v_items is null then
    perform app_hidden.invalid('contacts', 'La liste des contacts est obligatoire (une liste vide les supprime tous).', 'WV560');
  end if;
  if jsonb_typeof(v_items) <> 'array' then
    perform app_hidden.invalid('contacts', 'Une liste est attendue.');
  end if;
  if jsonb_array_length(v_items) > app_hidden.emergency_contacts_max() then
    perform app_hidden.invalid('contacts', format('Au plus %s contacts d’urgence par salarié.', app_hidden.emergency_contacts_max()), 'WV560');
  end if;
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    v_item := v_items -> i;
    for v_problem in select * from app_hidden.emergency_contact_item_problems(v_item) loop
      v_errors := app_hidden.add_error(v_errors, 'contacts', format('Contact n° %s : %s', i + 1,
        case v_problem.field when 'non_field_errors' then '' when 'name' then 'nom : ' when 'relationship' then 'lien : '
                             when 'phone' then 'téléphone : ' when 'alternate_phone' then 'autre téléphone : '
                             else 'e-mail : ' end || lower(left(v_problem.message, 1)) || substr(v_problem.message, 2)));
    end loop;
    if jsonb_typeof(v_item) = 'object' and v_item ? 'id' and jsonb_typeof(v_item -> 'id') <> 'null' then
      if jsonb_typeof(v_item -> 'id') <> 'number'
         or not exists (select 1 from app_public.employee_emergency_contacts c
                        where c.employee_id = p_employee and c.id::text = v_item ->> 'id') then
        v_errors := app_hidden.add_error(v_errors, 'contacts', format('Contact n° %s : ce contact n’appartient pas à ce salarié.', i + 1));
      end if;
    end if;
  end loop;
  perform app_hidden.invalid_fields(v_errors, 'WV560') where v_errors <> '{}'::jsonb;

  delete from app_public.employee_emergency_contacts c
  where c.employee_id = p_employee
    and not c.id::text in (select x ->> 'id' from jsonb_array_elements(v_items) x where x ->> 'id' is not null);
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    v_item := v_items -> i;
    v_id := (v_item ->> 'id')::int;
    if v_id is null then
      insert into app_public.employee_emergency_contacts (employee_id, name, relationship, phone, alternate_phone, email, position)
      values (p_employee, btrim(v_item ->> 'name'), nullif(btrim(v_item ->> 'relationship'), ''), btrim(v_item ->> 'phone'),
              nullif(btrim(v_item ->> 'alternate_phone'), ''), nullif(btrim(v_item ->> 'email'), ''), i + 1);
    else
      update app_public.employee_emergency_contacts c
      set name = btrim(v_item ->> 'name'), relationship = nullif(btrim(v_item ->> 'relationship'), ''),
          phone = btrim(v_item ->> 'phone'), alternate_phone = nullif(btrim(v_item ->> 'alternate_phone'), ''),
          email = nullif(btrim(v_item ->> 'email'), ''), position = i + 1
      where c.id = v_id
        and (c.name, c.relationship, c.phone, c.alternate_phone, c.email, c.position)
            is distinct from (btrim(v_item ->> 'name'), nullif(btrim(v_item ->> 'relationship'), ''), btrim(v_item ->> 'phone'),
                              nullif(btrim(v_item ->> 'alternate_phone'), ''), nullif(btrim(v_item ->> 'email'), ''), i + 1);
    end if;
  end loop;
  return jsonb_build_object(
    'count', (select count(*) from app_public.employee_emergency_contacts c where c.employee_id = p_employee),
    'next', null, 'previous', null,
    'results', coalesce((select jsonb_agg(app_hidden.emergency_contact_json(c) order by c.position, c.id)
                         from app_public.employee_emergency_contacts c where c.employee_id = p_employee), '[]'::jsonb));
end;
$$;
comment on function app_public.emergency_contacts_replace(integer, jsonb) is
'SPEC Permissions, PUT /api/employees/<pk>/emergency-contacts/: a holder of
employee.change_emergency_contact on the employee replaces the list in that order (an item with id
updates, one without creates, one left out is deleted; at most 10).';

-- POST /api/employees/<pk>/emergency-contacts/: adds one contact at the end of the list.
drop function if exists app_public.emergency_contact_create(int, jsonb);
create or replace function app_public.emergency_contact_create(p_employee int, p_name text, p_phone text,
                                                               p_relationship text default null, p_alternate_phone text default null,
                                                               p_email text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_problem record;
  v_position int;
  v_row app_public.employee_emergency_contacts;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_emergency_contact',
                                           'employee.change_emergency_contact', true);
  for v_problem in select * from app_hidden.emergency_contact_refusals(p_name, p_relationship, p_phone, p_alternate_phone, p_email) loop
    v_errors := app_hidden.add_error(v_errors, v_problem.field, v_problem.message);
  end loop;
  perform app_hidden.invalid_fields(v_errors, 'WV560') where v_errors <> '{}'::jsonb;
  -- Serialise concurrent additions to the same record (the ten-contact bound holds under races).
  perform pg_advisory_xact_lock(hashtext('emergency-contacts:' || p_employee));
  select coalesce(max(c.position), 0) + 1 into v_position
  from app_public.employee_emergency_contacts c where c.employee_id = p_employee;
  if v_position > app_hidden.emergency_contacts_max() then
    perform app_hidden.invalid(null, format('Au plus %s contacts d’urgence par salarié : modifiez ou supprimez-en un.',
                                            app_hidden.emergency_contacts_max()), 'WV560');
  end if;
  insert into app_public.employee_emergency_contacts (employee_id, name, relationship, phone, alternate_phone, email, position)
  values (p_employee, btrim(p_name), app_hidden.trimmed(p_relationship), btrim(p_phone),
          app_hidden.trimmed(p_alternate_phone), app_hidden.trimmed(p_email), v_position)
  returning * into v_row;
  return app_hidden.emergency_contact_json(v_row);
end;
$$;
comment on function app_public.emergency_contact_create(integer, text, text, text, text, text) is
'SPEC Permissions, POST /api/employees/<pk>/emergency-contacts/: a holder of
employee.change_emergency_contact on the employee adds one contact at the end of the list.';

-- Attachments ------------------------------------------------------------------------------

create or replace function app_hidden.employee_attachment_json(a app_public.employee_attachments, p_public_url text) returns jsonb
language sql immutable as $$
  select jsonb_build_object(
    'id', a.id, 'employee', a.employee_id, 'title', a.title, 'filename', a.filename,
    'content_type', a.content_type, 'size_bytes', a.size_bytes, 'uploaded_at', a.uploaded_at,
    'uploaded_by', a.uploaded_by, 'uploaded_by_name', a.uploaded_by_name,
    'file', rtrim(coalesce(p_public_url, ''), '/') || format('/api/employees/%s/attachments/%s/file/', a.employee_id, a.id));
$$;

-- GET /api/employees/<pk>/attachments/
create or replace function app_public.employee_attachments_list(p_employee int, p_public_url text default null,
                                                     p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable as $$
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', false);
  return jsonb_build_object(
    'count', (select count(*) from app_public.employee_attachments a where a.employee_id = p_employee),
    'results', coalesce((select jsonb_agg(app_hidden.employee_attachment_json(a, p_public_url) order by a.uploaded_at desc, a.id desc)
                         from (select * from app_public.employee_attachments a
                               where a.employee_id = p_employee
                               order by a.uploaded_at desc, a.id desc
                               limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) a), '[]'::jsonb));
end;
$$;
comment on function app_public.employee_attachments_list(integer, text, integer, integer) is
'SPEC Permissions, GET /api/employees/<pk>/attachments/: one page of an employee''s attachments; the
employee reads their own, holders of employee.view_employee_attachment or change_employee_attachment
their perimeter (404 outside it, 403 without the permission).';

-- POST /api/employees/<pk>/attachments/ (multipart: one file under "file", optional title).
-- p_file: the stored files' metadata the multipart reader lists under "file" (SQL accepts only
-- files of this request, sql/documents/uploads.sql).
drop function if exists app_public.employee_attachment_create(int, jsonb, text);
create or replace function app_public.employee_attachment_create(p_employee int, p_file jsonb, p_title text default null,
                                                                 p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_files jsonb := nullif(p_file, 'null'::jsonb);
  v_file jsonb;
  v_title text;
  v_row app_public.employee_attachments;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', true);
  if jsonb_typeof(v_files) <> 'array' then
    perform app_hidden.invalid('file', 'Une liste est attendue.');
  end if;
  if v_files is null or jsonb_array_length(v_files) = 0 then
    perform app_hidden.invalid('file', 'Joignez un fichier PDF, JPG ou PNG (corps multipart/form-data, champ « file »).', 'WV560');
  elsif jsonb_array_length(v_files) > 1 then
    perform app_hidden.invalid('file', 'Une pièce jointe porte un seul fichier : déposez-les un par un.', 'WV560');
  end if;
  v_file := v_files -> 0;
  v_title := coalesce(app_hidden.trimmed(p_title), v_file ->> 'filename');
  if char_length(v_title) > app_hidden.attachment_title_max_length() then
    perform app_hidden.invalid('title', app_hidden.max_length_message(app_hidden.attachment_title_max_length()), 'WV560');
  end if;
  insert into app_public.employee_attachments (employee_id, title, filename, content_type, size_bytes, storage_key, sha256,
                                               uploaded_by, uploaded_by_name)
  values (p_employee, left(v_title, app_hidden.attachment_title_max_length()), v_file ->> 'filename', v_file ->> 'content_type', (v_file ->> 'size_bytes')::int,
          v_file ->> 'storage_key', v_file ->> 'sha256', app_hidden.current_account_id(),
          app_hidden.account_display_name(app_hidden.current_account_id()))
  returning * into v_row;
  return app_hidden.employee_attachment_json(v_row, p_public_url);
end;
$$;
comment on function app_public.employee_attachment_create(integer, jsonb, text, text) is
'SPEC Permissions, POST /api/employees/<pk>/attachments/: a holder of employee.change_employee_attachment
on the employee deposits one file with an optional title.';

-- PUT /api/employees/<pk>/attachments/<id>/ {"title"}
drop function if exists app_public.employee_attachment_update(int, int, jsonb, text);
create or replace function app_public.employee_attachment_update(p_employee int, p_id int, p_title text,
                                                                 p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_title text := app_hidden.trimmed(p_title);
  v_row app_public.employee_attachments;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', true);
  select * into v_row from app_public.employee_attachments a where a.id = p_id and a.employee_id = p_employee for update;
  if not found then
    perform app_hidden.not_found('Pièce jointe introuvable.');
  end if;
  if v_title is null then
    perform app_hidden.invalid('title', 'Le titre est obligatoire.', 'WV560');
  elsif char_length(v_title) > app_hidden.attachment_title_max_length() then
    perform app_hidden.invalid('title', app_hidden.max_length_message(app_hidden.attachment_title_max_length()), 'WV560');
  end if;
  update app_public.employee_attachments a set title = v_title
  where a.id = p_id and a.title is distinct from v_title
  returning * into v_row;
  if not found then
    select * into v_row from app_public.employee_attachments a where a.id = p_id;
  end if;
  return app_hidden.employee_attachment_json(v_row, p_public_url);
end;
$$;
comment on function app_public.employee_attachment_update(integer, integer, text, text) is
'SPEC Permissions, PUT /api/employees/<pk>/attachments/<id>/: a holder of
employee.change_employee_attachment on the employee renames an attachment (title).';

-- DELETE /api/employees/<pk>/attachments/<id>/ (the file is removed after commit).
create or replace function app_public.employee_attachment_delete(p_employee int, p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', true);
  delete from app_public.employee_attachments a where a.id = p_id and a.employee_id = p_employee;
  if not found then
    perform app_hidden.not_found('Pièce jointe introuvable.');
  end if;
  return null;
end;
$$;
comment on function app_public.employee_attachment_delete(integer, integer) is
'SPEC Permissions, DELETE /api/employees/<pk>/attachments/<id>/: a holder of
employee.change_employee_attachment on the employee deletes an attachment; its file is removed after
commit.';

-- GET /api/employees/<pk>/attachments/<id>/file/: what the download handler needs.
create or replace function app_public.employee_attachment_file(p_employee int, p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_row app_public.employee_attachments;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', false);
  select * into v_row from app_public.employee_attachments a where a.id = p_id and a.employee_id = p_employee;
  if not found then
    perform app_hidden.not_found('Pièce jointe introuvable.');
  end if;
  return jsonb_build_object('filename', v_row.filename, 'content_type', v_row.content_type,
                            'size_bytes', v_row.size_bytes, 'storage_key', v_row.storage_key);
end;
$$;
comment on function app_public.employee_attachment_file(integer, integer) is
'SPEC Permissions, GET /api/employees/<pk>/attachments/<id>/file/: what the HTTP handler needs to stream
an attachment, under the reading rules of the attachment list.';
--! EndIncluded employees/annexes.sql
--! Included referentials/api.sql
-- /api/divisions/, /api/establishments/, /api/contract-types/: readable by every
-- authenticated account; written by staff accounts only (others 403). scope=perimeter
-- restricts divisions and establishments to the caller's establishments
-- (app_hidden.scope_establishment_ids).

create or replace function app_hidden.require_staff() returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les référentiels s’écrivent par les comptes du personnel d’administration uniquement.', 'WF510');
  end if;
end;
$$;

-- Where an establishment is still used, whatever the caller may read.
create or replace function app_private.establishment_usage(p_id int) returns text[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select array_remove(array[
    case when exists (select 1 from app_public.employees e where e.main_establishment_id = p_id)
           or exists (select 1 from app_public.employee_secondary_establishments s where s.establishment_id = p_id)
         then 'salariés' end,
    case when exists (select 1 from app_public.posts p where p.establishment_id = p_id) then 'postes' end,
    case when exists (select 1 from app_public.team_establishments t where t.establishment_id = p_id) then 'équipes' end,
    case when exists (select 1 from app_public.role_attribution_establishments r where r.establishment_id = p_id)
         then 'attributions de rôle' end,
    case when exists (select 1 from app_public.on_call_period_establishments o where o.establishment_id = p_id)
         then 'astreintes' end,
    case when exists (select 1 from app_public.events ev where ev.establishment_id = p_id) then 'événements' end
  ], null);
$$;

create or replace function app_private.contract_type_usage(p_id int) returns text[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select array_remove(array[
    case when exists (select 1 from app_public.contracts c where c.contract_type_id = p_id) then 'contrats' end,
    case when exists (select 1 from app_public.absence_type_contract_types a where a.contract_type_id = p_id)
         then 'motifs d’absence' end
  ], null);
$$;

-- Divisions --------------------------------------------------------------------------------

create or replace function app_hidden.divisions_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  select d.id,
         jsonb_build_object('id', d.id, 'name', d.name,
                            'establishments', coalesce(est.list, '[]'::jsonb),
                            'created_at', d.created_at, 'updated_at', d.updated_at)
  from app_public.divisions d
  left join (select e.division_id, jsonb_agg(e.id order by e.id) as list
             from app_public.establishments e where e.division_id = any (p_ids)
             group by e.division_id) est on est.division_id = d.id
  where d.id = any (p_ids);
$$;

create or replace function app_public.divisions_list(p_scope text default null, p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  filtered as (
    select d.id, d.name from app_public.divisions d
    where p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
       or exists (select 1 from app_public.establishments e
                  where e.division_id = d.id and e.id = any (coalesce((select s.ids from scope s), '{}')))
  ),
  page as (
    select f.id, row_number() over (order by lower(f.name), f.id) as ord
    from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p join app_hidden.divisions_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.divisions_list(text, integer, integer) is
'SPEC Permissions rule 6 and Documents and other routes, GET /api/divisions/: one page of the divisions
by name, each with its establishments, for every authenticated account; scope=perimeter keeps those with
an establishment in the caller''s perimeter (opt-in).';

create or replace function app_public.division_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.divisions_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Division introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.division_get(integer) is
'SPEC Permissions rule 6, GET /api/divisions/<id>/: one division with its establishments, readable by
every authenticated account (404 when absent).';

-- The name of a division written (creation, PUT, or a PATCH that sends it): required, at most
-- name_max_length(), borne once whatever the case. Returns it trimmed.
drop function if exists app_hidden.division_name(jsonb, int);
create or replace function app_hidden.division_name(p_name text, p_id int) returns text
language plpgsql stable as $$
declare
  v_name text := app_hidden.trimmed(p_name);
begin
  if v_name is null then
    perform app_hidden.invalid('name', 'Le nom est obligatoire.', 'WV510');
  elsif char_length(v_name) > app_hidden.name_max_length() then
    perform app_hidden.invalid('name', app_hidden.max_length_message(app_hidden.name_max_length()), 'WV510');
  elsif exists (select 1 from app_public.divisions d where lower(d.name) = lower(v_name) and d.id is distinct from p_id) then
    perform app_hidden.invalid('name', format('Une division s’appelle déjà « %s ».', v_name), 'WV510');
  end if;
  return v_name;
end;
$$;

-- PUT and PATCH of a division (p_partial: only the keys sent).
create or replace function app_hidden.division_save(p_id int, p_partial boolean, p_sent text[], p_name text) returns void
language plpgsql volatile as $$
declare
  v_name text;
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.divisions d where d.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Division introuvable.');
  end if;
  if not p_partial or app_hidden.sent(p_sent, 'name', p_name is not null) then
    v_name := app_hidden.division_name(p_name, p_id);
    update app_public.divisions d set name = v_name where d.id = p_id and d.name is distinct from v_name;
  end if;
end;
$$;

drop function if exists app_public.division_create(jsonb);
create or replace function app_public.division_create(p_name text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  perform app_hidden.require_staff();
  insert into app_public.divisions (name) values (app_hidden.division_name(p_name, null)) returning id into v_id;
  return app_public.division_get(v_id);
end;
$$;
comment on function app_public.division_create(text) is
'SPEC Permissions rule 6, POST /api/divisions/: a staff account creates a division (name required, at
most 150 characters, unique whatever the case); others get 403.';

-- PATCH /api/divisions/<id>/
drop function if exists app_public.division_update(int, jsonb);
create or replace function app_public.division_update(p_id int, p_name text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.division_save(p_id, true, p_sent, p_name);
  return app_public.division_get(p_id);
end;
$$;
comment on function app_public.division_update(integer, text, text[]) is
'SPEC Permissions rule 6, PATCH /api/divisions/<id>/: a staff account renames a division (only the keys
sent, p_sent; same name rules as the creation); others get 403.';

-- PUT /api/divisions/<id>/ (name required)
drop function if exists app_public.division_replace(int, jsonb);
create or replace function app_public.division_replace(p_id int, p_name text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.division_save(p_id, false, p_sent, p_name);
  return app_public.division_get(p_id);
end;
$$;
comment on function app_public.division_replace(integer, text, text[]) is
'SPEC Permissions rule 6, PUT /api/divisions/<id>/: a staff account rewrites a division (name required);
others get 403.';

-- Deleting a division detaches its establishments (they stay, without division).
create or replace function app_public.division_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  delete from app_public.divisions d where d.id = p_id;
  if not found then
    perform app_hidden.not_found('Division introuvable.');
  end if;
  return null;
end;
$$;
comment on function app_public.division_delete(integer) is
'SPEC Permissions rule 6, DELETE /api/divisions/<id>/: a staff account deletes a division; its
establishments stay, without division. Others get 403.';

-- Establishments ---------------------------------------------------------------------------

create or replace function app_hidden.establishments_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  select e.id,
         jsonb_build_object('id', e.id, 'name', e.name, 'count_base', e.count_base,
                            'division', e.division_id, 'division_name', d.name,
                            'created_at', e.created_at, 'updated_at', e.updated_at)
  from app_public.establishments e
  left join app_public.divisions d on d.id = e.division_id
  where e.id = any (p_ids);
$$;

create or replace function app_public.establishments_list(p_scope text default null, p_division int default null,
                                               p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  filtered as (
    select e.id, e.name from app_public.establishments e
    where (p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
           or e.id = any (coalesce((select s.ids from scope s), '{}')))
      and (p_division is null or e.division_id = p_division)
  ),
  page as (
    select f.id, row_number() over (order by lower(f.name), f.id) as ord
    from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p join app_hidden.establishments_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.establishments_list(text, integer, integer, integer) is
'SPEC Permissions rule 6 and Documents and other routes, GET /api/establishments/: one page of the
establishments by name (optionally of one division) for every authenticated account; scope=perimeter
keeps those of the caller''s perimeter (opt-in).';

create or replace function app_public.establishment_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.establishments_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Établissement introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.establishment_get(integer) is
'SPEC Permissions rule 6, GET /api/establishments/<id>/: one establishment with its count base (ouvrables
or ouvres, declaration rule 1) and division, readable by every authenticated account.';

-- Establishment rules shared by this API and the organisation import (sql/org/import.sql).
create or replace function app_hidden.establishment_name_taken(p_name text, p_except int default null) returns boolean
language sql stable as $$
  select exists (select 1 from app_public.establishments e where lower(e.name) = lower(p_name) and e.id is distinct from p_except);
$$;
comment on function app_hidden.establishment_name_taken(text, integer) is
'Establishments: a name is borne by one establishment only, case-insensitively (p_except: the one being renamed).';

create or replace function app_hidden.count_base_known(p_base text) returns boolean
language sql immutable as $$ select p_base in ('ouvrables', 'ouvres') $$;
comment on function app_hidden.count_base_known(text) is
'SPEC Absences, declaration rule 1 and CONTRACT section 6: an establishment counts leave in jours ouvrables
(Monday to Saturday) or ouvrés (Monday to Friday).';

-- Creation and update (PUT: name required; PATCH: only the keys sent, p_sent).
drop function if exists app_hidden.establishment_save(int, jsonb, boolean);
create or replace function app_hidden.establishment_save(p_id int, p_partial boolean, p_sent text[],
                                                         p_name text, p_count_base text, p_division int) returns int
language plpgsql volatile as $$
declare
  v_old app_public.establishments;
  v_errors jsonb := '{}';
  v_name text := app_hidden.trimmed(p_name);
  v_base text;
  v_division int;
  v_division_sent boolean := app_hidden.sent(p_sent, 'division', p_division is not null);
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    select * into v_old from app_public.establishments e where e.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Établissement introuvable.');
    end if;
  end if;
  if (p_id is null or not p_partial or app_hidden.sent(p_sent, 'name', p_name is not null)) and v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le nom est obligatoire.');
  else
    v_name := coalesce(v_name, v_old.name);
    if char_length(v_name) > app_hidden.name_max_length() then
      v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
    elsif app_hidden.establishment_name_taken(v_name, p_id) then
      v_errors := app_hidden.add_error(v_errors, 'name', format('Un établissement s’appelle déjà « %s ».', v_name));
    end if;
  end if;
  v_base := coalesce(p_count_base, v_old.count_base, 'ouvrables');
  if app_hidden.count_base_known(v_base) is not true then
    v_errors := app_hidden.add_error(v_errors, 'count_base',
      'Base de décompte invalide : « ouvrables » (lundi au samedi) ou « ouvres » (lundi au vendredi).');
  end if;
  v_division := case when v_division_sent then p_division else v_old.division_id end;
  if v_division_sent and v_division is not null
     and not exists (select 1 from app_public.divisions d where d.id = v_division) then
    v_errors := app_hidden.add_error(v_errors, 'division', format('Division n° %s introuvable.', v_division));
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV510') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.establishments (name, count_base, division_id) values (v_name, v_base, v_division)
    returning id into v_id;
  else
    update app_public.establishments e set name = v_name, count_base = v_base, division_id = v_division
    where e.id = p_id and (e.name, e.count_base, e.division_id) is distinct from (v_name, v_base, v_division);
  end if;
  return v_id;
end;
$$;

drop function if exists app_public.establishment_create(jsonb);
create or replace function app_public.establishment_create(p_name text, p_count_base text default null, p_division int default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.establishment_save(null, false, null, p_name, p_count_base, p_division);
  return app_public.establishment_get(v_id);
end;
$$;
comment on function app_public.establishment_create(text, text, integer) is
'SPEC Permissions rule 6, POST /api/establishments/: a staff account creates an establishment (name
required and unique, count base ouvrables or ouvres for declaration rule 1, optional division); all
field errors at once; others get 403.';

-- PATCH /api/establishments/<id>/
drop function if exists app_public.establishment_update(int, jsonb);
create or replace function app_public.establishment_update(p_id int, p_name text default null, p_count_base text default null,
                                                           p_division int default null, p_sent text[] default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.establishment_save(p_id, true, p_sent, p_name, p_count_base, p_division);
  return app_public.establishment_get(v_id);
end;
$$;
comment on function app_public.establishment_update(integer, text, text, integer, text[]) is
'SPEC Permissions rule 6, PATCH /api/establishments/<id>/: a staff account changes the keys sent (p_sent)
of an establishment (name, count base, division), under the creation rules; others get 403.';

-- PUT /api/establishments/<id>/ (name required)
drop function if exists app_public.establishment_replace(int, jsonb);
create or replace function app_public.establishment_replace(p_id int, p_name text default null, p_count_base text default null,
                                                            p_division int default null, p_sent text[] default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.establishment_save(p_id, false, p_sent, p_name, p_count_base, p_division);
  return app_public.establishment_get(v_id);
end;
$$;
comment on function app_public.establishment_replace(integer, text, text, integer, text[]) is
'SPEC Permissions rule 6, PUT /api/establishments/<id>/: a staff account rewrites an establishment (name
required; a division not sent stays), under the creation rules; others get 403.';

create or replace function app_public.establishment_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_usage text[];
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.establishments e where e.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Établissement introuvable.');
  end if;
  v_usage := app_private.establishment_usage(p_id);
  if cardinality(v_usage) > 0 then
    perform app_hidden.invalid(null, format('Cet établissement est encore utilisé (%s) : il ne peut pas être supprimé.',
                                            array_to_string(v_usage, ', ')), 'WV511');
  end if;
  delete from app_public.establishments e where e.id = p_id;
  return null;
end;
$$;
comment on function app_public.establishment_delete(integer) is
'SPEC Permissions rule 6, DELETE /api/establishments/<id>/: a staff account deletes an establishment that
nothing uses any more (employees, posts, teams, role attributions, on-call periods, events; else 400
naming the uses); others get 403.';

-- Contract types ---------------------------------------------------------------------------

create or replace function app_hidden.contract_type_json(t app_public.contract_types) returns jsonb
language sql immutable as $$
  select jsonb_build_object('id', t.id, 'code', t.code, 'name', t.name, 'is_temporary_work', t.is_temporary_work);
$$;

create or replace function app_public.contract_types_list(p_page int default 1, p_page_size int default 50) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'count', (select count(*) from app_public.contract_types),
    'results', coalesce((select jsonb_agg(app_hidden.contract_type_json(t) order by t.id)
                         from (select * from app_public.contract_types t order by t.id
                               limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) t), '[]'::jsonb));
$$;
comment on function app_public.contract_types_list(integer, integer) is
'SPEC Permissions rule 6, GET /api/contract-types/: one page of the contract types (code, name, temporary
work), readable by every authenticated account.';

create or replace function app_public.contract_type_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_row app_public.contract_types;
begin
  select * into v_row from app_public.contract_types t where t.id = p_id;
  if not found then
    perform app_hidden.not_found('Type de contrat introuvable.');
  end if;
  return app_hidden.contract_type_json(v_row);
end;
$$;
comment on function app_public.contract_type_get(integer) is
'SPEC Permissions rule 6, GET /api/contract-types/<id>/: one contract type, readable by every
authenticated account (404 when absent).';

-- Creation and update of a contract type (PUT: code and name required; PATCH: only the keys
-- sent, p_sent).
drop function if exists app_hidden.contract_type_save(int, jsonb, boolean);
create or replace function app_hidden.contract_type_save(p_id int, p_partial boolean, p_sent text[],
                                                         p_code text, p_name text, p_is_temporary_work boolean) returns int
language plpgsql volatile as $$
declare
  v_old app_public.contract_types;
  v_errors jsonb := '{}';
  v_writes_code boolean := p_id is null or not p_partial or app_hidden.sent(p_sent, 'code', p_code is not null);
  v_writes_name boolean := p_id is null or not p_partial or app_hidden.sent(p_sent, 'name', p_name is not null);
  v_code text := app_hidden.trimmed(p_code);
  v_name text := app_hidden.trimmed(p_name);
  v_temporary boolean;
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    select * into v_old from app_public.contract_types t where t.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Type de contrat introuvable.');
    end if;
  end if;
  if v_writes_code and v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif not v_writes_code then
    v_code := v_old.code;  -- the code is not being written
  elsif v_code !~ '^[A-Za-z0-9À-ÖØ-öø-ÿ][A-Za-z0-9À-ÖØ-öø-ÿ _+''\-]{0,29}$' then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 30 caractères, lettres, chiffres, espaces et _ + '' -.');
  elsif exists (select 1 from app_public.contract_types t where lower(t.code) = lower(v_code) and t.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé.', v_code));
  end if;
  if v_writes_name and v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le libellé est obligatoire.');
  else
    v_name := coalesce(v_name, v_old.name);
    if char_length(v_name) > app_hidden.name_max_length() then
      v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
    end if;
  end if;
  v_temporary := coalesce(p_is_temporary_work, v_old.is_temporary_work, false);
  perform app_hidden.invalid_fields(v_errors, 'WV510') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.contract_types (code, name, is_temporary_work) values (v_code, v_name, v_temporary)
    returning id into v_id;
  else
    update app_public.contract_types t set code = v_code, name = v_name, is_temporary_work = v_temporary
    where t.id = p_id and (t.code, t.name, t.is_temporary_work) is distinct from (v_code, v_name, v_temporary);
  end if;
  return v_id;
end;
$$;

drop function if exists app_public.contract_type_create(jsonb);
create or replace function app_public.contract_type_create(p_code text, p_name text, p_is_temporary_work boolean default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.contract_type_save(null, false, null, p_code, p_name, p_is_temporary_work);
  return app_public.contract_type_get(v_id);
end;
$$;
comment on function app_public.contract_type_create(text, text, boolean) is
'SPEC Permissions rule 6, POST /api/contract-types/: a staff account creates a contract type (code unique
whatever the case, name required, is_temporary_work); all field errors at once; others get 403.';

-- PATCH /api/contract-types/<id>/
drop function if exists app_public.contract_type_update(int, jsonb);
create or replace function app_public.contract_type_update(p_id int, p_code text default null, p_name text default null,
                                                           p_is_temporary_work boolean default null, p_sent text[] default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.contract_type_save(p_id, true, p_sent, p_code, p_name, p_is_temporary_work);
  return app_public.contract_type_get(v_id);
end;
$$;
comment on function app_public.contract_type_update(integer, text, text, boolean, text[]) is
'SPEC Permissions rule 6, PATCH /api/contract-types/<id>/: a staff account changes the keys sent (p_sent)
of a contract type, under the creation rules; others get 403.';

-- PUT /api/contract-types/<id>/ (code and name required)
drop function if exists app_public.contract_type_replace(int, jsonb);
create or replace function app_public.contract_type_replace(p_id int, p_code text default null, p_name text default null,
                                                            p_is_temporary_work boolean default null, p_sent text[] default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.contract_type_save(p_id, false, p_sent, p_code, p_name, p_is_temporary_work);
  return app_public.contract_type_get(v_id);
end;
$$;
comment on function app_public.contract_type_replace(integer, text, text, boolean, text[]) is
'SPEC Permissions rule 6, PUT /api/contract-types/<id>/: a staff account rewrites a contract type (code
and name required); others get 403.';

create or replace function app_public.contract_type_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_usage text[];
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.contract_types t where t.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Type de contrat introuvable.');
  end if;
  v_usage := app_private.contract_type_usage(p_id);
  if cardinality(v_usage) > 0 then
    perform app_hidden.invalid(null, format('Ce type de contrat est encore utilisé (%s) : il ne peut pas être supprimé.',
                                            array_to_string(v_usage, ', ')), 'WV511');
  end if;
  delete from app_public.contract_types t where t.id = p_id;
  return null;
end;
$$;
comment on function app_public.contract_type_delete(integer) is
'SPEC Permissions rule 6, DELETE /api/contract-types/<id>/: a staff account deletes a contract type no
contract and no absence type uses (else 400 naming the uses); others get 403.';
--! EndIncluded referentials/api.sql
--! Included org/import.sql
-- Organisation file import (CONTRACT section 6). One call, one transaction: the first bad
-- path aborts everything with "path: message" (SQLSTATE WV020, DETAIL = path).
-- Passwords arrive already hashed (argon2id, by the CLI) under "password_hash".
-- Functions are "create or replace" so that a later migration re-includes this file to change them.

create or replace function app_private.import_fail(p_path text, p_message text) returns void
language plpgsql volatile as $$
begin
  raise exception using errcode = 'WV020', message = p_path || ': ' || p_message, detail = p_path;
end;
$$;

-- Refuses keys outside the allowed list (typos would otherwise be silently ignored).
create or replace function app_private.import_check_keys(p_obj jsonb, p_path text, p_allowed text[]) returns void
language plpgsql volatile as $$
declare
  v_key text;
begin
  if jsonb_typeof(p_obj) is distinct from 'object' then
    perform app_private.import_fail(p_path, 'expected an object');
  end if;
  for v_key in select jsonb_object_keys(p_obj) loop
    if not v_key = any (p_allowed) then
      perform app_private.import_fail(p_path || '.' || v_key, 'unknown field');
    end if;
  end loop;
end;
$$;

create or replace function app_private.import_text(p_obj jsonb, p_key text, p_path text, p_required boolean default true)
returns text
language plpgsql volatile as $$
declare
  v jsonb := p_obj -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    if p_required then
      perform app_private.import_fail(p_path || '.' || p_key, 'required');
    end if;
    return null;
  end if;
  if jsonb_typeof(v) <> 'string' then
    perform app_private.import_fail(p_path || '.' || p_key, 'expected a string');
  end if;
  if p_required and btrim(v #>> '{}') = '' then
    perform app_private.import_fail(p_path || '.' || p_key, 'must not be empty');
  end if;
  return v #>> '{}';
end;
$$;

create or replace function app_private.import_bool(p_obj jsonb, p_key text, p_path text, p_default boolean)
returns boolean
language plpgsql volatile as $$
declare
  v jsonb := p_obj -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return p_default;
  end if;
  if jsonb_typeof(v) <> 'boolean' then
    perform app_private.import_fail(p_path || '.' || p_key, 'expected true or false');
  end if;
  return v::boolean;
end;
$$;

create or replace function app_private.import_date(p_obj jsonb, p_key text, p_path text, p_required boolean default false)
returns date
language plpgsql volatile as $$
declare
  v text := app_private.import_text(p_obj, p_key, p_path, p_required);
begin
  if v is null then
    return null;
  end if;
  if v !~ '^\d{4}-\d{2}-\d{2}$' then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid date "%s" (expected YYYY-MM-DD)', v));
  end if;
  begin
    return v::date;
  exception when others then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid date "%s"', v));
  end;
end;
$$;

create or replace function app_private.import_time(p_obj jsonb, p_key text, p_path text, p_required boolean default false)
returns time
language plpgsql volatile as $$
declare
  v text := app_private.import_text(p_obj, p_key, p_path, p_required);
begin
  if v is null then
    return null;
  end if;
  if v !~ app_hidden.time_pattern() then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid time "%s" (expected HH:MM)', v));
  end if;
  return v::time;
end;
$$;

create or replace function app_private.import_timestamptz(p_obj jsonb, p_key text, p_path text)
returns timestamptz
language plpgsql volatile as $$
declare
  v text := app_private.import_text(p_obj, p_key, p_path, true);
begin
  if v !~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2})$' then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid timestamp "%s" (expected ISO 8601 with offset)', v));
  end if;
  begin
    return v::timestamptz;
  exception when others then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid timestamp "%s"', v));
  end;
end;
$$;

-- An array of strings (keys); null or absent gives an empty array.
create or replace function app_private.import_keys(p_obj jsonb, p_key text, p_path text) returns text[]
language plpgsql volatile as $$
declare
  v jsonb := p_obj -> p_key;
  v_result text[] := '{}';
  i int;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return v_result;
  end if;
  if jsonb_typeof(v) <> 'array' then
    perform app_private.import_fail(p_path || '.' || p_key, 'expected an array');
  end if;
  for i in 0 .. jsonb_array_length(v) - 1 loop
    if jsonb_typeof(v -> i) <> 'string' then
      perform app_private.import_fail(format('%s.%s[%s]', p_path, p_key, i), 'expected a string');
    end if;
    v_result := v_result || (v ->> i);
  end loop;
  return v_result;
end;
$$;

-- A list of the document (p_path null) or of an item at p_path; null or absent gives an empty list.
drop function if exists app_private.import_section(jsonb, text);
create or replace function app_private.import_section(p_doc jsonb, p_section text, p_path text default null) returns jsonb
language plpgsql volatile as $$
declare
  v jsonb := p_doc -> p_section;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return '[]'::jsonb;
  end if;
  if jsonb_typeof(v) <> 'array' then
    perform app_private.import_fail(coalesce(p_path || '.', '') || p_section, 'expected an array');
  end if;
  return v;
end;
$$;

-- Registers a key of a section, refusing duplicates; returns the updated key map.
create or replace function app_private.import_register(p_map jsonb, p_key text, p_id int, p_path text) returns jsonb
language plpgsql volatile as $$
begin
  if p_map ? p_key then
    perform app_private.import_fail(p_path || '.key', format('duplicate key "%s"', p_key));
  end if;
  return p_map || jsonb_build_object(p_key, p_id);
end;
$$;

create or replace function app_private.import_lookup(p_map jsonb, p_key text, p_path text, p_what text) returns int
language plpgsql volatile as $$
begin
  if p_key is null then
    return null;
  end if;
  if not p_map ? p_key then
    perform app_private.import_fail(p_path, format('unknown %s "%s"', p_what, p_key));
  end if;
  return (p_map ->> p_key)::int;
end;
$$;

comment on function app_private.import_check_keys(jsonb, text, text[]) is
'CONTRACT section 6, file shape: every item is an object and carries only the fields of its section (a typo fails).';
comment on function app_private.import_section(jsonb, text, text) is
'CONTRACT section 6, file shape: every section (and every list of an item, at p_path) is optional and, when
present, an array.';
comment on function app_private.import_register(jsonb, text, integer, text) is
'CONTRACT section 6, file shape: keys are unique per section.';
comment on function app_private.import_lookup(jsonb, text, text, text) is
'CONTRACT section 6, file shape: a key named by another section exists in its own section.';

-- The sections, in the order of the file: each validates and writes its items, failing at the
-- first bad path, and returns its key map (key -> id) for the sections that name its keys.

create or replace function app_private.import_establishments(p_doc jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'establishments');
  v_item jsonb;
  v_path text;
  v_key text;
  v_count_base text;
  v_id int;
  i int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('establishments[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['key', 'name', 'count_base']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_count_base := coalesce(app_private.import_text(v_item, 'count_base', v_path, false), 'ouvrables');
    if app_hidden.count_base_known(v_count_base) is not true then
      perform app_private.import_fail(v_path || '.count_base', format('unknown count base "%s" (ouvrables or ouvres)', v_count_base));
    end if;
    if app_hidden.establishment_name_taken(app_private.import_text(v_item, 'name', v_path)) then
      perform app_private.import_fail(v_path || '.name', format('an establishment named "%s" already exists', v_item ->> 'name'));
    end if;
    insert into app_public.establishments (name, count_base)
    values (app_private.import_text(v_item, 'name', v_path), v_count_base)
    returning id into v_id;
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_establishments(jsonb) is
'CONTRACT section 6, establishments: each has a key, a name no establishment already bears
(establishment_name_taken) and a count_base, ouvrables (default) or ouvres (count_base_known).';

create or replace function app_private.import_teams(p_doc jsonb, p_establishments jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'teams');
  v_item jsonb;
  v_path text;
  v_key text;
  v_keys text[];
  v_id int;
  i int;
  j int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('teams[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['key', 'name', 'establishments']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    insert into app_public.teams (name) values (app_private.import_text(v_item, 'name', v_path))
    returning id into v_id;
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
    v_keys := app_private.import_keys(v_item, 'establishments', v_path);
    for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      insert into app_public.team_establishments (team_id, establishment_id)
      values (v_id, app_private.import_lookup(p_establishments, v_keys[j], format('%s.establishments[%s]', v_path, j - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_teams(jsonb, jsonb) is
'CONTRACT section 6, teams: each has a key and a name, and spans establishments named by their keys.';

create or replace function app_private.import_posts(p_doc jsonb, p_establishments jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'posts');
  v_item jsonb;
  v_path text;
  v_key text;
  v_code text;
  v_establishment int;
  v_id int;
  v_start time;
  v_end time;
  v_break_start time;
  v_break_end time;
  i int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('posts[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'code', 'label', 'establishment', 'start_time', 'end_time', 'break_start_time', 'break_end_time', 'break_paid']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_code := app_private.import_text(v_item, 'code', v_path);
    if app_hidden.code_well_formed(v_code) is false then
      perform app_private.import_fail(v_path || '.code', format('invalid post code "%s"', v_code));
    end if;
    if app_hidden.code_namespace_clash('posts', v_code) is not null then
      perform app_private.import_fail(v_path || '.code', format('post code "%s" is already an absence type code', v_code));
    end if;
    v_start := app_private.import_time(v_item, 'start_time', v_path, true);
    v_end := app_private.import_time(v_item, 'end_time', v_path, true);
    if v_start = v_end then
      perform app_private.import_fail(v_path || '.end_time', 'end_time must differ from start_time');
    end if;
    v_break_start := app_private.import_time(v_item, 'break_start_time', v_path);
    v_break_end := app_private.import_time(v_item, 'break_end_time', v_path);
    if (v_break_start is null) <> (v_break_end is null) then
      perform app_private.import_fail(v_path || '.break_end_time', 'break_start_time and break_end_time go together');
    end if;
    v_establishment := app_private.import_lookup(p_establishments, app_private.import_text(v_item, 'establishment', v_path),
                                                 v_path || '.establishment', 'establishment');
    if app_hidden.post_code_used_in_establishment(v_establishment, v_code) then
      perform app_private.import_fail(v_path || '.code', format('post code "%s" is already used in this establishment', v_code));
    end if;
    insert into app_public.posts (code, label, establishment_id, start_time, end_time, break_start_time, break_end_time, break_paid)
    values (v_code, app_private.import_text(v_item, 'label', v_path), v_establishment, v_start, v_end,
            v_break_start, v_break_end, app_private.import_bool(v_item, 'break_paid', v_path, false))
    returning id into v_id;
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_posts(jsonb, jsonb) is
'CONTRACT section 6, posts: a well-formed code, outside the absence type codes (code_namespace_clash) and
unique in its establishment; start and end times that differ; break start and end given together.';

-- The employee row itself (the record's fields; its key is registered by the caller).
create or replace function app_private.import_employee_record(p_item jsonb, p_path text, p_establishments jsonb) returns int
language plpgsql volatile as $$
declare
  v_email text := app_private.import_text(p_item, 'professional_email', p_path, false);
  v_id int;
begin
  if app_hidden.email_well_formed(v_email) is false then
    perform app_private.import_fail(p_path || '.professional_email', format('invalid e-mail "%s"', v_email));
  end if;
  insert into app_public.employees (first_name, last_name, professional_email, main_establishment_id, birth_date, is_polyvalent)
  values (app_private.import_text(p_item, 'first_name', p_path), app_private.import_text(p_item, 'last_name', p_path),
          v_email,
          app_private.import_lookup(p_establishments, app_private.import_text(p_item, 'main_establishment', p_path, false),
                                    p_path || '.main_establishment', 'establishment'),
          app_private.import_date(p_item, 'birth_date', p_path),
          app_private.import_bool(p_item, 'is_polyvalent', p_path, false))
  returning id into v_id;
  return v_id;
end;
$$;
comment on function app_private.import_employee_record(jsonb, text, jsonb) is
'CONTRACT section 6, an employee: first and last names, a well-formed professional e-mail or null
(email_well_formed), the main workplace by establishment key (or none), birth date, polyvalence.';

create or replace function app_private.import_employee_ssn(p_item jsonb, p_path text, p_employee int) returns void
language plpgsql volatile as $$
declare
  v_number text := app_private.import_text(p_item, 'social_security_number', p_path, false);
begin
  if v_number is not null then
    if app_hidden.social_security_number_well_formed(v_number) is false then
      perform app_private.import_fail(p_path || '.social_security_number', 'invalid social security number (13 or 15 characters)');
    end if;
    insert into app_public.employee_social_security_numbers (employee_id, social_security_number) values (p_employee, v_number);
  end if;
end;
$$;
comment on function app_private.import_employee_ssn(jsonb, text, integer) is
'CONTRACT section 6, an employee''s social_security_number: null or well formed
(social_security_number_well_formed, 13 or 15 characters).';

create or replace function app_private.import_employee_workplaces_and_teams(p_item jsonb, p_path text, p_employee int,
                                                                            p_establishments jsonb, p_teams jsonb) returns void
language plpgsql volatile as $$
declare
  v_keys text[];
  j int;
begin
  v_keys := app_private.import_keys(p_item, 'secondary_establishments', p_path);
  for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
    insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
    values (p_employee, app_private.import_lookup(p_establishments, v_keys[j],
                                                  format('%s.secondary_establishments[%s]', p_path, j - 1), 'establishment'))
    on conflict do nothing;
  end loop;
  v_keys := app_private.import_keys(p_item, 'teams', p_path);
  for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
    insert into app_public.team_assignments (employee_id, team_id)
    values (p_employee, app_private.import_lookup(p_teams, v_keys[j], format('%s.teams[%s]', p_path, j - 1), 'team'));
  end loop;
end;
$$;
comment on function app_private.import_employee_workplaces_and_teams(jsonb, text, integer, jsonb, jsonb) is
'CONTRACT section 6, an employee''s secondary_establishments and teams, by keys of their sections (open-ended
assignments).';

-- Returns the earliest contract start (null without contracts): the planning template starts there.
create or replace function app_private.import_employee_contracts(p_item jsonb, p_path text, p_employee int) returns date
language plpgsql volatile as $$
declare
  v_contracts jsonb := app_private.import_section(p_item, 'contracts', p_path);
  v_contract jsonb;
  v_path text;
  v_type_code text;
  v_type_id int;
  v_start date;
  v_end date;
  v_first_start date;
  j int;
begin
  for j in 0 .. jsonb_array_length(v_contracts) - 1 loop
    v_contract := v_contracts -> j;
    v_path := format('%s.contracts[%s]', p_path, j);
    perform app_private.import_check_keys(v_contract, v_path, array['type', 'start', 'end', 'trial_end', 'job_title', 'weekly_hours']);
    v_type_code := app_private.import_text(v_contract, 'type', v_path);
    select ct.id into v_type_id from app_public.contract_types ct where ct.code = v_type_code;
    if not found then
      perform app_private.import_fail(v_path || '.type', format('unknown contract type "%s"', v_type_code));
    end if;
    v_start := app_private.import_date(v_contract, 'start', v_path, true);
    v_end := app_private.import_date(v_contract, 'end', v_path);
    if v_end < v_start then
      perform app_private.import_fail(v_path || '.end', 'end is before start');
    end if;
    if app_private.import_date(v_contract, 'trial_end', v_path) < v_start then
      perform app_private.import_fail(v_path || '.trial_end', 'trial_end is before start');
    end if;
    if jsonb_typeof(v_contract -> 'weekly_hours') not in ('number', 'null') then
      perform app_private.import_fail(v_path || '.weekly_hours', 'expected a number');
    end if;
    if app_hidden.weekly_hours_in_range((v_contract ->> 'weekly_hours')::numeric) is false then
      perform app_private.import_fail(v_path || '.weekly_hours',
        format('expected a number of hours between 0 and %s', app_hidden.weekly_hours_max()));
    end if;
    insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, trial_end_date, job_title, weekly_hours)
    values (p_employee, v_type_id, v_start, v_end,
            app_private.import_date(v_contract, 'trial_end', v_path),
            app_private.import_text(v_contract, 'job_title', v_path, false),
            (v_contract ->> 'weekly_hours')::numeric);
    v_first_start := least(v_first_start, v_start);  -- least() skips the null of the first contract
  end loop;
  return v_first_start;
end;
$$;
comment on function app_private.import_employee_contracts(jsonb, text, integer) is
'CONTRACT section 5 (contract types) and 6, an employee''s contracts: a known type, a start, an end and a
trial end not before it, weekly hours in range (weekly_hours_in_range).';

create or replace function app_private.import_employee_week(p_item jsonb, p_path text, p_employee int,
                                                            p_valid_from date, p_posts jsonb) returns void
language plpgsql volatile as $$
declare
  v_days text[] := array['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
  v_template int;
  v_post_key text;
  j int;
begin
  if p_item ? 'week' and jsonb_typeof(p_item -> 'week') <> 'null' then
    perform app_private.import_check_keys(p_item -> 'week', p_path || '.week', v_days);
    insert into app_public.planning_templates (employee_id, valid_from)
    values (p_employee, coalesce(p_valid_from, app_hidden.today()))
    returning id into v_template;
    for j in 1 .. 7 loop
      v_post_key := app_private.import_text(p_item -> 'week', v_days[j], p_path || '.week', false);
      if v_post_key is not null then
        insert into app_public.planning_template_slots (template_id, weekday, post_id)
        values (v_template, j, app_private.import_lookup(p_posts, v_post_key, p_path || '.week.' || v_days[j], 'post code'));
      end if;
    end loop;
  end if;
end;
$$;
comment on function app_private.import_employee_week(jsonb, text, integer, date, jsonb) is
'CONTRACT section 6, an employee''s week: a post key or null per weekday (mon to sun), the planning template
from the first contract start on (today without contracts).';

create or replace function app_private.import_employee_counters(p_item jsonb, p_path text, p_employee int) returns void
language plpgsql volatile as $$
declare
  v_counters jsonb := app_private.import_section(p_item, 'counters', p_path);
  v_counter jsonb;
  v_path text;
  v_code text;
  v_year int;
  v_amount numeric;
  v_counter_id int;
  j int;
begin
  for j in 0 .. jsonb_array_length(v_counters) - 1 loop
    v_counter := v_counters -> j;
    v_path := format('%s.counters[%s]', p_path, j);
    perform app_private.import_check_keys(v_counter, v_path, array['code', 'year', 'acquired']);
    v_code := app_private.import_text(v_counter, 'code', v_path);
    if not exists (select 1 from app_public.counter_kinds k where k.code = v_code) then
      perform app_private.import_fail(v_path || '.code', format('unknown counter code "%s"', v_code));
    end if;
    if jsonb_typeof(v_counter -> 'year') <> 'number' or (v_counter ->> 'year') !~ '^\d{4}$' then
      perform app_private.import_fail(v_path || '.year', 'expected a year such as 2026');
    end if;
    v_year := (v_counter ->> 'year')::int;
    v_amount := null;
    if (v_counter ->> 'acquired') is not null then
      if (v_counter ->> 'acquired') !~ '^-?\d{1,6}(\.\d{1,2})?$' then
        perform app_private.import_fail(v_path || '.acquired', 'expected a decimal string such as "25.00"');
      end if;
      v_amount := (v_counter ->> 'acquired')::numeric;
    end if;
    if exists (select 1 from app_public.counters c where c.employee_id = p_employee and c.code = v_code and c.year = v_year) then
      perform app_private.import_fail(v_path, format('counter %s %s is listed twice', v_code, v_year));
    end if;
    insert into app_public.counters (employee_id, code, year) values (p_employee, v_code, v_year)
    returning id into v_counter_id;
    if coalesce(v_amount, 0) <> 0 then
      insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment)
      values (v_counter_id, 'acquired', v_amount, 'grant', 'Import de l’organisation');
    end if;
  end loop;
end;
$$;
comment on function app_private.import_employee_counters(jsonb, text, integer) is
'CONTRACT section 6, an employee''s counters: a known counter code, a four-digit year, each code and year
once; the acquired decimal string is written as an Acquis movement of the journal.';

create or replace function app_private.import_employees(p_doc jsonb, p_establishments jsonb, p_teams jsonb, p_posts jsonb)
returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'employees');
  v_item jsonb;
  v_path text;
  v_key text;
  v_id int;
  i int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('employees[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'first_name', 'last_name', 'professional_email', 'main_establishment', 'secondary_establishments',
            'teams', 'social_security_number', 'contracts', 'week', 'counters', 'birth_date', 'is_polyvalent']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_id := app_private.import_employee_record(v_item, v_path, p_establishments);
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
    perform app_private.import_employee_ssn(v_item, v_path, v_id);
    perform app_private.import_employee_workplaces_and_teams(v_item, v_path, v_id, p_establishments, p_teams);
    perform app_private.import_employee_week(v_item, v_path, v_id,
                                             app_private.import_employee_contracts(v_item, v_path, v_id), p_posts);
    perform app_private.import_employee_counters(v_item, v_path, v_id);
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_employees(jsonb, jsonb, jsonb, jsonb) is
'CONTRACT section 6, employees: each with a unique key, its record, number, workplaces, teams, contracts,
week and counters, in that order.';

-- The role attributions of one account; Salarié listed again on an employee's account changes nothing.
create or replace function app_private.import_account_roles(p_item jsonb, p_path text, p_account int, p_employee int,
                                                            p_establishments jsonb) returns void
language plpgsql volatile as $$
declare
  v_roles jsonb := app_private.import_section(p_item, 'roles', p_path);
  v_role jsonb;
  v_path text;
  v_role_name text;
  v_role_id smallint;
  v_start date;
  v_end date;
  v_keys text[];
  v_attribution int;
  j int;
  k int;
begin
  for j in 0 .. jsonb_array_length(v_roles) - 1 loop
    v_role := v_roles -> j;
    v_path := format('%s.roles[%s]', p_path, j);
    perform app_private.import_check_keys(v_role, v_path, array['role', 'establishments', 'start', 'end']);
    v_role_name := app_private.import_text(v_role, 'role', v_path);
    select r.id into v_role_id from app_public.roles r where r.name = v_role_name;
    if not found then
      perform app_private.import_fail(v_path || '.role', format('unknown role "%s"', v_role_name));
    end if;
    v_start := app_private.import_date(v_role, 'start', v_path);
    v_end := app_private.import_date(v_role, 'end', v_path);
    if v_end < v_start then
      perform app_private.import_fail(v_path || '.end', 'end is before start');
    end if;
    v_keys := app_private.import_keys(v_role, 'establishments', v_path);
    -- Listing Salarié again for an employee's account changes nothing.
    if v_role_id = 7 and p_employee is not null and v_start is null and v_end is null
       and coalesce(array_length(v_keys, 1), 0) = 0 then
      continue;
    end if;
    insert into app_public.role_attributions (account_id, role_id, start_date, end_date)
    values (p_account, v_role_id, v_start, v_end)
    returning id into v_attribution;
    for k in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
      values (v_attribution, app_private.import_lookup(p_establishments, v_keys[k],
                                                       format('%s.establishments[%s]', v_path, k - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;
end;
$$;
comment on function app_private.import_account_roles(jsonb, text, integer, integer, jsonb) is
'CONTRACT section 6 and SPEC Roles, an account''s roles: a known role, dates in order, establishments by key
(none: the whole association); Salarié listed again on an employee''s account changes nothing.';

create or replace function app_private.import_accounts(p_doc jsonb, p_establishments jsonb, p_employees jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'accounts');
  v_item jsonb;
  v_path text;
  v_key text;
  v_username text;
  v_employee int;
  v_keys text[];
  v_id int;
  i int;
  j int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('accounts[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'username', 'password_hash', 'employee', 'is_staff', 'is_superuser', 'is_active', 'permissions', 'roles']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_username := app_private.import_text(v_item, 'username', v_path);
    if app_hidden.username_well_formed(v_username) is false then
      perform app_private.import_fail(v_path || '.username', format('invalid username "%s" (letters, digits and . _ @ + -)', v_username));
    end if;
    if app_private.username_taken(v_username) then
      perform app_private.import_fail(v_path || '.username', format('username "%s" is already taken', v_username));
    end if;
    v_employee := app_private.import_lookup(p_employees, app_private.import_text(v_item, 'employee', v_path, false),
                                            v_path || '.employee', 'employee');
    if v_employee is not null and exists (select 1 from app_public.accounts a where a.employee_id = v_employee) then
      perform app_private.import_fail(v_path || '.employee', format('employee "%s" already has an account', v_item ->> 'employee'));
    end if;
    insert into app_public.accounts (username, employee_id, is_active, is_staff, is_superuser)
    values (v_username, v_employee,
            app_private.import_bool(v_item, 'is_active', v_path, true),
            app_private.import_bool(v_item, 'is_staff', v_path, false),
            app_private.import_bool(v_item, 'is_superuser', v_path, false))
    returning id into v_id;
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
    insert into app_private.account_secrets (account_id, password_hash, password_changed_at)
    values (v_id, app_private.import_text(v_item, 'password_hash', v_path, false),
            case when v_item ? 'password_hash' then app_hidden.now() end);

    v_keys := app_private.import_keys(v_item, 'permissions', v_path);
    for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      if not exists (select 1 from app_public.permissions p where p.code = v_keys[j]) then
        perform app_private.import_fail(format('%s.permissions[%s]', v_path, j - 1), format('unknown permission "%s"', v_keys[j]));
      end if;
      insert into app_public.account_permissions (account_id, permission_code) values (v_id, v_keys[j])
      on conflict do nothing;
    end loop;

    perform app_private.import_account_roles(v_item, v_path, v_id, v_employee, p_establishments);

    -- An account without a usable password is invited when a professional e-mail exists.
    if not v_item ? 'password_hash' then
      perform app_private.queue_invitation(v_id);
    end if;
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_accounts(jsonb, jsonb, jsonb) is
'CONTRACT section 6 and SPEC Authentication rule 4, accounts: a well-formed free username
(username_well_formed, username_taken), at most one account per employee, known permissions, roles; an
account without password_hash is invited.';

create or replace function app_private.import_on_call(p_doc jsonb, p_establishments jsonb, p_accounts jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'on_call');
  v_item jsonb;
  v_path text;
  v_start timestamptz;
  v_end timestamptz;
  v_keys text[];
  v_id int;
  i int;
  j int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('on_call[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['account', 'establishments', 'start', 'end', 'comment']);
    v_start := app_private.import_timestamptz(v_item, 'start', v_path);
    v_end := app_private.import_timestamptz(v_item, 'end', v_path);
    if v_end <= v_start then
      perform app_private.import_fail(v_path || '.end', 'end must be after start');
    end if;
    insert into app_public.on_call_periods (account_id, start_at, end_at, comment)
    values (app_private.import_lookup(p_accounts, app_private.import_text(v_item, 'account', v_path), v_path || '.account', 'account'),
            v_start, v_end, app_private.import_text(v_item, 'comment', v_path, false))
    returning id into v_id;
    v_map := v_map || jsonb_build_object(i::text, v_id);
    v_keys := app_private.import_keys(v_item, 'establishments', v_path);
    if coalesce(array_length(v_keys, 1), 0) = 0 then
      perform app_private.import_fail(v_path || '.establishments', 'at least one establishment');
    end if;
    for j in 1 .. array_length(v_keys, 1) loop
      insert into app_public.on_call_period_establishments (period_id, establishment_id)
      values (v_id, app_private.import_lookup(p_establishments, v_keys[j], format('%s.establishments[%s]', v_path, j - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_on_call(jsonb, jsonb, jsonb) is
'CONTRACT section 6 and SPEC Permissions rule 9, on_call: an account by key, an interval with offsets whose
end is after its start, at least one establishment by key; the map is keyed by position.';

-- The whole file in one call, so one transaction: the first bad path aborts every section.
create or replace function app_private.import_organisation(p_doc jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_establishments jsonb;
  v_teams jsonb;
  v_posts jsonb;
  v_employees jsonb;
  v_accounts jsonb;
begin
  perform app_private.import_check_keys(p_doc, '$',
    array['establishments', 'teams', 'posts', 'employees', 'accounts', 'on_call']);
  v_establishments := app_private.import_establishments(p_doc);
  v_teams := app_private.import_teams(p_doc, v_establishments);
  v_posts := app_private.import_posts(p_doc, v_establishments);
  v_employees := app_private.import_employees(p_doc, v_establishments, v_teams, v_posts);
  v_accounts := app_private.import_accounts(p_doc, v_establishments, v_employees);
  return jsonb_build_object('establishments', v_establishments, 'teams', v_teams, 'posts', v_posts,
                            'employees', v_employees, 'accounts', v_accounts,
                            'on_call', app_private.import_on_call(p_doc, v_establishments, v_accounts));
end;
$$;
comment on function app_private.import_organisation(jsonb) is
'CONTRACT section 6 (npm run org:import): the organisation file, section after section (establishments,
teams, posts, employees, accounts, on_call), all or nothing; a bad path fails with "path: message" (WV020).';
--! EndIncluded org/import.sql
--! Included teams/api.sql
-- /api/teams/: read by every authenticated account; written (create, edit, delete, replace
-- members, add a member) with employee.change_team (encadrement). A team without any
-- establishment in the writer's perimeter answers 404; deleting a team that also spans
-- establishments outside the perimeter, or adding a member outside it, answers 403.

-- JSON of teams, set-based. Members (p_members): current and future assignments the caller
-- may read.
create or replace function app_hidden.teams_json(p_ids int[], p_members boolean) returns table (id int, doc jsonb)
language sql stable as $$
  with establishments as (
    select te.team_id, jsonb_agg(te.establishment_id order by te.establishment_id) as ids,
           jsonb_agg(e.name order by te.establishment_id) as names
    from app_public.team_establishments te
    join app_public.establishments e on e.id = te.establishment_id
    where te.team_id = any (p_ids)
    group by te.team_id
  ),
  members as (
    select ta.team_id,
           jsonb_agg(jsonb_build_object('id', ta.id, 'employee', ta.employee_id,
                                        'employee_name', emp.first_name || ' ' || emp.last_name,
                                        'start_date', ta.start_date, 'end_date', ta.end_date)
                     order by lower(emp.last_name), lower(emp.first_name), ta.start_date nulls first) as list
    from app_public.team_assignments ta
    join app_public.employees emp on emp.id = ta.employee_id
    where p_members and ta.team_id = any (p_ids)
      and (ta.end_date is null or ta.end_date >= app_hidden.today())
    group by ta.team_id
  )
  select t.id,
         jsonb_build_object('id', t.id, 'name', t.name,
                            'establishments', coalesce(est.ids, '[]'::jsonb),
                            'establishment_names', coalesce(est.names, '[]'::jsonb),
                            'created_at', t.created_at, 'updated_at', t.updated_at)
         || case when p_members then jsonb_build_object('members', coalesce(m.list, '[]'::jsonb)) else '{}'::jsonb end
  from app_public.teams t
  left join establishments est on est.team_id = t.id
  left join members m on m.team_id = t.id
  where t.id = any (p_ids);
$$;

-- GET /api/teams/
create or replace function app_public.teams_list(p_scope text default null, p_establishment int default null,
                                      p_search text default null, p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  filtered as (
    select t.id, t.name from app_public.teams t
    where (p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
           or exists (select 1 from app_public.team_establishments te
                      where te.team_id = t.id and te.establishment_id = any (coalesce((select s.ids from scope s), '{}'))))
      and (p_establishment is null or exists (select 1 from app_public.team_establishments te
                                              where te.team_id = t.id and te.establishment_id = p_establishment))
      and (coalesce(btrim(p_search), '') = '' or t.name ilike app_hidden.like_pattern(p_search))
  ),
  page as (
    select f.id, row_number() over (order by lower(f.name), f.id) as ord
    from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p join app_hidden.teams_json(array(select pg.id from page pg), false) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.teams_list(text, integer, text, integer, integer) is
'SPEC Permissions rule 7, GET /api/teams/: one page of the teams (without members), readable by every
authenticated account, searchable and filtered by establishment; scope=perimeter keeps those with an
establishment in the caller''s perimeter.';

-- GET /api/teams/<id>/
create or replace function app_public.team_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.teams_json(array[p_id], true) j;
  if v_doc is null then
    perform app_hidden.not_found('Équipe introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.team_get(integer) is
'SPEC Permissions rule 7, GET /api/teams/<id>/: one team with its establishments and its current and
future members (404 when absent).';

-- A team the caller may write: the permission (403 without it) and at least one of the
-- team's establishments in the perimeter (404 otherwise). Locks the team row.
create or replace function app_hidden.team_for_write(p_id int) returns app_public.teams
language plpgsql volatile as $$
declare
  v_team app_public.teams;
begin
  if not app_hidden.current_account_has('employee.change_team') then
    perform app_hidden.forbidden('Vous n’avez pas le droit de modifier les équipes.', 'WF520');
  end if;
  if not p_id in (select app_hidden.team_ids_in_perimeter('employee.change_team')) then
    perform app_hidden.not_found('Équipe introuvable dans votre périmètre.');
  end if;
  select * into v_team from app_public.teams t where t.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Équipe introuvable dans votre périmètre.');
  end if;
  return v_team;
end;
$$;

-- Name and establishments of a creation or an update (PUT/creation: both required; PATCH: the
-- keys sent, p_sent). A null list of establishments leaves them as they are.
drop function if exists app_hidden.team_save(int, jsonb, boolean);
create or replace function app_hidden.team_save(p_id int, p_partial boolean, p_sent text[], p_name text, p_establishments int[])
returns int
language plpgsql volatile as $$
declare
  v_team app_public.teams;
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_team');
  v_errors jsonb := '{}';
  v_name text := app_hidden.trimmed(p_name);
  v_establishments int[] := p_establishments;
  v_old_establishments int[] := '{}';
  v_outside text;
  v_id int := p_id;
begin
  if p_id is null then
    if not app_hidden.current_account_has('employee.change_team') then
      perform app_hidden.forbidden('Vous n’avez pas le droit de créer une équipe.', 'WF520');
    end if;
  else
    v_team := app_hidden.team_for_write(p_id);
    v_old_establishments := array(select te.establishment_id from app_public.team_establishments te where te.team_id = p_id);
  end if;

  if (p_id is null or not p_partial or app_hidden.sent(p_sent, 'name', p_name is not null)) and v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le nom de l’équipe est obligatoire.');
  else
    v_name := coalesce(v_name, v_team.name);
    if char_length(v_name) > app_hidden.name_max_length() then
      v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
    end if;
  end if;

  if app_hidden.id_list_refusal(v_establishments) is not null then
    perform app_hidden.invalid('establishments', app_hidden.id_list_refusal(v_establishments));
  end if;
  if v_establishments is null and (p_id is null or not p_partial) then
    v_errors := app_hidden.add_error(v_errors, 'establishments', 'Choisissez au moins un établissement.');
  elsif v_establishments is not null then
    if cardinality(v_establishments) = 0 then
      v_errors := app_hidden.add_error(v_errors, 'establishments', 'Choisissez au moins un établissement.');
    elsif exists (select 1 from unnest(v_establishments) x(id)
                  where not exists (select 1 from app_public.establishments e where e.id = x.id)) then
      v_errors := app_hidden.add_error(v_errors, 'establishments',
        format('Établissement introuvable : %s.', (select string_agg(x.id::text, ', ') from unnest(v_establishments) x(id)
                                                   where not exists (select 1 from app_public.establishments e where e.id = x.id))));
    elsif v_scope is not null then
      select string_agg(e.name, ', ' order by e.name) into v_outside
      from ((select unnest(v_establishments) except select unnest(v_old_establishments))
            union
            (select unnest(v_old_establishments) except select unnest(v_establishments))) d(id)
      join app_public.establishments e on e.id = d.id
      where not d.id = any (v_scope);
      if v_outside is not null then
        v_errors := app_hidden.add_error(v_errors, 'establishments',
          format('Hors de votre périmètre : %s. Vous ne pouvez ni ajouter ni retirer cet établissement.', v_outside));
      end if;
    end if;
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV520') where v_errors <> '{}'::jsonb;

  if p_id is null then
    insert into app_public.teams (name) values (v_name) returning id into v_id;
  else
    update app_public.teams t set name = v_name where t.id = p_id and t.name is distinct from v_name;
  end if;
  if v_establishments is not null then
    delete from app_public.team_establishments te
    where te.team_id = v_id and not te.establishment_id = any (v_establishments);
    insert into app_public.team_establishments (team_id, establishment_id)
    select v_id, x.id from unnest(v_establishments) x(id)
    on conflict do nothing;
  end if;
  return v_id;
end;
$$;

-- POST /api/teams/
drop function if exists app_public.team_create(jsonb);
create or replace function app_public.team_create(p_name text, p_establishments int[]) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.team_save(null, false, null, p_name, p_establishments);
  return app_public.team_get(v_id);
end;
$$;
comment on function app_public.team_create(text, integer[]) is
'SPEC Permissions rule 7, POST /api/teams/: a holder of employee.change_team creates a team (name and
establishments required; an establishment outside its perimeter is refused under establishments).';

-- PATCH /api/teams/<id>/: only the keys sent.
drop function if exists app_public.team_update(int, jsonb);
create or replace function app_public.team_update(p_id int, p_name text default null, p_establishments int[] default null,
                                                  p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.team_save(p_id, true, p_sent, p_name, p_establishments);
  return app_public.team_get(v_id);
end;
$$;
comment on function app_public.team_update(integer, text, integer[], text[]) is
'SPEC Permissions rule 7, PATCH /api/teams/<id>/: the keys sent (p_sent) of a team with an establishment
in the writer''s perimeter (else 404; 403 without employee.change_team).';

-- PUT /api/teams/<id>/: name and establishments required.
drop function if exists app_public.team_replace(int, jsonb);
create or replace function app_public.team_replace(p_id int, p_name text default null, p_establishments int[] default null,
                                                   p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.team_save(p_id, false, p_sent, p_name, p_establishments);
  return app_public.team_get(v_id);
end;
$$;
comment on function app_public.team_replace(integer, text, integer[], text[]) is
'SPEC Permissions rule 7, PUT /api/teams/<id>/: as PATCH, with name and establishments required.';

-- DELETE /api/teams/<id>/: refused (403) when the team also spans establishments outside the
-- perimeter. Its assignments go with it (each deletion is audited).
create or replace function app_public.team_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_outside text;
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_team');
begin
  perform app_hidden.team_for_write(p_id);
  if v_scope is not null then
    select string_agg(e.name, ', ' order by e.name) into v_outside
    from app_public.team_establishments te join app_public.establishments e on e.id = te.establishment_id
    where te.team_id = p_id and not te.establishment_id = any (v_scope);
    if v_outside is not null then
      perform app_hidden.forbidden(format('Cette équipe s’étend aussi hors de votre périmètre (%s) : '
                                          'seul un responsable de tous ses établissements peut la supprimer.', v_outside), 'WF521');
    end if;
  end if;
  delete from app_public.teams t where t.id = p_id;
  return null;
end;
$$;
comment on function app_public.team_delete(integer) is
'SPEC Permissions rule 7, DELETE /api/teams/<id>/: deletes a team of the writer''s perimeter and its
assignments (each audited); 403 when the team also spans establishments outside the perimeter, 404 when
none is inside.';

-- One member (employee required, start_date default today, end_date): the employee exists
-- and the dates are in order; else 400 under p_field, the message prefixed by p_label.
create or replace function app_hidden.team_member_check(p_employee int, p_start_date date, p_end_date date,
                                                        p_field text, p_label text) returns void
language plpgsql stable as $$
begin
  if p_employee is null then
    perform app_hidden.invalid(p_field, p_label || 'le salarié est obligatoire.', 'WV520');
  end if;
  if not exists (select 1 from app_hidden.employee_names(array[p_employee])) then
    perform app_hidden.invalid(p_field, p_label || format('salarié n° %s introuvable.', p_employee), 'WV520');
  end if;
  if p_end_date < coalesce(p_start_date, app_hidden.today()) then
    perform app_hidden.invalid(p_field, p_label || 'la date de fin précède la date de début.', 'WV520');
  end if;
end;
$$;

-- One item of the members list of PUT /api/teams/<id>/members/ (a JSON object, checked as the
-- route schema checks it: a GraphQL caller gives the list as JSON), read and checked;
-- has_start tells a start_date sent as null (no start) from one left out (kept).
drop function if exists app_hidden.team_member_input(jsonb, text, text);
create or replace function app_hidden.team_member_input(p_item jsonb, p_field text, p_label text)
returns table (employee_id int, start_date date, end_date date, has_start boolean)
language plpgsql stable as $$
begin
  if jsonb_typeof(p_item) is distinct from 'object' then
    perform app_hidden.invalid(p_field, p_label || 'un objet est attendu.', 'WV520');
  end if;
  employee_id := app_hidden.in_int(p_item, 'employee', p_field);
  start_date := app_hidden.in_date(p_item, 'start_date', p_field);
  end_date := app_hidden.in_date(p_item, 'end_date', p_field);
  has_start := p_item ? 'start_date';
  perform app_hidden.team_member_check(employee_id, start_date, end_date, p_field, p_label);
  return next;
end;
$$;

create or replace function app_hidden.require_member_in_perimeter(p_employee int) returns void
language plpgsql stable as $$
begin
  if not app_hidden.may(app_hidden.current_account_id(), 'employee.change_team', p_employee) then
    perform app_hidden.forbidden(format('%s n’est pas dans votre périmètre : vous ne pouvez pas l’ajouter à cette équipe.',
                                        (select n.name from app_hidden.employee_names(array[p_employee]) n)), 'WF522');
  end if;
end;
$$;

-- POST /api/teams/<id>/members/ {"employee", "start_date"?, "end_date"?}
drop function if exists app_public.team_member_add(int, jsonb);
create or replace function app_public.team_member_add(p_id int, p_employee int, p_start_date date default null,
                                                      p_end_date date default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.team_for_write(p_id);
  perform app_hidden.team_member_check(p_employee, p_start_date, p_end_date, 'employee', '');
  perform app_hidden.require_member_in_perimeter(p_employee);
  if exists (select 1 from app_public.team_assignments ta
             where ta.team_id = p_id and ta.employee_id = p_employee
               and daterange(ta.start_date, ta.end_date, '[]')
                   && daterange(coalesce(p_start_date, app_hidden.today()), p_end_date, '[]')) then
    perform app_hidden.invalid('employee', 'Ce salarié fait déjà partie de cette équipe sur cette période.', 'WV520');
  end if;
  insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
  values (p_employee, p_id, coalesce(p_start_date, app_hidden.today()), p_end_date);
  return app_public.team_get(p_id);
end;
$$;
comment on function app_public.team_member_add(integer, integer, date, date) is
'SPEC Permissions rule 7, POST /api/teams/<id>/members/: adds an employee of the writer''s perimeter to a
team of its perimeter (403 outside), from today unless a start is given.';

-- PUT /api/teams/<id>/members/ {"members": [{"employee", "start_date"?, "end_date"?}, ...]}:
-- the list becomes the team's current and future members. A member kept keeps its
-- assignment (dates updated when sent); a new member starts today unless a start is given;
-- a member left out leaves the team yesterday (an assignment not yet started is deleted).
-- The members are a JSON list (each item's start_date may be left out, which keeps it: a
-- typed list could not say so).
drop function if exists app_public.team_members_replace(int, jsonb);
create or replace function app_public.team_members_replace(p_id int, p_members jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_items jsonb := nullif(p_members, 'null'::jsonb);
  v_member record;
  v_today date := app_hidden.today();
  v_current app_public.team_assignments;
  v_employees int[] := '{}';
  i int;
begin
  perform app_hidden.team_for_write(p_id);
  if v_items is null then
    perform app_hidden.invalid('members', 'La liste des membres est obligatoire (une liste vide retire tous les membres).', 'WV520');
  end if;
  if jsonb_typeof(v_items) <> 'array' then
    perform app_hidden.invalid('members', 'Une liste est attendue.');
  end if;
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    select * into v_member from app_hidden.team_member_input(v_items -> i, 'members', format('Membre n° %s : ', i + 1));
    if v_member.employee_id = any (v_employees) then
      perform app_hidden.invalid('members', format('Membre n° %s : ce salarié figure déjà dans la liste.', i + 1), 'WV520');
    end if;
    v_employees := v_employees || v_member.employee_id;
  end loop;

  -- Members who leave.
  for v_current in
    select * from app_public.team_assignments ta
    where ta.team_id = p_id and (ta.end_date is null or ta.end_date >= v_today)
      and not ta.employee_id = any (v_employees)
  loop
    if v_current.start_date is not null and v_current.start_date >= v_today then
      delete from app_public.team_assignments ta where ta.id = v_current.id;
    else
      update app_public.team_assignments ta set end_date = v_today - 1 where ta.id = v_current.id;
    end if;
  end loop;

  -- Members who stay or arrive.
  v_current := null;
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    select * into v_member from app_hidden.team_member_input(v_items -> i, 'members', format('Membre n° %s : ', i + 1));
    select * into v_current from app_public.team_assignments ta
    where ta.team_id = p_id and ta.employee_id = v_member.employee_id
      and (ta.end_date is null or ta.end_date >= v_today)
    order by ta.start_date nulls first
    limit 1
    for update;
    if v_current.id is null then
      perform app_hidden.require_member_in_perimeter(v_member.employee_id);
      insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
      values (v_member.employee_id, p_id, coalesce(v_member.start_date, v_today), v_member.end_date);
    elsif (v_member.has_start and v_current.start_date is distinct from v_member.start_date)
          or v_current.end_date is distinct from v_member.end_date then
      if v_member.end_date < coalesce(case when v_member.has_start then v_member.start_date else v_current.start_date end, v_member.end_date) then
        perform app_hidden.invalid('members', format('Membre n° %s : la date de fin précède la date de début.', i + 1), 'WV520');
      end if;
      update app_public.team_assignments ta
      set start_date = case when v_member.has_start then v_member.start_date else ta.start_date end,
          end_date = v_member.end_date
      where ta.id = v_current.id;
    end if;
    v_current := null;
  end loop;
  return app_public.team_get(p_id);
end;
$$;
comment on function app_public.team_members_replace(integer, jsonb) is
'SPEC Permissions rule 7, PUT /api/teams/<id>/members/: the list becomes the team''s current and future
members; a member kept keeps its assignment, a new one starts today unless a start is given, one left
out leaves yesterday (an assignment not yet started is deleted).';
--! EndIncluded teams/api.sql
--! Included events/api.sql
-- /api/events/ and /api/events/participant-options/.
--
-- Without a parameter, lists are restricted to the caller's perimeter: events of an
-- establishment of app_hidden.scope_establishment_ids, events with a participant attached to
-- one of them, and the events the caller created or takes part in. scope=all lifts the
-- restriction (within what the caller may read).
--
-- Conflict alert: creating or updating an event whose participant has an absence (pending,
-- validated or cancellation requested) overlapping the event answers a `warnings` list and,
-- inside the same transaction, notifies through app_private.notify the author and the
-- deciders of the participant's absences (the participant is not notified of their own
-- absence). An update notifies only the conflicts it creates. Warnings and alerts name only
-- the absences the author reads; participants added are of the author's perimeter (404).

create or replace function app_hidden.events_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  with participants as (
    select ep.event_id,
           jsonb_agg(jsonb_build_object('employee', ep.employee_id, 'employee_name', n.name)
                     order by n.name, ep.employee_id) as list
    from app_public.event_participants ep
    join app_hidden.employee_names(array(select x.employee_id from app_public.event_participants x
                                         where x.event_id = any (p_ids))) n on n.id = ep.employee_id
    where ep.event_id = any (p_ids)
    group by ep.event_id
  ),
  authors as (
    select * from app_hidden.account_names(array(select ev.created_by from app_public.events ev where ev.id = any (p_ids)))
  )
  select ev.id,
         jsonb_build_object('id', ev.id, 'title', ev.title, 'description', ev.description,
                            'establishment', ev.establishment_id, 'establishment_name', est.name,
                            'start_at', ev.start_at, 'end_at', ev.end_at,
                            'participants', coalesce(p.list, '[]'::jsonb),
                            'created_by', ev.created_by, 'created_by_name', au.name,
                            'created_at', ev.created_at, 'updated_at', ev.updated_at,
                            'warnings', null)
  from app_public.events ev
  left join app_public.establishments est on est.id = ev.establishment_id
  left join participants p on p.event_id = ev.id
  left join authors au on au.id = ev.created_by
  where ev.id = any (p_ids);
$$;

-- GET /api/events/?scope=&from=&to=&establishment=&employee=
create or replace function app_public.events_list(p_scope text default null, p_from date default null, p_to date default null,
                                       p_establishment int default null, p_employee int default null,
                                       p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope is distinct from 'all'
  ),
  scope_employees as (
    select x.id from scope, lateral app_hidden.employees_of_establishments(scope.ids, app_hidden.today()) x(id)
    where scope.ids is not null
  ),
  filtered as (
    select ev.id, ev.start_at from app_public.events ev
    where (p_scope = 'all' or (select s.ids from scope s) is null
           or ev.establishment_id = any (coalesce((select s.ids from scope s), '{}'))
           or ev.created_by = app_hidden.current_account_id()
           or exists (select 1 from app_public.event_participants ep
                      where ep.event_id = ev.id
                        and (ep.employee_id = app_hidden.current_employee_id()
                             or ep.employee_id in (select se.id from scope_employees se))))
      and (p_from is null or ev.end_at > (p_from::timestamp at time zone app_hidden.business_timezone()))
      and (p_to is null or ev.start_at < ((p_to + 1)::timestamp at time zone app_hidden.business_timezone()))
      and (p_establishment is null or ev.establishment_id = p_establishment)
      and (p_employee is null or exists (select 1 from app_public.event_participants ep
                                         where ep.event_id = ev.id and ep.employee_id = p_employee))
  ),
  page as (
    select f.id, row_number() over (order by f.start_at, f.id) as ord
    from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p join app_hidden.events_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.events_list(text, date, date, integer, integer, integer, integer) is
'SPEC Documents and other routes, GET /api/events/: one page of the events the caller reads, by start;
without scope, restricted to its perimeter (events of its establishments or with a participant attached
to them, and those it created or takes part in); scope=all lifts that restriction; filters by window,
establishment and participant.';

-- GET /api/events/<id>/
create or replace function app_public.event_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.events_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Événement introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.event_get(integer) is
'SPEC Events (GET /api/events/<id>/): one event the caller reads, with its participants and author (404
otherwise).';

-- GET /api/events/participant-options/?scope=&search=: the employees the caller may invite.
-- Without a parameter, the employees of its events.change_event perimeter; scope=all, every
-- employee it reads in the directory.
create or replace function app_public.event_participant_options(p_scope text default null, p_search text default null,
                                                     p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('events.change_event') then
    perform app_hidden.forbidden('Vous n’avez pas le droit de créer des événements.', 'WF530');
  end if;
  return (
    with perimeter as (
      select x.id from app_hidden.perimeter_employee_ids('events.change_event') x(id) where p_scope is distinct from 'all'
    ),
    filtered as (
      select e.id, e.first_name, e.last_name, e.main_establishment_id from app_public.employees e
      where (p_scope = 'all' or e.id in (select p.id from perimeter p))
        and (coalesce(btrim(p_search), '') = ''
             or e.first_name || ' ' || e.last_name ilike app_hidden.like_pattern(p_search)
             or e.last_name || ' ' || e.first_name ilike app_hidden.like_pattern(p_search))
    ),
    page as (
      select f.*, row_number() over (order by lower(f.last_name), lower(f.first_name), f.id) as ord
      from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
    )
    select jsonb_build_object(
      'count', (select count(*) from filtered),
      'results', coalesce((select jsonb_agg(jsonb_build_object('id', p.id, 'name', p.first_name || ' ' || p.last_name,
                                                               'main_establishment', p.main_establishment_id,
                                                               'main_establishment_name', est.name) order by p.ord)
                           from page p left join app_public.establishments est on est.id = p.main_establishment_id),
                          '[]'::jsonb)));
end;
$$;
comment on function app_public.event_participant_options(text, text, integer, integer) is
'SPEC Documents and other routes, GET /api/events/participant-options/: the employees the caller may
invite, searchable; without scope, those of its events.change_event perimeter; scope=all, every employee
it reads in the directory. 403 without events.change_event.';

-- Absences of the event's participants that overlap it (whatever the caller may read).
create or replace function app_private.event_absence_conflicts(p_event_id int)
returns table (employee_id int, absence_id int, status text, date_start date, date_end date)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.employee_id, a.id, a.status, a.date_start, a.date_end
  from app_public.events ev
  join app_public.event_participants ep on ep.event_id = ev.id
  join app_public.absences a on a.employee_id = ep.employee_id
  where ev.id = p_event_id
    and a.status in ('pending', 'validated', 'cancellation_requested')
    and a.period && tsrange(ev.start_at at time zone app_hidden.business_timezone(),
                            ev.end_at at time zone app_hidden.business_timezone())
  order by a.date_start, a.id;
$$;

create or replace function app_hidden.event_conflict_text(p_employee int, p_status text, p_start date, p_end date) returns text
language sql stable as $$
  select format('%s a une absence %s %s qui chevauche cet événement.',
                (select n.name from app_hidden.employee_names(array[p_employee]) n),
                case p_status when 'pending' then 'en attente de décision'
                              when 'cancellation_requested' then 'validée (annulation demandée)'
                              else 'validée' end,
                case when p_start = p_end then 'le ' || app_hidden.fr_date(p_start)
                     else format('du %s au %s', app_hidden.fr_date(p_start), app_hidden.fr_date(p_end)) end);
$$;

-- Warnings of the event, and the alerts of the conflicts not in p_known (absence ids).
create or replace function app_private.event_conflicts_alert(p_event_id int, p_known int[]) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_author int := app_hidden.current_account_id();
  v_event app_public.events;
  v_conflict record;
  v_text text;
  v_warnings jsonb := '[]';
  v_recipient int;
begin
  select * into v_event from app_public.events ev where ev.id = p_event_id;
  -- Only the absences the author reads are named, in the warnings and in the alerts.
  for v_conflict in select c.* from app_private.event_absence_conflicts(p_event_id) c
                    where c.employee_id in (select app_hidden.absence_api_reader_ids()) loop
    v_text := app_hidden.event_conflict_text(v_conflict.employee_id, v_conflict.status,
                                             v_conflict.date_start, v_conflict.date_end);
    v_warnings := v_warnings || to_jsonb(v_text);
    if v_conflict.absence_id = any (coalesce(p_known, '{}')) then
      continue;
    end if;
    for v_recipient in
      select r from (select v_author as r
                     union
                     select app_private.route_deciders(v_conflict.employee_id,
                                                       greatest(v_conflict.date_start,
                                                                app_hidden.business_date(v_event.start_at)),
                                                       'absences.decide_absence', v_author)) x
      where r is not null and r is distinct from app_private.employee_account_id(v_conflict.employee_id)
    loop
      perform app_private.notify(v_recipient, 'Conflit entre un événement et une absence',
        format('%s a une absence %s %s qui chevauche l’événement « %s » du %s.',
               app_hidden.employee_name(v_conflict.employee_id),
               case v_conflict.status when 'pending' then 'en attente de décision'
                                      when 'cancellation_requested' then 'validée (annulation demandée)'
                                      else 'validée' end,
               case when v_conflict.date_start = v_conflict.date_end then 'le ' || app_hidden.fr_date(v_conflict.date_start)
                    else format('du %s au %s', app_hidden.fr_date(v_conflict.date_start), app_hidden.fr_date(v_conflict.date_end)) end,
               v_event.title, app_hidden.fr_date(app_hidden.business_date(v_event.start_at))),
        'warning', 'event', p_event_id);
    end loop;
  end loop;
  return v_warnings;
end;
$$;

-- Who may write an event: the permission and, for an existing one, the writable perimeter
-- (else 403; unknown: 404). Returns the event, locked (creation: an empty row).
create or replace function app_hidden.event_lock_for_write(p_id int) returns app_public.events
language plpgsql volatile as $$
declare
  v_old app_public.events;
begin
  if p_id is not null then
    select * into v_old from app_public.events ev where ev.id = p_id;
    if not found then
      perform app_hidden.not_found('Événement introuvable.');
    end if;
  end if;
  if not app_hidden.current_account_has('events.change_event') then
    perform app_hidden.forbidden('Vous n’avez pas le droit de créer ou de modifier des événements.', 'WF530');
  end if;
  if p_id is not null then
    if not p_id in (select app_hidden.writable_event_ids()) then
      perform app_hidden.forbidden('Vous ne modifiez que les événements que vous avez créés ou ceux d’un établissement de votre périmètre.', 'WF531');
    end if;
    perform 1 from app_public.events ev where ev.id = p_id for update;
  end if;
  return v_old;
end;
$$;

-- The rules of an event's fields and its write (creation: p_old.id null), from the values it
-- will have (a PATCH passes the kept ones). p_establishment_sent: the caller names the
-- establishment (only a named one is checked against the perimeter). Participants null: kept
-- (none at creation). Returns the event id.
create or replace function app_hidden.event_write(p_old app_public.events, p_title text, p_description text,
                                                  p_establishment int, p_establishment_sent boolean,
                                                  p_start timestamptz, p_end timestamptz, p_participants int[])
returns int
language plpgsql volatile as $$
declare
  v_errors jsonb := '{}';
  v_title text := nullif(btrim(p_title), '');
  v_description text := nullif(btrim(p_description), '');
  v_participants int[] := p_participants;
  v_missing text;
  v_id int := p_old.id;
begin
  if v_title is null then
    v_errors := app_hidden.add_error(v_errors, 'title', 'Le titre est obligatoire.');
  elsif char_length(v_title) > app_hidden.event_title_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'title', app_hidden.max_length_message(app_hidden.event_title_max_length()));
  end if;
  if char_length(v_description) > app_hidden.event_description_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'description', app_hidden.max_length_message(app_hidden.event_description_max_length()));
  end if;

  if p_start is null then
    v_errors := app_hidden.add_error(v_errors, 'start_at', 'Le début est obligatoire.');
  end if;
  if p_end is null then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin est obligatoire.');
  elsif p_end <= p_start then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin doit suivre le début.');
  end if;

  if p_establishment_sent and p_establishment is not null then
    if not exists (select 1 from app_public.establishments e where e.id = p_establishment) then
      v_errors := app_hidden.add_error(v_errors, 'establishment', format('Établissement n° %s introuvable.', p_establishment));
    elsif p_establishment is distinct from p_old.establishment_id
          and not app_hidden.event_establishment_allowed(p_establishment) then
      v_errors := app_hidden.add_error(v_errors, 'establishment', 'Cet établissement n’est pas dans votre périmètre.');
    end if;
  end if;

  if v_participants is null and p_old.id is null then
    v_participants := '{}';
  end if;
  if cardinality(v_participants) > 500 then
    v_errors := app_hidden.add_error(v_errors, 'participants', 'Au plus 500 participants.');
  elsif v_participants is not null then
    -- Participants are employees the author reads in the directory.
    select string_agg(x.id::text, ', ' order by x.id) into v_missing
    from unnest(v_participants) x(id)
    where not exists (select 1 from app_public.employees e where e.id = x.id);
    if v_missing is not null then
      v_errors := app_hidden.add_error(v_errors, 'participants', format('Salarié introuvable : %s.', v_missing));
    end if;
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV530') where v_errors <> '{}'::jsonb;
  -- A participant added is oneself or an employee of the events.change_event perimeter: an
  -- employee outside is not found (the conflict warnings would otherwise reveal absences).
  -- Participants already on the event stay.
  select string_agg(x.id::text, ', ' order by x.id) into v_missing
  from unnest(v_participants) x(id)
  where not app_hidden.is_current_employee(x.id)
    and not exists (select 1 from app_public.event_participants ep where ep.event_id = p_old.id and ep.employee_id = x.id)
    and not exists (select 1 from app_hidden.perimeter_employee_ids('events.change_event') pe(id) where pe.id = x.id);
  if v_missing is not null then
    perform app_hidden.not_found(format('Salarié introuvable dans votre périmètre : %s.', v_missing), 'WN530');
  end if;

  if p_old.id is null then
    insert into app_public.events (title, description, establishment_id, start_at, end_at, created_by)
    values (v_title, v_description, p_establishment, p_start, p_end, app_hidden.current_account_id());
    -- Not RETURNING: the new row is not yet in the snapshot the read policy consults.
    v_id := currval(pg_get_serial_sequence('app_public.events', 'id'));
  else
    update app_public.events ev
    set title = v_title, description = v_description, establishment_id = p_establishment, start_at = p_start, end_at = p_end
    where ev.id = p_old.id
      and (ev.title, ev.description, ev.establishment_id, ev.start_at, ev.end_at)
          is distinct from (v_title, v_description, p_establishment, p_start, p_end);
  end if;
  if v_participants is not null then
    delete from app_public.event_participants ep where ep.event_id = v_id and not ep.employee_id = any (v_participants);
    insert into app_public.event_participants (event_id, employee_id)
    select v_id, x.id from unnest(v_participants) x(id)
    on conflict do nothing;
  end if;
  return v_id;
end;
$$;

-- PUT and PATCH of an event (p_partial: only the keys sent change, p_sent; a key sent as null
-- clears it): the values event_write checks, the kept ones for the keys not sent.
drop function if exists app_hidden.event_save(int, jsonb, boolean);
create or replace function app_hidden.event_save(p_id int, p_partial boolean, p_sent text[], p_title text,
                                                 p_description text, p_establishment int, p_start_at timestamptz,
                                                 p_end_at timestamptz, p_participants int[]) returns int
language plpgsql volatile as $$
declare
  v_old app_public.events := app_hidden.event_lock_for_write(p_id);
  v_establishment_sent boolean := app_hidden.sent(p_sent, 'establishment', p_establishment is not null);
begin
  if app_hidden.id_list_refusal(p_participants) is not null then
    perform app_hidden.invalid('participants', app_hidden.id_list_refusal(p_participants));
  end if;
  return app_hidden.event_write(
    v_old,
    case when not p_partial or app_hidden.sent(p_sent, 'title', p_title is not null) then p_title else v_old.title end,
    case when app_hidden.sent(p_sent, 'description', p_description is not null) then p_description else v_old.description end,
    case when v_establishment_sent then p_establishment else v_old.establishment_id end,
    v_establishment_sent,
    case when app_hidden.sent(p_sent, 'start_at', p_start_at is not null) then p_start_at else v_old.start_at end,
    case when app_hidden.sent(p_sent, 'end_at', p_end_at is not null) then p_end_at else v_old.end_at end,
    p_participants);
end;
$$;

-- POST /api/events/: typed arguments, one per key of the body (absent: null). A GraphQL
-- caller may send what the route schema refuses: a participant list with a null or twice
-- the same id is refused as the route's body would be.
drop function if exists app_public.event_create(jsonb);
create or replace function app_public.event_create(p_title text, p_start_at timestamptz, p_end_at timestamptz,
                                                   p_description text default null, p_establishment int default null,
                                                   p_participants int[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_old app_public.events := app_hidden.event_lock_for_write(null);
  v_id int;
  v_warnings jsonb;
begin
  if app_hidden.id_list_refusal(p_participants) is not null then
    perform app_hidden.invalid('participants', app_hidden.id_list_refusal(p_participants));
  end if;
  v_id := app_hidden.event_write(v_old, p_title, p_description, p_establishment, p_establishment is not null,
                                 p_start_at, p_end_at, p_participants);
  v_warnings := app_private.event_conflicts_alert(v_id, '{}');
  return app_public.event_get(v_id) || jsonb_build_object('warnings', v_warnings);
end;
$$;
comment on function app_public.event_create(text, timestamptz, timestamptz, text, integer, integer[]) is
'SPEC Events rule 4, POST /api/events/: a holder of events.change_event creates an event whose
participants are itself or employees of its perimeter (else 404); an overlapping absence of a
participant answers in warnings and alerts its author and deciders in the same transaction.';

-- The absence conflicts the event has before a PUT or PATCH (only those it creates are alerted).
create or replace function app_hidden.event_known_conflicts(p_id int) returns int[]
language sql stable as $$
  select array(select c.absence_id from app_private.event_absence_conflicts(p_id) c
               where p_id in (select app_hidden.readable_event_ids()));
$$;

-- PATCH /api/events/<id>/: only the keys sent (p_sent).
drop function if exists app_public.event_update(int, jsonb);
create or replace function app_public.event_update(p_id int, p_title text default null, p_start_at timestamptz default null,
                                                   p_end_at timestamptz default null, p_description text default null,
                                                   p_establishment int default null, p_participants int[] default null,
                                                   p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_known int[] := app_hidden.event_known_conflicts(p_id);
  v_warnings jsonb;
begin
  perform app_hidden.event_save(p_id, true, p_sent, p_title, p_description, p_establishment, p_start_at, p_end_at, p_participants);
  v_warnings := app_private.event_conflicts_alert(p_id, v_known);
  return app_public.event_get(p_id) || jsonb_build_object('warnings', v_warnings);
end;
$$;
comment on function app_public.event_update(integer, text, timestamptz, timestamptz, text, integer, integer[], text[]) is
'SPEC Events rule 4, PATCH /api/events/<id>/: a holder of events.change_event changes the keys sent
(p_sent) of an event it created or of an establishment of its perimeter (else 403); only the absence
conflicts the update creates are alerted.';

-- PUT /api/events/<id>/: title, start_at and end_at required.
drop function if exists app_public.event_replace(int, jsonb);
create or replace function app_public.event_replace(p_id int, p_title text default null, p_start_at timestamptz default null,
                                                    p_end_at timestamptz default null, p_description text default null,
                                                    p_establishment int default null, p_participants int[] default null,
                                                    p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_known int[] := app_hidden.event_known_conflicts(p_id);
  v_warnings jsonb;
begin
  perform app_hidden.event_save(p_id, false, p_sent, p_title, p_description, p_establishment, p_start_at, p_end_at, p_participants);
  v_warnings := app_private.event_conflicts_alert(p_id, v_known);
  return app_public.event_get(p_id) || jsonb_build_object('warnings', v_warnings);
end;
$$;
comment on function app_public.event_replace(integer, text, timestamptz, timestamptz, text, integer, integer[], text[]) is
'SPEC Events rule 4, PUT /api/events/<id>/: as PATCH, with title, start_at and end_at required.';

-- DELETE /api/events/<id>/
create or replace function app_public.event_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.events ev where ev.id = p_id) then
    perform app_hidden.not_found('Événement introuvable.');
  end if;
  if not app_hidden.current_account_has('events.change_event') then
    perform app_hidden.forbidden('Vous n’avez pas le droit de supprimer des événements.', 'WF530');
  end if;
  if not p_id in (select app_hidden.writable_event_ids()) then
    perform app_hidden.forbidden('Vous ne supprimez que les événements que vous avez créés ou ceux d’un établissement de votre périmètre.', 'WF531');
  end if;
  delete from app_public.events ev where ev.id = p_id;
  return null;
end;
$$;
comment on function app_public.event_delete(integer) is
'SPEC Events, DELETE /api/events/<id>/: a holder of events.change_event deletes an event it created or of
an establishment of its perimeter (else 403; 404 when not read).';
--! EndIncluded events/api.sql
--! Included on_call/api.sql
-- /api/on-call-periods/: Admin, RH, DA and managers read and write the periods of their
-- perimeter; Service Paie reads only; Salarié and Intérimaire have no access (403).
-- A period touching the perimeter is readable; it is written only when all its
-- establishments lie in the writer's perimeter (otherwise 403).

create or replace function app_hidden.on_call_periods_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  with establishments as (
    select ope.period_id, jsonb_agg(ope.establishment_id order by ope.establishment_id) as ids,
           jsonb_agg(e.name order by ope.establishment_id) as names
    from app_public.on_call_period_establishments ope
    join app_public.establishments e on e.id = ope.establishment_id
    where ope.period_id = any (p_ids)
    group by ope.period_id
  ),
  holders as (
    select * from app_hidden.account_names(array(select op.account_id from app_public.on_call_periods op
                                                 where op.id = any (p_ids)))
  )
  select op.id,
         jsonb_build_object('id', op.id, 'account', op.account_id, 'account_name', h.name,
                            'start_at', op.start_at, 'end_at', op.end_at,
                            'establishments', coalesce(est.ids, '[]'::jsonb),
                            'establishment_names', coalesce(est.names, '[]'::jsonb),
                            'comment', op.comment,
                            'is_current', op.start_at <= app_hidden.now() and app_hidden.now() < op.end_at,
                            'created_at', op.created_at, 'updated_at', op.updated_at)
  from app_public.on_call_periods op
  left join establishments est on est.period_id = op.id
  left join holders h on h.id = op.account_id
  where op.id = any (p_ids);
$$;

create or replace function app_hidden.require_on_call_access(p_write boolean) returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('on_call.view_on_call_period')
     and not app_hidden.current_account_has('on_call.change_on_call_period') then
    perform app_hidden.forbidden('Vous n’avez pas accès aux astreintes.', 'WF540');
  end if;
  if p_write and not app_hidden.current_account_has('on_call.change_on_call_period') then
    perform app_hidden.forbidden('Vous consultez les astreintes sans pouvoir les modifier.', 'WF540');
  end if;
end;
$$;

-- Periods shown by the screens: those with an establishment in the caller's perimeter, and
-- the caller's own periods.
create or replace function app_hidden.on_call_screen_ids() returns setof int
language sql stable as $$
  select app_hidden.on_call_period_ids_in_perimeter('on_call.view_on_call_period')
  union
  select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period')
  union
  select op.id from app_public.on_call_periods op where op.account_id = app_hidden.current_account_id();
$$;

-- GET /api/on-call-periods/?from=&to=&account=&establishment=
create or replace function app_public.on_call_periods_list(p_from date default null, p_to date default null,
                                                p_account int default null, p_establishment int default null,
                                                p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable as $$
begin
  perform app_hidden.require_on_call_access(false);
  return (
    with filtered as (
      select op.id, op.start_at from app_public.on_call_periods op
      where op.id in (select app_hidden.on_call_screen_ids())
        and (p_from is null or op.end_at > (p_from::timestamp at time zone app_hidden.business_timezone()))
        and (p_to is null or op.start_at < ((p_to + 1)::timestamp at time zone app_hidden.business_timezone()))
        and (p_account is null or op.account_id = p_account)
        and (p_establishment is null or exists (select 1 from app_public.on_call_period_establishments ope
                                                where ope.period_id = op.id and ope.establishment_id = p_establishment))
    ),
    page as (
      select f.id, row_number() over (order by f.start_at, f.id) as ord
      from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
    )
    select jsonb_build_object(
      'count', (select count(*) from filtered),
      'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                           from page p join app_hidden.on_call_periods_json(array(select pg.id from page pg)) j on j.id = p.id),
                          '[]'::jsonb)));
end;
$$;
comment on function app_public.on_call_periods_list(date, date, integer, integer, integer, integer) is
'SPEC Permissions rule 9, GET /api/on-call-periods/: one page of the on-call periods with an
establishment in the caller''s perimeter, and its own, by start; filters by window, account and
establishment. Salarié and Intérimaire get 403.';

-- GET /api/on-call-periods/<id>/
create or replace function app_public.on_call_period_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.require_on_call_access(false);
  if p_id in (select app_hidden.on_call_screen_ids()) then
    select j.doc into v_doc from app_hidden.on_call_periods_json(array[p_id]) j;
  end if;
  if v_doc is null then
    perform app_hidden.not_found('Astreinte introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.on_call_period_get(integer) is
'SPEC Permissions rule 9, GET /api/on-call-periods/<id>/: one on-call period the caller''s screens show
(else 404), with is_current; Salarié and Intérimaire get 403.';

-- Can this account be on call at that time: does it hold a manager role whose perimeter the
-- period extends? ('unknown', 'inactive', 'no_role' or 'ok')
create or replace function app_private.on_call_eligibility(p_account int, p_at timestamptz) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case when a.id is null then 'unknown'
              when not a.is_active then 'inactive'
              when not exists (select 1 from app_public.role_attributions ra
                               join app_public.role_permissions rp on rp.role_id = ra.role_id
                               where ra.account_id = a.id and rp.permission_code = 'absences.view_absence_queue'
                                 and app_hidden.date_in(app_hidden.business_date(p_at), ra.start_date, ra.end_date))
                then 'no_role'
              else 'ok' end
  from (select 1) x left join app_public.accounts a on a.id = p_account;
$$;

-- Another period of the same account overlapping [start, end), whatever the caller reads.
create or replace function app_private.on_call_overlap(p_account int, p_start timestamptz, p_end timestamptz, p_except int)
returns table (id int, start_at timestamptz, end_at timestamptz)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select op.id, op.start_at, op.end_at from app_public.on_call_periods op
  where op.account_id = p_account and op.id is distinct from p_except
    and tstzrange(op.start_at, op.end_at) && tstzrange(p_start, p_end)
  order by op.start_at limit 1;
$$;

-- Creation and update of a period (PUT and creation: every key but the comment required;
-- PATCH: only the keys sent, p_sent; a null list of establishments leaves them as they are).
drop function if exists app_hidden.on_call_period_save(int, jsonb, boolean);
create or replace function app_hidden.on_call_period_save(p_id int, p_partial boolean, p_sent text[], p_account int,
                                                          p_start_at timestamptz, p_end_at timestamptz,
                                                          p_establishments int[], p_comment text) returns int
language plpgsql volatile as $$
declare
  v_old app_public.on_call_periods;
  v_scope int[] := app_hidden.perimeter_establishment_ids('on_call.change_on_call_period');
  v_errors jsonb := '{}';
  v_account int;
  v_start timestamptz;
  v_end timestamptz;
  v_comment text;
  v_establishments int[] := p_establishments;
  v_old_establishments int[] := '{}';
  v_outside text;
  v_eligibility text;
  v_overlap record;
  v_id int := p_id;
begin
  perform app_hidden.require_on_call_access(p_id is null);
  if p_id is not null then
    if not p_id in (select app_hidden.on_call_screen_ids()) then
      perform app_hidden.not_found('Astreinte introuvable.');
    end if;
    perform app_hidden.require_on_call_access(true);
    if not p_id in (select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period', true)) then
      perform app_hidden.forbidden('Cette astreinte couvre aussi des établissements hors de votre périmètre : '
                                   'vous ne pouvez pas la modifier.', 'WF541');
    end if;
    select * into v_old from app_public.on_call_periods op where op.id = p_id for update;
    v_old_establishments := array(select ope.establishment_id from app_public.on_call_period_establishments ope
                                  where ope.period_id = p_id);
  end if;

  if app_hidden.id_list_refusal(v_establishments) is not null then
    perform app_hidden.invalid('establishments', app_hidden.id_list_refusal(v_establishments));
  end if;

  v_account := case when app_hidden.sent(p_sent, 'account', p_account is not null) then p_account else v_old.account_id end;
  v_start := case when app_hidden.sent(p_sent, 'start_at', p_start_at is not null) then p_start_at else v_old.start_at end;
  v_end := case when app_hidden.sent(p_sent, 'end_at', p_end_at is not null) then p_end_at else v_old.end_at end;
  if v_account is null then
    v_errors := app_hidden.add_error(v_errors, 'account', 'Le compte d’astreinte est obligatoire.');
  end if;
  if v_start is null then
    v_errors := app_hidden.add_error(v_errors, 'start_at', 'Le début est obligatoire.');
  end if;
  if v_end is null then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin est obligatoire.');
  elsif v_end <= v_start then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin doit suivre le début.');
  end if;
  if v_account is not null and v_start is not null
     and (v_account is distinct from v_old.account_id or v_start is distinct from v_old.start_at) then
    v_eligibility := app_private.on_call_eligibility(v_account, v_start);
    if v_eligibility = 'unknown' then
      v_errors := app_hidden.add_error(v_errors, 'account', format('Compte n° %s introuvable.', v_account));
    elsif v_eligibility = 'inactive' then
      v_errors := app_hidden.add_error(v_errors, 'account', 'Ce compte est fermé.');
    elsif v_eligibility = 'no_role' then
      v_errors := app_hidden.add_error(v_errors, 'account',
        'Ce compte ne détient aucun rôle d’encadrement à cette date : une astreinte étend le périmètre d’un rôle existant.');
    end if;
  end if;
  if v_account is not null and v_end > v_start then
    select * into v_overlap from app_private.on_call_overlap(v_account, v_start, v_end, p_id);
    if v_overlap.id is not null then
      v_errors := app_hidden.add_error(v_errors, 'start_at',
        format('Ce compte est déjà d’astreinte sur cette période (astreinte n° %s, du %s au %s).', v_overlap.id,
               to_char(v_overlap.start_at at time zone app_hidden.business_timezone(), 'DD/MM/YYYY HH24:MI'),
               to_char(v_overlap.end_at at time zone app_hidden.business_timezone(), 'DD/MM/YYYY HH24:MI')));
    end if;
  end if;

  v_comment := case when app_hidden.sent(p_sent, 'comment', p_comment is not null) then app_hidden.trimmed(p_comment)
                    else v_old.comment end;
  if char_length(v_comment) > app_hidden.on_call_comment_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'comment', app_hidden.max_length_message(app_hidden.on_call_comment_max_length()));
  end if;

  if v_establishments is null and (p_id is null or not p_partial) then
    v_errors := app_hidden.add_error(v_errors, 'establishments', 'Choisissez au moins un établissement.');
  elsif v_establishments is not null then
    if cardinality(v_establishments) = 0 then
      v_errors := app_hidden.add_error(v_errors, 'establishments', 'Choisissez au moins un établissement.');
    elsif exists (select 1 from unnest(v_establishments) x(id)
                  where not exists (select 1 from app_public.establishments e where e.id = x.id)) then
      v_errors := app_hidden.add_error(v_errors, 'establishments',
        format('Établissement introuvable : %s.', (select string_agg(x.id::text, ', ') from unnest(v_establishments) x(id)
                                                   where not exists (select 1 from app_public.establishments e where e.id = x.id))));
    elsif v_scope is not null then
      select string_agg(e.name, ', ' order by e.name) into v_outside
      from unnest(v_establishments) x(id) join app_public.establishments e on e.id = x.id
      where not x.id = any (v_scope);
      if v_outside is not null then
        v_errors := app_hidden.add_error(v_errors, 'establishments', format('Hors de votre périmètre : %s.', v_outside));
      end if;
    end if;
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV540') where v_errors <> '{}'::jsonb;

  begin
    if p_id is null then
      insert into app_public.on_call_periods (account_id, start_at, end_at, comment)
      values (v_account, v_start, v_end, v_comment);
      -- Not RETURNING: the new row is not yet in the snapshot the read policy consults.
      v_id := currval(pg_get_serial_sequence('app_public.on_call_periods', 'id'));
    else
      update app_public.on_call_periods op
      set account_id = v_account, start_at = v_start, end_at = v_end, comment = v_comment
      where op.id = p_id and (op.account_id, op.start_at, op.end_at, op.comment)
                             is distinct from (v_account, v_start, v_end, v_comment);
    end if;
  exception when exclusion_violation then
    -- A concurrent write took the interval between the check above and this write.
    perform app_hidden.invalid('start_at', 'Ce compte est déjà d’astreinte sur cette période.', 'WV540');
  end;
  if v_establishments is not null then
    delete from app_public.on_call_period_establishments ope
    where ope.period_id = v_id and not ope.establishment_id = any (v_establishments);
    insert into app_public.on_call_period_establishments (period_id, establishment_id)
    select v_id, x.id from unnest(v_establishments) x(id)
    on conflict do nothing;
  end if;
  return v_id;
end;
$$;

-- POST /api/on-call-periods/
drop function if exists app_public.on_call_period_create(jsonb);
create or replace function app_public.on_call_period_create(p_account int, p_start_at timestamptz, p_end_at timestamptz,
                                                            p_establishments int[], p_comment text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.on_call_period_save(null, false, null, p_account, p_start_at, p_end_at, p_establishments, p_comment);
  return app_public.on_call_period_get(v_id);
end;
$$;
comment on function app_public.on_call_period_create(integer, timestamptz, timestamptz, integer[], text) is
'SPEC Permissions rule 9, POST /api/on-call-periods/: a writer of on-call periods (not Service Paie)
creates one for an active account holding a manager role, all its establishments in the writer''s
perimeter (else 403), not overlapping another period of that account; it extends that role''s perimeter
from start (inclusive) to end (exclusive).';

-- PATCH /api/on-call-periods/<id>/: only the keys sent (p_sent).
drop function if exists app_public.on_call_period_update(int, jsonb);
create or replace function app_public.on_call_period_update(p_id int, p_account int default null, p_start_at timestamptz default null,
                                                            p_end_at timestamptz default null, p_establishments int[] default null,
                                                            p_comment text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.on_call_period_save(p_id, true, p_sent, p_account, p_start_at, p_end_at, p_establishments, p_comment);
  return app_public.on_call_period_get(v_id);
end;
$$;
comment on function app_public.on_call_period_update(integer, integer, timestamptz, timestamptz, integer[], text, text[]) is
'SPEC Permissions rule 9, PATCH /api/on-call-periods/<id>/: changes the keys sent (p_sent) of a period
whose establishments all lie in the writer''s perimeter (else 403), under the creation rules.';

-- PUT /api/on-call-periods/<id>/: account, start_at, end_at and establishments required.
drop function if exists app_public.on_call_period_replace(int, jsonb);
create or replace function app_public.on_call_period_replace(p_id int, p_account int default null, p_start_at timestamptz default null,
                                                             p_end_at timestamptz default null, p_establishments int[] default null,
                                                             p_comment text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.on_call_period_save(p_id, false, p_sent, p_account, p_start_at, p_end_at, p_establishments, p_comment);
  return app_public.on_call_period_get(v_id);
end;
$$;
comment on function app_public.on_call_period_replace(integer, integer, timestamptz, timestamptz, integer[], text, text[]) is
'SPEC Permissions rule 9, PUT /api/on-call-periods/<id>/: as PATCH, with account, start_at, end_at and
establishments required.';

-- DELETE /api/on-call-periods/<id>/
create or replace function app_public.on_call_period_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_on_call_access(false);
  if not p_id in (select app_hidden.on_call_screen_ids()) then
    perform app_hidden.not_found('Astreinte introuvable.');
  end if;
  perform app_hidden.require_on_call_access(true);
  if not p_id in (select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period', true)) then
    perform app_hidden.forbidden('Cette astreinte couvre aussi des établissements hors de votre périmètre : '
                                 'vous ne pouvez pas la supprimer.', 'WF541');
  end if;
  delete from app_public.on_call_periods op where op.id = p_id;
  return null;
end;
$$;
comment on function app_public.on_call_period_delete(integer) is
'SPEC Permissions rule 9, DELETE /api/on-call-periods/<id>/: deletes a period whose establishments all
lie in the writer''s perimeter (else 403).';
--! EndIncluded on_call/api.sql
--! Included delegations/api.sql
-- Dated delegations of decisions (issue 30): rules, decisions by delegation, routes.
--
-- | who                                    | creates                        | ends                 | reads         |
-- |----------------------------------------|--------------------------------|----------------------|---------------|
-- | a decider (decide_absence or           | for themself, own rights only  | their own            | given, received|
-- |   decide_shift_change held itself)     |                                |                      |               |
-- | RH n1 / RH n2 / Admin (own role), or a | for an absent decider of their | those of deciders of | those of their|
-- |                                        | perimeter (granted absence over| their perimeter      | perimeter     |
-- |                                        | the interval)                  |                      |               |
-- |   superuser                            |                                |                      |               |
-- | the delegate                           | never re-delegates (no chains) | no                   | received      |
--
-- The delegate's effective perimeter is extended in sql/perimeter.sql (account_permission_codes,
-- permission_scopes); the decisions by delegation are checked and recorded here
-- (on_behalf_of, audit « X, par délégation de Y », the requester's notification).

alter table app_public.absences add column if not exists on_behalf_of int references app_public.accounts on delete set null;
alter table app_public.absences add column if not exists cancellation_on_behalf_of int
  references app_public.accounts on delete set null;
alter table app_public.shift_change_requests add column if not exists on_behalf_of int
  references app_public.accounts on delete set null;

insert into app_private.audit_models (model, label) values
  ('delegation', 'Délégation de décision'),
  ('delegation_establishment', 'Établissement d’une délégation')
on conflict do nothing;

-- The perimeters kept for a transaction are recomputed after a write to the delegations.
do $$
declare
  t text;
begin
  foreach t in array array['delegations', 'delegation_establishments'] loop
    execute format('create or replace trigger _050_perimeter_changed after insert or update or delete or truncate on app_public.%I
                    for each statement execute function app_hidden.tg__perimeter_changed()', t);
  end loop;
end;
$$;

-- Does the account manage the delegations of others: an active RH n1, RH n2 or Admin role of
-- its own today (the Admin holds every right of RH), or an active superuser? Never NULL.
create or replace function app_hidden.account_is_hr(p_account int) returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce(exists (select 1 from app_public.accounts a where a.id = p_account and a.is_active and a.is_superuser)
                  or exists (select 1 from app_public.role_attributions ra
                             join app_public.roles r on r.id = ra.role_id
                             join app_public.accounts a on a.id = ra.account_id and a.is_active
                             where ra.account_id = p_account and r.name in ('Admin', 'RH n1', 'RH n2')
                               and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date)), false);
end;
$$;

-- The back-office's « Délégations » page is offered to the signed-in account when it is HR (never null).
create or replace function app_hidden.current_account_is_hr() returns boolean
language sql stable as $$
  select coalesce(app_hidden.account_is_hr(app_hidden.current_account_id()), false);
$$;


-- The delegators on whose behalf the account may use the permission on the employee at that
-- time: delegations in force handing the permission, whose delegator (active) covers the
-- employee itself over the delegation's establishments, the delegator's own requests
-- excluded (nobody decides for the person who delegated to them). Ordered by delegator id.
create or replace function app_hidden.delegators_for(p_account int, p_permission text, p_employee int, p_at timestamptz)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_day date := app_hidden.business_date(p_at);
begin
  if p_employee is null or p_account is null then
    return;
  end if;
  return query
  select distinct d.delegator_account_id
  from app_public.delegations d
  join app_public.accounts da on da.id = d.delegator_account_id and da.is_active
  where d.delegate_account_id = p_account
    and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, p_at)
    and app_hidden.delegation_grants(d.kinds, p_permission)
    and da.employee_id is distinct from p_employee
    and app_hidden.may_own(d.delegator_account_id, p_permission, p_employee, p_at)
    and (d.all_establishments
         or exists (select 1 from app_public.delegation_establishments de
                    where de.delegation_id = d.id
                      and de.establishment_id in (select app_hidden.employee_establishments(p_employee, v_day))))
  order by 1;
end;
$$;

-- A decision by the acting account on the employee: null when its own rights cover it, else
-- the delegator it decides for (the first); refuses (403) a decision that only a delegation
-- from the employee themself would allow. Sets app.on_behalf_of for the transaction (the audit
-- lines and the requester's notification name both people).
create or replace function app_hidden.delegation_decision_check(p_permission text, p_employee int) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_at timestamptz := app_hidden.now();
  v_delegator int;
begin
  if app_hidden.may_own(v_account, p_permission, p_employee, v_at) then
    return null;
  end if;
  select x into v_delegator from app_hidden.delegators_for(v_account, p_permission, p_employee, v_at) x limit 1;
  if v_delegator is null then
    -- No delegation covers it: the caller's other checks decided (the back-office, a
    -- superuser); only a delegation from the employee themself is refused here.
    if not exists (select 1 from app_public.delegations d
                   join app_public.accounts da on da.id = d.delegator_account_id
                   where d.delegate_account_id = v_account and da.employee_id = p_employee
                     and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, v_at)
                     and app_hidden.delegation_grants(d.kinds, p_permission)) then
      return null;
    end if;
    perform app_hidden.forbidden(
      'Vous décidez ici par délégation : une délégation ne permet pas de décider des demandes de la personne qui l’a donnée.',
      'WF803');
  end if;
  perform set_config('app.on_behalf_of', v_delegator::text, true);
  return v_delegator;
end;
$$;

create or replace function app_hidden.on_behalf_of_id() returns int
language sql stable parallel safe as $$
  select nullif(current_setting('app.on_behalf_of', true), '')::int;
$$;

-- Decisions record both names: decided_by (the delegate) and on_behalf_of (the delegator).
create or replace function app_private.tg_absences__on_behalf_of() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.decided_by is distinct from old.decided_by and new.decided_by is not null
     and new.decided_by = app_hidden.current_account_id() then
    new.on_behalf_of := app_hidden.delegation_decision_check('absences.decide_absence', new.employee_id);
  end if;
  if new.cancellation_decided_by is not null
     and new.cancellation_decided_at is distinct from old.cancellation_decided_at
     and new.cancellation_decided_by = app_hidden.current_account_id() then
    new.cancellation_on_behalf_of := app_hidden.delegation_decision_check('absences.decide_absence', new.employee_id);
  end if;
  return new;
end;
$$;
create or replace trigger _200_on_behalf_of before update on app_public.absences
  for each row execute function app_private.tg_absences__on_behalf_of();

create or replace function app_private.tg_shift_change_requests__on_behalf_of() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.decided_by is distinct from old.decided_by and new.decided_by is not null
     and new.decided_by = app_hidden.current_account_id() then
    new.on_behalf_of := app_hidden.delegation_decision_check('planning.decide_shift_change', new.employee_id);
  end if;
  return new;
end;
$$;
create or replace trigger _200_on_behalf_of before update on app_public.shift_change_requests
  for each row execute function app_private.tg_shift_change_requests__on_behalf_of();

-- The queue's mark (issue 30, « par délégation de X »): does the acting account hold a
-- delegation in force now (one check per list, app_hidden.current_account_has_delegation), and
-- the delegator through whom it sees this employee's requests: null when its own queue shows
-- them (or when it holds no delegation).
create or replace function app_hidden.current_account_has_delegation() returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce(exists (select 1 from app_public.delegations d
                          where d.delegate_account_id = app_hidden.current_account_id()
                            and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, app_hidden.now())), false);
end;
$$;

create or replace function app_hidden.delegation_mark(p_employee int) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_at timestamptz := app_hidden.now();
begin
  if p_employee is null or v_account is null
     or app_hidden.may_own(v_account, 'absences.view_absence_queue', p_employee, v_at) then
    return null;
  end if;
  return (select n.name
          from app_public.delegations d
          join app_public.accounts da on da.id = d.delegator_account_id and da.is_active
          join app_hidden.account_names(array[d.delegator_account_id]) n on true
          where d.delegate_account_id = v_account
            and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, v_at)
            and app_hidden.may_own(d.delegator_account_id, 'absences.view_absence_queue', p_employee, v_at)
            and (d.all_establishments
                 or exists (select 1 from app_public.delegation_establishments de
                            where de.delegation_id = d.id
                              and de.establishment_id in (select app_hidden.employee_establishments(p_employee,
                                                                                                   app_hidden.business_date(v_at)))))
          order by d.delegator_account_id
          limit 1);
end;
$$;

-- « X, par délégation de Y »: the display name of an account deciding for another.
create or replace function app_hidden.delegated_name(p_account int, p_on_behalf_of int) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select concat((select n.name from app_hidden.account_names(array[p_account]) n),
                ', par délégation de ', (select n.name from app_hidden.account_names(array[p_on_behalf_of]) n));
$$;

-- The requester's notification of a decision by delegation names both people.
create or replace function app_private.tg_notifications__on_behalf_of() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_for int := app_hidden.on_behalf_of_id();
begin
  if v_for is not null and new.model in ('absence', 'shift_change_request')
     and app_hidden.current_account_id() is not null then
    new.body := new.body || ' Décision de ' || app_hidden.delegated_name(app_hidden.current_account_id(), v_for) || '.';
  end if;
  return new;
end;
$$;
create or replace trigger _200_on_behalf_of before insert on app_public.notifications
  for each row execute function app_private.tg_notifications__on_behalf_of();

-- ---------------------------------------------------------------------------------------
-- Reading: the delegator, the delegate, the author, and RH over the delegator's perimeter.
create or replace function app_hidden.readable_delegation_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
begin
  if v_account is null then
    return;
  end if;
  return query
  select d.id from app_public.delegations d
  where d.delegator_account_id = v_account or d.delegate_account_id = v_account or d.created_by = v_account
  union
  select d.id from app_public.delegations d
  join app_public.accounts a on a.id = d.delegator_account_id
  where app_hidden.account_is_hr(v_account)
    and app_hidden.may(v_account, 'employee.change_employee_record', a.employee_id);
end;
$$;

alter table app_public.delegations enable row level security;
alter table app_public.delegation_establishments enable row level security;
drop policy if exists select_readable on app_public.delegations;
create policy select_readable on app_public.delegations for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_id()) in (delegator_account_id, delegate_account_id, created_by)
         or id in (select app_hidden.readable_delegation_ids()));
drop policy if exists select_readable on app_public.delegation_establishments;
create policy select_readable on app_public.delegation_establishments for select to wfm_visitor, wfm_api
  using (delegation_id in (select app_hidden.readable_delegation_ids()));
-- Writes: app_public.delegation_create and delegation_end (which check every rule) run as
-- wfm_api; the policies bound them to the author's own delegations or, for RH, those of the
-- deciders of their perimeter.
drop policy if exists insert_author on app_public.delegations;
create policy insert_author on app_public.delegations for insert to wfm_api
  with check (created_by = (select app_hidden.current_account_id())
              and (delegator_account_id = (select app_hidden.current_account_id())
                   or (select app_hidden.account_is_hr(app_hidden.current_account_id()))));
drop policy if exists update_readable on app_public.delegations;
create policy update_readable on app_public.delegations for update to wfm_api
  using (id in (select app_hidden.readable_delegation_ids()))
  with check (id in (select app_hidden.readable_delegation_ids()));
drop policy if exists insert_author on app_public.delegation_establishments;
create policy insert_author on app_public.delegation_establishments for insert to wfm_api
  with check (exists (select 1 from app_public.delegations d
                      where d.id = delegation_id and d.created_by = (select app_hidden.current_account_id())));

create or replace trigger _500_audit after insert or update on app_public.delegations
  for each row execute function app_private.tg__audit('delegation');
create or replace trigger _500_audit_delete before delete on app_public.delegations
  for each row execute function app_private.tg__audit('delegation');
create or replace trigger _500_audit after insert or update on app_public.delegation_establishments
  for each row execute function app_private.tg__audit_child('delegation_establishment', 'delegation_id');
create or replace trigger _500_audit_delete before delete on app_public.delegation_establishments
  for each row execute function app_private.tg__audit_child('delegation_establishment', 'delegation_id');

create or replace function app_hidden.delegations_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with est as (
    select de.delegation_id, jsonb_agg(de.establishment_id order by de.establishment_id) as ids,
           jsonb_agg(e.name order by de.establishment_id) as names
    from app_public.delegation_establishments de
    join app_public.establishments e on e.id = de.establishment_id
    where de.delegation_id = any (p_ids)
    group by de.delegation_id
  ),
  names as (
    select * from app_hidden.account_names(array(
      select x from app_public.delegations d,
             unnest(array[d.delegator_account_id, d.delegate_account_id, d.created_by, d.ended_by]) x
      where d.id = any (p_ids) and x is not null))
  )
  select d.id,
         jsonb_build_object('id', d.id,
                            'delegator', d.delegator_account_id, 'delegator_name', n1.name,
                            'delegate', d.delegate_account_id, 'delegate_name', n2.name,
                            'start_date', d.start_date, 'end_date', d.end_date, 'kinds', d.kinds,
                            'all_establishments', d.all_establishments,
                            'establishments', coalesce(est.ids, '[]'::jsonb),
                            'establishment_names', coalesce(est.names, '[]'::jsonb),
                            'comment', d.comment,
                            'created_by', d.created_by, 'created_by_name', n3.name, 'created_at', d.created_at,
                            'ended_at', d.ended_at, 'ended_by', d.ended_by, 'ended_by_name', n4.name,
                            'is_active', app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, app_hidden.now()),
                            'is_over', d.ended_at is not null or d.end_date < app_hidden.today())
  from app_public.delegations d
  left join est on est.delegation_id = d.id
  left join names n1 on n1.id = d.delegator_account_id
  left join names n2 on n2.id = d.delegate_account_id
  left join names n3 on n3.id = d.created_by
  left join names n4 on n4.id = d.ended_by
  where d.id = any (p_ids);
$$;

-- The decision permissions the delegator holds itself, among those of the kinds.
create or replace function app_hidden.kinds_permissions(p_kinds text) returns text[]
language sql immutable parallel safe as $$
  select case p_kinds when 'absences' then array['absences.decide_absence']
                      when 'shift_changes' then array['planning.decide_shift_change']
                      when 'both' then array['absences.decide_absence', 'planning.decide_shift_change']
                      else '{}'::text[] end;
$$;

-- POST /api/delegations/ {delegate, start_date, end_date, kinds, establishments?, delegator?, comment?}
create or replace function app_public.delegation_create(p_delegate int, p_start_date date, p_end_date date,
                                                        p_kinds text, p_establishments int[] default null,
                                                        p_delegator int default null, p_comment text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_delegator int := coalesce(p_delegator, app_hidden.current_account_id());
  v_today date := app_hidden.today();
  v_own text[];
  v_errors jsonb := '{}';
  v_delegator_employee int;
  v_perm text;
  v_scope_whole boolean;
  v_scope_ids int[];
  v_outside text;
  v_id int;
  v_comment text := nullif(btrim(p_comment), '');
begin
  if v_account is null then
    perform app_hidden.forbidden('Connectez-vous pour déléguer vos décisions.', 'WF801');
  end if;
  v_own := app_hidden.account_own_permission_codes(v_delegator);
  if v_delegator = v_account then
    if not (app_hidden.permission_in(v_own, 'absences.decide_absence')
            or app_hidden.permission_in(v_own, 'planning.decide_shift_change')) then
      if app_hidden.current_account_has('absences.decide_absence')
         or app_hidden.current_account_has('planning.decide_shift_change') then
        perform app_hidden.forbidden('Une délégation reçue ne se délègue pas : seul le titulaire des décisions peut déléguer.', 'WF802');
      end if;
      perform app_hidden.forbidden('Seul un compte qui décide des absences ou des modifications de journée délègue ses décisions.', 'WF801');
    end if;
  else
    if not app_hidden.account_is_hr(v_account) then
      perform app_hidden.forbidden('Seuls RH n1, RH n2 et Admin créent une délégation pour un autre décideur.', 'WF801');
    end if;
    select a.employee_id into v_delegator_employee from app_public.accounts a where a.id = v_delegator and a.is_active;
    if not found then
      perform app_hidden.invalid('delegator', 'Décideur introuvable ou compte fermé.', 'WV801');
    end if;
    if not app_hidden.may(v_account, 'employee.change_employee_record', v_delegator_employee) then
      perform app_hidden.invalid('delegator', 'Ce décideur est hors de votre périmètre.', 'WV801');
    end if;
    if not (app_hidden.permission_in(v_own, 'absences.decide_absence')
            or app_hidden.permission_in(v_own, 'planning.decide_shift_change')) then
      perform app_hidden.invalid('delegator', 'Ce compte ne décide ni des absences ni des modifications de journée.', 'WV801');
    end if;
    if p_start_date is not null and p_end_date is not null
       and not exists (select 1 from app_public.absences ab
                       where ab.employee_id = v_delegator_employee
                         and ab.status in ('validated', 'cancellation_requested')
                         and ab.date_start <= p_end_date and ab.date_end >= p_start_date) then
      perform app_hidden.invalid('delegator',
        'Ce décideur n’a pas d’absence accordée sur ces dates : c’est à lui de créer sa délégation.', 'WV801');
    end if;
  end if;

  if p_kinds is null or p_kinds not in ('absences', 'shift_changes', 'both') then
    v_errors := app_hidden.add_error(v_errors, 'kinds', 'Choisissez : absences, modifications de journée, ou les deux.');
  elsif not (app_hidden.permission_in(v_own, 'absences.decide_absence') or p_kinds = 'shift_changes')
        or not (app_hidden.permission_in(v_own, 'planning.decide_shift_change') or p_kinds = 'absences') then
    v_errors := app_hidden.add_error(v_errors, 'kinds', 'On ne délègue que les décisions que l’on prend soi-même.');
  end if;
  if p_start_date is null then
    v_errors := app_hidden.add_error(v_errors, 'start_date', 'Indiquez la date de début.');
  end if;
  if p_end_date is null then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'Indiquez la date de fin.');
  elsif p_start_date is not null and p_end_date < p_start_date then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'La date de fin précède la date de début.');
  elsif p_end_date < v_today then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'Une délégation ne se crée pas dans le passé.');
  elsif p_start_date is not null and p_end_date - p_start_date > 365 then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'Une délégation dure au plus un an.');
  end if;
  if p_delegate is null then
    v_errors := app_hidden.add_error(v_errors, 'delegate', 'Choisissez le délégataire.');
  elsif not exists (select 1 from app_public.accounts a where a.id = p_delegate and a.is_active) then
    v_errors := app_hidden.add_error(v_errors, 'delegate', 'Délégataire introuvable ou compte fermé.');
  elsif p_delegate = v_delegator then
    v_errors := app_hidden.add_error(v_errors, 'delegate', 'On ne se délègue pas ses propres décisions.');
  end if;
  if char_length(v_comment) > app_hidden.comment_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'comment', app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;
  -- Establishments: within the delegator's own scope of every decision delegated.
  if cardinality(p_establishments) > 0 and p_kinds in ('absences', 'shift_changes', 'both') then
    if exists (select 1 from unnest(p_establishments) x where x is null
               or not exists (select 1 from app_public.establishments e where e.id = x)) then
      v_errors := app_hidden.add_error(v_errors, 'establishments', 'Établissement introuvable.');
    else
      foreach v_perm in array app_hidden.kinds_permissions(p_kinds) loop
        select s.whole, s.establishment_ids into v_scope_whole, v_scope_ids
        from app_hidden.own_permission_scopes(array[v_delegator], v_perm, app_hidden.now()) s;
        if not coalesce(v_scope_whole, false) then
          select string_agg(e.name, ', ' order by e.name) into v_outside
          from app_public.establishments e
          where e.id = any (p_establishments) and not e.id = any (coalesce(v_scope_ids, '{}'));
          if v_outside is not null then
            v_errors := app_hidden.add_error(v_errors, 'establishments',
              format('Hors du périmètre de décision du délégant : %s.', v_outside));
            exit;
          end if;
        end if;
      end loop;
    end if;
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV802');
  end if;

  insert into app_public.delegations (delegator_account_id, delegate_account_id, start_date, end_date,
                                      all_establishments, kinds, comment, created_by)
  values (v_delegator, p_delegate, p_start_date, p_end_date, coalesce(cardinality(p_establishments), 0) = 0,
          p_kinds, v_comment, v_account)
  returning id into v_id;
  insert into app_public.delegation_establishments (delegation_id, establishment_id)
  select distinct v_id, x from unnest(coalesce(p_establishments, '{}')) x;
  return (select j.doc from app_hidden.delegations_json(array[v_id]) j);
end;
$$;
comment on function app_public.delegation_create(integer, date, date, text, integer[], integer, text) is
'Issue 30, POST /api/delegations/: a decider delegates its own decisions (absences, day changes or both)
to another active account over a date interval, for all or some establishments of its own perimeter;
RH n1 / RH n2 / Admin (or a superuser) create one for an absent decider of their perimeter (a granted absence over the interval).
A delegation received is never delegated again. Audited.';

-- POST /api/delegations/<id>/end/: ends a delegation now (the delegator, its author, or RH
-- over the delegator's perimeter).
create or replace function app_public.delegation_end(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  d app_public.delegations;
begin
  if p_id is null or p_id not in (select app_hidden.readable_delegation_ids()) then
    perform app_hidden.not_found('Délégation introuvable.', 'WN801');
  end if;
  select * into d from app_public.delegations x where x.id = p_id for update;
  if not (d.delegator_account_id = v_account or d.created_by is not distinct from v_account and v_account is not null
          or (app_hidden.account_is_hr(v_account)
              and app_hidden.may(v_account, 'employee.change_employee_record',
                                 (select a.employee_id from app_public.accounts a where a.id = d.delegator_account_id)))) then
    perform app_hidden.forbidden('Seuls le délégant, l’auteur de la délégation ou RH y mettent fin.', 'WF804');
  end if;
  if d.ended_at is not null or d.end_date < app_hidden.today() then
    perform app_hidden.invalid('status', 'Cette délégation est déjà terminée.', 'WV803');
  end if;
  update app_public.delegations x set ended_at = app_hidden.now(), ended_by = v_account, updated_at = app_hidden.now()
  where x.id = p_id;
  return (select j.doc from app_hidden.delegations_json(array[p_id]) j);
end;
$$;
comment on function app_public.delegation_end(integer) is
'Issue 30, POST /api/delegations/<id>/end/: ends a delegation at once (the delegator, its author, or RH over
the delegator''s perimeter); an ended or past delegation gives 400 under status. Audited.';

-- GET /api/delegations/?role=given|received&active=&account=&page=&page_size=
create or replace function app_public.delegations_list(p_role text default null, p_active boolean default null,
                                                       p_account int default null,
                                                       p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
begin
  if p_role is not null and p_role not in ('given', 'received') then
    perform app_hidden.invalid('role', 'Valeurs possibles : given, received.', 'WV804');
  end if;
  return (
    with filtered as (
      select d.id, d.start_date from app_public.delegations d
      where d.id in (select app_hidden.readable_delegation_ids())
        and (p_role is null or (p_role = 'given' and d.delegator_account_id = v_account)
             or (p_role = 'received' and d.delegate_account_id = v_account))
        and (p_active is null
             or p_active = app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, app_hidden.now()))
        and (p_account is null or p_account in (d.delegator_account_id, d.delegate_account_id))
    ),
    page as (
      select f.id, row_number() over (order by f.start_date desc, f.id desc) as ord
      from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
    )
    select jsonb_build_object(
      'count', (select count(*) from filtered),
      'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                           from page p join app_hidden.delegations_json(array(select pg.id from page pg)) j on j.id = p.id),
                          '[]'::jsonb)));
end;
$$;
comment on function app_public.delegations_list(text, boolean, integer, integer, integer) is
'Issue 30, GET /api/delegations/: one page of the delegations the caller reads (given, received, authored;
RH and Admin: those of the deciders of their perimeter), newest first; filters role (given / received), active,
account (delegator or delegate).';

-- The back-office page of one delegation (sql text of src/backoffice/resources/delegations.ts):
-- one the caller reads, else 404.
create or replace function app_public.delegation_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  if p_id is not null and p_id in (select app_hidden.readable_delegation_ids()) then
    select j.doc into v_doc from app_hidden.delegations_json(array[p_id]) j;
  end if;
  if v_doc is null then
    perform app_hidden.not_found('Délégation introuvable.', 'WN801');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.delegation_get(integer) is
'Issue 30, back-office: one delegation the caller reads (given, received, authored; RH and Admin: those of
the deciders of their perimeter), else 404.';
--! EndIncluded delegations/api.sql
--! Included payroll/api.sql
-- Payroll consultation (SPEC, Permissions rule 8): GET /api/payroll/options/ and
-- GET /api/payroll/?month=YYYY-MM&establishment=&search=&page=, with employee.view_payroll
-- (Admin, RH n1, RH n2, Service Paie) on its perimeter. Read only.
--
-- One line per contract active in the month (for the employees of the perimeter; with an
-- establishment, those attached to it: main, secondary workplace or team at the month's end):
--   * contract: type, dates, weekly hours, job title;
--   * period: the days of the month covered by the contract;
--   * planned_hours: the planned day (app_hidden.planned_slots: template or day
--     modification, net of unpaid breaks) summed over those days;
--   * absence_hours: per day, the planned minutes covered by absences, capped by the planned
--     minutes of the day: a whole day covers the whole planned day, a half-day half of it,
--     an hourly absence its hours; only validated absences (and those whose cancellation is
--     requested, still granted) count;
--   * worked_hours = planned_hours - absence_hours;
--   * absences: grouped by reason, each with its dates and quantity within the period (the
--     absence's counted quantity when it lies entirely in the period; otherwise the days of
--     the period counted on the establishment's base, Sundays and public holidays excluded,
--     a half-day counting half). Never comments, decision reasons or documents;
--   * counters: the balances of the employee's counters of that civil year, from the journal's
--     movements written before the end of the month; and, for each, the figures of « Mes compteurs »
--     (issue 27 point 5, app_private.counter_year_facts, the same function as GET /api/counters/,
--     computed on today's journal): how it acquires, still to come, carried over and until when,
--     what the year end will carry over or lose.

-- Counter balances of employees for a year, from the movements written before p_at.
create or replace function app_private.counter_balances_at(p_employees int[], p_year int, p_at timestamptz)
returns table (employee_id int, code text, name text, unit text, sort_order smallint,
               acquired numeric, taken numeric, planned numeric, remaining numeric)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select c.employee_id, c.code, k.name, k.unit, k.position,
         coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0),
         coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0),
         coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0),
         coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0)
           - coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0)
           - coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0)
  from app_public.counters c
  join app_public.counter_kinds k on k.code = c.code
  left join app_private.counter_movements m on m.counter_id = c.id and m.created_at < p_at
  where c.employee_id = any (p_employees) and c.year = p_year
  group by c.id, c.employee_id, c.code, k.name, k.unit, k.position;
$$;

create or replace function app_hidden.require_payroll() returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('employee.view_payroll') then
    perform app_hidden.forbidden('Vous n’avez pas accès à la consultation de la paie.', 'WF550');
  end if;
end;
$$;

-- GET /api/payroll/options/
create or replace function app_public.payroll_options() returns jsonb
language plpgsql stable as $$
declare
  v_scope int[];
begin
  perform app_hidden.require_payroll();
  v_scope := app_hidden.perimeter_establishment_ids('employee.view_payroll');
  return jsonb_build_object('establishments', coalesce(
    (select jsonb_agg(jsonb_build_object('id', e.id, 'name', e.name) order by lower(e.name), e.id)
     from app_public.establishments e where app_hidden.in_scope(e.id, v_scope)), '[]'::jsonb));
end;
$$;
comment on function app_public.payroll_options() is
'SPEC Documents and other routes and Permissions rule 8, GET /api/payroll/options/: the establishments
the caller may consult in payroll (employee.view_payroll perimeter; 403 without the permission).';

-- The payroll month, written once for GET /api/payroll/ (a page) and its export (every line,
-- p_limit null): one statement computes the count and the lines (no query per line). Called
-- by the security definer functions below (the balances come from the journal).
create or replace function app_hidden.payroll_month(p_month text, p_establishment int, p_search text,
                                                    p_limit int, p_offset int)
returns jsonb
language plpgsql stable as $$
declare
  v_month_start date;
  v_month_end date;
  v_month_next timestamptz;
  v_scope int[];
begin
  perform app_hidden.require_payroll();
  if p_month is null or btrim(p_month) = '' then
    perform app_hidden.invalid('month', 'Le mois est obligatoire (format AAAA-MM, par exemple 2026-11).', 'WV550');
  end if;
  if p_month !~ '^[0-9]{4}-(0[1-9]|1[0-2])$' then
    perform app_hidden.invalid('month', 'Mois invalide : format attendu AAAA-MM (par exemple 2026-11).', 'WV550');
  end if;
  v_month_start := (p_month || '-01')::date;
  v_month_end := (v_month_start + interval '1 month')::date - 1;
  v_month_next := (v_month_end + 1)::timestamp at time zone app_hidden.business_timezone();
  v_scope := app_hidden.perimeter_establishment_ids('employee.view_payroll');
  if p_establishment is not null
     and (not app_hidden.in_scope(p_establishment, v_scope)
          or not exists (select 1 from app_public.establishments e where e.id = p_establishment)) then
    perform app_hidden.forbidden('Vous n’êtes pas autorisé à consulter la paie de cet établissement.', 'WF551');
  end if;

  return (
    with perimeter as (
      select x.id from app_hidden.perimeter_employee_ids('employee.view_payroll') x(id)
    ),
    establishment_employees as (
      select x.id from app_hidden.employees_of_establishments(array[p_establishment], v_month_end) x(id)
      where p_establishment is not null
    ),
    lines as (
      select c.id as contract_id, c.employee_id, e.first_name, e.last_name,
             greatest(c.start_date, v_month_start) as slice_start,
             least(coalesce(c.end_date, v_month_end), v_month_end) as slice_end
      from app_public.contracts c
      join app_public.employees e on e.id = c.employee_id
      where c.employee_id in (select p.id from perimeter p)
        and (p_establishment is null or c.employee_id in (select ee.id from establishment_employees ee))
        and c.start_date <= v_month_end and (c.end_date is null or c.end_date >= v_month_start)
        and (coalesce(btrim(p_search), '') = ''
             or e.first_name || ' ' || e.last_name ilike app_hidden.like_pattern(p_search)
             or e.last_name || ' ' || e.first_name ilike app_hidden.like_pattern(p_search))
    ),
    page as (
      select l.*, row_number() over (order by lower(l.last_name), lower(l.first_name), l.employee_id,
                                              l.slice_start, l.contract_id) as ord
      from lines l
      order by ord
      limit p_limit offset p_offset
    ),
    days as (
      select p.contract_id, d::date as day,
             app_hidden.slots_minutes(app_hidden.planned_slots(p.employee_id, d::date)) as planned
      from page p, generate_series(p.slice_start, p.slice_end, interval '1 day') d
    ),
    absences as (
      select p.contract_id, p.slice_start, p.slice_end, a.id, a.type_id, a.date_start, a.date_end,
             a.start_half, a.end_half, a.start_time, a.end_time, a.counted_quantity,
             t.code as type_code, t.name as type_name, t.unit,
             app_hidden.employee_count_base(p.employee_id) as count_base
      from page p
      join app_public.absences a on a.employee_id = p.employee_id
      join app_public.absence_types t on t.id = a.type_id
      where a.status in ('validated', 'cancellation_requested')
        and a.date_start <= p.slice_end and a.date_end >= p.slice_start
    ),
    absence_days as (
      select ab.contract_id, ab.id as absence_id, d::date as day,
             case when ab.start_time is null
                  then ((case when d::date = ab.date_start and ab.start_half = 'afternoon' then 0 else 1 end)
                        + (case when d::date = ab.date_end and ab.end_half = 'morning' then 0 else 1 end)) / 2.0 end as share,
             case when ab.start_time is not null then app_hidden.span_minutes(ab.start_time, ab.end_time) end as minutes
      from absences ab,
           generate_series(greatest(ab.date_start, ab.slice_start), least(ab.date_end, ab.slice_end), interval '1 day') d
    ),
    day_totals as (
      select dy.contract_id, dy.day, dy.planned,
             least(dy.planned,
                   coalesce(sum(case when ad.minutes is not null then least(ad.minutes, dy.planned)
                                     else dy.planned * ad.share end), 0)) as absent
      from days dy
      left join absence_days ad on ad.contract_id = dy.contract_id and ad.day = dy.day
      group by dy.contract_id, dy.day, dy.planned
    ),
    hours as (
      select dt.contract_id, sum(dt.planned) as planned, sum(dt.absent) as absent
      from day_totals dt group by dt.contract_id
    ),
    absence_quantities as (
      select ab.*,
             case when ab.date_start >= ab.slice_start and ab.date_end <= ab.slice_end and ab.counted_quantity is not null
                    then ab.counted_quantity
                  when ab.unit = 'hour'
                    then coalesce(ab.counted_quantity, app_hidden.hours_between(ab.start_time, ab.end_time))
                  -- The share of the month, counted by the absences' own rule (base of the
                  -- establishment, Sundays and public holidays excluded, half-days at the bounds).
                  else (select coalesce(sum(c.quantity), 0)
                        from app_hidden.counted_days(ab.count_base,
                               greatest(ab.date_start, ab.slice_start), least(ab.date_end, ab.slice_end),
                               case when ab.date_start >= ab.slice_start then ab.start_half end,
                               case when ab.date_end <= ab.slice_end then ab.end_half end) c) end as quantity
      from absences ab
    ),
    reasons as (
      select aq.contract_id, aq.type_id, aq.type_code, aq.type_name, aq.unit, sum(aq.quantity) as quantity,
             jsonb_agg(jsonb_build_object(
               'date_start', greatest(aq.date_start, aq.slice_start),
               'date_end', least(aq.date_end, aq.slice_end),
               'start_half', case when aq.date_start >= aq.slice_start then aq.start_half end,
               'end_half', case when aq.date_end <= aq.slice_end then aq.end_half end,
               'start_time', to_char(aq.start_time, 'HH24:MI'),
               'end_time', to_char(aq.end_time, 'HH24:MI'),
               'quantity', app_hidden.fmt_quantity(aq.quantity)) order by aq.date_start, aq.id) as items
      from absence_quantities aq
      group by aq.contract_id, aq.type_id, aq.type_code, aq.type_name, aq.unit
    ),
    reason_lists as (
      select r.contract_id,
             jsonb_agg(jsonb_build_object('type', r.type_id, 'type_code', r.type_code, 'type_name', r.type_name,
                                          'unit', r.unit, 'quantity', app_hidden.fmt_quantity(r.quantity),
                                          'absences', r.items) order by r.type_code) as list
      from reasons r group by r.contract_id
    ),
    counters as (
      select * from app_private.counter_balances_at(array(select distinct p.employee_id from page p),
                                                    extract(year from v_month_start)::int, v_month_next)
    ),
    counter_lists as (
      select c.employee_id,
             jsonb_agg(jsonb_build_object('code', c.code, 'name', c.name, 'unit', c.unit,
                                          'acquired', app_hidden.fmt_quantity(c.acquired),
                                          'taken', app_hidden.fmt_quantity(c.taken),
                                          'planned', app_hidden.fmt_quantity(c.planned),
                                          'remaining', app_hidden.fmt_quantity(c.remaining))
                       -- The counter's year as « Mes compteurs » shows it (issue 27 point 5): the same
                       -- function as GET /api/counters/, on today's journal.
                       || app_private.counter_year_facts(k.id, app_hidden.today())
                       order by c.sort_order, c.code) as list
      from counters c
      join app_public.counters k on k.employee_id = c.employee_id and k.code = c.code
                                and k.year = extract(year from v_month_start)::int
      group by c.employee_id
    )
    select jsonb_build_object(
      'count', (select count(*) from lines),
      'results', coalesce((
        select jsonb_agg(jsonb_build_object(
                 'employee', p.employee_id,
                 'employee_name', p.first_name || ' ' || p.last_name,
                 'main_establishment', e.main_establishment_id,
                 'main_establishment_name', est.name,
                 'month', p_month,
                 'contract', jsonb_build_object('id', c.id, 'type', c.contract_type_id, 'type_code', ct.code,
                                                'type_name', ct.name, 'start_date', c.start_date, 'end_date', c.end_date,
                                                'trial_end_date', c.trial_end_date, 'job_title', c.job_title,
                                                'weekly_hours', app_hidden.fmt_quantity(c.weekly_hours)),
                 'period', jsonb_build_object('start', p.slice_start, 'end', p.slice_end),
                 'planned_hours', app_hidden.fmt_quantity(round(coalesce(h.planned, 0) / 60.0, 2)),
                 'absence_hours', app_hidden.fmt_quantity(round(coalesce(h.absent, 0) / 60.0, 2)),
                 'worked_hours', app_hidden.fmt_quantity(round((coalesce(h.planned, 0) - coalesce(h.absent, 0)) / 60.0, 2)),
                 'absences', coalesce(rl.list, '[]'::jsonb),
                 'counters', coalesce(cl.list, '[]'::jsonb)) order by p.ord)
        from page p
        join app_public.contracts c on c.id = p.contract_id
        join app_public.contract_types ct on ct.id = c.contract_type_id
        join app_public.employees e on e.id = p.employee_id
        left join app_public.establishments est on est.id = e.main_establishment_id
        left join hours h on h.contract_id = p.contract_id
        left join reason_lists rl on rl.contract_id = p.contract_id
        left join counter_lists cl on cl.employee_id = p.employee_id), '[]'::jsonb)));
end;
$$;

-- GET /api/payroll/: a page of 25 lines.
create or replace function app_public.payroll_lines(p_month text, p_establishment int default null, p_search text default null,
                                         p_page int default 1, p_page_size int default 25)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_hidden.payroll_month(p_month, p_establishment, p_search,
                                  app_hidden.page_limit(p_page_size), app_hidden.page_offset(p_page, p_page_size));
end;
$$;
comment on function app_public.payroll_lines(text, integer, text, integer, integer) is
'SPEC Permissions rule 8 and Limits, GET /api/payroll/?month=: one page (25 by default) of payroll lines
per contract active in the month, for the employee.view_payroll perimeter or an authorised
establishment: planned, absence and worked hours, absences by reason (never comments, decision reasons
or documents) and counter balances.';

-- GET /api/payroll/export/?month=&establishment=&search=&format=: every line of the month, one
-- row per contract, in the list's order. Like the list, never a comment, a decision reason or
-- a document: the absences are their reasons' totals (« CP : 2,00 j ; RTT : 0,50 j »).
-- The counters are one text column per figure, each listing the counters (« CP : 8,5 jours ; RTT : 2 jours »),
-- written from the line's JSON (app_hidden.payroll_counters_text): no figure computed twice.
create or replace function app_hidden.payroll_counters_text(p_counters jsonb, p_figure text) returns text
language sql stable as $$
  select string_agg(format('%s : %s', c ->> 'code',
           case p_figure
             when 'acquisition' then case c ->> 'acquisition' when 'monthly' then 'mensuelle'
                                                              when 'opening' then 'à l’ouverture'
                                                              else 'à la main ou par import' end
             when 'carried_over' then app_hidden.quantity_fr((c ->> 'carried_over')::numeric, c ->> 'unit')
               || case when c ->> 'carry_over_expires_on' is not null
                       then format(' jusqu’au %s (expirerait : %s)',
                                   to_char((c ->> 'carry_over_expires_on')::date, 'DD/MM/YYYY'),
                                   app_hidden.quantity_fr((c ->> 'carry_over_expiring')::numeric, c ->> 'unit'))
                       else '' end
             when 'year_end' then case when jsonb_typeof(c -> 'year_end') = 'object'
               then format('reporte %s%s, perd %s',
                           app_hidden.quantity_fr((c -> 'year_end' ->> 'carries_over')::numeric, c ->> 'unit'),
                           case when c -> 'year_end' ->> 'carry_over_until' is not null
                                then format(' jusqu’au %s', to_char((c -> 'year_end' ->> 'carry_over_until')::date, 'DD/MM/YYYY'))
                                else '' end,
                           app_hidden.quantity_fr((c -> 'year_end' ->> 'expires')::numeric, c ->> 'unit'))
               else 'année close ou sans règle' end
             else app_hidden.quantity_fr((c ->> p_figure)::numeric, c ->> 'unit') end), ' ; ' order by ord)
  from jsonb_array_elements(p_counters) with ordinality as x(c, ord);
$$;

drop function if exists app_public.payroll_export(text, int, text) cascade;
create or replace function app_public.payroll_export(p_month text, p_establishment int default null, p_search text default null)
returns table (employee int, employee_name text, main_establishment_name text, contract_type text,
               contract_start date, contract_end date, job_title text, weekly_hours numeric,
               period_start date, period_end date, planned_hours numeric, absence_hours numeric, worked_hours numeric,
               absences text, counters_acquisition text, counters_acquired text, counters_remaining text,
               counters_to_come text, counters_carried_over text, counters_year_end text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select (l ->> 'employee')::int, l ->> 'employee_name', l ->> 'main_establishment_name',
         l -> 'contract' ->> 'type_name', (l -> 'contract' ->> 'start_date')::date, (l -> 'contract' ->> 'end_date')::date,
         l -> 'contract' ->> 'job_title', (l -> 'contract' ->> 'weekly_hours')::numeric,
         (l -> 'period' ->> 'start')::date, (l -> 'period' ->> 'end')::date,
         (l ->> 'planned_hours')::numeric, (l ->> 'absence_hours')::numeric, (l ->> 'worked_hours')::numeric,
         (select string_agg(format('%s : %s %s', r ->> 'type_name', replace(r ->> 'quantity', '.', ','),
                                   case r ->> 'unit' when 'hour' then 'h' else 'j' end), ' ; ' order by ord)
          from jsonb_array_elements(l -> 'absences') with ordinality as x(r, ord)),
         app_hidden.payroll_counters_text(l -> 'counters', 'acquisition'),
         app_hidden.payroll_counters_text(l -> 'counters', 'acquired'),
         app_hidden.payroll_counters_text(l -> 'counters', 'remaining'),
         app_hidden.payroll_counters_text(l -> 'counters', 'to_come'),
         app_hidden.payroll_counters_text(l -> 'counters', 'carried_over'),
         app_hidden.payroll_counters_text(l -> 'counters', 'year_end')
  from jsonb_array_elements(app_hidden.payroll_month(p_month, p_establishment, p_search, null, 0) -> 'results')
       with ordinality as lines(l, n)
  order by n;
$$;
comment on function app_public.payroll_export(text, integer, text) is
'SPEC Permissions rule 8 and issue 16 exports, GET /api/payroll/export/?month=&format=: every payroll line of the month
(the list''s rules and order), one row per contract, for the CSV or XLSX file; absences are their reasons'' totals, never
comments, decision reasons or documents; the counters, one column per figure of « Mes compteurs » (issue 27 point 5).';
--! EndIncluded payroll/api.sql
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
--! EndIncluded calendar/tables.sql
--! Included calendar/api.sql
-- iCalendar feeds (issue 16): the owner lists, creates, rotates and revokes its feeds; a
-- calendar client reads one with its secret address (GET /api/feeds/<secret>.ics), under the
-- owner's rights: the same policies and perimeter helpers as the planning and the queue.
-- SQL decides what each event says (kinds, perimeter, which reason is shown); the HTTP layer
-- only writes it as RFC 5545 (src/http/icalendar.ts).

-- The window of every feed: 3 months back, 12 months ahead of today (business date).
create or replace function app_hidden.calendar_feed_window(out date_from date, out date_to date)
language sql stable as $$
  select (app_hidden.today() - interval '3 months')::date, (app_hidden.today() + interval '12 months')::date;
$$;

create or replace function app_hidden.calendar_feed_label(p_kind text) returns text
language sql immutable as $$
  select case p_kind when 'planning' then 'Mon planning' when 'perimeter' then 'Absences de mon périmètre' end;
$$;

-- May the acting account hold a feed of this kind? "planning": any account (its own days and
-- on-call periods); "perimeter": the queue readers (absences.view_absence_queue). Never NULL.
create or replace function app_hidden.calendar_feed_allowed(p_kind text) returns boolean
language sql stable as $$
  select coalesce(case p_kind
                    when 'planning' then app_hidden.current_account_id() is not null
                    when 'perimeter' then app_hidden.current_account_has('absences.view_absence_queue')
                  end, false);
$$;

-- An unknown kind is an input error (400 under kind); a kind the account may not hold, 403.
create or replace function app_hidden.calendar_feed_check(p_kind text) returns void
language plpgsql stable as $$
begin
  if p_kind is null or p_kind not in ('planning', 'perimeter') then
    perform app_hidden.invalid('kind', 'Choisissez « planning » (mon planning) ou « perimeter » (absences de mon périmètre).', 'WV701');
  end if;
  if not app_hidden.calendar_feed_allowed(p_kind) then
    perform app_hidden.forbidden('Le flux des absences du périmètre est réservé aux lecteurs des demandes d’absence.', 'WF701');
  end if;
end;
$$;

create or replace function app_hidden.calendar_feed_url(p_public_url text, p_token text) returns text
language sql immutable as $$
  select rtrim(coalesce(p_public_url, ''), '/') || '/api/feeds/' || p_token || '.ics';
$$;

-- Secrets (app_private, owner): a new secret of 32 random bytes, only its SHA-256 stored.
create or replace function app_private.calendar_feeds_of(p_account int)
returns table (kind text, created_at timestamptz)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select f.kind, f.created_at from app_private.calendar_feeds f where f.account_id = p_account;
$$;

-- Creates (p_replace false: null when a feed of the kind exists) or rotates (p_replace true:
-- null when none exists) the feed; returns the clear secret, which is never stored.
create or replace function app_private.calendar_feed_issue(p_account int, p_kind text, p_replace boolean) returns text
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_token text := encode(public.gen_random_bytes(32), 'hex');
  v_hash bytea := public.digest(v_token, 'sha256');
begin
  if p_replace then
    update app_private.calendar_feeds f set token_hash = v_hash, created_at = app_hidden.now()
    where f.account_id = p_account and f.kind = p_kind;
  else
    insert into app_private.calendar_feeds (account_id, kind, token_hash) values (p_account, p_kind, v_hash)
    on conflict (account_id, kind) do nothing;
  end if;
  return case when found then v_token end;
end;
$$;

create or replace function app_private.calendar_feed_delete(p_account int, p_kind text) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  delete from app_private.calendar_feeds f where f.account_id = p_account and f.kind = p_kind;
  return found;
end;
$$;

-- Opens a feed by its secret: the acting account of the transaction becomes its owner
-- (app_private.begin_request: the same reload as an authenticated request). Null for an
-- unknown, rotated or revoked secret and for a closed owner, all answered alike (404).
create or replace function app_private.calendar_feed_open(p_token text)
returns table (kind text, created_at timestamptz)
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_feed app_private.calendar_feeds;
begin
  select * into v_feed from app_private.calendar_feeds f
  where f.token_hash = public.digest(coalesce(p_token, ''), 'sha256');
  if not found or app_private.begin_request(v_feed.account_id) is null then
    return;
  end if;
  return query select v_feed.kind, v_feed.created_at;
end;
$$;

-- One absence as an event: a whole-day span as dates (end exclusive), half-days and hours as
-- local times of the business time zone (a morning is [00:00, 12:00), an afternoon [12:00,
-- 24:00), as the absence's period).
create or replace function app_hidden.calendar_absence_event(p_absence app_public.absences, p_summary text,
                                                             p_description text, p_tentative boolean) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'uid', 'absence-' || p_absence.id,
    'summary', p_summary,
    'description', p_description,
    'location', null,
    'all_day', whole,
    'start', case when whole then to_char(lower(p_absence.period), 'YYYY-MM-DD')
                  else to_char(lower(p_absence.period), 'YYYY-MM-DD"T"HH24:MI:SS') end,
    'end', case when whole then to_char(upper(p_absence.period), 'YYYY-MM-DD')
                else to_char(upper(p_absence.period), 'YYYY-MM-DD"T"HH24:MI:SS') end,
    'status', case when p_tentative then 'TENTATIVE' else 'CONFIRMED' end,
    'sequence', p_absence.version - 1,
    'stamp', p_absence.updated_at,
    'last_modified', p_absence.updated_at)
  from (select lower(p_absence.period)::time = time '00:00' and upper(p_absence.period)::time = time '00:00' as whole) w;
$$;

-- "Mon planning": the worked slots of the planning (app_hidden.planning_cells, the rules of
-- GET /api/planning/: modifications, absences covering the day), the employee's absences
-- (granted, and pending requests as tentative), and the account's own on-call periods.
create or replace function app_hidden.calendar_planning_events(p_from date, p_to date, p_stamp timestamptz) returns jsonb
language plpgsql stable as $$
declare
  v_me int := app_hidden.current_employee_id();
  v_zone text := app_hidden.business_timezone();
  v_work jsonb := '[]';
begin
  if v_me is not null then
    select coalesce(jsonb_agg(jsonb_build_object(
             'uid', format('work-%s-%s-%s', v_me, to_char(w.date, 'YYYYMMDD'), w.n),
             'summary', coalesce(w.b->>'post_code' || ' – ' || (w.b->>'post_label'), 'Travail'),
             'description', concat_ws(E'\n',
               case when w.b->>'break_start_time' is not null
                    then format('Pause %s–%s%s', w.b->>'break_start_time', w.b->>'break_end_time',
                                case when (w.b->>'break_paid')::boolean then ' (payée)' else '' end) end,
               case when (w.b->>'is_remote')::boolean then 'Télétravail' end,
               case when (w.b->>'modified')::boolean then 'Journée modifiée (demande validée)' end,
               nullif(w.b->>'comment', '')),
             'location', es.name,
             'all_day', false,
             'start', to_char(w.date + (w.b->>'start_time')::time, 'YYYY-MM-DD"T"HH24:MI:SS'),
             -- a night post ends the next day
             'end', to_char(w.date + case when (w.b->>'end_time')::time <= (w.b->>'start_time')::time then 1 else 0 end
                            + (w.b->>'end_time')::time, 'YYYY-MM-DD"T"HH24:MI:SS'),
             'status', 'CONFIRMED',
             'sequence', 0,
             'stamp', p_stamp,
             'last_modified', null) order by w.date, w.n), '[]')
    into v_work
    from (select (c->>'date')::date as date, b, row_number() over (partition by c->>'date' order by ord) as n
          from json_array_elements(app_hidden.planning_cells(array[v_me], p_from, p_to)::json -> 'cells') c,
               json_array_elements(c->'blocks') with ordinality as bl(bj, ord),
               lateral (select bj::jsonb as b) x
          where bj->>'kind' = 'work') w
    left join app_public.establishments es on es.id = (w.b->>'establishment')::int;
  end if;
  return v_work
    || coalesce((select jsonb_agg(app_hidden.calendar_absence_event(
                   a, t.name || case when a.status = 'pending' then ' (demande en attente)'
                                     when a.status = 'cancellation_requested' then ' (annulation demandée)'
                                     else '' end,
                   'Absence ' || app_hidden.absence_period_fr(a.date_start, a.date_end, a.start_half, a.end_half,
                                                              a.start_time, a.end_time),
                   a.status = 'pending') order by a.date_start, a.id)
                 from app_public.absences a
                 join app_public.absence_types t on t.id = a.type_id
                 where a.employee_id = v_me and a.date_start <= p_to and a.date_end >= p_from
                   and a.status in ('pending', 'validated', 'cancellation_requested')), '[]')
    || coalesce((select jsonb_agg(jsonb_build_object(
                   'uid', 'on-call-' || op.id,
                   'summary', 'Astreinte',
                   'description', concat_ws(E'\n', (select 'Établissements : ' || string_agg(es.name, ', ' order by es.name)
                                                    from app_public.on_call_period_establishments ope
                                                    join app_public.establishments es on es.id = ope.establishment_id
                                                    where ope.period_id = op.id),
                                            nullif(op.comment, '')),
                   'location', null,
                   'all_day', false,
                   'start', to_char(op.start_at at time zone v_zone, 'YYYY-MM-DD"T"HH24:MI:SS'),
                   'end', to_char(op.end_at at time zone v_zone, 'YYYY-MM-DD"T"HH24:MI:SS'),
                   'status', 'CONFIRMED',
                   'sequence', 0,
                   'stamp', op.updated_at,
                   'last_modified', op.updated_at) order by op.start_at)
                 from app_public.on_call_periods op
                 where op.account_id = app_hidden.current_account_id()
                   and op.end_at > p_from::timestamp at time zone v_zone
                   and op.start_at < (p_to + 1)::timestamp at time zone v_zone), '[]');
end;
$$;

-- "Absences de mon périmètre": who is absent when, among the employees of the caller's queue
-- perimeter (granted absences only). The reason (the absence type) is shown to the employee
-- and to those who may decide their absences (app_hidden.may_decide_absence_of, asked once per
-- employee, not per absence); any other reader (a DA, for instance) reads « Absent(e) ».
create or replace function app_hidden.calendar_perimeter_events(p_from date, p_to date) returns jsonb
language sql stable as $$
  with granted as (
    select a from app_public.absences a
    where a.employee_id in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue'))
      and a.date_start <= p_to and a.date_end >= p_from
      and a.status in ('validated', 'cancellation_requested')
  ),
  shown as (
    select x.id, app_hidden.is_current_employee(x.id) or app_hidden.may_decide_absence_of(x.id) as reason
    from (select distinct (g.a).employee_id as id from granted g) x
  )
  select coalesce(jsonb_agg(app_hidden.calendar_absence_event(
           g.a, e.first_name || ' ' || e.last_name || ' – ' || case when s.reason then t.name else 'Absent(e)' end,
           'Absence ' || app_hidden.absence_period_fr((g.a).date_start, (g.a).date_end, (g.a).start_half, (g.a).end_half,
                                                      (g.a).start_time, (g.a).end_time),
           false) order by (g.a).date_start, (g.a).id), '[]')
  from granted g
  join shown s on s.id = (g.a).employee_id
  join app_public.employees e on e.id = (g.a).employee_id
  join app_public.absence_types t on t.id = (g.a).type_id;
$$;

-- GET /api/calendar-feeds/: the two kinds, whether the caller may hold each and since when
-- its live feed exists (the secret is not kept: it is shown once, at creation or rotation).
create or replace function app_public.calendar_feeds_list() returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return jsonb_build_object('feeds', (
    select jsonb_agg(jsonb_build_object(
             'kind', k.kind,
             'label', app_hidden.calendar_feed_label(k.kind),
             'allowed', app_hidden.calendar_feed_allowed(k.kind),
             'active', f.created_at is not null,
             'created_at', f.created_at) order by k.ord)
    from (values ('planning', 1), ('perimeter', 2)) k(kind, ord)
    left join app_private.calendar_feeds_of(app_hidden.current_account_id()) f on f.kind = k.kind));
end;
$$;
comment on function app_public.calendar_feeds_list() is 'SPEC (issue 16) calendar feeds, GET /api/calendar-feeds/: the two feed kinds of the acting account, whether it may hold each, and since when its live feed exists (the secret is never shown again).';

create or replace function app_hidden.calendar_feed_answer(p_kind text, p_token text, p_public_url text) returns jsonb
language sql stable as $$
  select jsonb_build_object('kind', p_kind, 'label', app_hidden.calendar_feed_label(p_kind),
                            'created_at', app_hidden.now(), 'url', app_hidden.calendar_feed_url(p_public_url, p_token));
$$;

-- POST /api/calendar-feeds/ {kind}: one live feed per kind (a second one: 400, rotate it).
drop function if exists app_public.calendar_feed_create(jsonb, text);
create or replace function app_public.calendar_feed_create(p_kind text, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_token text;
begin
  perform app_hidden.calendar_feed_check(p_kind);
  v_token := app_private.calendar_feed_issue(app_hidden.current_account_id(), p_kind, false);
  if v_token is null then
    perform app_hidden.invalid('kind', 'Ce flux existe déjà : renouvelez son adresse ou supprimez-le.', 'WV701');
  end if;
  return app_hidden.calendar_feed_answer(p_kind, v_token, p_public_url);
end;
$$;
comment on function app_public.calendar_feed_create(text, text) is 'SPEC (issue 16) calendar feeds, POST /api/calendar-feeds/: creates the acting account''s feed of a kind (one per kind; "perimeter" only for queue readers) and returns its secret address, shown this once.';

-- POST /api/calendar-feeds/{kind}/rotate/: a new secret; the old address answers 404.
create or replace function app_public.calendar_feed_rotate(p_kind text, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_token text;
begin
  perform app_hidden.calendar_feed_check(p_kind);
  v_token := app_private.calendar_feed_issue(app_hidden.current_account_id(), p_kind, true);
  if v_token is null then
    perform app_hidden.not_found('Aucun flux de ce type : créez-le d’abord.', 'WN701');
  end if;
  return app_hidden.calendar_feed_answer(p_kind, v_token, p_public_url);
end;
$$;
comment on function app_public.calendar_feed_rotate(text, text) is 'SPEC (issue 16) calendar feeds, POST /api/calendar-feeds/{kind}/rotate/: gives the feed a new secret address; the old one answers 404 from now on.';

-- DELETE /api/calendar-feeds/{kind}/: the address answers 404 from now on. Revoking stays
-- possible after losing the right to the kind.
create or replace function app_public.calendar_feed_revoke(p_kind text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if app_private.calendar_feed_delete(app_hidden.current_account_id(), p_kind) is not true then
    perform app_hidden.not_found('Aucun flux de ce type.', 'WN701');
  end if;
  return null;
end;
$$;
comment on function app_public.calendar_feed_revoke(text) is 'SPEC (issue 16) calendar feeds, DELETE /api/calendar-feeds/{kind}/: revokes the acting account''s feed of that kind; its address answers 404 from now on.';

-- GET /api/feeds/{secret}.ics: the feed's events under its owner's rights. An unknown,
-- rotated or revoked secret and a closed owner: 404; a perimeter feed whose owner no longer
-- reads the queue: 403 (WF701).
create or replace function app_public.calendar_feed_read(p_token text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_kind text;
  v_created timestamptz;
  v_from date;
  v_to date;
begin
  select f.kind, f.created_at into v_kind, v_created from app_private.calendar_feed_open(p_token) f;
  if v_kind is null then
    perform app_hidden.not_found('Flux de calendrier introuvable.', 'WN701');
  end if;
  perform app_hidden.calendar_feed_check(v_kind);
  select w.date_from, w.date_to into v_from, v_to from app_hidden.calendar_feed_window() w;
  return jsonb_build_object(
    'kind', v_kind,
    'name', app_hidden.calendar_feed_label(v_kind) || coalesce(' – ' || app_hidden.account_display_name(app_hidden.current_account_id()), ''),
    'from', v_from,
    'to', v_to,
    'events', case v_kind when 'planning' then app_hidden.calendar_planning_events(v_from, v_to, v_created)
                          else app_hidden.calendar_perimeter_events(v_from, v_to) end);
end;
$$;
-- It changes the acting account of its transaction: REST only (its own transaction), never
-- offered by GraphQL, where another call could follow in the same transaction.
comment on function app_public.calendar_feed_read(text) is E'@behavior -*\nSPEC (issue 16) calendar feeds, GET /api/feeds/{secret}.ics: the events of a feed under its owner''s rights (its planning, or its queue perimeter''s absences with the reason only where the owner may decide); unknown, rotated or revoked secrets and closed owners answer 404.';
--! EndIncluded calendar/api.sql
--! Included counters/rules.sql
-- Counter rules (issue 27 point 1): per establishment and counter code, how much a year's
-- counter acquires, how (all at the opening, or month by month over the acquisition period),
-- prorated or not for a contract starting or ending during the period, and what carries over
-- to the next year (none, all, or up to a ceiling, until a date of the next year after which
-- what is left expires).
--
-- A rule without establishment is the association's default; a rule of an establishment
-- replaces it for the employees whose main workplace it is. No rule for a code (CET, JRS...):
-- its counters are opened, acquired and closed by hand, as before. Written by staff accounts
-- (the back-office), read by staff and by HR (employee.change_employee_record) of their
-- perimeter; every write is audited (model counter_rule).
--
-- Acquisition periods (docs/architecture.md, "The leave year"):
--   * opening: the annual amount is acquired when the counter of year Y opens, prorated on
--     the days of year Y covered by a contract;
--   * monthly: the counter of year Y is what was acquired during the twelve months of Y - 1
--     (paid leave: acquired one year, taken the next), one journal movement per month once
--     the month has ended, the month's part prorated on the days of the month covered by a
--     contract. The parts are the differences of the rounded cumulative amounts (25 a year:
--     2.08, 2.09, 2.08, ...), so twelve full months make exactly the annual amount.

insert into app_private.audit_models (model, label) values
  ('counter_rule', 'Règle de compteur'),
  ('counter_opening', 'Ouverture des compteurs d’une année')
on conflict do nothing;

insert into app_private.settings (key, value, description) values
  ('counters_opening_date', '"01/10"', 'Date (JJ/MM) à partir de laquelle les compteurs de l’année suivante s’ouvrent chaque jour (tâche open_next_year_counters)')
on conflict do nothing;

create table if not exists app_public.counter_rules (
  id int generated always as identity primary key,
  -- Null: the association's default for the code.
  establishment_id int references app_public.establishments on delete cascade,
  counter_code text not null references app_public.counter_kinds on delete restrict,
  -- The amount of a year (days or hours, the unit of the counter); null: no counter is opened.
  annual_amount numeric(6,2) check (annual_amount is null or (annual_amount >= 0 and annual_amount < 1000)),
  -- Day counters of an establishment counting in jours ouvrables (Monday to Saturday); null:
  -- annual_amount whatever the count base.
  annual_amount_ouvrables numeric(6,2) check (annual_amount_ouvrables is null or (annual_amount_ouvrables >= 0 and annual_amount_ouvrables < 1000)),
  acquisition text not null default 'opening' check (acquisition in ('opening', 'monthly')),
  -- Rounding of the cumulative amounts (monthly) and of a prorated amount.
  rounding text not null default 'hundredth' check (rounding in ('hundredth', 'half_up', 'whole_up')),
  prorate boolean not null default true,
  carry_over text not null default 'none' check (carry_over in ('none', 'all', 'ceiling')),
  carry_over_ceiling numeric(6,2) check (carry_over_ceiling is null or (carry_over_ceiling >= 0 and carry_over_ceiling < 1000)),
  -- DD/MM of the next year after which what was carried over and is left expires; null: it
  -- stays for the whole next year.
  carry_over_until text check (carry_over_until is null or carry_over_until ~ '^(0[1-9]|[12][0-9]|3[01])/(0[1-9]|1[0-2])$'),
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  constraint counter_rules_ceiling check ((carry_over = 'ceiling') = (carry_over_ceiling is not null))
);
create unique index if not exists counter_rules_key on app_public.counter_rules (coalesce(establishment_id, 0), counter_code);
create index if not exists counter_rules_establishment_idx on app_public.counter_rules (establishment_id);
create index if not exists counter_rules_code_idx on app_public.counter_rules (counter_code);

create or replace trigger _100_timestamps before insert or update on app_public.counter_rules
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _500_audit after insert or update on app_public.counter_rules
  for each row execute function app_private.tg__audit('counter_rule');
create or replace trigger _500_audit_delete before delete on app_public.counter_rules
  for each row execute function app_private.tg__audit('counter_rule');

alter table app_public.counter_rules enable row level security;
drop policy if exists select_staff_or_hr on app_public.counter_rules;
create policy select_staff_or_hr on app_public.counter_rules for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_is_staff())
         or ((select app_hidden.current_account_has('employee.change_employee_record'))
             and (establishment_id is null
                  or app_hidden.in_scope(establishment_id, (select app_hidden.perimeter_establishment_ids('employee.change_employee_record'))))));
drop policy if exists insert_staff on app_public.counter_rules;
create policy insert_staff on app_public.counter_rules for insert to wfm_api
  with check ((select app_hidden.current_account_is_staff()));
drop policy if exists update_staff on app_public.counter_rules;
create policy update_staff on app_public.counter_rules for update to wfm_api
  using ((select app_hidden.current_account_is_staff())) with check ((select app_hidden.current_account_is_staff()));
drop policy if exists delete_staff on app_public.counter_rules;
create policy delete_staff on app_public.counter_rules for delete to wfm_api
  using ((select app_hidden.current_account_is_staff()));

-- Defaults, loaded with the reference data: paid leave 25 jours ouvrés (30 ouvrables) a
-- year acquired month by month, carried over whole until 31 May of the next year; quarterly
-- leave 9 days a year at the opening, not carried over; the others (seniority, RTT,
-- delegation hours) depend on the person: no amount (no counter opened), not carried over.
insert into app_public.counter_rules (establishment_id, counter_code, annual_amount, annual_amount_ouvrables, acquisition,
                                      rounding, prorate, carry_over, carry_over_ceiling, carry_over_until)
select null, x.code, x.amount, x.amount_ouvrables, x.acquisition, 'hundredth', true, x.carry_over, null, x.until
from (values
  ('CP', 25.00, 30.00, 'monthly', 'all', '31/05'),
  ('CT', 9.00, null, 'opening', 'none', null),
  ('ANC', null, null, 'opening', 'none', null),
  ('RTT', null, null, 'opening', 'none', null),
  ('DLG_CSE', null, null, 'opening', 'none', null),
  ('DLG_DS', null, null, 'opening', 'none', null),
  ('DLG_CS', null, null, 'opening', 'none', null)
) as x(code, amount, amount_ouvrables, acquisition, carry_over, until)
where exists (select 1 from app_public.counter_kinds k where k.code = x.code)
  and not exists (select 1 from app_public.counter_rules r where r.establishment_id is null and r.counter_code = x.code);

-- Rounding of an amount as a rule says: to the hundredth (half up), up to the half day, up
-- to the whole unit.
create or replace function app_hidden.counter_rule_round(p_value numeric, p_rounding text) returns numeric
language sql immutable as $$
  select case p_rounding
           when 'half_up' then ceil(p_value * 2) / 2
           when 'whole_up' then ceil(p_value)
           else round(p_value, 2)
         end::numeric(8,2);
$$;

-- The annual amount of a rule for an establishment's count base.
create or replace function app_hidden.counter_rule_amount(p_rule app_public.counter_rules, p_count_base text) returns numeric
language sql immutable as $$
  select case when p_count_base = 'ouvrables' and p_rule.annual_amount_ouvrables is not null
              then p_rule.annual_amount_ouvrables else p_rule.annual_amount end;
$$;

-- The date after which what was carried over from p_year expires (null: no date).
create or replace function app_hidden.counter_carry_over_deadline(p_until text, p_year int) returns date
language sql immutable as $$
  select case when p_until is null then null
              else make_date(p_year + 1, split_part(p_until, '/', 2)::int, split_part(p_until, '/', 1)::int) end;
$$;

-- The rule that applies to an establishment's employees for a code: the establishment's own,
-- else the association's default; none when neither exists. Owner (the jobs and the opening
-- read every rule, whoever asks).
create or replace function app_private.counter_rule_for(p_establishment int, p_code text) returns app_public.counter_rules
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select r.* from app_public.counter_rules r
  where r.counter_code = p_code and (r.establishment_id is null or r.establishment_id = p_establishment)
  order by r.establishment_id nulls last
  limit 1;
$$;

-- The part of a monthly rule for the k-th month (1 to 12) of the acquisition period: the
-- difference of the rounded cumulative amounts, times the share of the month covered by a
-- contract when the rule prorates (rounded to the hundredth).
create or replace function app_hidden.counter_month_part(p_amount numeric, p_rounding text, p_month int,
                                                         p_covered int, p_days int, p_prorate boolean)
returns numeric
language sql immutable as $$
  select case when p_covered <= 0 then 0
              else round((app_hidden.counter_rule_round(p_amount * p_month / 12, p_rounding)
                          - app_hidden.counter_rule_round(p_amount * (p_month - 1) / 12, p_rounding))
                         * case when p_prorate then p_covered::numeric / p_days else 1 end, 2)
         end::numeric(8,2);
$$;

-- The amount a rule acquiring at the opening gives for a year p_covered days of which (out
-- of p_days) are covered by a contract.
create or replace function app_hidden.counter_opening_part(p_amount numeric, p_rounding text, p_covered int, p_days int,
                                                           p_prorate boolean)
returns numeric
language sql immutable as $$
  select case when p_covered <= 0 then 0
              when not p_prorate or p_covered >= p_days then p_amount
              else app_hidden.counter_rule_round(p_amount * p_covered / p_days, p_rounding)
         end::numeric(8,2);
$$;

-- Days of [p_from, p_to] covered by a contract of the employee that is not temporary work
-- (an interim worker's leave is the agency's).
create or replace function app_private.contract_days(p_employee int, p_from date, p_to date) returns int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(sum(upper(r) - lower(r)), 0)::int
  from unnest((select range_agg(daterange(c.start_date, c.end_date, '[]'))
               from app_public.contracts c
               join app_public.contract_types t on t.id = c.contract_type_id
               where c.employee_id = p_employee and not t.is_temporary_work
                 and c.start_date <= p_to and (c.end_date is null or c.end_date >= p_from))
              * datemultirange(daterange(p_from, p_to, '[]'))) r;
$$;

-- The field rules of a counter rule, in the order of the form; '{}' when it passes.
create or replace function app_hidden.counter_rule_errors(p_id int, p_establishment int, p_counter_code text,
                                                          p_annual_amount numeric, p_annual_amount_ouvrables numeric,
                                                          p_acquisition text, p_rounding text, p_prorate boolean,
                                                          p_carry_over text, p_carry_over_ceiling numeric,
                                                          p_carry_over_until text)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_kind app_public.counter_kinds;
  v_amount_message text := 'Une quantité entre 0 et 999,99, deux décimales au plus ; vide : aucun compteur ouvert.';
begin
  if p_establishment is not null and not exists (select 1 from app_public.establishments e where e.id = p_establishment) then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'Établissement inconnu.');
  end if;
  select * into v_kind from app_public.counter_kinds k where k.code = p_counter_code;
  if p_counter_code is null then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Le compteur est obligatoire.');
  elsif v_kind.code is null then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Compteur inconnu.');
  elsif not v_kind.is_consumable then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', format('Le compteur %s n’est pas un compteur de congés ou d’heures consommable : il n’a pas de règle d’acquisition.', p_counter_code));
  elsif exists (select 1 from app_public.counter_rules r
                where coalesce(r.establishment_id, 0) = coalesce(p_establishment, 0) and r.counter_code = p_counter_code
                  and r.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', case when p_establishment is null
      then format('Le compteur %s a déjà une règle par défaut de l’association.', p_counter_code)
      else format('Le compteur %s a déjà une règle pour cet établissement.', p_counter_code) end);
  end if;
  if p_annual_amount is not null and (p_annual_amount < 0 or p_annual_amount >= 1000 or p_annual_amount <> round(p_annual_amount, 2)) then
    v_errors := app_hidden.add_error(v_errors, 'annual_amount', v_amount_message);
  end if;
  if p_annual_amount_ouvrables is not null then
    if p_annual_amount_ouvrables < 0 or p_annual_amount_ouvrables >= 1000 or p_annual_amount_ouvrables <> round(p_annual_amount_ouvrables, 2) then
      v_errors := app_hidden.add_error(v_errors, 'annual_amount_ouvrables', v_amount_message);
    elsif v_kind.unit = 'hour' then
      v_errors := app_hidden.add_error(v_errors, 'annual_amount_ouvrables', 'Un compteur en heures ne dépend pas de la base de décompte : laissez ce champ vide.');
    elsif p_annual_amount is null then
      v_errors := app_hidden.add_error(v_errors, 'annual_amount_ouvrables', 'Indiquez d’abord la quantité annuelle (en jours ouvrés).');
    end if;
  end if;
  if p_acquisition is null or p_acquisition not in ('opening', 'monthly') then
    v_errors := app_hidden.add_error(v_errors, 'acquisition', 'Acquisition à l’ouverture (opening) ou mois par mois (monthly).');
  elsif p_acquisition = 'monthly' and p_annual_amount is null then
    v_errors := app_hidden.add_error(v_errors, 'acquisition', 'Une acquisition mois par mois demande une quantité annuelle.');
  end if;
  if p_rounding is null or p_rounding not in ('hundredth', 'half_up', 'whole_up') then
    v_errors := app_hidden.add_error(v_errors, 'rounding', 'Arrondi au centième (hundredth), au demi supérieur (half_up) ou à l’unité supérieure (whole_up).');
  end if;
  if p_prorate is null then
    v_errors := app_hidden.add_error(v_errors, 'prorate', 'Ce champ est obligatoire.');
  end if;
  if p_carry_over is null or p_carry_over not in ('none', 'all', 'ceiling') then
    v_errors := app_hidden.add_error(v_errors, 'carry_over', 'Report : aucun (none), tout (all) ou jusqu’à un plafond (ceiling).');
  elsif p_carry_over = 'ceiling' and p_carry_over_ceiling is null then
    v_errors := app_hidden.add_error(v_errors, 'carry_over_ceiling', 'Le plafond du report est obligatoire pour un report plafonné.');
  elsif p_carry_over <> 'ceiling' and p_carry_over_ceiling is not null then
    v_errors := app_hidden.add_error(v_errors, 'carry_over_ceiling', 'Un plafond ne s’indique que pour un report plafonné : laissez ce champ vide.');
  end if;
  if p_carry_over_ceiling is not null and (p_carry_over_ceiling < 0 or p_carry_over_ceiling >= 1000 or p_carry_over_ceiling <> round(p_carry_over_ceiling, 2)) then
    v_errors := app_hidden.add_error(v_errors, 'carry_over_ceiling', 'Une quantité entre 0 et 999,99, deux décimales au plus.');
  end if;
  if p_carry_over_until is not null then
    if p_carry_over_until !~ '^(0[1-9]|[12][0-9]|3[01])/(0[1-9]|1[0-2])$'
       or split_part(p_carry_over_until, '/', 1)::int
          > extract(day from make_date(2001, split_part(p_carry_over_until, '/', 2)::int, 1) + interval '1 month - 1 day') then
      v_errors := app_hidden.add_error(v_errors, 'carry_over_until', 'Une date de l’année suivante au format JJ/MM, par exemple 31/05 (le 29/02 n’existe pas chaque année).');
    elsif p_carry_over is not distinct from 'none' then
      v_errors := app_hidden.add_error(v_errors, 'carry_over_until', 'Sans report, il n’y a pas de date limite : laissez ce champ vide.');
    end if;
  end if;
  return v_errors;
end;
$$;
comment on function app_hidden.counter_rule_errors(integer, integer, text, numeric, numeric, text, text, boolean, text, numeric, text) is
'Issue 27 point 1: the refusals of a counter rule by field (establishment, counter_code, annual_amount, annual_amount_ouvrables, acquisition, rounding, prorate, carry_over, carry_over_ceiling, carry_over_until), {} when it passes.';

create or replace function app_hidden.counter_rule_json(p_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', r.id, 'establishment', r.establishment_id, 'establishment_name', e.name,
    'counter_code', r.counter_code, 'counter_name', k.name, 'unit', k.unit,
    'annual_amount', app_hidden.fmt_quantity(r.annual_amount),
    'annual_amount_ouvrables', app_hidden.fmt_quantity(r.annual_amount_ouvrables),
    'acquisition', r.acquisition, 'rounding', r.rounding, 'prorate', r.prorate,
    'carry_over', r.carry_over, 'carry_over_ceiling', app_hidden.fmt_quantity(r.carry_over_ceiling),
    'carry_over_until', r.carry_over_until,
    'monthly_amount', case when r.acquisition = 'monthly' then app_hidden.fmt_quantity(app_hidden.counter_rule_round(r.annual_amount / 12, r.rounding)) end,
    'monthly_amount_ouvrables', case when r.acquisition = 'monthly' and r.annual_amount_ouvrables is not null
      then app_hidden.fmt_quantity(app_hidden.counter_rule_round(r.annual_amount_ouvrables / 12, r.rounding)) end,
    'updated_at', r.updated_at)
  from app_public.counter_rules r
  join app_public.counter_kinds k on k.code = r.counter_code
  left join app_public.establishments e on e.id = r.establishment_id
  where r.id = p_id;
$$;

create or replace function app_public.counter_rules_search(p_establishment int default null, p_counter_code text default null,
                                                           p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.counter_rule_json(u.id) order by u.n) from unnest(l.ids) with ordinality u(id, n)))
  from app_hidden.list_page(array(
    select r.id
    from app_public.counter_rules r
    join app_public.counter_kinds k on k.code = r.counter_code
    left join app_public.establishments e on e.id = r.establishment_id
    where (p_establishment is null or r.establishment_id = p_establishment)
      and (p_counter_code is null or r.counter_code = upper(p_counter_code))
    order by r.establishment_id is not null, lower(e.name), k.position, r.counter_code, r.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.counter_rules_search(integer, text, integer, integer) is
'Issue 27 point 1, back-office: one page of the counter rules the caller reads (staff, or HR of the establishment; the association''s defaults first), filtered by establishment and counter code.';

create or replace function app_public.counter_rule_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.counter_rules r where r.id = p_id) then
    perform app_hidden.not_found('Règle de compteur introuvable.', 'WN303');
  end if;
  return app_hidden.counter_rule_json(p_id)
         || jsonb_build_object('may_write', app_hidden.current_account_is_staff());
end;
$$;
comment on function app_public.counter_rule_get(integer) is
'Issue 27 point 1, back-office: one counter rule the caller reads (404 otherwise), with may_write for a staff account.';

-- Creates (p_id null) or rewrites a rule: staff only, every field error at once, audited.
create or replace function app_public.counter_rule_save(p_id int, p_establishment int, p_counter_code text,
                                                        p_annual_amount numeric, p_annual_amount_ouvrables numeric,
                                                        p_acquisition text, p_rounding text, p_prorate boolean,
                                                        p_carry_over text, p_carry_over_ceiling numeric,
                                                        p_carry_over_until text)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_code text := upper(nullif(btrim(p_counter_code), ''));
  v_until text := nullif(btrim(p_carry_over_until), '');
  v_errors jsonb;
  v_id int := p_id;
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les règles des compteurs s’écrivent par les comptes du personnel d’administration uniquement.', 'WF302');
  end if;
  if p_id is not null then
    perform 1 from app_public.counter_rules r where r.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Règle de compteur introuvable.', 'WN303');
    end if;
  end if;
  v_errors := app_hidden.counter_rule_errors(p_id, p_establishment, v_code, p_annual_amount, p_annual_amount_ouvrables,
                                             p_acquisition, p_rounding, p_prorate, p_carry_over, p_carry_over_ceiling, v_until);
  perform app_hidden.invalid_fields(v_errors, 'WV314') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.counter_rules (establishment_id, counter_code, annual_amount, annual_amount_ouvrables, acquisition,
                                          rounding, prorate, carry_over, carry_over_ceiling, carry_over_until)
    values (p_establishment, v_code, p_annual_amount, p_annual_amount_ouvrables, p_acquisition,
            p_rounding, p_prorate, p_carry_over, p_carry_over_ceiling, v_until)
    returning id into v_id;
  else
    update app_public.counter_rules r
    set establishment_id = p_establishment, counter_code = v_code, annual_amount = p_annual_amount,
        annual_amount_ouvrables = p_annual_amount_ouvrables, acquisition = p_acquisition, rounding = p_rounding,
        prorate = p_prorate, carry_over = p_carry_over, carry_over_ceiling = p_carry_over_ceiling, carry_over_until = v_until
    where r.id = p_id
      and (r.establishment_id, r.counter_code, r.annual_amount, r.annual_amount_ouvrables, r.acquisition, r.rounding, r.prorate,
           r.carry_over, r.carry_over_ceiling, r.carry_over_until)
          is distinct from (p_establishment, v_code, p_annual_amount, p_annual_amount_ouvrables, p_acquisition, p_rounding, p_prorate,
                            p_carry_over, p_carry_over_ceiling, v_until);
  end if;
  return app_public.counter_rule_get(v_id);
end;
$$;
comment on function app_public.counter_rule_save(integer, integer, text, numeric, numeric, text, text, boolean, text, numeric, text) is
'Issue 27 point 1, back-office: a staff account creates (p_id null) or rewrites the rule of a counter code for an establishment (null: the association''s default); every field error at once; audited.';

-- Deletes an establishment's rule (its employees follow the association's default again).
-- The defaults are edited, not deleted: a code without a default is managed by hand.
create or replace function app_public.counter_rule_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_rule app_public.counter_rules;
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les règles des compteurs s’écrivent par les comptes du personnel d’administration uniquement.', 'WF302');
  end if;
  select * into v_rule from app_public.counter_rules r where r.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Règle de compteur introuvable.', 'WN303');
  end if;
  if v_rule.establishment_id is null then
    perform app_hidden.invalid('non_field_errors', 'Une règle par défaut de l’association ne se supprime pas : modifiez-la (une quantité vide n’ouvre aucun compteur).', 'WV314');
  end if;
  delete from app_public.counter_rules r where r.id = p_id;
  return null;
end;
$$;
comment on function app_public.counter_rule_delete(integer) is
'Issue 27 point 1, back-office: a staff account deletes an establishment''s counter rule (its employees follow the association''s default again); a default is refused.';

-- The choices of the back-office's counter rule forms, as the caller reads them: 'establishments'
-- (value: id) or 'counters' (consumable codes).
create or replace function app_public.counter_rule_choices(p_what text) returns table (value text, label text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select x.value, x.label from (
    select e.id::text as value, e.name as label, lower(e.name) as sort_key, 0 as position
    from app_public.establishments e where p_what = 'establishments'
    union all
    select k.code, k.code || ' — ' || k.name, k.code, k.position
    from app_public.counter_kinds k where p_what = 'counters' and k.is_consumable
  ) x
  order by x.position, x.sort_key;
$$;
comment on function app_public.counter_rule_choices(text) is
'Issue 27 points 1 and 2, back-office: the choices of the counter rule and opening forms, establishments (id and name) or consumable counter codes.';
--! EndIncluded counters/rules.sql
--! Included counters/year.sql
-- The leave year (issue 27 points 2 to 4): opening the next year's counters from the counter
-- rules (sql/counters/rules.sql), the monthly acquisition, the carry-over and the expiry at
-- the year's end, and the notice of a balance about to expire.
--
-- Every amount is a movement of the journal (app_private.counter_movements) with its reason
-- in `comment` and its key (counter, kind, period): a job that runs late, twice or after a
-- crash writes each acquisition, carry-over and expiry once (the unique index
-- counter_movements_period_key; inserts say `on conflict do nothing`).
--
-- Locks: the opening and the monthly acquisition only add rows (new counters, credits) and
-- lock nothing that filing a request waits for (a request locks the counters it debits and
-- its employee's advisory key; a credit cannot overdraw, so it needs no lock). The year's end
-- and the expiry debit a counter: they lock that counter (for update, as every debit does)
-- for the rest of their transaction.

insert into app_private.job_schedules (job, local_time, isodow, description) values
  ('open_next_year_counters', '01:17', null, 'Ouverture des compteurs de l’année suivante à partir de la date réglée (1er octobre par défaut), chaque jour à 1 h 17'),
  ('acquire_monthly_counters', '01:27', null, 'Acquisition mensuelle des compteurs (mois terminés, une fois chacun), chaque jour à 1 h 27'),
  ('close_counter_years', '01:37', null, 'Report et expiration des soldes en fin d’année et à la date limite du report, avis un mois avant, chaque jour à 1 h 37')
on conflict do nothing;

-- Notices already sent of a balance about to expire: one per counter and expiry date.
create table if not exists app_private.counter_expiry_notices (
  counter_id int not null references app_public.counters on delete cascade,
  expires_on date not null,
  notification_id bigint,
  sent_at timestamptz not null default app_hidden.now(),
  primary key (counter_id, expires_on)
);
alter table app_private.counter_expiry_notices enable row level security;

create or replace function app_hidden.month_name_fr(p_month int) returns text
language sql immutable as $$
  select (array['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre',
                'novembre', 'décembre'])[p_month];
$$;

-- The acquisitions of a counter of year p_year under a rule, due on p_today, for an employee
-- of an establishment counting in p_count_base: at the opening, one movement for the year
-- (prorated on the days of the year covered by a contract); month by month, one per month of
-- p_year - 1 that ended before p_today (prorated on the days of the month covered by a
-- contract). Rows of quantity 0 (no contract that month) are returned, not written.
create or replace function app_private.counter_acquisitions_due(p_employee int, p_year int, p_rule app_public.counter_rules,
                                                                p_count_base text, p_today date)
returns table (period date, quantity numeric, comment text)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_amount numeric := app_hidden.counter_rule_amount(p_rule, p_count_base);
  v_unit text := (select k.unit from app_public.counter_kinds k where k.code = p_rule.counter_code);
  v_from date;
  v_to date;
  v_covered int;
  v_days int;
begin
  if v_amount is null or p_rule.id is null then
    return;
  end if;
  if p_rule.acquisition = 'opening' then
    v_from := make_date(p_year, 1, 1);
    v_to := make_date(p_year, 12, 31);
    v_days := v_to - v_from + 1;
    v_covered := app_private.contract_days(p_employee, v_from, v_to);
    period := v_from;
    quantity := app_hidden.counter_opening_part(v_amount, p_rule.rounding, v_covered, v_days, p_rule.prorate);
    comment := format('Acquisition %s à l’ouverture : %s%s', p_year, app_hidden.quantity_fr(quantity, v_unit),
                      case when p_rule.prorate and v_covered < v_days
                           then format(' (prorata : %s jours de contrat sur %s)', v_covered, v_days) else '' end);
    return next;
    return;
  end if;
  for k in 1..12 loop
    v_from := make_date(p_year - 1, k, 1);
    v_to := (v_from + interval '1 month')::date - 1;
    exit when v_to >= p_today;
    v_days := v_to - v_from + 1;
    v_covered := app_private.contract_days(p_employee, v_from, v_to);
    period := v_from;
    quantity := app_hidden.counter_month_part(v_amount, p_rule.rounding, k, v_covered, v_days, p_rule.prorate);
    comment := format('Acquisition de %s %s pour %s : %s%s', app_hidden.month_name_fr(k), p_year - 1, p_year,
                      app_hidden.quantity_fr(quantity, v_unit),
                      case when p_rule.prorate and v_covered < v_days
                           then format(' (prorata : %s jours de contrat sur %s)', v_covered, v_days) else '' end);
    return next;
  end loop;
end;
$$;

-- The plan of an opening of year p_year for the employees whose main workplace is
-- p_establishment (null: every employee): one row per counter to open (already_open false) or
-- already open, and one row per employee skipped, with the reason (code null). The amount
-- acquired at the opening is computed only for a counter to open, and only with p_amounts (the
-- writing reads its acquisitions again, movement by movement).
drop function if exists app_private.counter_opening_plan(int, int, date) cascade;
create or replace function app_private.counter_opening_plan(p_year int, p_establishment int, p_today date,
                                                            p_amounts boolean default true)
returns table (employee_id int, employee_name text, establishment_id int, code text, acquisition text,
               amount numeric, already_open boolean, skip_reason text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with people as (
    select e.id, e.last_name || ' ' || e.first_name as name, e.main_establishment_id, est.count_base,
           exists (select 1 from app_public.contracts c
                   where c.employee_id = e.id and c.start_date <= make_date(p_year, 12, 31)
                     and (c.end_date is null or c.end_date >= make_date(p_year, 1, 1))) as any_contract,
           exists (select 1 from app_public.contracts c join app_public.contract_types t on t.id = c.contract_type_id
                   where c.employee_id = e.id and not t.is_temporary_work and c.start_date <= make_date(p_year, 12, 31)
                     and (c.end_date is null or c.end_date >= make_date(p_year, 1, 1))) as own_contract
    from app_public.employees e
    left join app_public.establishments est on est.id = e.main_establishment_id
    where p_establishment is null or e.main_establishment_id = p_establishment
  ),
  codes as (
    -- Consumable codes that an active reason consumes (a counter of another code could not be active).
    select k.code, k.position from app_public.counter_kinds k
    where k.is_consumable and app_private.counter_code_has_reason(k.code)
  ),
  eligible as (
    select p.* from people p where p.main_establishment_id is not null and p.own_contract
  ),
  lines as (
    select o.id, o.name, o.main_establishment_id, o.code, o.position, (o.rule).acquisition,
           case when p_amounts and not o.already_open
                then (select coalesce(sum(d.quantity), 0)
                      from app_private.counter_acquisitions_due(o.id, p_year, o.rule, o.count_base, p_today) d) end as amount,
           o.already_open
    from (select p.id, p.name, p.main_establishment_id, p.count_base, c.code, c.position, rr.rule,
                 exists (select 1 from app_public.counters x where x.employee_id = p.id and x.code = c.code and x.year = p_year)
                   as already_open
          from eligible p
          cross join codes c
          cross join lateral (select app_private.counter_rule_for(p.main_establishment_id, c.code) as rule) rr
          where app_hidden.counter_rule_amount(rr.rule, p.count_base) is not null
          offset 0) o
  )
  select l.id, l.name, l.main_establishment_id, l.code, l.acquisition, l.amount, l.already_open, null::text
  from lines l
  union all
  select p.id, p.name, p.main_establishment_id, null, null, null, false,
         case when p.main_establishment_id is null
                then 'Sans établissement principal : aucune règle d’établissement ne s’applique.'
              when not p.any_contract then format('Aucun contrat en cours en %s.', p_year)
              when not p.own_contract then 'Contrat d’intérim seulement : ses congés relèvent de l’entreprise de travail temporaire.'
              else 'Aucune règle de son établissement n’ouvre de compteur.' end
  from people p
  where not exists (select 1 from lines l where l.id = p.id)
$$;

-- The answer of a preview and of an opening: how many counters (by code), how many already
-- open, the employees skipped and why.
create or replace function app_private.counter_opening_summary(p_year int, p_establishment int, p_today date)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with plan as materialized (select * from app_private.counter_opening_plan(p_year, p_establishment, p_today))
  select jsonb_build_object(
    'year', p_year,
    'establishment', p_establishment,
    'establishment_name', (select e.name from app_public.establishments e where e.id = p_establishment),
    'employees', (select count(distinct p.employee_id) from plan p where p.skip_reason is null and not p.already_open),
    'counters', (select count(*) from plan p where p.skip_reason is null and not p.already_open),
    'already_open', (select count(*) from plan p where p.skip_reason is null and p.already_open),
    'by_code', coalesce((select jsonb_object_agg(x.code, jsonb_build_object('counters', x.n, 'acquired', app_hidden.fmt_quantity(x.total)))
                         from (select p.code, count(*) as n, sum(p.amount) as total from plan p
                               where p.skip_reason is null and not p.already_open group by p.code) x), '{}'::jsonb),
    'skipped', coalesce((select jsonb_agg(jsonb_build_object('employee', p.employee_id, 'employee_name', p.employee_name,
                                                             'reason', p.skip_reason) order by p.employee_name, p.employee_id)
                         from plan p where p.skip_reason is not null), '[]'::jsonb));
$$;

/*
 * Opens the counters of p_year from the rules for the employees of p_establishment (null:
 * the whole association) with a contract running into the year: each counter with its
 * acquisitions due (one journal movement each, with its reason). Idempotent: an open
 * counter is left alone, a second run writes nothing. Returns the summary of what it did
 * (counters: how many it opened). Adds rows only (no lock a filing waits for).
 */
create or replace function app_private.counters_open_year(p_year int, p_establishment int, p_today date)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_summary jsonb := app_private.counter_opening_summary(p_year, p_establishment, p_today);
  v_opened int;
  v_movements int;
begin
  with plan as (
    select * from app_private.counter_opening_plan(p_year, p_establishment, p_today, false) p
    where p.skip_reason is null and not p.already_open
  ), ins as (
    insert into app_public.counters (employee_id, code, year, acquisition)
    select p.employee_id, p.code, p_year, p.acquisition from plan p
    order by p.employee_id, p.code
    on conflict (employee_id, code, year) do nothing
    returning id, employee_id, code
  ), mov as (
    insert into app_private.counter_movements (counter_id, bucket, quantity, kind, actor_account_id, comment, period)
    select ins.id, 'acquired', d.quantity, 'acquisition', app_hidden.current_account_id(), d.comment, d.period
    from ins
    join app_public.employees e on e.id = ins.employee_id
    join app_public.establishments est on est.id = e.main_establishment_id
    cross join lateral app_private.counter_acquisitions_due(ins.employee_id, p_year,
                                                            app_private.counter_rule_for(est.id, ins.code), est.count_base, p_today) d
    where d.quantity <> 0
    order by ins.id, d.period
    on conflict do nothing
    returning 1
  )
  select (select count(*) from ins), (select count(*) from mov) into v_opened, v_movements;

  v_summary := v_summary || jsonb_build_object('opened', v_opened, 'movements', v_movements);
  perform app_private.write_audit('Creation', 'counter_opening', p_year, null,
    jsonb_build_object('year', p_year, 'establishment', p_establishment, 'opened', v_opened, 'movements', v_movements,
                       'skipped', jsonb_array_length(v_summary -> 'skipped')))
  where v_opened > 0;
  return v_summary;
end;
$$;

-- The checks of a back-office opening: a staff account, a year this one or the next, an
-- establishment that exists (null: the whole association).
create or replace function app_hidden.counter_opening_check(p_year int, p_establishment int) returns void
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_this int := extract(year from app_hidden.today())::int;
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les compteurs s’ouvrent par les comptes du personnel d’administration uniquement.', 'WF302');
  end if;
  if p_year is null then
    v_errors := app_hidden.add_error(v_errors, 'year', 'L’année est obligatoire.');
  elsif p_year not between v_this and v_this + 1
        or p_year not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year() then
    v_errors := app_hidden.add_error(v_errors, 'year', format('Seuls les compteurs de %s ou de %s s’ouvrent.', v_this, v_this + 1));
  end if;
  if p_establishment is not null and not exists (select 1 from app_public.establishments e where e.id = p_establishment) then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'Établissement inconnu.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV315') where v_errors <> '{}'::jsonb;
end;
$$;

create or replace function app_public.counter_opening_preview(p_year int, p_establishment int default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.counter_opening_check(p_year, p_establishment);
  return app_private.counter_opening_summary(p_year, p_establishment, app_hidden.today());
end;
$$;
comment on function app_public.counter_opening_preview(integer, integer) is
'Issue 27 point 2, back-office: what opening the counters of a year (this one or the next) would write for an establishment or the whole association (null), without writing: counters by code, already open, employees skipped and why; staff only.';

create or replace function app_public.counter_opening_run(p_year int, p_establishment int default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.counter_opening_check(p_year, p_establishment);
  return app_private.counters_open_year(p_year, p_establishment, app_hidden.today());
end;
$$;
comment on function app_public.counter_opening_run(integer, integer) is
'Issue 27 point 2, back-office: opens the counters of a year (this one or the next) from the counter rules for an establishment or the whole association (null), each acquisition a journal movement; idempotent; audited; staff only.';

-- Scheduled job open_next_year_counters: from the date of the setting counters_opening_date
-- (DD/MM, default 01/10) to the end of the year, opens next year's counters of the whole
-- association (each day: the employees hired since are opened too). Returns the number of
-- counters opened.
create or replace function app_private.open_next_year_counters(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_setting text := app_hidden.setting('counters_opening_date') #>> '{}';
  v_year int := extract(year from p_today)::int;
  v_from date;
begin
  if v_setting is null or v_setting !~ '^(0[1-9]|[12][0-9]|3[01])/(0[1-9]|1[0-2])$' then
    raise exception 'open_next_year_counters: the setting counters_opening_date must be DD/MM (got %)', v_setting;
  end if;
  v_from := make_date(v_year, split_part(v_setting, '/', 2)::int, split_part(v_setting, '/', 1)::int);
  if p_today < v_from or v_year + 1 > app_hidden.last_accepted_year() then
    return 0;
  end if;
  return (app_private.counters_open_year(v_year + 1, null, p_today) ->> 'opened')::int;
end;
$$;

-- Scheduled job acquire_monthly_counters: each counter acquiring month by month receives the
-- part of every month of its acquisition period that has ended, once (key: counter, kind
-- acquisition, month), whenever the job runs. Returns the number of movements written.
create or replace function app_private.acquire_monthly_counters(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_year int := extract(year from p_today)::int;
  v_count int;
begin
  insert into app_private.counter_movements (counter_id, bucket, quantity, kind, actor_account_id, comment, period)
  select c.id, 'acquired', d.quantity, 'acquisition', null, d.comment, d.period
  from app_public.counters c
  join app_public.employees e on e.id = c.employee_id
  join app_public.establishments est on est.id = e.main_establishment_id
  cross join lateral (select app_private.counter_rule_for(est.id, c.code) as rule) rr
  cross join lateral app_private.counter_acquisitions_due(c.employee_id, c.year, rr.rule, est.count_base, p_today) d
  where c.acquisition = 'monthly' and c.is_active and c.year in (v_year, v_year + 1) and (rr.rule).acquisition = 'monthly'
    and d.quantity <> 0
    and not exists (select 1 from app_private.counter_movements m
                    where m.counter_id = c.id and m.kind = 'acquisition' and m.period = d.period)
  order by c.id, d.period
  on conflict do nothing;
  get diagnostics v_count = row_count;
  return v_count;
end;
$$;

-- What a rule carries over of a remaining balance.
create or replace function app_hidden.counter_carried(p_remaining numeric, p_carry_over text, p_ceiling numeric) returns numeric
language sql immutable as $$
  select case when p_remaining <= 0 then 0
              when p_carry_over = 'all' then p_remaining
              when p_carry_over = 'ceiling' then least(p_remaining, p_ceiling)
              else 0 end::numeric(8,2);
$$;

-- The year's end of p_year (from 1 January of p_year + 1): for each counter of p_year whose
-- code has a rule, the remaining balance moves to p_year + 1 within the rule (a compensating
-- carry_over movement in the old year, a carry_over acquisition in the new one) and what
-- exceeds it expires (an expiry movement in the old year). A counter whose employee has no
-- counter of the next year keeps its balance (reported, tried again the next day). Once per
-- counter. Returns the number of counters closed.
create or replace function app_private.counters_close_year(p_year int, p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_new_year date := make_date(p_year + 1, 1, 1);
  v_count int := 0;
  r record;
  v_remaining numeric;
  v_carried numeric;
  v_next int;
  v_unit text;
  v_deadline date;
begin
  if p_today < v_new_year then
    return 0;
  end if;
  for r in
    select c.id, c.employee_id, c.code, k.unit, k.name, rule.carry_over, rule.carry_over_ceiling, rule.carry_over_until
    from app_public.counters c
    join app_public.counter_kinds k on k.code = c.code
    join app_public.employees e on e.id = c.employee_id
    cross join lateral (select (app_private.counter_rule_for(e.main_establishment_id, c.code)).*) rule
    where c.year = p_year and rule.id is not null
      and not exists (select 1 from app_private.counter_movements m
                      where m.counter_id = c.id and m.kind in ('carry_over', 'expiry') and m.period = v_new_year)
    order by c.id
  loop
    perform 1 from app_public.counters c where c.id = r.id for update;
    v_remaining := app_private.counter_remaining(r.id);
    continue when v_remaining <= 0;
    v_carried := app_hidden.counter_carried(v_remaining, r.carry_over, r.carry_over_ceiling);
    select c.id into v_next from app_public.counters c
    where c.employee_id = r.employee_id and c.code = r.code and c.year = p_year + 1 and c.is_active;
    if v_carried > 0 and v_next is null then
      raise notice 'counters_close_year: counter % keeps its balance: no open % counter in %', r.id, r.code, p_year + 1;
      continue;
    end if;
    v_deadline := app_hidden.counter_carry_over_deadline(r.carry_over_until, p_year);
    insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment, period)
    select x.counter_id, 'acquired', x.quantity, x.kind, x.comment, v_new_year
    from (values
      (1, r.id, -v_carried, 'carry_over', format('Report vers %s : %s', p_year + 1, app_hidden.quantity_fr(v_carried, r.unit))),
      (2, r.id, v_carried - v_remaining, 'expiry',
       format('Expiration en fin d’année %s : %s %s', p_year, app_hidden.quantity_fr(v_remaining - v_carried, r.unit),
              case r.carry_over when 'none' then '(sans report)' else format('(au-delà du plafond de report de %s)',
                app_hidden.quantity_fr(r.carry_over_ceiling, r.unit)) end)),
      (3, v_next, v_carried, 'carry_over',
       format('Report du solde %s : %s%s', p_year, app_hidden.quantity_fr(v_carried, r.unit),
              case when v_deadline is null then '' else format(', à prendre au plus tard le %s', app_hidden.fr_date(v_deadline)) end))
    ) as x(n, counter_id, quantity, kind, comment)
    where x.quantity <> 0
    order by x.n
    on conflict do nothing;
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;

-- After the carry-over date (from the day after it): what was carried over into a counter and
-- is neither taken nor reserved expires, as one expiry movement (taken first draws on what was
-- carried over). Once per counter and date. Returns the number of counters expired.
create or replace function app_private.counters_expire_carry_over(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_count int := 0;
  r record;
  v_expired numeric;
begin
  for r in
    select c.id, c.year, k.unit, cm.quantity as carried, d.deadline
    from app_public.counters c
    join app_public.counter_kinds k on k.code = c.code
    join app_public.employees e on e.id = c.employee_id
    join app_private.counter_movements cm
      on cm.counter_id = c.id and cm.kind = 'carry_over' and cm.period = make_date(c.year, 1, 1) and cm.quantity > 0
    cross join lateral (select (app_private.counter_rule_for(e.main_establishment_id, c.code)).*) rule
    cross join lateral (select app_hidden.counter_carry_over_deadline(rule.carry_over_until, c.year - 1) as deadline) d
    where c.year in (extract(year from p_today)::int, extract(year from p_today)::int - 1)
      and d.deadline < p_today
      and not exists (select 1 from app_private.counter_movements m
                      where m.counter_id = c.id and m.kind = 'expiry' and m.period = d.deadline)
    order by c.id
  loop
    perform 1 from app_public.counters c where c.id = r.id for update;
    v_expired := least(greatest(r.carried - (select coalesce(sum(m.quantity), 0) from app_private.counter_movements m
                                            where m.counter_id = r.id and m.bucket = 'taken'), 0),
                       app_private.counter_remaining(r.id));
    continue when v_expired <= 0;
    insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment, period)
    values (r.id, 'acquired', -v_expired, 'expiry',
            format('Expiration du report de %s non pris au %s : %s', r.year - 1, app_hidden.fr_date(r.deadline),
                   app_hidden.quantity_fr(v_expired, r.unit)), r.deadline)
    on conflict do nothing;
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;

-- One month before a balance expires (the year's end beyond what carries over, or the
-- carry-over date), the employee is notified once per counter and date. Returns the number of
-- notifications.
create or replace function app_private.counter_expiry_notify(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_year int := extract(year from p_today)::int;
  v_count int := 0;
  r record;
  v_account int;
  v_notification bigint;
begin
  for r in
    with year_end as (
      -- This year's counters: what exceeds the carry-over expires on 31 December.
      select c.id, c.employee_id, c.code, k.name, k.unit, c.year, make_date(c.year, 12, 31) as expires_on,
             b.remaining - app_hidden.counter_carried(b.remaining, rule.carry_over, rule.carry_over_ceiling) as amount
      from app_public.counters c
      join app_public.counter_kinds k on k.code = c.code
      join app_public.employees e on e.id = c.employee_id
      cross join lateral (select (app_private.counter_rule_for(e.main_establishment_id, c.code)).*) rule
      cross join lateral (select app_private.counter_remaining(c.id) as remaining) b
      where c.year = v_year and c.is_active and rule.id is not null
        and p_today >= (make_date(v_year, 12, 31) - interval '1 month')::date
    ), carried as (
      -- Counters holding a carry-over: what is neither taken nor reserved expires after its date.
      select c.id, c.employee_id, c.code, k.name, k.unit, c.year - 1 as year, d.deadline as expires_on,
             least(cm.quantity - (select coalesce(sum(m.quantity), 0) from app_private.counter_movements m
                                  where m.counter_id = c.id and m.bucket in ('taken', 'planned')),
                   app_private.counter_remaining(c.id)) as amount
      from app_public.counters c
      join app_public.counter_kinds k on k.code = c.code
      join app_public.employees e on e.id = c.employee_id
      join app_private.counter_movements cm
        on cm.counter_id = c.id and cm.kind = 'carry_over' and cm.period = make_date(c.year, 1, 1) and cm.quantity > 0
      cross join lateral (select (app_private.counter_rule_for(e.main_establishment_id, c.code)).*) rule
      cross join lateral (select app_hidden.counter_carry_over_deadline(rule.carry_over_until, c.year - 1) as deadline) d
      where c.year = v_year and c.is_active and d.deadline is not null
        and p_today between (d.deadline - interval '1 month')::date and d.deadline
    )
    select x.* from (select * from year_end union all select * from carried) x
    where x.amount > 0
      and not exists (select 1 from app_private.counter_expiry_notices n where n.counter_id = x.id and n.expires_on = x.expires_on)
    order by x.id
  loop
    v_account := app_private.employee_account_id(r.employee_id);
    v_notification := null;
    if v_account is not null then
      v_notification := app_private.notify(v_account, 'Congés bientôt perdus',
        format('%s de %s (%s) de %s expire(nt) le %s : posez-les avant cette date.',
               app_hidden.quantity_fr(r.amount, r.unit), r.code, r.name, r.year, app_hidden.fr_date(r.expires_on)),
        'warning', 'counter', r.id);
      v_count := v_count + 1;
    end if;
    insert into app_private.counter_expiry_notices (counter_id, expires_on, notification_id)
    values (r.id, r.expires_on, v_notification)
    on conflict do nothing;
  end loop;
  return v_count;
end;
$$;

-- Scheduled job close_counter_years: last year's end (once), the expiry of carry-overs past
-- their date, the notices of balances about to expire. Returns the number of counters closed
-- or expired plus the notifications sent.
create or replace function app_private.close_counter_years(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_private.counters_close_year(extract(year from p_today)::int - 1, p_today)
       + app_private.counters_expire_carry_over(p_today)
       + app_private.counter_expiry_notify(p_today);
end;
$$;

-- What « Mes compteurs » shows of a counter's year (issue 27 point 5), added to each counter of
-- GET /api/counters/: how it acquires; what a monthly counter will still acquire over the rest of
-- its acquisition period (the months not ended yet, under the contracts known today); what was
-- carried over into it, until when, and how much of it would expire then if not taken; and,
-- while its year is not closed, what of the remaining balance the rule carries over on
-- 31 December and what expires then.
create or replace function app_private.counter_year_facts(p_counter_id int, p_today date) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_counter app_public.counters;
  v_rule app_public.counter_rules;
  v_base text;
  v_amount numeric;
  v_to_come numeric;
  v_carried numeric;
  v_deadline date;
  v_remaining numeric := app_private.counter_remaining(p_counter_id);
  v_used numeric;
  v_from date;
  v_to date;
  v_year_end jsonb;
begin
  select * into v_counter from app_public.counters c where c.id = p_counter_id;
  select est.count_base into v_base
  from app_public.employees e join app_public.establishments est on est.id = e.main_establishment_id
  where e.id = v_counter.employee_id;
  v_rule := app_private.counter_rule_for((select e.main_establishment_id from app_public.employees e
                                          where e.id = v_counter.employee_id), v_counter.code);
  v_base := coalesce(v_base, 'ouvrables');

  if v_counter.acquisition = 'monthly' and v_rule.acquisition = 'monthly' then
    v_amount := app_hidden.counter_rule_amount(v_rule, v_base);
    v_to_come := 0;
    for k in 1..12 loop
      v_from := make_date(v_counter.year - 1, k, 1);
      v_to := (v_from + interval '1 month')::date - 1;
      continue when v_to < p_today
        or exists (select 1 from app_private.counter_movements m
                   where m.counter_id = p_counter_id and m.kind = 'acquisition' and m.period = v_from);
      v_to_come := v_to_come + app_hidden.counter_month_part(v_amount, v_rule.rounding, k,
        app_private.contract_days(v_counter.employee_id, v_from, v_to), v_to - v_from + 1, v_rule.prorate);
    end loop;
  end if;

  select sum(m.quantity) into v_carried from app_private.counter_movements m
  where m.counter_id = p_counter_id and m.kind = 'carry_over' and m.quantity > 0;
  if v_carried > 0 then
    v_deadline := app_hidden.counter_carry_over_deadline(v_rule.carry_over_until, v_counter.year - 1);
    if exists (select 1 from app_private.counter_movements m
               where m.counter_id = p_counter_id and m.kind = 'expiry' and m.period = v_deadline) then
      v_deadline := null;
    end if;
    select coalesce(sum(m.quantity), 0) into v_used from app_private.counter_movements m
    where m.counter_id = p_counter_id and m.bucket in ('taken', 'planned');
  end if;

  if v_rule.id is not null
     and not exists (select 1 from app_private.counter_movements m
                     where m.counter_id = p_counter_id and m.kind in ('carry_over', 'expiry')
                       and m.period = make_date(v_counter.year + 1, 1, 1)) then
    v_year_end := jsonb_build_object(
      'carries_over', app_hidden.fmt_quantity(app_hidden.counter_carried(v_remaining, v_rule.carry_over, v_rule.carry_over_ceiling)),
      'expires', app_hidden.fmt_quantity(greatest(v_remaining, 0)
                   - app_hidden.counter_carried(v_remaining, v_rule.carry_over, v_rule.carry_over_ceiling)),
      'carry_over_until', case when v_rule.carry_over <> 'none'
                               then to_jsonb(app_hidden.counter_carry_over_deadline(v_rule.carry_over_until, v_counter.year)) end);
  end if;

  return jsonb_build_object(
    'acquisition', v_counter.acquisition,
    'to_come', app_hidden.fmt_quantity(coalesce(v_to_come, 0)),
    'carried_over', app_hidden.fmt_quantity(coalesce(v_carried, 0)),
    'carry_over_expires_on', to_jsonb(v_deadline),
    'carry_over_expiring', case when v_deadline is not null
      then app_hidden.fmt_quantity(least(greatest(v_carried - v_used, 0), greatest(v_remaining, 0))) end,
    'year_end', v_year_end);
end;
$$;
--! EndIncluded counters/year.sql
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
    perform app_hidden.not_found('L’emprunt d’identité n’est pas activé sur ce service.', 'WN570');
  end if;
  if nullif(current_setting('app.impersonator_id', true), '') is not null then
    perform app_hidden.forbidden('Vous empruntez déjà l’identité d’un compte : reprenez d’abord votre propre session.', 'WF571');
  end if;
  if not app_hidden.current_account_is_superuser() then
    perform app_hidden.forbidden('Seul un superutilisateur peut emprunter l’identité d’un compte.', 'WF570');
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
    perform app_hidden.forbidden('L’identité d’un autre superutilisateur ne peut pas être empruntée.', 'WF572');
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
    perform app_hidden.not_found('L’emprunt d’identité n’est pas activé sur ce service.', 'WN570');
  end if;
  if v_impersonator is null then
    perform app_hidden.invalid('non_field_errors', 'Vous n’empruntez aucune identité : il n’y a rien à terminer.', 'WV571');
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
            format(E'Bonjour,\n\n%s\n\nSi vous n’êtes pas à l’origine de ce changement et n’en avez pas été prévenu, '
                   'adressez-vous sans attendre au service des ressources humaines ou à l’administrateur.', p_body),
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
--! Included audit/search.sql
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
      'La consultation du journal d’audit est réservée aux comptes ayant la permission audit.view_actionlog et l’accès au back-office.',
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
    perform app_hidden.invalid('target_id', 'L’identifiant de la cible est un entier strictement positif.', 'WV601');
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
--! EndIncluded audit/search.sql
--! Included reference/administration.sql
-- Reference administration of the back-office (SPEC Permissions rule 6: read by every
-- authenticated account, written by staff accounts only): absence categories (a tree of
-- two levels), absence types (reasons), posts, counter associations. The API keeps the
-- reference read-only (POST /api/absence-types/ answers 405): these functions are called by
-- the back-office only. Each write is checked here, then again by the tables' policies
-- (insert/update/delete for staff) and triggers (two-level tree, shared code namespace,
-- orphan rules of sql/counters/triggers.sql), and audited.

insert into app_private.audit_models (model, label) values
  ('absence_category', 'Catégorie d’absence'),
  ('absence_type', 'Motif d’absence'),
  ('absence_type_contract_type', 'Type de contrat d’un motif d’absence'),
  ('counter_association', 'Association motif – compteur'),
  ('post', 'Poste'),
  ('counter_adjustment', 'Ajustement manuel de compteur')
on conflict do nothing;

select app_private.staff_write_policies(array['absence_categories', 'absence_types', 'absence_type_contract_types',
                                              'counter_associations', 'posts']);
select app_private.audit_writes(x.t, x.model)
from (values ('absence_categories', 'absence_category'), ('absence_types', 'absence_type'),
             ('absence_type_contract_types', 'absence_type_contract_type'), ('counter_associations', 'counter_association'),
             ('posts', 'post')) x(t, model);

-- Absence categories --------------------------------------------------------------------------

create or replace function app_hidden.absence_category_json(c app_public.absence_categories) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', c.id, 'code', c.code, 'name', c.name, 'parent', c.parent_id,
    'parent_name', (select p.name from app_public.absence_categories p where p.id = c.parent_id),
    'position', c.position,
    'children', (select count(*) from app_public.absence_categories k where k.parent_id = c.id),
    'types', (select count(*) from app_public.absence_types t where t.category_id = c.id));
$$;

-- The categories in tree order (each root followed by its sub-categories); p_parent keeps
-- the sub-categories of one root.
create or replace function app_public.absence_categories_search(p_parent int default null, p_page int default 1,
                                                                p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.absence_category_json(c) order by u.n)
     from unnest(l.ids) with ordinality u(id, n) join app_public.absence_categories c on c.id = u.id))
  from app_hidden.list_page(array(
    select c.id from app_public.absence_categories c
    left join app_public.absence_categories p on p.id = c.parent_id
    where p_parent is null or c.parent_id = p_parent
    order by coalesce(p.position, c.position), coalesce(p.name, c.name), c.parent_id nulls first, c.position, c.name, c.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.absence_categories_search(integer, integer, integer) is
'SPEC Absence types (category tree of two levels), back-office: one page of the absence categories in
tree order, each root followed by its sub-categories; p_parent keeps the sub-categories of one root.
Readable by every authenticated account.';

create or replace function app_public.absence_category_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absence_categories;
begin
  select * into v from app_public.absence_categories c where c.id = p_id;
  if not found then
    perform app_hidden.not_found('Catégorie d’absence introuvable.');
  end if;
  return app_hidden.absence_category_json(v);
end;
$$;
comment on function app_public.absence_category_get(integer) is
'SPEC Absence types, back-office: one absence category (404 when absent).';

-- Creates (p_id null) or rewrites a category. The two-level tree is the table's trigger
-- (400 under parent); the code is upper-case letters, digits and _ , unique.
create or replace function app_public.absence_category_save(p_id int, p_code text, p_name text, p_parent int,
                                                            p_position int default 0)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := upper(nullif(btrim(p_code), ''));
  v_name text := nullif(btrim(p_name), '');
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.absence_categories c where c.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Catégorie d’absence introuvable.');
    end if;
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif v_code !~ '^[A-Z][A-Z0-9_]{1,31}$' then
    v_errors := app_hidden.add_error(v_errors, 'code',
      'Code invalide : 2 à 32 caractères, une lettre d’abord, puis lettres, chiffres ou _.');
  elsif exists (select 1 from app_public.absence_categories c where c.code = v_code and c.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par une catégorie.', v_code));
  end if;
  if v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le libellé est obligatoire.');
  elsif char_length(v_name) > app_hidden.name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
  end if;
  if p_parent is not null and not exists (select 1 from app_public.absence_categories c where c.id = p_parent) then
    v_errors := app_hidden.add_error(v_errors, 'parent', 'Catégorie parente inconnue.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV515') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.absence_categories (code, name, parent_id, position)
    values (v_code, v_name, p_parent, coalesce(p_position, 0))
    returning id into v_id;
  else
    update app_public.absence_categories c
    set code = v_code, name = v_name, parent_id = p_parent, position = coalesce(p_position, 0)
    where c.id = p_id
      and (c.code, c.name, c.parent_id, c.position) is distinct from (v_code, v_name, p_parent, coalesce(p_position, 0));
  end if;
  return app_public.absence_category_get(v_id);
end;
$$;
comment on function app_public.absence_category_save(integer, text, text, integer, integer) is
'SPEC Absence types and Permissions rule 6, back-office: a staff account creates (p_id null) or rewrites
an absence category; the code is upper-case letters, digits and _, unique, and the tree keeps at most
two levels (400 under parent).';

-- Deletes a category that holds neither sub-category nor absence type.
create or replace function app_public.absence_category_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.absence_categories c where c.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Catégorie d’absence introuvable.');
  end if;
  if exists (select 1 from app_public.absence_categories c where c.parent_id = p_id)
     or exists (select 1 from app_public.absence_types t where t.category_id = p_id) then
    perform app_hidden.invalid(null, 'Cette catégorie contient encore des sous-catégories ou des motifs : elle ne peut pas être supprimée.', 'WV515');
  end if;
  delete from app_public.absence_categories c where c.id = p_id;
  return null;
end;
$$;
comment on function app_public.absence_category_delete(integer) is
'SPEC Absence types and Permissions rule 6, back-office: a staff account deletes a category that holds
neither sub-category nor absence type.';

-- Absence types (reasons) -----------------------------------------------------------------------

-- Every field of an absence type as the back-office edits it (the API's absence_type_json
-- plus what the API does not show: ids, activity, position).
create or replace function app_hidden.absence_type_admin_json(p_id int) returns jsonb
language sql stable as $$
  select app_hidden.absence_type_json(t.id) || jsonb_build_object(
    'category_id', t.category_id,
    'category_label', coalesce(p.name || ' › ', '') || c.name,
    'is_active', t.is_active,
    'employee_requestable', t.employee_requestable,
    'position', t.position,
    'contract_type_ids', coalesce((select jsonb_agg(a.contract_type_id order by a.contract_type_id)
                                   from app_public.absence_type_contract_types a where a.absence_type_id = t.id), '[]'::jsonb),
    'associations', coalesce((select jsonb_agg(jsonb_build_object('id', ca.id, 'counter_code', ca.counter_code, 'is_active', ca.is_active)
                                               order by ca.counter_code)
                              from app_public.counter_associations ca where ca.absence_type_id = t.id), '[]'::jsonb),
    'absences', (select count(*) from app_public.absences a where a.type_id = t.id))
  from app_public.absence_types t
  join app_public.absence_categories c on c.id = t.category_id
  left join app_public.absence_categories p on p.id = c.parent_id
  where t.id = p_id;
$$;

-- Every type, inactive ones included; p_category keeps a category and its sub-categories.
create or replace function app_public.absence_types_search(p_category int default null, p_active boolean default null,
                                                           p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.absence_type_admin_json(u.id) order by u.n) from unnest(l.ids) with ordinality u(id, n)))
  from app_hidden.list_page(array(
    select t.id from app_public.absence_types t
    join app_public.absence_categories c on c.id = t.category_id
    where (p_category is null or c.id = p_category or c.parent_id = p_category)
      and (p_active is null or t.is_active = p_active)
    order by t.position, t.code, t.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.absence_types_search(integer, boolean, integer, integer) is
'SPEC Absence types, back-office: one page of every absence type, inactive ones included, filtered by
category (with its sub-categories) and activity.';

create or replace function app_public.absence_type_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.absence_types t where t.id = p_id) then
    perform app_hidden.not_found('Motif d’absence introuvable.');
  end if;
  return app_hidden.absence_type_admin_json(p_id);
end;
$$;
comment on function app_public.absence_type_get(integer) is
'SPEC Absence types, back-office: one absence type with every field of the SPEC table, inactive or not
(404 when absent).';

-- Creates (p_id null) or rewrites an absence type from its body (every field of the SPEC's
-- table): all field errors at once (400, WV516), the code clash with a post under code
-- (app_hidden.code_namespace_clash, the trigger guarding it again under concurrency), the
-- orphan rule of a deactivation under is_active (sql/counters/triggers.sql).
drop function if exists app_public.absence_type_save(int, jsonb) cascade;
drop function if exists app_public.absence_type_save(int, text, text, int, text, boolean, boolean, numeric, text, int[], boolean, boolean, boolean, text, boolean, boolean, int) cascade;
create or replace function app_public.absence_type_save(p_id int, p_code text default null, p_name text default null,
  p_category int default null, p_unit text default null, p_paid boolean default null, p_splittable boolean default null,
  p_annual_cap numeric default null, p_cap_overrun text default null, p_contract_types int[] default null,
  p_half_day_allowed boolean default null, p_documents_expected boolean default null, p_validation_required boolean default null,
  p_annualisation_effect text default null, p_is_active boolean default null, p_employee_requestable boolean default null,
  p_position int default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := app_hidden.trimmed(p_code);
  v_name text := app_hidden.trimmed(p_name);
  v_category int := p_category;
  v_unit text := coalesce(app_hidden.trimmed(p_unit), 'day');
  v_cap numeric := p_annual_cap;
  v_overrun text := coalesce(app_hidden.trimmed(p_cap_overrun), 'refuse');
  v_effect text := coalesce(app_hidden.trimmed(p_annualisation_effect), 'none');
  v_half_day boolean := coalesce(p_half_day_allowed, false);
  v_contract_types int[] := coalesce(p_contract_types, '{}');
  v_clash text;
  v_id int := p_id;
begin
  if app_hidden.id_list_refusal(v_contract_types) is not null then
    perform app_hidden.invalid('contract_types', app_hidden.id_list_refusal(v_contract_types));
  end if;
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.absence_types t where t.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Motif d’absence introuvable.');
    end if;
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif app_hidden.code_well_formed(v_code) is false then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 16 caractères, lettres, chiffres et _ + -.');
  elsif exists (select 1 from app_public.absence_types t where lower(t.code) = lower(v_code) and t.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par un autre motif d’absence.', v_code));
  else
    v_clash := app_hidden.code_namespace_clash('absence_types', v_code);
    if v_clash is not null then
      v_errors := app_hidden.add_error(v_errors, 'code', v_clash);
    end if;
  end if;
  if v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le libellé est obligatoire.');
  elsif char_length(v_name) > app_hidden.name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
  end if;
  if v_category is null then
    v_errors := app_hidden.add_error(v_errors, 'category', 'La catégorie est obligatoire.');
  elsif not exists (select 1 from app_public.absence_categories c where c.id = v_category) then
    v_errors := app_hidden.add_error(v_errors, 'category', 'Catégorie inconnue.');
  end if;
  if v_unit not in ('day', 'hour') then
    v_errors := app_hidden.add_error(v_errors, 'unit', 'Unité inconnue : Jour (day) ou Heure (hour).');
  elsif v_unit = 'hour' and v_half_day then
    v_errors := app_hidden.add_error(v_errors, 'half_day_allowed', 'Un motif saisi en heures ne se prend pas par demi-journée.');
  end if;
  if v_cap is not null and v_cap <= 0 then
    v_errors := app_hidden.add_error(v_errors, 'annual_cap', 'Le plafond annuel est strictement positif, ou vide pour aucun plafond.');
  elsif v_cap is not null and (v_cap >= 1000000 or v_cap <> round(v_cap, 2)) then
    v_errors := app_hidden.add_error(v_errors, 'annual_cap', 'Au plus 999 999,99, avec deux décimales au plus.');
  end if;
  if v_overrun not in ('refuse', 'warn') then
    v_errors := app_hidden.add_error(v_errors, 'cap_overrun', 'Choix inconnu : Refuser (refuse) ou Avertir (warn).');
  end if;
  if v_effect not in ('none', 'neutralise', 'impute') then
    v_errors := app_hidden.add_error(v_errors, 'annualisation_effect', 'Effet inconnu : none, neutralise ou impute.');
  end if;
  if exists (select 1 from unnest(v_contract_types) x(id) where not exists (select 1 from app_public.contract_types ct where ct.id = x.id)) then
    v_errors := app_hidden.add_error(v_errors, 'contract_types', 'Type de contrat inconnu.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV516') where v_errors <> '{}'::jsonb;

  if p_id is null then
    insert into app_public.absence_types (code, name, category_id, unit, paid, splittable, annual_cap, cap_overrun, is_active,
                                          half_day_allowed, documents_expected, validation_required, annualisation_effect, position,
                                          employee_requestable)
    values (v_code, v_name, v_category, v_unit, coalesce(p_paid, false),
            coalesce(p_splittable, true), v_cap, v_overrun,
            coalesce(p_is_active, true), v_half_day,
            coalesce(p_documents_expected, false),
            coalesce(p_validation_required, true), v_effect,
            coalesce(p_position, 0),
            coalesce(p_employee_requestable, app_hidden.absence_type_requestable_default(v_code)))
    returning id into v_id;
  else
    update app_public.absence_types t set
      code = v_code, name = v_name, category_id = v_category, unit = v_unit,
      paid = coalesce(p_paid, t.paid),
      splittable = coalesce(p_splittable, t.splittable),
      annual_cap = v_cap, cap_overrun = v_overrun,
      is_active = coalesce(p_is_active, t.is_active),
      half_day_allowed = v_half_day,
      documents_expected = coalesce(p_documents_expected, t.documents_expected),
      validation_required = coalesce(p_validation_required, t.validation_required),
      annualisation_effect = v_effect,
      position = coalesce(p_position, t.position),
      employee_requestable = coalesce(p_employee_requestable, t.employee_requestable)
    where t.id = p_id;
  end if;
  -- Contract types concerned: empty means every contract.
  delete from app_public.absence_type_contract_types a
  where a.absence_type_id = v_id and a.contract_type_id <> all (v_contract_types);
  insert into app_public.absence_type_contract_types (absence_type_id, contract_type_id)
  select v_id, x.id from unnest(v_contract_types) x(id)
  on conflict do nothing;
  return app_hidden.absence_type_admin_json(v_id);
end;
$$;
comment on function app_public.absence_type_save(integer, text, text, integer, text, boolean, boolean, numeric, text, integer[], boolean, boolean, boolean, text, boolean, boolean, integer) is
'SPEC Absence types and declaration rule 17, back-office: a staff account creates (p_id null) or rewrites
an absence type (with « demandable par le salarié », issue 29: employee_requestable); all field errors at once, a code equal to a post code refused under code, and a
deactivation that would orphan an active counter refused under is_active.';

-- Deletes a type no absence uses; its associations go first, each under the orphan rule.
create or replace function app_public.absence_type_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.absence_types t where t.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Motif d’absence introuvable.');
  end if;
  if exists (select 1 from app_public.absences a where a.type_id = p_id) then
    perform app_hidden.invalid(null, 'Des absences utilisent ce motif : il ne peut pas être supprimé (désactivez-le).', 'WV516');
  end if;
  delete from app_public.counter_associations ca where ca.absence_type_id = p_id;
  delete from app_public.absence_types t where t.id = p_id;
  return null;
end;
$$;
comment on function app_public.absence_type_delete(integer) is
'SPEC Absence types and declaration rule 17, back-office: a staff account deletes a type that no absence
uses; its counter associations go first, each under the orphan rule.';

-- Posts -----------------------------------------------------------------------------------------

create or replace function app_hidden.post_admin_json(p app_public.posts) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', p.id, 'code', p.code, 'label', p.label, 'establishment', p.establishment_id,
    'establishment_name', (select e.name from app_public.establishments e where e.id = p.establishment_id),
    'start_time', to_char(p.start_time, 'HH24:MI'), 'end_time', to_char(p.end_time, 'HH24:MI'),
    'break_start_time', to_char(p.break_start_time, 'HH24:MI'), 'break_end_time', to_char(p.break_end_time, 'HH24:MI'),
    'break_paid', p.break_paid, 'is_active', p.is_active);
$$;

create or replace function app_public.posts_search(p_establishment int default null, p_active boolean default null,
                                                   p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.post_admin_json(p) order by u.n)
     from unnest(l.ids) with ordinality u(id, n) join app_public.posts p on p.id = u.id))
  from app_hidden.list_page(array(
    select p.id from app_public.posts p join app_public.establishments e on e.id = p.establishment_id
    where (p_establishment is null or p.establishment_id = p_establishment)
      and (p_active is null or p.is_active = p_active)
    order by e.name, lower(p.code), p.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.posts_search(integer, boolean, integer, integer) is
'SPEC Permissions rule 6, back-office: one page of the posts with their hours and break, filtered by
establishment and activity.';

create or replace function app_public.post_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.posts;
begin
  select * into v from app_public.posts p where p.id = p_id;
  if not found then
    perform app_hidden.not_found('Poste introuvable.');
  end if;
  return app_hidden.post_admin_json(v);
end;
$$;
comment on function app_public.post_get(integer) is
'SPEC Permissions rule 6, back-office: one post with its establishment, hours and break (404 when
absent).';

-- Creates (p_id null) or rewrites a post: field errors at once (400, WV517), the code clash
-- with an absence type under code (the same shared rule as absence_type_save).
drop function if exists app_public.post_save(int, jsonb) cascade;
drop function if exists app_public.post_save(int, text, text, int, text, text, text, text, boolean, boolean) cascade;
create or replace function app_public.post_save(p_id int, p_code text default null, p_label text default null,
  p_establishment int default null, p_start_time text default null, p_end_time text default null,
  p_break_start_time text default null, p_break_end_time text default null, p_break_paid boolean default null,
  p_is_active boolean default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := app_hidden.trimmed(p_code);
  v_label text := app_hidden.trimmed(p_label);
  v_establishment int := p_establishment;
  v_start time;
  v_end time;
  v_break_start time;
  v_break_end time;
  v_clash text;
  v_field text;
  v_time text;
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.posts p where p.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Poste introuvable.');
    end if;
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif app_hidden.code_well_formed(v_code) is false then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 16 caractères, lettres, chiffres et _ + -.');
  elsif app_hidden.post_code_used_in_establishment(v_establishment, v_code, p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par un poste de cet établissement.', v_code));
  else
    v_clash := app_hidden.code_namespace_clash('posts', v_code);
    if v_clash is not null then
      v_errors := app_hidden.add_error(v_errors, 'code', v_clash);
    end if;
  end if;
  if v_label is null then
    v_errors := app_hidden.add_error(v_errors, 'label', 'Le libellé est obligatoire.');
  elsif char_length(v_label) > app_hidden.name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'label', app_hidden.max_length_message(app_hidden.name_max_length()));
  end if;
  if v_establishment is null then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'L’établissement est obligatoire.');
  elsif not exists (select 1 from app_public.establishments e where e.id = v_establishment) then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'Établissement inconnu.');
  end if;
  for v_field, v_time in select f, t from unnest(array['start_time', 'end_time', 'break_start_time', 'break_end_time'],
                                                  array[p_start_time, p_end_time, p_break_start_time, p_break_end_time]) u(f, t) loop
    if coalesce(v_time, '') !~ app_hidden.time_pattern()
       and (v_field in ('start_time', 'end_time') or v_time is not null) then
      v_errors := app_hidden.add_error(v_errors, v_field, app_hidden.time_format_message());
    end if;
  end loop;
  perform app_hidden.invalid_fields(v_errors, 'WV517') where v_errors <> '{}'::jsonb;
  v_start := p_start_time::time;
  v_end := p_end_time::time;
  v_break_start := p_break_start_time::time;
  v_break_end := p_break_end_time::time;
  if v_start = v_end then
    v_errors := app_hidden.add_error(v_errors, 'end_time', 'La fin doit différer du début (une fin avant le début finit le lendemain).');
  end if;
  if (v_break_start is null) <> (v_break_end is null) then
    v_errors := app_hidden.add_error(v_errors, case when v_break_start is null then 'break_start_time' else 'break_end_time' end,
                                     'Une pause a un début et une fin.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV517') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.posts (code, label, establishment_id, start_time, end_time, break_start_time, break_end_time, break_paid, is_active)
    values (v_code, v_label, v_establishment, v_start, v_end, v_break_start, v_break_end,
            coalesce(p_break_paid, false), coalesce(p_is_active, true))
    returning id into v_id;
  else
    update app_public.posts p set
      code = v_code, label = v_label, establishment_id = v_establishment, start_time = v_start, end_time = v_end,
      break_start_time = v_break_start, break_end_time = v_break_end,
      break_paid = coalesce(p_break_paid, p.break_paid),
      is_active = coalesce(p_is_active, p.is_active)
    where p.id = p_id;
  end if;
  return app_public.post_get(v_id);
end;
$$;
comment on function app_public.post_save(integer, text, text, integer, text, text, text, text, boolean, boolean) is
'SPEC Absence types (code compared with the codes of posts) and Permissions rule 6, back-office: a staff
account creates (p_id null) or rewrites a post; all field errors at once, a code equal to an absence
type code refused under code.';

-- Counter associations (reason – counter) --------------------------------------------------------

create or replace function app_hidden.counter_association_json(p_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', ca.id, 'absence_type', ca.absence_type_id, 'absence_type_code', t.code, 'absence_type_name', t.name,
    'absence_type_active', t.is_active, 'counter_code', ca.counter_code, 'counter_name', k.name,
    'is_consumable', k.is_consumable, 'is_active', ca.is_active)
  from app_public.counter_associations ca
  join app_public.absence_types t on t.id = ca.absence_type_id
  join app_public.counter_kinds k on k.code = ca.counter_code
  where ca.id = p_id;
$$;

create or replace function app_public.counter_associations_search(p_counter_code text default null, p_absence_type int default null,
                                                                   p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.counter_association_json(u.id) order by u.n) from unnest(l.ids) with ordinality u(id, n)))
  from app_hidden.list_page(array(
    select ca.id from app_public.counter_associations ca join app_public.absence_types t on t.id = ca.absence_type_id
    where (p_counter_code is null or ca.counter_code = p_counter_code)
      and (p_absence_type is null or ca.absence_type_id = p_absence_type)
    order by ca.counter_code, t.code, ca.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.counter_associations_search(text, integer, integer, integer) is
'SPEC Absence types (counter_codes) and declaration rule 17, back-office: one page of the associations
between absence types and counters, filtered by counter code and absence type.';

create or replace function app_public.counter_association_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.counter_associations ca where ca.id = p_id) then
    perform app_hidden.not_found('Association introuvable.');
  end if;
  return app_hidden.counter_association_json(p_id);
end;
$$;
comment on function app_public.counter_association_get(integer) is
'SPEC declaration rule 17, back-office: one association between an absence type and a counter (404 when
absent).';

-- Creates (p_id null) or rewrites an association. Deactivating it, or moving it to another
-- reason or counter, is refused under is_active while it would orphan an active counter
-- (trigger of sql/counters/triggers.sql, WV311).
create or replace function app_public.counter_association_save(p_id int, p_absence_type int, p_counter_code text,
                                                               p_is_active boolean default true)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := upper(nullif(btrim(p_counter_code), ''));
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.counter_associations ca where ca.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Association introuvable.');
    end if;
  end if;
  if p_absence_type is null then
    v_errors := app_hidden.add_error(v_errors, 'absence_type', 'Le motif est obligatoire.');
  elsif not exists (select 1 from app_public.absence_types t where t.id = p_absence_type) then
    v_errors := app_hidden.add_error(v_errors, 'absence_type', 'Motif inconnu.');
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Le compteur est obligatoire.');
  elsif not exists (select 1 from app_public.counter_kinds k where k.code = v_code) then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Compteur inconnu.');
  elsif exists (select 1 from app_public.counter_associations ca
                where ca.absence_type_id = p_absence_type and ca.counter_code = v_code and ca.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Ce motif est déjà associé à ce compteur.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV312') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.counter_associations (absence_type_id, counter_code, is_active)
    values (p_absence_type, v_code, coalesce(p_is_active, true))
    returning id into v_id;
  else
    update app_public.counter_associations ca
    set absence_type_id = p_absence_type, counter_code = v_code, is_active = coalesce(p_is_active, ca.is_active)
    where ca.id = p_id
      and (ca.absence_type_id, ca.counter_code, ca.is_active) is distinct from (p_absence_type, v_code, coalesce(p_is_active, ca.is_active));
  end if;
  return app_hidden.counter_association_json(v_id);
end;
$$;
comment on function app_public.counter_association_save(integer, integer, text, boolean) is
'SPEC declaration rule 17 and Permissions rule 6, back-office: a staff account creates (p_id null) or
rewrites an association between an absence type and a counter; deactivating it or moving it is refused
under is_active while it would orphan an active counter.';

-- Deletes an association, unless it would orphan an active counter (trigger, WV311).
create or replace function app_public.counter_association_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.counter_associations ca where ca.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Association introuvable.');
  end if;
  delete from app_public.counter_associations ca where ca.id = p_id;
  return null;
end;
$$;
comment on function app_public.counter_association_delete(integer) is
'SPEC declaration rule 17 and Permissions rule 6, back-office: a staff account deletes an association
between an absence type and a counter, unless it would orphan an active counter.';
--! EndIncluded reference/administration.sql
--! Included counters/balances.sql
-- Counters in the back-office: lists and the read-only journal for the readers of
-- app_public.counters (row-level security, sql/counters/policies.sql), the activation rule
-- (sql/counters/triggers.sql) and the manual adjustment, written by those who write counters
-- (SPEC Permissions: employee.change_employee_record on the employee, or staff status). An
-- adjustment is one journal movement with its reason, serialised on the counter row like every
-- other movement, and audited; the journal stays the only way a balance moves.

insert into app_private.audit_models (model, label) values
  ('counter', 'Compteur (activation)')
on conflict do nothing;

-- Does the acting account write the counters of this employee? Never NULL (sql/guards.sql).
create or replace function app_hidden.may_write_counter(p_employee int) returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.current_account_is_staff()
      or coalesce(app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', p_employee), false);
$$;

-- The balances and identity of counters the caller already read through RLS (owner: the
-- journal has no policy for the request roles).
create or replace function app_private.counters_admin_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select b.counter_id, jsonb_build_object(
    'id', b.counter_id, 'employee', b.employee_id,
    'employee_name', e.last_name || ' ' || e.first_name,
    'code', b.code, 'name', k.name, 'unit', k.unit, 'is_consumable', k.is_consumable,
    'year', b.year, 'is_active', b.is_active,
    'acquired', app_hidden.fmt_quantity(b.acquired), 'taken', app_hidden.fmt_quantity(b.taken),
    'planned', app_hidden.fmt_quantity(b.planned), 'remaining', app_hidden.fmt_quantity(b.remaining))
  from app_private.counter_balances b
  join app_public.employees e on e.id = b.employee_id
  join app_public.counter_kinds k on k.code = b.code
  where b.counter_id = any (p_ids);
$$;

create or replace function app_public.counters_search(p_employee int default null, p_code text default null, p_year int default null,
                                                      p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(j.doc order by u.n)
     from unnest(l.ids) with ordinality u(id, n) join app_private.counters_admin_json(l.ids) j on j.id = u.id))
  from app_hidden.list_page(array(
    select c.id from app_public.counters c
    join app_public.employees e on e.id = c.employee_id
    where (p_employee is null or c.employee_id = p_employee)
      and (p_code is null or c.code = p_code)
      and (p_year is null or c.year = p_year)
    order by c.year desc, e.last_name, e.first_name, c.code, c.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.counters_search(integer, text, integer, integer, integer) is
'SPEC Counters and Permissions (employee.change_employee_record), back-office: one page of the counters
the caller reads, with their balances (Acquis, Pris, Planifiés, Restant), filtered by employee, counter
code and year, latest year first.';

-- One counter the caller reads (else 404), with what it may do on it.
create or replace function app_public.counter_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
begin
  select c.employee_id into v_employee from app_public.counters c where c.id = p_id;
  if not found then
    perform app_hidden.not_found('Compteur introuvable.', 'WN301');
  end if;
  return (select j.doc from app_private.counters_admin_json(array[p_id]) j)
         || jsonb_build_object('may_write', app_hidden.may_write_counter(v_employee));
end;
$$;
comment on function app_public.counter_get(integer) is
'SPEC Counters, back-office: one counter the caller reads (else 404) with its balances and whether the
caller may write it (may_write).';

-- The journal of a counter the caller reads, in the order it was written, read-only.
create or replace function app_private.counter_journal_rows(p_id int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', m.id, 'at', m.created_at, 'bucket', m.bucket, 'quantity', app_hidden.fmt_quantity(m.quantity),
    'kind', m.kind, 'absence', m.absence_id, 'transition', m.transition, 'comment', m.comment,
    'actor_name', (select coalesce(nullif(btrim(coalesce(e.first_name, '') || ' ' || coalesce(e.last_name, '')), ''), a.username)
                   from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
                   where a.id = m.actor_account_id))
    order by m.id), '[]'::jsonb)
  from app_private.counter_movements m where m.counter_id = p_id;
$$;

create or replace function app_public.counter_journal(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.counters c where c.id = p_id) then
    perform app_hidden.not_found('Compteur introuvable.', 'WN301');
  end if;
  return app_private.counter_journal_rows(p_id);
end;
$$;
comment on function app_public.counter_journal(integer) is
'SPEC Counters and declaration rule 9, back-office: the movements of the journal of a counter the caller
reads, in the order they were written, read-only (404 otherwise).';

-- Owner-side writes of the two functions below, once they checked the caller.
create or replace function app_private.counter_write_adjustment(p_id int, p_bucket text, p_quantity numeric, p_reason text)
returns bigint
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_counter app_public.counters;
  v_before numeric;
  v_movement bigint;
begin
  -- Serialised with the other movements of the counter (absence_sync_counters locks it too).
  select * into v_counter from app_public.counters c where c.id = p_id for update;
  v_before := app_private.counter_remaining(p_id);
  if (v_before + (case when p_bucket = 'acquired' then p_quantity else -p_quantity end)) < 0 then
    perform app_hidden.invalid('quantity', format(
      'Cet ajustement rendrait le solde restant négatif (restant actuel : %s).', app_hidden.fmt_quantity(v_before)), 'WV313');
  end if;
  insert into app_private.counter_movements (counter_id, bucket, quantity, kind, actor_account_id, comment)
  values (p_id, p_bucket, p_quantity, 'adjustment', app_hidden.current_account_id(), p_reason)
  returning id into v_movement;
  perform app_private.write_audit('Creation', 'counter_adjustment', v_movement, null, jsonb_build_object(
    'counter', p_id, 'employee', v_counter.employee_id, 'code', v_counter.code, 'year', v_counter.year,
    'bucket', p_bucket, 'quantity', app_hidden.fmt_quantity(p_quantity), 'reason', p_reason,
    'remaining_before', app_hidden.fmt_quantity(v_before),
    'remaining_after', app_hidden.fmt_quantity(app_private.counter_remaining(p_id))));
  return v_movement;
end;
$$;

create or replace function app_private.counter_write_activation(p_id int, p_is_active boolean) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_old app_public.counters;
begin
  select * into v_old from app_public.counters c where c.id = p_id for update;
  if v_old.is_active = p_is_active then
    return;
  end if;
  -- The activation rule (a consumable counter needs an active association to an active
  -- reason) is the trigger of the table: 400 under is_active.
  update app_public.counters c set is_active = p_is_active where c.id = p_id;
  perform app_private.write_audit('Modification', 'counter', p_id,
    jsonb_build_object('is_active', v_old.is_active, 'code', v_old.code, 'year', v_old.year, 'employee', v_old.employee_id),
    jsonb_build_object('is_active', p_is_active, 'code', v_old.code, 'year', v_old.year, 'employee', v_old.employee_id));
end;
$$;

-- A manual adjustment: one movement of the journal (kind adjustment) with its reason.
-- Acquis moves the balance up or down by the quantity; Pris the other way.
create or replace function app_public.counter_adjust(p_id int, p_bucket text, p_quantity numeric, p_reason text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
  v_errors jsonb := '{}';
  v_reason text := nullif(btrim(p_reason), '');
begin
  select c.employee_id into v_employee from app_public.counters c where c.id = p_id;
  if not found then
    perform app_hidden.not_found('Compteur introuvable.', 'WN301');
  end if;
  if not app_hidden.may_write_counter(v_employee) then
    perform app_hidden.forbidden('Les compteurs s’ajustent par les comptes RH du périmètre du salarié ou du personnel d’administration.', 'WF301');
  end if;
  if p_bucket is null or p_bucket not in ('acquired', 'taken') then
    v_errors := app_hidden.add_error(v_errors, 'bucket', 'Colonne inconnue : Acquis (acquired) ou Pris (taken).');
  end if;
  if p_quantity is null then
    v_errors := app_hidden.add_error(v_errors, 'quantity', 'La quantité est obligatoire.');
  elsif p_quantity = 0 or abs(p_quantity) >= 1000 or p_quantity <> round(p_quantity, 2) then
    v_errors := app_hidden.add_error(v_errors, 'quantity', 'Une quantité non nulle, entre -999,99 et 999,99, deux décimales au plus.');
  end if;
  if v_reason is null then
    v_errors := app_hidden.add_error(v_errors, 'reason', 'Le motif de l’ajustement est obligatoire.');
  elsif char_length(v_reason) > app_hidden.adjustment_reason_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'reason', app_hidden.max_length_message(app_hidden.adjustment_reason_max_length()));
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV313') where v_errors <> '{}'::jsonb;
  perform app_private.counter_write_adjustment(p_id, p_bucket, p_quantity, v_reason);
  return app_public.counter_get(p_id);
end;
$$;
comment on function app_public.counter_adjust(integer, text, numeric, text) is
'SPEC Counters and Permissions (employee.change_employee_record), back-office: HR of the employee''s
perimeter or a staff account adjusts a counter by one journal movement with its reason (Acquis moves the
balance by the quantity, Pris the other way); audited.';

-- Opens or closes a counter; opening a consumable one needs an active association to an
-- active reason (trigger, WV310 under is_active).
create or replace function app_public.counter_set_active(p_id int, p_is_active boolean) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
begin
  select c.employee_id into v_employee from app_public.counters c where c.id = p_id;
  if not found then
    perform app_hidden.not_found('Compteur introuvable.', 'WN301');
  end if;
  if not app_hidden.may_write_counter(v_employee) then
    perform app_hidden.forbidden('Les compteurs s’ajustent par les comptes RH du périmètre du salarié ou du personnel d’administration.', 'WF301');
  end if;
  if p_is_active is null then
    perform app_hidden.invalid('is_active', 'Ce champ est obligatoire.', 'WV313');
  end if;
  perform app_private.counter_write_activation(p_id, p_is_active);
  return app_public.counter_get(p_id);
end;
$$;
comment on function app_public.counter_set_active(integer, boolean) is
'SPEC declaration rule 17 and Permissions (employee.change_employee_record), back-office: HR of the
employee''s perimeter or a staff account opens or closes a counter; a consumable counter opens only with
an active association to an active reason (400 under is_active).';
--! EndIncluded counters/balances.sql
--! Included org/role_attributions.sql
-- Role attributions in the back-office (issue 13, point 4): a role given to an account with
-- optional dates and establishments (SPEC Roles). Reference administration: written by staff
-- accounts only (SPEC Permissions rule 6). Who may grant what:
--   * the account must be in the editor's employee-record perimeter (its record is in the
--     perimeter of employee.change_employee_record; an account without record needs that
--     permission on the whole association); a superuser reaches every account. Outside: 404
--     (app_hidden.refuse_outside_or_forbid), never a 403 that would confirm the account;
--   * a non-staff account of that reach: 403 (WF580);
--   * nobody changes their own roles (WF581);
--   * the editor covers every right of the account before the write and after it
--     (app_hidden.account_rights_covered: ranks among the manager roles, permissions over
--     their establishments, staff and superuser accounts): an editor never grants more than
--     it holds, nor removes the roles of an account that outranks it (WF582).
-- Reads follow the policies of role_attributions (one's own, and the directory readers).

insert into app_private.audit_models (model, label) values ('role_attribution', 'Attribution de rôle')
on conflict do nothing;

-- Writes: API functions run as wfm_api; staff only, the functions check the rest.
select app_private.staff_write_policies(array['role_attributions', 'role_attribution_establishments']);

-- One audit line per write of an attribution, establishments included (written by the
-- functions below, which know the whole attribution; the import and the Salarié grant of a
-- new account are not role administration).
create or replace function app_private.role_attribution_snapshot(p_id int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object('id', ra.id, 'account_id', ra.account_id, 'role', r.name,
                            'start_date', ra.start_date, 'end_date', ra.end_date,
                            'establishments', coalesce((select jsonb_agg(x.establishment_id order by x.establishment_id)
                                                        from app_public.role_attribution_establishments x
                                                        where x.attribution_id = ra.id), '[]'::jsonb))
  from app_public.role_attributions ra join app_public.roles r on r.id = ra.role_id
  where ra.id = p_id;
$$;

-- Is this account in the caller's reach for role administration (see the head of the file)?
-- Never NULL (app_private.never_null_guards): false for an unknown or NULL account.
create or replace function app_hidden.account_in_role_reach(p_account int) returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
begin
  if p_account is null or not exists (select 1 from app_public.accounts a where a.id = p_account) then
    return false;
  end if;
  if app_hidden.current_account_is_superuser() then
    return true;
  end if;
  select a.employee_id into v_employee from app_public.accounts a where a.id = p_account;
  if v_employee is null then
    return app_hidden.perimeter_is_whole('employee.change_employee_record');
  end if;
  return app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', v_employee);
end;
$$;

-- The refusals before any write on the attributions of an account, in the SPEC's order:
-- outside the reach 404, then 403 (not staff, one's own roles, rights not covered).
create or replace function app_hidden.role_attribution_check_editor(p_account int) returns void
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
begin
  if not app_hidden.account_in_role_reach(p_account) then
    select a.employee_id into v_employee from app_public.accounts a where a.id = p_account;
    if v_employee is null then
      perform app_hidden.not_found('Compte introuvable dans votre périmètre.', 'WN580');
    end if;
    perform app_hidden.refuse_outside_or_forbid(v_employee,
      'Les attributions de rôle s’écrivent par les comptes du personnel d’administration uniquement.', 'WF580');
  end if;
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden(
      'Les attributions de rôle s’écrivent par les comptes du personnel d’administration uniquement.', 'WF580');
  end if;
  if p_account = app_hidden.current_account_id() then
    perform app_hidden.forbidden('Vous ne pouvez pas modifier vos propres rôles.', 'WF581');
  end if;
  if not app_hidden.account_rights_covered(p_account) then
    perform app_hidden.forbidden(
      'Ce compte détient des droits que vous ne détenez pas (rôle de rang supérieur, établissements hors de votre périmètre, statut staff ou superutilisateur) : vous ne pouvez pas modifier ses rôles.',
      'WF582');
  end if;
end;
$$;

-- After the write, in a statement of its own (it sees the write): the editor covers every
-- right the account now holds.
create or replace function app_hidden.role_attribution_check_granted(p_account int) returns void
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not app_hidden.account_rights_covered(p_account) then
    perform app_hidden.forbidden(
      'Vous ne pouvez attribuer un rôle que si vous détenez vous-même un rôle de même rang ou supérieur sur ces établissements.',
      'WF582');
  end if;
end;
$$;

create or replace function app_hidden.role_attribution_json(p_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', ra.id, 'account', ra.account_id, 'role', r.name,
    'start_date', ra.start_date, 'end_date', ra.end_date,
    'establishments', coalesce((select jsonb_agg(x.establishment_id order by x.establishment_id)
                                from app_public.role_attribution_establishments x where x.attribution_id = ra.id), '[]'::jsonb),
    'establishment_names', coalesce((select jsonb_agg(e.name order by e.name)
                                     from app_public.role_attribution_establishments x
                                     join app_public.establishments e on e.id = x.establishment_id
                                     where x.attribution_id = ra.id), '[]'::jsonb),
    'restricts_by_establishment', r.opens_manager_workspace,
    'is_current', app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date),
    'created_at', ra.created_at)
  from app_public.role_attributions ra join app_public.roles r on r.id = ra.role_id
  where ra.id = p_id;
$$;

-- The attributions of an account that the caller reads (policies: its own, directory readers).
create or replace function app_public.account_role_attributions(p_account int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.accounts;
begin
  select * into v from app_public.accounts a where a.id = p_account;
  if not found then
    perform app_hidden.not_found('Compte introuvable.', 'WN580');
  end if;
  return jsonb_build_object(
    'account', jsonb_build_object('id', v.id, 'username', v.username, 'employee', v.employee_id,
                                  'name', app_hidden.account_display_name(v.id), 'is_active', v.is_active,
                                  'is_staff', v.is_staff, 'is_superuser', v.is_superuser),
    'can_edit', app_hidden.current_account_is_staff() and app_hidden.account_in_role_reach(v.id)
                and v.id is distinct from app_hidden.current_account_id() and app_hidden.account_rights_covered(v.id),
    'results', coalesce((select jsonb_agg(app_hidden.role_attribution_json(ra.id)
                                          order by ra.start_date nulls first, ra.id)
                         from app_public.role_attributions ra where ra.account_id = p_account), '[]'::jsonb));
end;
$$;
comment on function app_public.account_role_attributions(integer) is
'SPEC Roles, back-office: the role attributions of an account that the caller reads (its own, or as a
directory reader), with their dates and establishments (404 when the account is not found).';

-- Validates dates and establishments of an attribution of role p_role (new or changed) and
-- writes its establishments; field errors under role, start_date, end_date, establishments.
drop function if exists app_hidden.role_attribution_fields(int, app_public.roles, int, jsonb) cascade;
drop function if exists app_hidden.role_attribution_fields(int, app_public.roles, int, date, date, int[]) cascade;
create or replace function app_hidden.role_attribution_fields(p_account int, p_role app_public.roles, p_id int,
  p_start_date date, p_end_date date, p_establishments int[])
returns table (start_date date, end_date date, establishment_ids int[])
language plpgsql stable as $$
declare
  v_errors jsonb := '{}';
  v_start date := p_start_date;
  v_end date := p_end_date;
  v_ids int[] := coalesce(p_establishments, '{}');
  v_unknown int;
begin
  if app_hidden.id_list_refusal(v_ids) is not null then
    perform app_hidden.invalid('establishments', app_hidden.id_list_refusal(v_ids));
  end if;
  if v_start is not null and v_end is not null and v_end < v_start then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'La fin doit être le jour du début ou après.');
  end if;
  if cardinality(v_ids) > 0 and not p_role.opens_manager_workspace then
    v_errors := app_hidden.add_error(v_errors, 'establishments',
      format('Le rôle %s ne se restreint pas par établissement : laissez la liste vide.', p_role.name));
  end if;
  select i into v_unknown from unnest(v_ids) i
  where not exists (select 1 from app_public.establishments e where e.id = i) limit 1;
  if v_unknown is not null then
    v_errors := app_hidden.add_error(v_errors, 'establishments', format('Établissement n° %s introuvable.', v_unknown));
  end if;
  if not v_errors ? 'end_date' and exists (select 1 from app_public.role_attributions ra
             where ra.account_id = p_account and ra.role_id = p_role.id and ra.id is distinct from p_id
               and daterange(ra.start_date, ra.end_date, '[]') && daterange(v_start, v_end, '[]')) then
    v_errors := app_hidden.add_error(v_errors, 'start_date',
      format('Ce compte détient déjà le rôle %s sur une période qui chevauche celle-ci.', p_role.name));
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV580') where v_errors <> '{}'::jsonb;
  return query select v_start, v_end, v_ids;
end;
$$;

-- Grants a role to an account: p_role (its name), p_start_date, p_end_date, p_establishments (ids), each optional but the role.
drop function if exists app_public.role_attribution_grant(int, jsonb) cascade;
drop function if exists app_public.role_attribution_grant(int, text, date, date, int[]) cascade;
create or replace function app_public.role_attribution_grant(p_account int, p_role text, p_start_date date default null,
  p_end_date date default null, p_establishments int[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_role app_public.roles;
  v_name text;
  v_fields record;
  v_id int;
begin
  perform app_hidden.role_attribution_check_editor(p_account);
  v_name := app_hidden.trimmed(p_role);
  select * into v_role from app_public.roles r where r.name = v_name;
  if v_name is null then
    perform app_hidden.invalid('role', 'Choisissez un rôle.', 'WV580');
  elsif not found then
    perform app_hidden.invalid('role', format('Rôle « %s » inconnu.', v_name), 'WV580');
  end if;
  select * into v_fields from app_hidden.role_attribution_fields(p_account, v_role, null, p_start_date, p_end_date, p_establishments);
  insert into app_public.role_attributions (account_id, role_id, start_date, end_date)
  values (p_account, v_role.id, v_fields.start_date, v_fields.end_date)
  returning id into v_id;
  insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
  select v_id, i from unnest(v_fields.establishment_ids) i;
  perform app_hidden.role_attribution_check_granted(p_account);
  perform app_private.write_audit('Creation', 'role_attribution', v_id, null, app_private.role_attribution_snapshot(v_id));
  return app_hidden.role_attribution_json(v_id);
end;
$$;
comment on function app_public.role_attribution_grant(integer, text, date, date, integer[]) is
'SPEC Roles and Permissions rule 6, back-office: a staff account grants a role to an account of its
employee-record perimeter, with optional dates and establishments; never its own roles, never more than
it holds (403), 404 outside its reach.';

-- Changes the dates and establishments of an attribution (the role stays: grant another one).
-- Every argument is written: a null date is none, null establishments are none.
drop function if exists app_public.role_attribution_change(int, jsonb) cascade;
drop function if exists app_public.role_attribution_change(int, date, date, int[]) cascade;
create or replace function app_public.role_attribution_change(p_id int, p_start_date date default null,
  p_end_date date default null, p_establishments int[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.role_attributions;
  v_role app_public.roles;
  v_before jsonb;
  v_fields record;
begin
  -- Read, refuse, then lock: FOR UPDATE passes the write policies (staff), so a non-staff
  -- reader would get 404 instead of the 403 it is owed.
  select * into v from app_public.role_attributions ra where ra.id = p_id;
  if not found then
    perform app_hidden.not_found('Attribution de rôle introuvable.', 'WN580');
  end if;
  perform app_hidden.role_attribution_check_editor(v.account_id);
  perform 1 from app_public.role_attributions ra where ra.id = p_id for update;
  select * into v_role from app_public.roles r where r.id = v.role_id;
  select * into v_fields from app_hidden.role_attribution_fields(v.account_id, v_role, p_id, p_start_date, p_end_date, p_establishments);
  v_before := app_private.role_attribution_snapshot(p_id);
  update app_public.role_attributions ra set start_date = v_fields.start_date, end_date = v_fields.end_date
  where ra.id = p_id;
  delete from app_public.role_attribution_establishments x
  where x.attribution_id = p_id and x.establishment_id <> all (v_fields.establishment_ids);
  insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
  select p_id, i from unnest(v_fields.establishment_ids) i
  on conflict do nothing;
  perform app_hidden.role_attribution_check_granted(v.account_id);
  if v_before is distinct from app_private.role_attribution_snapshot(p_id) then
    perform app_private.write_audit('Modification', 'role_attribution', p_id, v_before, app_private.role_attribution_snapshot(p_id));
  end if;
  return app_hidden.role_attribution_json(p_id);
end;
$$;
comment on function app_public.role_attribution_change(integer, date, date, integer[]) is
'SPEC Roles, back-office: changes the dates and establishments of an attribution (every key written; the
role stays), under the rules of the grant.';

-- Removes an attribution (to keep its history, change its end date instead).
create or replace function app_public.role_attribution_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.role_attributions;
begin
  -- Read, refuse, then lock: FOR UPDATE passes the write policies (staff), so a non-staff
  -- reader would get 404 instead of the 403 it is owed.
  select * into v from app_public.role_attributions ra where ra.id = p_id;
  if not found then
    perform app_hidden.not_found('Attribution de rôle introuvable.', 'WN580');
  end if;
  perform app_hidden.role_attribution_check_editor(v.account_id);
  perform 1 from app_public.role_attributions ra where ra.id = p_id for update;
  perform app_private.write_audit('Suppression', 'role_attribution', p_id, app_private.role_attribution_snapshot(p_id), null);
  delete from app_public.role_attributions ra where ra.id = p_id;
  return null;
end;
$$;
comment on function app_public.role_attribution_delete(integer) is
'SPEC Roles, back-office: removes an attribution under the rules of the grant; to keep its history,
change its end date instead.';

-- The back-office list of attributions the caller reads, filtered by account, role and
-- establishment (an attribution without establishment covers them all); current ones first.
create or replace function app_public.role_attributions_search(p_account int default null, p_role text default null,
                                                               p_establishment int default null,
                                                               p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.role_attribution_json(ra.id)
                      || jsonb_build_object('account_username', a.username, 'account_name', app_hidden.account_display_name(a.id))
                      order by u.n)
     from unnest(l.ids) with ordinality u(id, n)
     join app_public.role_attributions ra on ra.id = u.id
     join app_public.accounts a on a.id = ra.account_id))
  from app_hidden.list_page(array(
    select ra.id
    from app_public.role_attributions ra
    join app_public.roles r on r.id = ra.role_id
    join app_public.accounts a on a.id = ra.account_id
    where (p_account is null or ra.account_id = p_account)
      and (p_role is null or r.name = p_role)
      and (p_establishment is null
           or (r.opens_manager_workspace
               and (not exists (select 1 from app_public.role_attribution_establishments x where x.attribution_id = ra.id)
                    or exists (select 1 from app_public.role_attribution_establishments x
                               where x.attribution_id = ra.id and x.establishment_id = p_establishment))))
    order by app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date) desc, r.precedence, lower(a.username), ra.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.role_attributions_search(integer, text, integer, integer, integer) is
'SPEC Roles, back-office: one page of the role attributions the caller reads, filtered by account, role
and establishment (an attribution without establishment covers them all), current ones first.';

-- One attribution as the caller reads it, with what the back-office shows and may do.
create or replace function app_public.role_attribution_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.role_attributions;
begin
  select * into v from app_public.role_attributions ra where ra.id = p_id;
  if not found then
    perform app_hidden.not_found('Attribution de rôle introuvable.', 'WN580');
  end if;
  return app_hidden.role_attribution_json(p_id)
      || jsonb_build_object(
           'account_username', (select a.username from app_public.accounts a where a.id = v.account_id),
           'account_name', app_hidden.account_display_name(v.account_id),
           'account_employee', (select a.employee_id from app_public.accounts a where a.id = v.account_id),
           'can_edit', app_hidden.current_account_is_staff() and app_hidden.account_in_role_reach(v.account_id)
                       and v.account_id is distinct from app_hidden.current_account_id()
                       and app_hidden.account_rights_covered(v.account_id));
end;
$$;
comment on function app_public.role_attribution_get(integer) is
'SPEC Roles, back-office: one role attribution the caller reads (else 404), with what the back-office
shows and may do on it.';
--! EndIncluded org/role_attributions.sql
--! Included employees/contracts.sql
-- Adding a contract from the back-office (issue 13, point 4): the API writes contracts through
-- the employee record (PUT/PATCH /api/employees/<id>/ with the whole `contracts` list), so the
-- back-office form of one new contract goes through that same function, its rules, perimeter
-- and audit: the record's contracts as they are, plus the new one.

-- The contracts of an employee as the `contracts` input of employee_update, every one kept.
-- Read as the owner: the list only feeds employee_update, which decides whether the caller may
-- write this record at all (a list shortened by the caller's reading would delete contracts).
create or replace function app_private.employee_contracts_input(p_employee int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'type', c.contract_type_id, 'start_date', c.start_date,
                                               'end_date', c.end_date, 'trial_end_date', c.trial_end_date,
                                               'job_title', c.job_title, 'weekly_hours', c.weekly_hours)
                            order by c.start_date, c.id), '[]'::jsonb)
  from app_public.contracts c where c.employee_id = p_employee;
$$;

-- {"type", "start_date", "end_date"?, "trial_end_date"?, "job_title"?, "weekly_hours"?}: the
-- employee record with its new contract (errors under `contracts`, as the API answers them).
create or replace function app_public.employee_contract_add(p_employee int, p_contract jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if jsonb_typeof(p_contract) is distinct from 'object' then
    perform app_hidden.invalid('contracts', 'Un contrat (objet) est attendu.', 'WV501');
  end if;
  return app_public.employee_update(p_employee, p_contracts =>
    app_private.employee_contracts_input(p_employee) || jsonb_build_array(p_contract - 'id'));
end;
$$;
comment on function app_public.employee_contract_add(integer, jsonb) is
'SPEC Permissions (employee.change_employee_record), back-office: adds one contract to an employee record
through employee_update, with its rules, perimeter and audit; returns the record (errors under the
contract fields).';

-- Editing or removing one contract (issue 13, point 4): the same path as the add, the record's
-- contracts with that one changed or left out, through employee_update. Employees carry no
-- version column: the form's `version` is the fingerprint of the contract list it was drawn
-- from, so a list changed meanwhile (another HR's edit) answers 409 and writes nothing.
-- Given to the accounts that may write the record only (the form's hidden field), null otherwise.
create or replace function app_hidden.employee_contracts_version(p_employee int) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select md5(app_private.employee_contracts_input(p_employee)::text)
  where app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', p_employee);
$$;

-- employee_update's errors on `contracts` name the contract by its rank in the rebuilt list;
-- the back-office form shows one contract: each message goes under the field it concerns,
-- without the rank. p_detail is the DETAIL of the refusal (a JSON object of fields, or one field).
create or replace function app_private.employee_contract_form_errors(p_message text, p_detail text) returns jsonb
language sql immutable as $$
  with errors as (
    select e.key, m
    from jsonb_each(case when left(p_detail, 1) = '{' then p_detail::jsonb
                         else jsonb_build_object(coalesce(p_detail, 'non_field_errors'), jsonb_build_array(p_message)) end) e,
         jsonb_array_elements_text(e.value) m
  ), placed as (
    select case when key <> 'contracts' then key
                when m ~ 'se chevauchent' then 'start_date'
                when m ~ 'type de contrat' then 'type'
                when m ~ 'période d’essai' then 'trial_end_date'
                when m ~ 'date de fin' then 'end_date'
                when m ~ 'date de début' then 'start_date'
                when m ~ 'intitulé de poste' then 'job_title'
                when m ~ 'durée hebdomadaire' then 'weekly_hours'
                else 'non_field_errors' end as field,
           case when m ~ 'se chevauchent'
                then 'Ce contrat chevauche un autre contrat du salarié : un salarié a un seul contrat à la fois.'
                else regexp_replace(m, '^Contrat n° [0-9]+ : (.)', '\1') end as message
    from errors
  )
  select jsonb_object_agg(field, messages)
  from (select field, jsonb_agg(upper(left(message, 1)) || substr(message, 2)) as messages from placed group by field) f;
$$;

-- employee_update with the contract list given, its field refusals re-raised under the form's fields.
create or replace function app_private.employee_contracts_save(p_employee int, p_contracts jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_message text;
  v_detail text;
begin
  return app_public.employee_update(p_employee, p_contracts => p_contracts);
exception when sqlstate 'WV501' then
  get stacked diagnostics v_message = message_text, v_detail = pg_exception_detail;
  perform app_hidden.invalid_fields(app_private.employee_contract_form_errors(v_message, v_detail), 'WV501');
  return null;
end;
$$;

-- The gate of a change to one contract, in the API's order: 404 outside the perimeter, 403
-- without the right (an empty PATCH through employee_update, which writes nothing), then 409
-- when the list changed since the form was drawn, then 400 under `contract` for a contract
-- that is not this employee's.
create or replace function app_private.employee_contract_gate(p_employee int, p_contract int, p_version text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_public.employee_update(p_employee, p_sent => '{}');
  if p_version is distinct from app_hidden.employee_contracts_version(p_employee) then
    perform app_hidden.conflict('Les contrats de ce salarié ont changé depuis l’affichage du formulaire : '
                                'rechargez la fiche puis recommencez.', 'WC501');
  end if;
  if not exists (select 1 from app_public.contracts c where c.id = p_contract and c.employee_id = p_employee) then
    perform app_hidden.invalid('contract', 'Ce contrat n’appartient pas à ce salarié.', 'WV501');
  end if;
end;
$$;

-- p_contract, p_version and the contract's fields (type, start_date, end_date, trial_end_date,
-- job_title, weekly_hours): that contract takes these values (a null argument empties the field).
drop function if exists app_public.employee_contract_change(int, jsonb) cascade;
drop function if exists app_public.employee_contract_change(int, int, text, int, date, date, date, text, numeric) cascade;
create or replace function app_public.employee_contract_change(p_employee int, p_contract int, p_version text,
  p_type int, p_start_date date, p_end_date date default null, p_trial_end_date date default null,
  p_job_title text default null, p_weekly_hours numeric default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_private.employee_contract_gate(p_employee, p_contract, p_version);
  return app_private.employee_contracts_save(p_employee, (
    select jsonb_agg(case when (c ->> 'id')::int = p_contract
                          then jsonb_build_object('id', p_contract, 'type', p_type, 'start_date', p_start_date,
                                                  'end_date', p_end_date, 'trial_end_date', p_trial_end_date,
                                                  'job_title', p_job_title, 'weekly_hours', p_weekly_hours)
                          else c end)
    from jsonb_array_elements(app_private.employee_contracts_input(p_employee)) c));
end;
$$;
comment on function app_public.employee_contract_change(integer, integer, text, integer, date, date, date, text, numeric) is
'SPEC Permissions (employee.change_employee_record), back-office: one contract of an employee takes the
values of the form through employee_update; 409 when the contract list changed since the form was drawn
(version), 400 under contract for a contract of another employee.';

-- p_contract, p_version: the record without that contract.
drop function if exists app_public.employee_contract_remove(int, jsonb) cascade;
drop function if exists app_public.employee_contract_remove(int, int, text) cascade;
create or replace function app_public.employee_contract_remove(p_employee int, p_contract int, p_version text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_private.employee_contract_gate(p_employee, p_contract, p_version);
  return app_private.employee_contracts_save(p_employee, coalesce((
    select jsonb_agg(c) from jsonb_array_elements(app_private.employee_contracts_input(p_employee)) c
    where (c ->> 'id')::int <> p_contract), '[]'::jsonb));
end;
$$;
comment on function app_public.employee_contract_remove(integer, integer, text) is
'SPEC Permissions (employee.change_employee_record), back-office: removes one contract of an employee
through employee_update; 409 when the contract list changed since the form was drawn (version).';

-- An employee record as the API reads it (employee_get: its perimeter, its 404) with the version of
-- its contract list that the contract forms carry (sql/employees/contracts.sql).
create or replace function app_hidden.employee_with_contracts_version(p_id int) returns jsonb
language sql stable as $$
  select app_public.employee_get(p_id) || jsonb_build_object('contracts_version', app_hidden.employee_contracts_version(p_id));
$$;

-- What the signed-in account may do on an employee record: close or open its account (never its
-- own), write the record, remove the honorability certificate.
create or replace function app_hidden.employee_abilities(p_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'activation', not app_hidden.is_current_employee(p_id)
                  and (app_hidden.may(null, 'employee.change_account_activation', p_id)
                       or app_hidden.may(null, 'employee.change_interim_account_activation', p_id)),
    'edit', app_hidden.may(null, 'employee.change_employee_record', p_id),
    'remove_certificate', app_hidden.can_deposit_honorability(p_id)
                          and exists (select 1 from app_public.honorability_certificates h where h.employee_id = p_id));
$$;
--! EndIncluded employees/contracts.sql
--! Included teams/members.sql
-- Removing one member of a team from the back-office (issue 13, point 4): through the API's
-- PUT /api/teams/<id>/members/ (team_members_replace), the team's current and future members
-- as they are, without that one. Its rules apply: the right and perimeter on the team, the
-- member leaves yesterday, or their assignment is deleted when it has not started yet.

-- The current and future members of a team as the `members` input of team_members_replace,
-- each with the dates of the assignment that function matches (so that they stay as they are).
-- Read as the owner: the list only feeds team_members_replace, which decides whether the caller
-- may write this team (a list shortened by the caller's reading would remove members).
create or replace function app_private.team_members_input(p_team int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(jsonb_agg(jsonb_build_object('employee', m.employee_id, 'start_date', m.start_date, 'end_date', m.end_date)
                            order by m.employee_id), '[]'::jsonb)
  from (select distinct on (ta.employee_id) ta.employee_id, ta.start_date, ta.end_date
        from app_public.team_assignments ta
        where ta.team_id = p_team and (ta.end_date is null or ta.end_date >= app_hidden.today())
        order by ta.employee_id, ta.start_date nulls first) m;
$$;

-- p_employee: the team without that member (400 under `employee` if absent or no current or
-- future member; 404 / 403 as team_members_replace answers).
drop function if exists app_public.team_member_remove(int, jsonb) cascade;
drop function if exists app_public.team_member_remove(int, int) cascade;
create or replace function app_public.team_member_remove(p_team int, p_employee int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_members jsonb;
begin
  perform app_hidden.team_for_write(p_team);
  v_members := app_private.team_members_input(p_team);
  if p_employee is null or not exists (select 1 from jsonb_array_elements(v_members) m where (m ->> 'employee')::int = p_employee) then
    perform app_hidden.invalid('employee', 'Ce salarié ne fait pas partie de cette équipe, ni aujourd’hui ni à venir.', 'WV520');
  end if;
  return app_public.team_members_replace(p_team, p_members => (
    select coalesce(jsonb_agg(m), '[]'::jsonb) from jsonb_array_elements(v_members) m
    where (m ->> 'employee')::int <> p_employee));
end;
$$;
comment on function app_public.team_member_remove(integer, integer) is
'SPEC Permissions rule 7 (back-office): removes one current or future member of a team through
team_members_replace and its rules (400 under employee when not a member).';

-- Whether the signed-in account writes this team: employee.change_team, and the team has an
-- establishment of that perimeter (SPEC Permissions rule 7; the writes check it again).
create or replace function app_hidden.team_writable(p_id int) returns boolean
language sql stable as $$
  select app_hidden.current_account_has('employee.change_team')
     and (app_hidden.perimeter_is_whole('employee.change_team')
          or exists (select 1 from app_public.team_establishments te where te.team_id = p_id
                     and te.establishment_id = any (app_hidden.perimeter_establishment_ids('employee.change_team'))));
$$;

-- The employees of the account's team-writing perimeter, « Last First », to add as members.
create or replace function app_hidden.team_member_choices() returns table (value text, label text)
language sql stable rows 200 as $$
  select e.id::text, e.last_name || ' ' || e.first_name from app_public.employees e
  where app_hidden.may(null, 'employee.change_team', e.id) order by e.last_name, e.first_name;
$$;
--! EndIncluded teams/members.sql
--! Included absences/corrections.sql
-- Absences in the back-office (issue 13, point 3). The decisions, the cancellation decisions
-- and the cancel action of a granted absence are the API's own functions (absence_validate,
-- absence_refuse, absence_delete); what the API lacks lives here: what the reader may do on
-- an absence, and the form's save with its status field (SPEC, absence state table: the
-- technical state may be set back to pending; cancellation requested and cancelled are
-- neither offered nor left through that field).

-- What the signed-in account may do on an absence (the back-office shows only those forms;
-- the transition functions check again): decide (absences.decide_absence on the employee,
-- never on its own absence), correct (the manager-side correction of absence_update).
create or replace function app_public.absence_abilities(p_id int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    'own', o.own,
    'decide', app_hidden.may_decide_absence_of(a.employee_id),
    'correct', app_hidden.may_decide_absence_of(a.employee_id)
               and app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', a.employee_id))
  from app_public.absences a
  cross join lateral (select app_hidden.is_current_employee(a.employee_id) as own) o
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
$$;
comment on function app_public.absence_abilities(integer) is
'SPEC Permissions rules 1 and 4 (back-office): what the signed-in account may do on an absence: decide
(absences.decide_absence on the employee, never on its own absence) and correct (the manager-side
correction). The back-office shows only those forms; the transition functions check again.';

-- Sets a decided absence (validated or refused) back to pending, as a decider of its
-- perimeter (never on its own absence) inside the decider's retroactive window: version + 1,
-- the decision (decided_by, decided_at, decision_reason) is cleared (the audit line keeps
-- it), the counters go back to a reservation in Planifiés (a refused request reserves again,
-- so its declaration rules run again: overlap, caps, counters), and the employee is told.
create or replace function app_hidden.absence_reopen(p_absence app_public.absences) returns app_public.absences
language plpgsql volatile as $$
declare
  v app_public.absences;
  v_eval jsonb;
begin
  perform app_hidden.absence_check_decider(p_absence);
  perform app_hidden.absence_check_decider_window(p_absence);
  if p_absence.status = 'refused' then
    perform app_hidden.absence_lock_employee(p_absence.employee_id);
    v_eval := app_private.absence_evaluate(
      row(p_absence.employee_id, p_absence.type_id, p_absence.date_start, p_absence.date_end, p_absence.start_half,
          p_absence.end_half, p_absence.start_time, p_absence.end_time)::app_hidden.absence_draft,
      p_absence.id, 'manager', null, app_hidden.today());
    if v_eval -> 'errors' <> '{}'::jsonb then
      perform app_hidden.invalid_fields(v_eval -> 'errors', 'WV200');
    end if;
  end if;
  perform set_config('app.absence_reopening', 'on', true);
  perform app_private.set_audit_verb('Modification');
  update app_public.absences a set
    status = 'pending', decided_by = null, decided_at = null, decision_reason = null, version = a.version + 1
  where a.id = p_absence.id
  returning * into v;
  perform app_private.set_audit_verb('');
  perform set_config('app.absence_reopening', '', true);
  perform app_private.absence_sync_counters(v.id, 'reopen');
  perform app_private.absence_notify_employee(v, 'Absence remise en attente',
    format('Votre absence %s, %s, a été remise en attente par %s : elle sera de nouveau décidée.',
           app_hidden.absence_subject(v), case when p_absence.status = 'refused' then 'refusée' else 'validée' end,
           app_hidden.account_display_name(app_hidden.current_account_id())), 'warning');
  return v;
end;
$$;

-- The back-office form of an absence: p_version, p_status, p_type, p_date_start, p_date_end,
-- p_start_half, p_end_half, p_start_time, p_end_time, p_comment, and the form's keys in p_sent
-- (a key not sent keeps the stored value). p_version is required (409 when stale). p_status:
-- only "pending" may be written, from validated or refused (the decisions have their own
-- actions); in the states cancellation requested and cancelled the field is not editable. The
-- other arguments are the manager-side correction of PATCH /api/absences/<id>/ (absence_update:
-- same rules, same counter compensation). One transaction: a refusal of either part writes nothing.
drop function if exists app_public.absence_backoffice_save(int, jsonb, text) cascade;
drop function if exists app_public.absence_backoffice_save(int, int, text, int, date, date, text, text, time, time, text, text[], text) cascade;
create or replace function app_public.absence_backoffice_save(p_id int, p_version int, p_status text default null,
  p_type int default null, p_date_start date default null, p_date_end date default null, p_start_half text default null,
  p_end_half text default null, p_start_time time default null, p_end_time time default null, p_comment text default null,
  p_sent text[] default null, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_status text := nullif(p_status, '');
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_version, true);
  if v_status is not null and v_status is distinct from v.status then
    if v.status in ('cancellation_requested', 'cancelled') then
      perform app_hidden.invalid('status', format(
        'Le statut d’une absence « %s » ne se modifie pas : %s', app_hidden.absence_status_label(v.status),
        case when v.status = 'cancelled' then 'elle est annulée.' else 'accordez ou refusez la demande d’annulation.' end),
        'WV215');
    end if;
    if v_status <> 'pending' then
      perform app_hidden.invalid('status',
        'Le statut ne peut être remis qu’« En attente » : validez ou refusez la demande avec les actions de décision.',
        'WV215');
    end if;
    v := app_hidden.absence_reopen(v);
  end if;
  return app_public.absence_update(p_id,
    p_type => p_type, p_date_start => p_date_start, p_date_end => p_date_end, p_start_half => p_start_half,
    p_end_half => p_end_half, p_start_time => p_start_time, p_end_time => p_end_time,
    p_comment => p_comment, p_version => v.version,
    p_sent => array_remove(array_remove(p_sent, 'status'), 'employee'), p_public_url => p_public_url);
end;
$$;
comment on function app_public.absence_backoffice_save(integer, integer, text, integer, date, date, text, text, time without time zone, time without time zone, text, text[], text) is
'SPEC States and transitions, Absence (back-office form): with the current version (else 409), may put a
validated or refused absence back to pending (the only status it writes) and apply the manager-side
correction of PATCH /api/absences/<id>/ (same rules, same counter compensation) in one transaction; the
status is not editable once a cancellation is requested or granted.';
--! EndIncluded absences/corrections.sql
--! Included wording.sql
-- One apostrophe style (issue 29 point 5): the reference data every database holds writes the
-- typographic apostrophe ’ (U+2019), as the screens do. The seed inserts (on conflict do nothing)
-- write it for a new database; these updates change the rows an existing database already holds,
-- from the exact text the seed wrote before (the new one with ' for ’) to the new one: a name a
-- staff member changed since is left alone, and a second run finds nothing to change (idempotent).
-- The exceptions SPEC.md and CONTRACT.md write literally are listed in docs/wording.md.
--
-- app_private.wording_typographic() does it and answers how many rows it changed: called below at
-- each migration, and by test/db/95-wording.sql on rows put back as they were.
create or replace function app_private.wording_typographic() returns int
language plpgsql volatile set search_path = pg_catalog, public, pg_temp as $$
declare
  v_total int := 0;
  v_rows int;
begin
  update app_private.audit_models t set label = v.new
  from (values
    ('Catégorie d’absence'),
    ('Flux d’agenda'),
    ('Justificatif d’absence'),
    ('Motif d’absence'),
    ('Ouverture des compteurs d’une année'),
    ('Période d’astreinte'),
    ('Type de contrat d’un motif d’absence'),
    ('Établissement d’une astreinte'),
    ('Établissement d’une délégation'),
    ('Établissement d’une équipe')
  ) v(new)
  where t.label = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_private.job_schedules t set description = v.new
  from (values
    ('Ouverture des compteurs de l’année suivante à partir de la date réglée (1er octobre par défaut), chaque jour à 1 h 17'),
    ('Purge du journal d’audit au-delà de la rétention, le dimanche à 3 h 47'),
    ('Report et expiration des soldes en fin d’année et à la date limite du report, avis un mois avant, chaque jour à 1 h 37')
  ) v(new)
  where t.description = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_private.settings t set description = v.new
  from (values
    ('Date (JJ/MM) à partir de laquelle les compteurs de l’année suivante s’ouvrent chaque jour (tâche open_next_year_counters)'),
    ('Durée de conservation du journal d’audit, en jours'),
    ('Durée de validité d’un lien de réinitialisation'),
    ('Durée de validité d’une invitation à définir son mot de passe'),
    ('Durée maximale d’une session du back-office (heures)'),
    ('Délai de prévenance d’une modification de journée, en jours (avertissement au détail)'),
    ('Nombre de tentatives d’envoi d’un e-mail avant abandon (il reste visible dans la boîte d’envoi)')
  ) v(new)
  where t.description = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_public.absence_categories t set name = v.new
  from (values
    ('Autorisations d’absence'),
    ('Formation à l’initiative du salarié')
  ) v(new)
  where t.name = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_public.absence_types t set name = v.new
  from (values
    ('Annonce du handicap d’un enfant'),
    ('Congé d’adoption'),
    ('Congé de paternité et d’accueil de l’enfant'),
    ('Congé parental d’éducation'),
    ('Congés d’ancienneté'),
    ('Décès d’un enfant'),
    ('Décès d’un proche'),
    ('Juré d’assises ou convocation judiciaire'),
    ('Mariage d’un enfant'),
    ('Validation des acquis de l’expérience')
  ) v(new)
  where t.name = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_public.contract_types t set name = v.new
  from (values
    ('Contrat d’apprentissage'),
    ('Mission d’intérim')
  ) v(new)
  where t.name = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_public.counter_kinds t set name = v.new
  from (values
    ('Congés d’ancienneté')
  ) v(new)
  where t.name = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;

  update app_public.permissions t set description = v.new
  from (values
    ('Lire l’annuaire (encadrement)'),
    ('Lire le contenu des justificatifs d’un tiers'),
    ('Lire le journal d’audit'),
    ('Lire les contacts d’urgence des salariés du périmètre'),
    ('Lire les demandes d’absence et de modification du périmètre'),
    ('Modifier les contacts d’urgence des salariés du périmètre'),
    ('Ouvrir ou fermer n’importe quel compte'),
    ('Valider ou refuser une demande d’absence')
  ) v(new)
  where t.description = replace(v.new, '’', '''');
  get diagnostics v_rows = row_count;
  v_total := v_total + v_rows;
  return v_total;
end;
$$;

select app_private.wording_typographic();
--! EndIncluded wording.sql
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
-- Login throttling (sql/auth/rate_limits.sql): the API and back-office logins, as the authenticator.
grant execute on function app_private.login_throttle(text, text, text, int, int, interval),
  app_private.login_failed(text, text, text, interval, interval), app_private.login_succeeded(text, text, text)
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
