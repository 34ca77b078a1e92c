--! Previous: sha1:ea2a82fb86adafd09d502087f06667def2c41d73
--! Hash: sha1:8a2ac32a0f7a02f301353b1d38f7365befcf342f
--! Message: Calendar feeds and exports (issue 16); rate limits in PostgreSQL, orphan file sweep, kept absence counts, planning as text (issue 15); trigger functions renamed tg_<table>__<task>, volatility stated, API functions commented (issue 12)

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

-- Objects that sql/ no longer defines.
drop function if exists app_hidden.tg_perimeter_changed() cascade;
drop function if exists app_hidden.tg_timestamps() cascade;
drop function if exists app_private.tg_absence_categories_depth() cascade;
drop function if exists app_private.tg_absence_types_orphan() cascade;
drop function if exists app_private.tg_absences_guard_delete() cascade;
drop function if exists app_private.tg_absences_guard() cascade;
drop function if exists app_private.tg_accounts_grant_salarie() cascade;
drop function if exists app_private.tg_audit_absence_document() cascade;
drop function if exists app_private.tg_audit_child() cascade;
drop function if exists app_private.tg_audit_log_append_only() cascade;
drop function if exists app_private.tg_audit_log_no_truncate() cascade;
drop function if exists app_private.tg_audit_ssn() cascade;
drop function if exists app_private.tg_audit() cascade;
drop function if exists app_private.tg_code_namespace() cascade;
drop function if exists app_private.tg_counter_associations_orphan() cascade;
drop function if exists app_private.tg_counter_movements_append_only() cascade;
drop function if exists app_private.tg_counters_need_reason() cascade;
drop function if exists app_private.tg_email_outbox_enqueue() cascade;
drop function if exists app_private.tg_employee_attachments_garbage() cascade;
drop function if exists app_private.tg_file_uploaded_by_request() cascade;
drop function if exists app_private.tg_shift_change_requests_guard() cascade;
drop function if exists app_private.tg_storage_garbage() cascade;

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
create or replace function app_hidden.fr_date(p_date date) returns text
language sql immutable as $$ select to_char(p_date, 'DD/MM/YYYY') $$;

create or replace function app_hidden.fmt_quantity(p_value numeric) returns text
language sql immutable as $$ select to_char(p_value, 'FM999999990.00') $$;

-- Paging of list functions (the HTTP layer validates its query string; GraphQL and other
-- SQL callers reach the functions directly): page from 1, page size from 1 to 200.
create or replace function app_hidden.page_limit(p_page_size int) returns int
language plpgsql immutable as $$
begin
  if p_page_size is null or p_page_size < 1 then
    perform app_hidden.invalid('page_size', 'La taille de page est un entier d''au moins 1.', 'WV003');
  end if;
  return least(p_page_size, 200);
end;
$$;

create or replace function app_hidden.page_offset(p_page int, p_page_size int) returns int
language plpgsql immutable as $$
begin
  if p_page is null or p_page < 1 then
    perform app_hidden.invalid('page', 'Le numéro de page est un entier d''au moins 1.', 'WV003');
  end if;
  return (p_page - 1) * app_hidden.page_limit(p_page_size);
end;
$$;
--! EndIncluded core/errors.sql
--! Included core/triggers.sql
-- Generic trigger functions. Trigger names carry their order:
-- _100_timestamps, _200_guard, _500_audit, _900_enqueue.
create or replace function app_hidden.tg__timestamps() returns trigger
language plpgsql volatile as $$
begin
  if tg_op = 'UPDATE' then
    new.updated_at := app_hidden.now();
  end if;
  return new;
end;
$$;
--! EndIncluded core/triggers.sql
--! Included org/tables.sql
-- The organisation: divisions, establishments, teams, posts, employees, contracts, templates.

create table if not exists app_public.divisions (
  id int generated always as identity primary key,
  name text not null check (btrim(name) <> ''),
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now()
);
create unique index if not exists divisions_name_key on app_public.divisions (lower(name));

create table if not exists app_public.establishments (
  id int generated always as identity primary key,
  name text not null check (btrim(name) <> ''),
  -- Base used to count leave days: ouvrables = Monday to Saturday, ouvres = Monday to Friday.
  count_base text not null default 'ouvrables' check (count_base in ('ouvrables', 'ouvres')),
  division_id int references app_public.divisions on delete set null,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now()
);
create unique index if not exists establishments_name_key on app_public.establishments (lower(name));
create index if not exists establishments_division_idx on app_public.establishments (division_id);

create table if not exists app_public.teams (
  id int generated always as identity primary key,
  name text not null check (btrim(name) <> ''),
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now()
);

-- A team can span several establishments.
create table if not exists app_public.team_establishments (
  team_id int not null references app_public.teams on delete cascade,
  establishment_id int not null references app_public.establishments on delete restrict,
  primary key (team_id, establishment_id)
);
create index if not exists team_establishments_establishment_idx on app_public.team_establishments (establishment_id);

create table if not exists app_public.posts (
  id int generated always as identity primary key,
  code text not null check (code ~ '^[A-Za-z0-9][A-Za-z0-9_+\-]{0,15}$'),
  label text not null check (btrim(label) <> ''),
  establishment_id int not null references app_public.establishments on delete restrict,
  start_time time not null,
  -- end_time <= start_time means the post ends the next day (night shift).
  end_time time not null,
  break_start_time time,
  break_end_time time,
  break_paid boolean not null default false,
  is_active boolean not null default true,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  constraint posts_break_pair check ((break_start_time is null) = (break_end_time is null)),
  constraint posts_start_differs check (start_time <> end_time)
);
create unique index if not exists posts_establishment_code_key on app_public.posts (establishment_id, lower(code));
create index if not exists posts_code_idx on app_public.posts (lower(code));

create table if not exists app_public.employees (
  id int generated always as identity primary key,
  first_name text not null check (btrim(first_name) <> ''),
  last_name text not null check (btrim(last_name) <> ''),
  professional_email text check (professional_email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  -- Null main workplace: the employee is visible only to managers of the whole association.
  main_establishment_id int references app_public.establishments on delete restrict,
  birth_date date,
  -- Polyvalent agents: an absence in their trial period raises an agreement warning.
  is_polyvalent boolean not null default false,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now()
);
create index if not exists employees_main_establishment_idx on app_public.employees (main_establishment_id);
create index if not exists employees_name_idx on app_public.employees (lower(last_name), lower(first_name));

-- Kept apart so that RLS, not the serializer, decides who reads it.
create table if not exists app_public.employee_social_security_numbers (
  employee_id int primary key references app_public.employees on delete cascade,
  social_security_number text not null check (social_security_number ~ '^[12][0-9]{2}(0[1-9]|1[0-2]|[2-9][0-9])(2[AB]|[0-9]{2})[0-9]{6}([0-9]{2})?$')
);

create table if not exists app_public.employee_secondary_establishments (
  employee_id int not null references app_public.employees on delete cascade,
  establishment_id int not null references app_public.establishments on delete restrict,
  primary key (employee_id, establishment_id)
);
create index if not exists employee_secondary_establishments_establishment_idx
  on app_public.employee_secondary_establishments (establishment_id);

create table if not exists app_public.team_assignments (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  team_id int not null references app_public.teams on delete cascade,
  start_date date,
  end_date date,
  created_at timestamptz not null default app_hidden.now(),
  constraint team_assignments_dates check (end_date is null or start_date is null or end_date >= start_date)
);
create index if not exists team_assignments_employee_idx on app_public.team_assignments (employee_id);
create index if not exists team_assignments_team_idx on app_public.team_assignments (team_id);

create table if not exists app_public.contract_types (
  id int generated always as identity primary key,
  code text not null unique,
  name text not null,
  is_temporary_work boolean not null default false
);

create table if not exists app_public.contracts (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  contract_type_id int not null references app_public.contract_types on delete restrict,
  start_date date not null,
  end_date date,
  trial_end_date date,
  job_title text,
  weekly_hours numeric(5,2) check (weekly_hours is null or (weekly_hours > 0 and weekly_hours <= 48)),
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  constraint contracts_dates check (end_date is null or end_date >= start_date),
  constraint contracts_trial check (trial_end_date is null or trial_end_date >= start_date)
);
create index if not exists contracts_employee_idx on app_public.contracts (employee_id, start_date);

-- Weekly planning template: from valid_from on, each ISO weekday (1 = Monday) has zero or
-- more posts. A day without slot is a rest day.
create table if not exists app_public.planning_templates (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  valid_from date not null,
  valid_to date,
  created_at timestamptz not null default app_hidden.now(),
  constraint planning_templates_dates check (valid_to is null or valid_to >= valid_from),
  unique (employee_id, valid_from)
);

create table if not exists app_public.planning_template_slots (
  id int generated always as identity primary key,
  template_id int not null references app_public.planning_templates on delete cascade,
  weekday smallint not null check (weekday between 1 and 7),
  position smallint not null default 1 check (position between 1 and 9),
  post_id int not null references app_public.posts on delete restrict,
  unique (template_id, weekday, position)
);
create index if not exists planning_template_slots_post_idx on app_public.planning_template_slots (post_id);

create or replace trigger _100_timestamps before insert or update on app_public.divisions
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _100_timestamps before insert or update on app_public.establishments
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _100_timestamps before insert or update on app_public.teams
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _100_timestamps before insert or update on app_public.posts
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _100_timestamps before insert or update on app_public.employees
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _100_timestamps before insert or update on app_public.contracts
  for each row execute function app_hidden.tg__timestamps();
--! EndIncluded org/tables.sql
--! Included org/accounts.sql
-- Accounts, roles, permissions, role attributions and on-call periods.

create table if not exists app_public.accounts (
  id int generated always as identity primary key,
  username text not null check (username ~ '^[A-Za-z0-9._@+\-]{2,150}$'),
  employee_id int unique references app_public.employees on delete set null,
  is_active boolean not null default true,
  is_staff boolean not null default false,
  is_superuser boolean not null default false,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  last_login_at timestamptz
);
create unique index if not exists accounts_username_key on app_public.accounts (lower(username));
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
--! Included perimeter.sql
-- Who is acting, what they may do, and on whom.
--
-- The acting account is set per transaction by the HTTP layer (app.account_id,
-- app.employee_id). Policies call these helpers as `(select app_hidden.x())` or
-- `employee_id in (select app_hidden.perimeter_employee_ids(...))` so that they run once
-- per statement, not once per row.

create or replace function app_hidden.current_account_id() returns int
language sql stable parallel safe as $$
  select nullif(current_setting('app.account_id', true), '')::int;
$$;

create or replace function app_hidden.current_employee_id() returns int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce(
    nullif(current_setting('app.employee_id', true), '')::int,
    (select a.employee_id from app_public.accounts a where a.id = app_hidden.current_account_id()));
end;
$$;

-- Is this employee record the acting account's own? False (never NULL) for an account without
-- an employee record or a NULL record: write `if not app_hidden.is_current_employee(x)`, never
-- `if not (x = app_hidden.current_employee_id())`, which lets a NULL through.
create or replace function app_hidden.is_current_employee(p_employee int) returns boolean
language sql stable as $$
  select coalesce(p_employee = app_hidden.current_employee_id(), false);
$$;

-- Business date of a timestamp.
create or replace function app_hidden.business_date(p_at timestamptz) returns date
language sql stable parallel safe as $$
  select (p_at at time zone app_hidden.business_timezone())::date;
$$;

-- Does an attribution with inclusive [start_date, end_date] cover the date? (Never NULL: an
-- unknown date is covered only by an unbounded attribution.)
create or replace function app_hidden.date_in(p_on date, p_start date, p_end date) returns boolean
language sql immutable parallel safe as $$
  select coalesce((p_start is null or p_start <= p_on) and (p_end is null or p_end >= p_on), false);
$$;

-- May this account use this permission at all at that time? (No perimeter involved.)
create or replace function app_hidden.account_has_permission(p_account int, p_permission text, p_at timestamptz default null)
returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return exists (
    select 1 from app_public.accounts a
    where a.id = p_account and a.is_active
      and (a.is_superuser
           or exists (select 1 from app_public.account_permissions ap
                      where ap.account_id = a.id and ap.permission_code = p_permission)
           or exists (select 1
                      from app_public.role_attributions ra
                      join app_public.role_permissions rp on rp.role_id = ra.role_id
                      where ra.account_id = a.id and rp.permission_code = p_permission
                        and app_hidden.date_in(app_hidden.business_date(coalesce(p_at, app_hidden.now())),
                                               ra.start_date, ra.end_date))));
end;
$$;

create or replace function app_hidden.current_account_has(p_permission text) returns boolean
language sql stable as $$
  select app_hidden.account_has_permission(app_hidden.current_account_id(), p_permission);
$$;

-- Establishment scope of a permission for accounts at a time, one row per existing account:
--   whole = true: the whole association (superuser, explicit permission, or a role
--                 attribution without establishments);
--   otherwise establishment_ids lists the establishments of the attributions granting the
--   permission, extended by the account's on-call periods active at p_at (start inclusive,
--   end exclusive) for the queue and decision permissions only (absences.view_absence_queue,
--   absences.decide_absence, planning.decide_shift_change: SPEC Permissions rule 9), never for
--   documents, records, numbers, payroll, events or on-call writing (so an author's own on-call
--   period does not widen the establishments it may put others on call for). No permission (or an inactive account): whole = false and an empty list.
-- Set-wise, so that routing a filing to its deciders computes every decider's scope in one
-- statement; plpgsql with force_generic_plan (docs/architecture.md, Performance notes).
create or replace function app_hidden.permission_scopes(p_accounts int[], p_permission text, p_at timestamptz)
returns table (account_id int, whole boolean, establishment_ids int[])
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan rows 10 as $$
begin
  return query
  with acc as (
    select a.id, a.is_active, a.is_superuser,
           exists (select 1 from app_public.account_permissions ap
                   where ap.account_id = a.id and ap.permission_code = p_permission) as explicit
    from app_public.accounts a
    where a.id = any (p_accounts)
  ),
  attr as (
    -- Attributions granting the permission that day; "open" = a role outside the manager
    -- workspace or without establishments: it covers the whole association.
    select ra.account_id, ra.id,
           not r.opens_manager_workspace
           or not exists (select 1 from app_public.role_attribution_establishments rae
                          where rae.attribution_id = ra.id) as open
    from app_public.role_attributions ra
    join app_public.role_permissions rp on rp.role_id = ra.role_id and rp.permission_code = p_permission
    join app_public.roles r on r.id = ra.role_id
    where ra.account_id = any (p_accounts)
      and app_hidden.date_in(app_hidden.business_date(p_at), ra.start_date, ra.end_date)
  ),
  flags as (
    select attr.account_id, bool_or(attr.open) as open from attr group by attr.account_id
  ),
  -- Establishments of the restricted attributions, and of the on-call periods active at p_at.
  restricted as (
    select x.account_id, array_agg(distinct x.establishment_id) as ids
    from (select attr.account_id, rae.establishment_id
          from attr join app_public.role_attribution_establishments rae on rae.attribution_id = attr.id
          union all
          select op.account_id, ope.establishment_id
          from app_public.on_call_periods op
          join app_public.on_call_period_establishments ope on ope.period_id = op.id
          where op.account_id = any (p_accounts) and op.start_at <= p_at and p_at < op.end_at
            -- SPEC Permissions rule 9: the queue and the decisions of a manager role, nothing else.
            and p_permission in ('absences.view_absence_queue', 'absences.decide_absence',
                                 'planning.decide_shift_change')) x
    group by x.account_id
  )
  select acc.id,
         acc.is_active and (acc.is_superuser or acc.explicit or coalesce(f.open, false)),
         case when not acc.is_active then '{}'::int[]
              when acc.is_superuser or acc.explicit then null::int[]
              when f.account_id is null then '{}'::int[]
              when f.open then null::int[]
              else coalesce(r.ids, '{}'::int[]) end
  from acc
  left join flags f on f.account_id = acc.id
  left join restricted r on r.account_id = acc.id;
end;
$$;

-- Memo of the perimeters within a transaction (docs/architecture.md, Performance notes): each
-- scope and perimeter is kept in a transaction-local setting, keyed by account, instant and a
-- generation that every write to a table they are computed from advances (statement triggers
-- below), so a transaction that changes roles, attributions, workplaces, teams or on-call
-- periods recomputes them.
create or replace function app_hidden.perimeter_generation() returns text
language sql stable parallel safe as $$
  select coalesce(nullif(current_setting('app.perimeter_generation', true), ''), '0');
$$;

create or replace function app_hidden.tg__perimeter_changed() returns trigger
language plpgsql volatile as $$
begin
  perform set_config('app.perimeter_generation', (app_hidden.perimeter_generation()::bigint + 1)::text, true);
  return null;
end;
$$;

do $$
declare
  t text;
begin
  foreach t in array array['accounts', 'account_permissions', 'roles', 'role_permissions', 'role_attributions',
                           'role_attribution_establishments', 'on_call_periods', 'on_call_period_establishments',
                           'employees', 'employee_secondary_establishments', 'team_assignments', 'team_establishments'] loop
    execute format('drop trigger if exists _050_perimeter_changed on app_public.%I', t);
    execute format('create or replace trigger _050_perimeter_changed after insert or update or delete or truncate on app_public.%I
                    for each statement execute function app_hidden.tg__perimeter_changed()', t);
  end loop;
end;
$$;

-- The scope of one account (one row; an unknown account has no permission), kept for the
-- transaction (see above).
create or replace function app_hidden.permission_scope(p_account int, p_permission text, p_at timestamptz)
returns table (whole boolean, establishment_ids int[])
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 1 as $$
declare
  v_name text := 'app.memo_scope_' || translate(coalesce(p_permission, ''), '.', '_');
  v_key text := concat(p_account, '|', p_at, '|', app_hidden.perimeter_generation(), '|');
  v_memo text := current_setting(v_name, true);
  v_whole boolean;
  v_ids int[];
begin
  if left(v_memo, length(v_key)) = v_key then
    v_memo := substr(v_memo, length(v_key) + 1);
    return query select v_memo = 'W', case when v_memo = 'W' then null::int[] else v_memo::int[] end;
    return;
  end if;
  select coalesce(s.whole, false), case when s.account_id is null then '{}'::int[] else s.establishment_ids end
    into v_whole, v_ids
  from (select 1) x
  left join app_hidden.permission_scopes(array[p_account], p_permission, p_at) s on true;
  perform set_config(v_name, v_key || case when v_whole then 'W' else v_ids::text end, true);
  return query select v_whole, v_ids;
end;
$$;

-- Employees attached to one of the establishments at a date: main workplace, secondary
-- workplace, or a team assignment active that day to a team of the establishment.
-- plpgsql, as every perimeter helper a request runs: docs/architecture.md, Performance notes.
create or replace function app_hidden.employees_of_establishments(p_establishments int[], p_on date)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  return query
  select e.id from app_public.employees e where e.main_establishment_id = any (p_establishments)
  union
  select ses.employee_id from app_public.employee_secondary_establishments ses
  where ses.establishment_id = any (p_establishments)
  union
  select ta.employee_id
  from app_public.team_assignments ta
  join app_public.team_establishments te on te.team_id = ta.team_id
  where te.establishment_id = any (p_establishments)
    and app_hidden.date_in(p_on, ta.start_date, ta.end_date);
end;
$$;

-- Establishments an employee is attached to at a date (main, secondary, teams of the day).
create or replace function app_hidden.employee_establishments(p_employee int, p_on date)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 3 as $$
begin
  return query
  select e.main_establishment_id from app_public.employees e
  where e.id = p_employee and e.main_establishment_id is not null
  union
  select ses.establishment_id from app_public.employee_secondary_establishments ses
  where ses.employee_id = p_employee
  union
  select te.establishment_id
  from app_public.team_assignments ta
  join app_public.team_establishments te on te.team_id = ta.team_id
  where ta.employee_id = p_employee and app_hidden.date_in(p_on, ta.start_date, ta.end_date);
end;
$$;

-- The perimeter: employees on whom the account may use the permission at that time (kept for
-- the transaction, see app_hidden.permission_scope).
create or replace function app_hidden.perimeter_employee_ids(p_permission text, p_account int default null,
                                                  p_at timestamptz default null)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
declare
  v_at timestamptz := coalesce(p_at, app_hidden.now());
  v_account int := coalesce(p_account, app_hidden.current_account_id());
  v_name text := 'app.memo_perimeter_' || translate(coalesce(p_permission, ''), '.', '_');
  v_key text := concat(v_account, '|', v_at, '|', app_hidden.perimeter_generation(), '|');
  v_memo text := current_setting(v_name, true);
  v_whole boolean;
  v_ids int[];
  v_list int[];
begin
  if left(v_memo, length(v_key)) = v_key then
    return query select unnest(substr(v_memo, length(v_key) + 1)::int[]);
    return;
  end if;
  select s.whole, s.establishment_ids into v_whole, v_ids
  from app_hidden.permission_scope(v_account, p_permission, v_at) s;
  if v_whole then
    v_list := array(select e.id from app_public.employees e);
  elsif cardinality(v_ids) > 0 then
    v_list := array(select x.id from app_hidden.employees_of_establishments(v_ids, app_hidden.business_date(v_at)) x(id));
  else
    v_list := '{}';
  end if;
  perform set_config(v_name, v_key || v_list::text, true);
  return query select unnest(v_list);
end;
$$;

-- "May account A do P on employee E at time T?" (perimeter and permission; the rule
-- "nobody decides their own request" is checked by each decision.) The same answer as
-- E in perimeter_employee_ids(P, A, T), without listing the perimeter: the scope, then the
-- establishments E is attached to that day.
create or replace function app_hidden.may(p_account int, p_permission text, p_employee int, p_at timestamptz default null)
returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_at timestamptz := coalesce(p_at, app_hidden.now());
  v_whole boolean;
  v_ids int[];
begin
  select s.whole, s.establishment_ids into v_whole, v_ids
  from app_hidden.permission_scope(coalesce(p_account, app_hidden.current_account_id()), p_permission, v_at) s;
  if p_employee is null then
    -- Nobody: a guard is true or false, never NULL (`if not may(...)` must refuse).
    return false;
  elsif v_whole then
    return exists (select 1 from app_public.employees e where e.id = p_employee);
  end if;
  return exists (select 1 from app_hidden.employee_establishments(p_employee, app_hidden.business_date(v_at)) x(id)
                 where x.id = any (v_ids));
end;
$$;

-- Does the acting account hold the permission on the whole association? Lists and policies
-- test it first: the whole association needs no list of employees to filter with.
create or replace function app_hidden.perimeter_is_whole(p_permission text) returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce((select s.whole from app_hidden.permission_scope(app_hidden.current_account_id(), p_permission,
                                                                    app_hidden.now()) s), false);
end;
$$;

-- Establishments of the caller's perimeter for a permission (null = whole association).
create or replace function app_hidden.perimeter_establishment_ids(p_permission text, p_account int default null,
                                                       p_at timestamptz default null)
returns int[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case when s.whole then null else s.establishment_ids end
  from app_hidden.permission_scope(coalesce(p_account, app_hidden.current_account_id()), p_permission,
                                   coalesce(p_at, app_hidden.now())) s;
$$;

-- Is the acting account an active staff member (or a superuser)? Staff write the
-- referentials and read the e-mail outbox.
create or replace function app_hidden.current_account_is_staff() returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (select 1 from app_public.accounts a
                 where a.id = app_hidden.current_account_id() and a.is_active and (a.is_staff or a.is_superuser));
$$;
--! EndIncluded perimeter.sql
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
    perform app_hidden.invalid('parent', 'Une catégorie d''absence a au plus deux niveaux (catégorie, sous-catégorie).');
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

-- Absence type codes and post codes share one namespace, compared case-insensitively.
-- The message refusing p_code for a row of p_table ('posts' or 'absence_types'), or null
-- when the other table holds no such code. The save functions of the back-office ask it to
-- show the clash with the other field errors; the trigger below is the guard of every write.
create or replace function app_hidden.code_namespace_clash(p_table text, p_code text) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case
    when p_table = 'posts' and exists (select 1 from app_public.absence_types t where lower(t.code) = lower(p_code))
      then format('Le code « %s » est déjà utilisé par un motif d''absence.', p_code)
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
    (make_date(p_year, 1, 1), 'Jour de l''an'),
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
--! Included counters/tables.sql
-- Counters (balances of leave and hours) and their journal.
-- Balances are sums over the journal; the journal is append-only. Every movement locks its
-- counter row first (app_private.counter_lock), so parallel movements serialise.

create table if not exists app_public.counters (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  code text not null references app_public.counter_kinds on delete restrict,
  year smallint not null check (year between 2000 and 2100),
  is_active boolean not null default true,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  unique (employee_id, code, year)
);
create index if not exists counters_code_idx on app_public.counters (code, year);

create table if not exists app_private.counter_movements (
  id bigint generated always as identity primary key,
  counter_id int not null references app_public.counters on delete cascade,
  -- Which column of the balance moves: Acquis, Pris or Planifiés.
  bucket text not null check (bucket in ('acquired', 'taken', 'planned')),
  -- Signed: a reservation is +planned, its release -planned, a consumption +taken, ...
  quantity numeric(8,2) not null check (quantity <> 0),
  kind text not null check (kind in ('grant', 'adjustment', 'reservation', 'release', 'consumption',
                                     'restitution', 'start', 'compensation')),
  -- The absence and the transition that caused the movement (no foreign key: a withdrawn
  -- request is erased but its movements stay in the journal).
  absence_id int,
  transition text,
  actor_account_id int,
  comment text,
  created_at timestamptz not null default app_hidden.now()
);
create index if not exists counter_movements_counter_idx on app_private.counter_movements (counter_id);
create index if not exists counter_movements_absence_idx on app_private.counter_movements (absence_id) where absence_id is not null;

create or replace function app_private.tg_counter_movements__append_only() returns trigger
language plpgsql volatile as $$
begin
  raise exception using errcode = 'WF900', message = 'Le journal des compteurs est en ajout seul : écrivez un mouvement de compensation.';
end;
$$;
create or replace trigger _200_append_only before update or delete on app_private.counter_movements
  for each row execute function app_private.tg_counter_movements__append_only();

create or replace view app_private.counter_balances as
select c.id as counter_id, c.employee_id, c.code, c.year, c.is_active,
       coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0)::numeric(8,2) as acquired,
       coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0)::numeric(8,2) as taken,
       coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0)::numeric(8,2) as planned,
       (coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0)
        - coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0)
        - coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0))::numeric(8,2) as remaining
from app_public.counters c
left join app_private.counter_movements m on m.counter_id = c.id
group by c.id;

create or replace trigger _100_timestamps before insert or update on app_public.counters
  for each row execute function app_hidden.tg__timestamps();
--! EndIncluded counters/tables.sql
--! Included planning/tables.sql
-- Day-change requests and day modifications.

-- A slot of a day: hours, break, post, establishment and per-slot options.
do $$
begin
  create type app_public.slot as (
    start_time time,
    end_time time,
    break_start_time time,
    break_end_time time,
    break_paid boolean,
    post_id int,
    establishment_id int,
    is_remote boolean
  );
exception when duplicate_object then null;
end;
$$;

create table if not exists app_public.shift_change_reasons (
  code text primary key,
  label text not null,
  position smallint not null default 0
);
insert into app_public.shift_change_reasons (code, label, position) values
  ('demande_personnelle', 'Demande personnelle', 1),
  ('urgence', 'Urgence', 2),
  ('remplacement', 'Remplacement', 3)
on conflict do nothing;

create table if not exists app_public.shift_change_requests (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  date date not null,
  reason text not null references app_public.shift_change_reasons on delete restrict,
  comment text check (length(comment) <= 2000),
  is_remote boolean not null default false,
  is_offsite boolean not null default false,
  slots app_public.slot[] not null default '{}',
  status text not null default 'pending' check (status in ('pending', 'validated', 'refused')),
  version int not null default 1 check (version >= 1),
  planned_description text not null default '',
  planned_minutes int not null default 0,
  requested_minutes int not null default 0,
  author_account_id int references app_public.accounts on delete set null,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  decided_by int references app_public.accounts on delete set null,
  decided_at timestamptz,
  decision_reason text,
  corrected_by int references app_public.accounts on delete set null,
  corrected_at timestamptz,
  -- An adjusted grant: the day granted, next to what was asked.
  granted_slots app_public.slot[],
  granted_minutes int,
  granted_gap_minutes int
);
create unique index if not exists shift_change_requests_one_pending_key
  on app_public.shift_change_requests (employee_id, date) where status = 'pending';
create index if not exists shift_change_requests_employee_date_idx on app_public.shift_change_requests (employee_id, date);
create index if not exists shift_change_requests_status_idx on app_public.shift_change_requests (status, date);

-- The modification of one day of an employee's planning (replaces the template's day).
create table if not exists app_public.day_modifications (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  date date not null,
  slots app_public.slot[] not null default '{}',
  is_remote boolean not null default false,
  is_offsite boolean not null default false,
  comment text check (length(comment) <= 2000),
  source_request_id int references app_public.shift_change_requests on delete set null,
  created_by int references app_public.accounts on delete set null,
  updated_by int references app_public.accounts on delete set null,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  unique (employee_id, date)
);
create index if not exists day_modifications_date_idx on app_public.day_modifications (date);

create or replace trigger _100_timestamps before insert or update on app_public.shift_change_requests
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _100_timestamps before insert or update on app_public.day_modifications
  for each row execute function app_hidden.tg__timestamps();
--! EndIncluded planning/tables.sql
--! Included absences/tables.sql
-- Absences and their documents.

create table if not exists app_public.absences (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  type_id int not null references app_public.absence_types on delete restrict,
  date_start date not null,
  date_end date not null,
  -- Half-days (CONTRACT section 7): start_half 'afternoon' = the morning of date_start is
  -- worked; end_half 'morning' = the afternoon of date_end is worked; null = whole day.
  start_half text check (start_half in ('morning', 'afternoon')),
  end_half text check (end_half in ('morning', 'afternoon')),
  -- Hourly types: one date, start and end hours.
  start_time time,
  end_time time,
  comment text check (length(comment) <= 2000),
  status text not null default 'pending'
    check (status in ('pending', 'validated', 'refused', 'cancellation_requested', 'cancelled')),
  version int not null default 1 check (version >= 1),
  counted_quantity numeric(8,2),
  counted_unit text check (counted_unit in ('day', 'hour')),
  author_account_id int references app_public.accounts on delete set null,
  submitted_at timestamptz,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  decided_by int references app_public.accounts on delete set null,
  decided_at timestamptz,
  decision_reason text,
  corrected_by int references app_public.accounts on delete set null,
  cancellation_comment text,
  cancellation_requested_at timestamptz,
  cancellation_decided_at timestamptz,
  cancellation_decided_by int references app_public.accounts on delete set null,
  cancellation_decision_reason text,
  cancelled_by int references app_public.accounts on delete set null,
  cancelled_at timestamptz,
  -- Warnings raised by the last write (creation, correction, decision): agreement rules,
  -- notice periods, caps with Avertir, non-splittable periods, event conflicts.
  warnings jsonb not null default '[]'::jsonb check (jsonb_typeof(warnings) = 'array'),
  -- Time covered, for overlap: a morning is [00:00, 12:00), an afternoon [12:00, 24:00).
  period tsrange generated always as (
    case when start_time is not null then
      tsrange(date_start + start_time, date_start + end_time)
    else
      tsrange(date_start + case when start_half = 'afternoon' then time '12:00' else time '00:00' end,
              (date_end + case when end_half = 'morning' then 0 else 1 end)
                + case when end_half = 'morning' then time '12:00' else time '00:00' end)
    end) stored,
  constraint absences_dates check (date_end >= date_start),
  constraint absences_hours_pair check ((start_time is null) = (end_time is null)),
  constraint absences_hours_single_day check (start_time is null or (date_end = date_start and end_time > start_time
                                                                      and start_half is null and end_half is null)),
  constraint absences_half_day_order check (not (date_start = date_end and start_half = 'afternoon' and end_half = 'morning')),
  -- Active absences of one employee never overlap, even under concurrent writes.
  constraint absences_no_overlap exclude using gist (employee_id with =, period with &&)
    where (status in ('pending', 'validated', 'cancellation_requested'))
);
create index if not exists absences_employee_dates_idx on app_public.absences (employee_id, date_start, date_end);
-- Queues (GET /api/absences/?status=): the whole association's in date order, a perimeter's
-- by employee; both cover what the list and its row-level security read (index-only scans).
create index if not exists absences_status_idx on app_public.absences (status, date_start, id) include (employee_id);
create index if not exists absences_status_employee_idx on app_public.absences (status, employee_id, date_start) include (id);
create index if not exists absences_type_idx on app_public.absences (type_id);
create index if not exists absences_author_idx on app_public.absences (author_account_id);

create table if not exists app_public.absence_documents (
  id int generated always as identity primary key,
  absence_id int not null references app_public.absences on delete cascade,
  filename text not null check (length(filename) between 1 and 255),
  content_type text not null check (content_type in ('application/pdf', 'image/jpeg', 'image/png')),
  size_bytes int not null check (size_bytes > 0 and size_bytes <= 10485760),
  -- Name of the file in the storage directory (random, never derived from user input).
  storage_key text not null unique check (storage_key ~ '^[0-9a-f]{32}$'),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  uploaded_at timestamptz not null default app_hidden.now(),
  uploaded_by int references app_public.accounts on delete set null,
  uploaded_by_name text not null
);
create index if not exists absence_documents_absence_idx on app_public.absence_documents (absence_id);

-- One honorability certificate (attestation d'honorabilité) per employee.
create table if not exists app_public.honorability_certificates (
  employee_id int primary key references app_public.employees on delete cascade,
  filename text not null check (length(filename) between 1 and 255),
  content_type text not null check (content_type in ('application/pdf', 'image/jpeg', 'image/png')),
  size_bytes int not null check (size_bytes > 0 and size_bytes <= 10485760),
  storage_key text not null unique check (storage_key ~ '^[0-9a-f]{32}$'),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  uploaded_at timestamptz not null default app_hidden.now(),
  uploaded_by int references app_public.accounts on delete set null,
  uploaded_by_name text not null
);

-- Files whose rows were deleted: removed from the storage directory after commit by the
-- worker (a rolled-back deletion never loses a file).
create table if not exists app_private.storage_garbage (
  storage_key text primary key,
  queued_at timestamptz not null default app_hidden.now()
);

create or replace trigger _100_timestamps before insert or update on app_public.absences
  for each row execute function app_hidden.tg__timestamps();
--! EndIncluded absences/tables.sql
--! Included events/tables.sql
-- Events (meetings, trainings, outings) with participants; an absence overlapping an event
-- of its employee raises a conflict alert.
create table if not exists app_public.events (
  id int generated always as identity primary key,
  title text not null check (btrim(title) <> '' and length(title) <= 200),
  description text check (length(description) <= 5000),
  establishment_id int references app_public.establishments on delete set null,
  start_at timestamptz not null,
  end_at timestamptz not null,
  created_by int references app_public.accounts on delete set null,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  constraint events_interval check (end_at > start_at)
);
create index if not exists events_interval_idx on app_public.events (start_at, end_at);
create index if not exists events_establishment_idx on app_public.events (establishment_id);

create table if not exists app_public.event_participants (
  event_id int not null references app_public.events on delete cascade,
  employee_id int not null references app_public.employees on delete cascade,
  primary key (event_id, employee_id)
);
create index if not exists event_participants_employee_idx on app_public.event_participants (employee_id);

create or replace trigger _100_timestamps before insert or update on app_public.events
  for each row execute function app_hidden.tg__timestamps();
--! EndIncluded events/tables.sql
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
  ('on_call_period_establishment', 'Établissement d''une astreinte')
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
  verb text not null check (verb in ('Creation', 'Modification', 'Suppression', 'Validation', 'Refus',
                                     'Correction', 'Demande d''annulation', 'Annulation', 'Impersonation')),
  model text not null references app_private.audit_models on update cascade on delete restrict,
  target_id bigint,
  before jsonb,
  after jsonb,
  transaction_id bigint not null default txid_current(),
  constraint audit_log_values check (
    (verb in ('Creation', 'Impersonation') and before is null and after is not null)
    or (verb = 'Suppression' and before is not null and after is null)
    or (verb not in ('Creation', 'Impersonation', 'Suppression') and before is not null and after is not null))
);
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
-- acting account for the transaction.
create or replace function app_private.begin_request(p_account_id int, p_impersonator_id int default null) returns jsonb
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
    perform set_config('app.impersonator_id', p_impersonator_id::text, true);
  end if;
  perform set_config('app.account_id', v_account.id::text, true);
  perform set_config('app.employee_id', coalesce(v_account.employee_id::text, ''), true);
  return jsonb_build_object('id', v_account.id, 'username', v_account.username,
                            'employee_id', v_account.employee_id, 'is_staff', v_account.is_staff,
                            'is_superuser', v_account.is_superuser);
end;
$$;

-- The same, for a prelude sent in one round trip with the call and the commit behind it
-- (src/db/transaction.ts runRequestCall): an inactive or unknown account is an error, which
-- aborts the transaction, so that the call behind it does nothing and the commit rolls back.
create or replace function app_private.begin_request_or_fail(p_account_id int, p_impersonator_id int default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account jsonb := app_private.begin_request(p_account_id, p_impersonator_id);
begin
  if v_account is null then
    raise exception using errcode = 'WA001', message = 'Compte inactif ou inconnu.';
  end if;
  return v_account;
end;
$$;

-- Login: the stored hash of an active account (case-insensitive username).
create or replace function app_private.login_lookup(p_username text)
returns table (account_id int, password_hash text, is_active boolean)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.id, s.password_hash, a.is_active
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
begin
  update app_private.password_tokens t set used_at = app_hidden.now()
  from app_public.accounts a
  where a.id = t.account_id and a.is_active
    and t.token_hash = public.digest(coalesce(p_token, ''), 'sha256')
    and t.used_at is null and t.expires_at > app_hidden.now()
  returning t.account_id into v_account_id;
  if v_account_id is null then
    perform app_hidden.invalid('token', 'Ce lien n''est plus valide : il a expiré ou a déjà servi. Demandez un nouveau lien.', 'WV030');
  end if;
  update app_private.password_tokens set used_at = app_hidden.now()
  where account_id = v_account_id and used_at is null;
  insert into app_private.account_secrets (account_id, password_hash, password_changed_at)
  values (v_account_id, p_password_hash, app_hidden.now())
  on conflict (account_id) do update set password_hash = excluded.password_hash,
                                         password_changed_at = excluded.password_changed_at;
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
--! Included auth/rate_limits.sql
-- Rate limits shared by every server process (SPEC Limits, CONTRACT section 7): one row per
-- bucket ('ip:…', 'account:…', 'login:…', 'reset:…', 'bo-login-…') holding its current fixed
-- window. UNLOGGED: counters are abuse protection, not data; they are not worth a WAL write
-- per request, and a crash that empties them only forgives the current window. Not
-- replicated to a standby either (docs/running.md).
create unlogged table if not exists app_private.rate_limit_windows (
  bucket text primary key check (length(bucket) <= 400),
  window_start timestamptz not null,
  window_end timestamptz not null,
  hits int not null check (hits >= 1)
);
-- No policy: the request roles never read it; only the security-definer functions below do.
alter table app_private.rate_limit_windows enable row level security;
create index if not exists rate_limit_windows_end_idx on app_private.rate_limit_windows (window_end);

comment on table app_private.rate_limit_windows is
  'Fixed-window request counters of the rate limits, shared by all server processes; purged by purge_rate_limit_windows.';

-- Counts one hit on `p_bucket` and says whether it is allowed. The window opens at the first
-- hit of a bucket (or the first after the previous window ended) and lasts `p_window`. One
-- statement (an upsert) so that concurrent hits from several processes count exactly once each.
-- retry_after: whole seconds until the window ends (at least 1) when refused, else 0.
-- The wall clock (clock_timestamp), never the business clock the tests freeze.
create or replace function app_private.rate_limit_hit(p_bucket text, p_limit int, p_window interval)
returns table (allowed boolean, remaining int, retry_after int)
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  with hit as (
    insert into app_private.rate_limit_windows as w (bucket, window_start, window_end, hits)
    values (p_bucket, clock_timestamp(), clock_timestamp() + p_window, 1)
    on conflict (bucket) do update set
      window_start = case when w.window_end <= excluded.window_start then excluded.window_start else w.window_start end,
      window_end = case when w.window_end <= excluded.window_start then excluded.window_end else w.window_end end,
      -- Capped: a flood keeps the bucket refused without counting towards an overflow.
      hits = case when w.window_end <= excluded.window_start then 1 else least(w.hits, p_limit) + 1 end
    returning w.hits, w.window_end
  )
  select hit.hits <= p_limit,
         greatest(p_limit - hit.hits, 0),
         case when hit.hits <= p_limit then 0
              else greatest(1, ceil(extract(epoch from hit.window_end - clock_timestamp())))::int end
  from hit;
$$;
comment on function app_private.rate_limit_hit(text, int, interval) is
  'Counts one request in a rate-limit bucket: allowed, remaining, retry_after (seconds, 0 when allowed).';

-- Removes the windows that ended (job purge_rate_limit_windows, every 10 minutes). Returns the count.
create or replace function app_private.purge_rate_limit_windows() returns int
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  with gone as (delete from app_private.rate_limit_windows where window_end <= clock_timestamp() returning 1)
  select count(*)::int from gone;
$$;
comment on function app_private.purge_rate_limit_windows() is
  'Deletes the rate-limit windows that ended; returns how many.';
--! EndIncluded auth/rate_limits.sql
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
declare
  v_actor int := app_hidden.current_account_id();
  v_impersonator int := nullif(current_setting('app.impersonator_id', true), '')::int;
begin
  -- One statement; the names of each account read once (an absent account: nulls, as before).
  insert into app_private.audit_log (actor_account_id, actor_username, actor_display_name,
                                     impersonator_account_id, impersonator_username, impersonator_display_name,
                                     verb, model, target_id, before, after)
  select v_actor, act.username, act.display_name, v_impersonator, imp.username, imp.display_name,
         p_verb, p_model, p_target_id, p_before, p_after
  from (select 1) one
  left join lateral (select a.username, coalesce(e.first_name || ' ' || e.last_name, a.username) as display_name
                     from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
                     where a.id = v_actor) act on true
  left join lateral (select a.username, coalesce(e.first_name || ' ' || e.last_name, a.username) as display_name
                     from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
                     where a.id = v_impersonator) imp on true;
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
     and app_hidden.account_has_permission(app_hidden.current_account_id(), 'audit.view_actionlog')
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
--! Included audit/triggers.sql
-- Audited tables of the foundation. Other concerns attach their own triggers next to their
-- tables (absence, shift_change_request, day_modification).

-- Opening and closing an account (PUT /api/employees/<id>/account-activation/ and the
-- back-office) is audited as model 'account'. Logins (last_login_at) and other account
-- columns are not: only a change of is_active writes a line.
create or replace trigger _500_audit after update of is_active on app_public.accounts
  for each row when (old.is_active is distinct from new.is_active)
  execute function app_private.tg__audit('account');
--! EndIncluded audit/triggers.sql
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
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.decider_candidates(p_employee_id int, p_on date, p_decide_permission text,
                                               p_author_account_id int)
returns table (account_id int, attached boolean)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
declare
  v_at timestamptz := app_hidden.now();
  v_today date := app_hidden.business_date(app_hidden.now());
  v_establishments int[];
  v_now_establishments int[];
  v_exists boolean := exists (select 1 from app_public.employees e where e.id = p_employee_id);
begin
  v_establishments := array(select app_hidden.employee_establishments(p_employee_id, coalesce(p_on, v_today))
                            union
                            select app_hidden.employee_establishments(p_employee_id, v_today));
  -- What app_hidden.may(decider, permission, employee, now) reads: the employee's
  -- establishments today. Both perimeters of every decider are computed in one statement
  -- each (app_hidden.permission_scopes), not one perimeter per decider.
  v_now_establishments := array(select app_hidden.employee_establishments(p_employee_id, v_today));
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
    -- every employee is never read (offset 0 keeps it a lateral index scan whatever the
    -- estimates)
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
    select c.account_id as id
    from candidates c
    cross join lateral (select a.is_active from app_public.accounts a where a.id = c.account_id offset 0) a
    where a.is_active and c.account_id is distinct from p_author_account_id
  ),
  decide as (
    select * from app_hidden.permission_scopes(array(select d.id from deciders d), p_decide_permission, v_at)
  ),
  queue as (
    select * from app_hidden.permission_scopes(array(select d.id from deciders d), 'absences.view_absence_queue', v_at)
  ),
  restricted as (
    -- Establishments of the restricted role attributions granting the decision, per account.
    select ra.account_id, rae.establishment_id
    from app_public.role_attributions ra
    join app_public.roles r on r.id = ra.role_id and r.opens_manager_workspace
    join app_public.role_permissions rp on rp.role_id = ra.role_id and rp.permission_code = p_decide_permission
    join app_public.role_attribution_establishments rae on rae.attribution_id = ra.id
    where ra.account_id in (select d.id from deciders d)
      and app_hidden.date_in(v_today, ra.start_date, ra.end_date)
  )
  select d.id,
         exists (select 1 from restricted x
                 where x.account_id = d.id and x.establishment_id = any (v_establishments))
         or (exists (select 1 from restricted x where x.account_id = d.id)
             and exists (select 1 from app_public.on_call_periods op
                         join app_public.on_call_period_establishments ope on ope.period_id = op.id
                         where op.account_id = d.id and op.start_at <= v_at and v_at < op.end_at
                           and ope.establishment_id = any (v_establishments)))
  from deciders d
  join decide ds on ds.account_id = d.id
  join queue qs on qs.account_id = d.id
  where p_employee_id is not null
    and case when ds.whole then v_exists else ds.establishment_ids && v_now_establishments end
    and case when qs.whole then v_exists else qs.establishment_ids && v_now_establishments end;
end;
$$;

-- The accounts to notify of a filing: the attached deciders, else the unattached ones.
create or replace function app_private.route_deciders(p_employee_id int, p_on date, p_decide_permission text,
                                           p_author_account_id int)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return query
    with candidates as (
      select * from app_private.decider_candidates(p_employee_id, p_on, p_decide_permission, p_author_account_id)
    )
    select c.account_id from candidates c
    where c.attached = exists (select 1 from candidates x where x.attached)
    order by c.account_id;
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
    then 'Cause : l''auteur de la demande est le seul valideur possible, et personne ne décide sa propre demande.'
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
    'read_at', p_notification.read_at);
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
create or replace function app_private.email_outbox_next(p_after_id bigint default 0)
returns table (id bigint, to_address text, subject text, body_text text, attempts int)
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  select o.id, o.to_address, o.subject, o.body_text, o.attempts
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
    perform app_hidden.forbidden('La boîte d''envoi des e-mails est réservée aux comptes du personnel d''administration.', 'WF602');
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
--! Included planning/planning.sql
-- GET /api/planning/: the cells of a window (at most 62 days) for the caller's employees,
-- built set-wise in one statement (dates × employees joined to templates, day
-- modifications, absences, pending requests and on-call periods).
-- The answer is json, not jsonb, written as text (app_hidden.json_text and its siblings):
-- docs/architecture.md, Performance notes.

-- On-call periods overlapping the window.
create index if not exists on_call_periods_interval_idx on app_public.on_call_periods (end_at, start_at);
-- Pending requests of a window (the planning's pending_request).
create index if not exists shift_change_requests_pending_date_idx on app_public.shift_change_requests (date, employee_id)
  where status = 'pending';

-- On-call periods of the employees' teams, per employee and day: the periods whose
-- establishments meet the establishments of a team the employee belongs to that day, and
-- whose interval [start, end) meets the day (business time zone). Security definer: an
-- employee reads who is on call for their teams without reading the on-call screens.
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_hidden.team_on_call_by_day(p_employee_ids int[], p_from date, p_to date)
returns table (employee_id int, date date, on_call jsonb)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan rows 100 as $$
#variable_conflict use_column
begin
  -- Most windows meet no on-call period: then there is nothing to join.
  if not exists (select 1 from app_public.on_call_periods op
                 where op.end_at > p_from::timestamp at time zone app_hidden.business_timezone()
                   and op.start_at < (p_to + 1)::timestamp at time zone app_hidden.business_timezone()) then
    return;
  end if;
  return query
    with days as (
      select d::date as date,
             d::date::timestamp at time zone app_hidden.business_timezone() as day_start,
             (d::date + 1)::timestamp at time zone app_hidden.business_timezone() as day_end
      from generate_series(p_from, p_to, interval '1 day') d
    ),
    periods as (
      select op.id, op.account_id, op.start_at, op.end_at, op.comment,
             coalesce(e.first_name || ' ' || e.last_name, a.username) as name,
             array_agg(ope.establishment_id order by ope.establishment_id) as establishment_ids
      from app_public.on_call_periods op
      join app_public.on_call_period_establishments ope on ope.period_id = op.id
      join app_public.accounts a on a.id = op.account_id
      left join app_public.employees e on e.id = a.employee_id
      where op.end_at > p_from::timestamp at time zone app_hidden.business_timezone()
        and op.start_at < (p_to + 1)::timestamp at time zone app_hidden.business_timezone()
      group by op.id, a.username, e.first_name, e.last_name
    ),
    team_days as (
      select ta.employee_id, d.date, d.day_start, d.day_end, array_agg(distinct te.establishment_id) as establishment_ids
      from app_public.team_assignments ta
      join app_public.team_establishments te on te.team_id = ta.team_id
      join days d on app_hidden.date_in(d.date, ta.start_date, ta.end_date)
      where ta.employee_id = any (p_employee_ids)
      group by ta.employee_id, d.date, d.day_start, d.day_end
    )
    select t.employee_id, t.date,
           jsonb_agg(jsonb_build_object('id', p.id, 'account', p.account_id, 'name', p.name,
                                        'start', p.start_at, 'end', p.end_at,
                                        'establishments', to_jsonb(p.establishment_ids), 'comment', p.comment)
                     order by p.start_at, p.id)
    from team_days t
    join periods p on p.establishment_ids && t.establishment_ids
                  and p.start_at < t.day_end and p.end_at > t.day_start
    group by t.employee_id, t.date;
end;
$$;

-- JSON text of a value (null → null), for the planning's answer written as text
-- (docs/architecture.md, Performance notes).
-- Stable, as to_json and to_char are: an immutable wrapper would not be inlined.
create or replace function app_hidden.json_text(p text) returns text
language sql stable parallel safe as $$
  select coalesce(to_json(p)::text, 'null');
$$;
create or replace function app_hidden.json_hm(p time) returns text
language sql stable parallel safe as $$
  select coalesce('"' || to_char(p, 'HH24:MI') || '"', 'null');
$$;
create or replace function app_hidden.json_date(p date) returns text
language sql stable parallel safe as $$
  select coalesce('"' || to_char(p, 'YYYY-MM-DD') || '"', 'null');
$$;
create or replace function app_hidden.json_int(p bigint) returns text
language sql stable parallel safe as $$
  select coalesce(p::text, 'null');
$$;
create or replace function app_hidden.json_bool(p boolean) returns text
language sql stable parallel safe as $$
  select coalesce(p::text, 'null');
$$;

-- The cells of the employees over [p_from, p_to]. Runs with the caller's row-level security
-- (the caller chose the employees it may read).
--   * the planned day: the day modification, else the template valid that day;
--   * a granted absence (validated, or cancellation_requested: still drawn) prevails: a
--     whole-day absence is one absence block; a half-day absence gives two blocks (the
--     absence on its half, the worked day next to it with absence null); an hourly absence
--     is a block among the worked slots, by time;
--   * pending_request: on an absence block, its requested cancellation; on the worked or rest
--     blocks (or, in a cell without any, on the absence blocks), a pending absence request
--     of the day, else the pending day-change request of the day;
--   * on_call: the on-call periods of the employee's teams that meet the day.
-- force_generic_plan: docs/architecture.md, Performance notes.
-- Text, not json: the service sends it as is (app_public.planning_read_text), and a cast to json
-- would parse the whole answer once more only to check it.
drop function if exists app_hidden.planning_cells(int[], date, date);
create or replace function app_hidden.planning_cells(p_employee_ids int[], p_from date, p_to date) returns text
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
begin
  return (
    with days as (
      select d::date as date from generate_series(p_from, p_to, interval '1 day') d
    ),
    emp as (
      select e.id, e.first_name, e.last_name, e.main_establishment_id,
             row_number() over (order by lower(e.last_name), lower(e.first_name), e.id) as ord
      from app_public.employees e
      where e.id = any (p_employee_ids)
    ),
    cells as (
      select emp.id as employee_id, emp.ord, days.date from emp cross join days
    ),
    cell_template as (
      select distinct on (c.employee_id, c.date) c.employee_id, c.date, t.id as template_id
      from cells c
      join app_public.planning_templates t
        on t.employee_id = c.employee_id and t.valid_from <= c.date and (t.valid_to is null or t.valid_to >= c.date)
      order by c.employee_id, c.date, t.valid_from desc
    ),
    template_day as (
      select ts.template_id, ts.weekday, array_agg(app_hidden.post_slot(p) order by ts.position) as slots
      from app_public.planning_template_slots ts
      join app_public.posts p on p.id = ts.post_id
      where ts.template_id in (select ct.template_id from cell_template ct)
      group by ts.template_id, ts.weekday
    ),
    modification as (
      select m.* from app_public.day_modifications m
      where m.employee_id = any (p_employee_ids) and m.date between p_from and p_to
    ),
    absence_day as (
      select c.employee_id, c.date, a.id, a.type_id, t.code as type_code, t.name as type_name,
             a.date_start, a.date_end, a.start_half, a.end_half, a.start_time, a.end_time, a.comment, a.status,
             case when a.start_time is not null then 'hours'
                  when c.date = a.date_start and a.start_half is not distinct from 'afternoon' then 'afternoon'
                  when c.date = a.date_end and a.end_half is not distinct from 'morning' then 'morning'
                  else 'day' end as part
      from app_public.absences a
      join app_public.absence_types t on t.id = a.type_id
      join cells c on c.employee_id = a.employee_id and c.date between a.date_start and a.date_end
      where a.employee_id = any (p_employee_ids) and a.date_start <= p_to and a.date_end >= p_from
        and a.status in ('pending', 'validated', 'cancellation_requested')
    ),
    granted as (
      -- whole: the granted absences of the cell cover the whole day (one whole-day absence, or
      -- a morning and an afternoon): a window over the cell, not a join on an aggregate.
      select a.*,
             coalesce(bool_or(a.part in ('day', 'morning')) over w and bool_or(a.part in ('day', 'afternoon')) over w,
                      false) as whole
      from absence_day a
      where a.status in ('validated', 'cancellation_requested')
      window w as (partition by a.employee_id, a.date)
    ),
    pending_absence as (
      select distinct on (a.employee_id, a.date) a.employee_id, a.date, a.id
      from absence_day a
      where a.status = 'pending'
      order by a.employee_id, a.date, a.id
    ),
    pending_shift_change as (
      select r.employee_id, r.date, r.id
      from app_public.shift_change_requests r
      where r.employee_id = any (p_employee_ids) and r.date between p_from and p_to and r.status = 'pending'
    ),
    on_call as (
      select * from app_hidden.team_on_call_by_day(p_employee_ids, p_from, p_to)
    ),
    -- Everything a cell's blocks carry, in one row per cell: the planned day (the day
    -- modification, else the template), whether granted absences cover the whole day, the
    -- pending request of the day and the on-call periods (joined once here, not per kind of
    -- block).
    cell as (
      select c.employee_id, c.ord, c.date,
             coalesce(m.slots, td.slots, '{}'::app_public.slot[]) as slots,
             m.id is not null as modified,
             coalesce(m.is_remote, false) as day_remote,
             coalesce(m.is_offsite, false) as day_offsite,
             m.comment,
             coalesce(cv.whole, false) as whole,
             coalesce(oc.on_call::text, '[]') as on_call,
             case when pa.id is not null then '{"kind":"absence","id":' || pa.id || ',"is_cancellation":false}'
                  when ps.id is not null then '{"kind":"shift_change","id":' || ps.id || ',"is_cancellation":false}'
                  else 'null'
             end as pending
      from cells c
      left join cell_template ct on ct.employee_id = c.employee_id and ct.date = c.date
      left join template_day td on td.template_id = ct.template_id and td.weekday = extract(isodow from c.date)::int
      left join modification m on m.employee_id = c.employee_id and m.date = c.date
      left join (select distinct g.employee_id, g.date, g.whole from granted g) cv
        on cv.employee_id = c.employee_id and cv.date = c.date
      left join pending_absence pa on pa.employee_id = c.employee_id and pa.date = c.date
      left join pending_shift_change ps on ps.employee_id = c.employee_id and ps.date = c.date
      left join on_call oc on oc.employee_id = c.employee_id and oc.date = c.date
    ),
    blocks as (
      -- granted absences
      select g.employee_id, pr.ord, g.date,
             case g.part when 'afternoon' then 2 when 'hours' then 1 else 0 end as k1,
             coalesce(extract(epoch from g.start_time)::int / 60, 0) as k2,
             -- at the same start time, the worked slot before the hourly absence
             1 as k3,
             '{"kind":"absence","post":null,"post_code":null,"post_label":null,"establishment":null'
             || ',"start_time":' || app_hidden.json_hm(g.start_time) || ',"end_time":' || app_hidden.json_hm(g.end_time)
             || ',"break_start_time":null,"break_end_time":null,"break_paid":false'
             || ',"minutes":' || app_hidden.json_int(case when g.start_time is not null
                                                         then app_hidden.span_minutes(g.start_time, g.end_time) end)
             || ',"is_remote":false,"is_offsite":false,"modified":false,"comment":null'
             || ',"absence":{"id":' || g.id || ',"type":' || g.type_id || ',"type_code":' || app_hidden.json_text(g.type_code)
             || ',"type_name":' || app_hidden.json_text(g.type_name) || ',"date_start":' || app_hidden.json_date(g.date_start)
             || ',"date_end":' || app_hidden.json_date(g.date_end) || ',"start_half":' || app_hidden.json_text(g.start_half)
             || ',"end_half":' || app_hidden.json_text(g.end_half) || ',"start_time":' || app_hidden.json_hm(g.start_time)
             || ',"end_time":' || app_hidden.json_hm(g.end_time) || ',"comment":' || app_hidden.json_text(g.comment)
             || ',"status":' || app_hidden.json_text(g.status) || ',"part":' || app_hidden.json_text(g.part) || '}'
             || ',"pending_request":' || case when g.status = 'cancellation_requested'
                                              then '{"kind":"absence","id":' || g.id || ',"is_cancellation":true}'
                                              when g.whole then pr.pending
                                              else 'null' end
             || ',"on_call":' || pr.on_call || '}' as block
      from granted g
      join cell pr on pr.employee_id = g.employee_id and pr.date = g.date
      union all
      -- worked slots of the planned day (unnested once: each field a column, not an element
      -- extracted from the array at each use)
      select p.employee_id, p.ord, p.date, 1, extract(epoch from sl.start_time)::int / 60, 0,
             '{"kind":"work","post":' || app_hidden.json_int(sl.post_id)
             || ',"post_code":' || app_hidden.json_text(po.code) || ',"post_label":' || app_hidden.json_text(po.label)
             || ',"establishment":' || app_hidden.json_int(sl.establishment_id)
             || ',"start_time":' || app_hidden.json_hm(sl.start_time)
             || ',"end_time":' || app_hidden.json_hm(sl.end_time)
             || ',"break_start_time":' || app_hidden.json_hm(sl.break_start_time)
             || ',"break_end_time":' || app_hidden.json_hm(sl.break_end_time)
             || ',"break_paid":' || app_hidden.json_bool(coalesce(sl.break_paid, false))
             || ',"minutes":' || app_hidden.json_int(app_hidden.slot_minutes(
                                   row(sl.start_time, sl.end_time, sl.break_start_time, sl.break_end_time, sl.break_paid,
                                       sl.post_id, sl.establishment_id, sl.is_remote)::app_public.slot))
             || ',"is_remote":' || app_hidden.json_bool(coalesce(sl.is_remote, false) or p.day_remote)
             || ',"is_offsite":' || app_hidden.json_bool(p.day_offsite)
             || ',"modified":' || app_hidden.json_bool(p.modified) || ',"comment":' || app_hidden.json_text(p.comment)
             || ',"absence":null,"pending_request":' || p.pending || ',"on_call":' || p.on_call || '}'
      from cell p
      cross join lateral unnest(p.slots) as sl(start_time, end_time, break_start_time, break_end_time, break_paid,
                                               post_id, establishment_id, is_remote)
      left join app_public.posts po on po.id = sl.post_id
      where not p.whole
      union all
      -- a rest day
      select p.employee_id, p.ord, p.date, 1, 0, 0,
             '{"kind":"rest","post":null,"post_code":null,"post_label":null,"establishment":null'
             || ',"start_time":null,"end_time":null,"break_start_time":null,"break_end_time":null'
             || ',"break_paid":false,"minutes":0,"is_remote":false,"is_offsite":false'
             || ',"modified":' || app_hidden.json_bool(p.modified) || ',"comment":' || app_hidden.json_text(p.comment)
             || ',"absence":null,"pending_request":' || p.pending || ',"on_call":' || p.on_call || '}'
      from cell p
      where cardinality(p.slots) = 0 and not p.whole
    ),
    -- The blocks are sorted once and each cell's aggregate keeps that order: with
    -- string_agg(... order by), each of the 6 000 cells started a sort of its own (PostgreSQL
    -- 15), the larger part of the statement's time. employee_id follows ord in the sort key so
    -- that the grouping reads the sorted input as it comes (a hashed grouping also keeps the
    -- input order within a group).
    cell_json as (
      select b.ord, b.date,
             '{"employee":' || b.employee_id || ',"date":' || app_hidden.json_date(b.date)
             || ',"blocks":[' || string_agg(b.block, ',') || ']}' as cell
      from (select * from blocks x order by x.ord, x.date, x.employee_id, x.k1, x.k2, x.k3) b
      group by b.ord, b.date, b.employee_id
    )
    select ('{"from":' || app_hidden.json_date(p_from) || ',"to":' || app_hidden.json_date(p_to)
            || ',"employees":[' || coalesce((select string_agg(
                 '{"id":' || e.id || ',"name":' || app_hidden.json_text(e.first_name || ' ' || e.last_name)
                 || ',"first_name":' || app_hidden.json_text(e.first_name) || ',"last_name":' || app_hidden.json_text(e.last_name)
                 || ',"main_establishment":' || app_hidden.json_int(e.main_establishment_id) || '}', ',' order by e.ord)
                 from emp e), '')
            || '],"cells":[' || coalesce((select string_agg(c.cell, ',' order by c.ord, c.date) from cell_json c), '')
            || '],"holidays":[' || coalesce((select string_agg(
                 '{"date":' || app_hidden.json_date(h.day) || ',"name":' || app_hidden.json_text(h.name) || '}', ',' order by h.day)
                 from generate_series(extract(year from p_from)::int, extract(year from p_to)::int) y,
                      lateral app_public.public_holidays(y) h
                 where h.day between p_from and p_to), '')
            || ']}')
  );
end;
$$;

-- GET /api/planning/?from=&to=&employee=&establishment=&team=
-- Without from/to: the current week (Monday to Sunday); with only one bound, the 7 days
-- from it (or up to it). At most 62 days. The branch depends on the directory permission,
-- never on the size of the perimeter: a holder of employee.view_employee_directory reads
-- the absences.view_absence_queue perimeter (and their own record); any other account
-- reads only its own cells. employee narrows to one readable employee (else 404).
-- establishment and team narrow the readable employees (the team planning of a month): those
-- attached to the establishment (main, secondary, or team of the day), those assigned to the
-- team, on the day of the window nearest today.
-- planning_read_text is what the route calls: the JSON text as written, which the service
-- passes through (a month of 200 employees is 2.5 MB). planning_read is the same answer typed
-- json, for SQL callers and GraphQL.
drop function if exists app_public.planning_read(date, date, int);
create or replace function app_public.planning_read_text(p_from date default null, p_to date default null, p_employee int default null,
                                                         p_establishment int default null, p_team int default null)
returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := app_hidden.today();
  v_from date;
  v_to date;
  v_me int := app_hidden.current_employee_id();
  v_ids int[];
  v_on date;
begin
  if p_from is null and p_to is null then
    v_from := date_trunc('week', v_today::timestamp)::date;
    v_to := v_from + 6;
  elsif p_to is null then
    v_from := p_from;
    v_to := p_from + 6;
  elsif p_from is null then
    v_to := p_to;
    v_from := p_to - 6;
  else
    v_from := p_from;
    v_to := p_to;
  end if;
  if v_to < v_from then
    perform app_hidden.invalid('to', 'La date de fin doit être postérieure ou égale à la date de début.', 'WV108');
  end if;
  if v_to - v_from + 1 > 62 then
    perform app_hidden.invalid('to', format('Le planning se lit sur 62 jours au plus (ici %s jours) : réduisez la période.',
                                            v_to - v_from + 1), 'WV108');
  end if;

  if app_hidden.current_account_has('employee.view_employee_directory') then
    v_ids := array(select x from app_hidden.perimeter_employee_ids('absences.view_absence_queue') x
                   union
                   select v_me where v_me is not null);
  else
    v_ids := case when v_me is null then '{}'::int[] else array[v_me] end;
  end if;
  if p_employee is not null then
    if not p_employee = any (v_ids) then
      perform app_hidden.not_found('Salarié introuvable dans votre périmètre.', 'WN102');
    end if;
    v_ids := array[p_employee];
  end if;
  v_on := greatest(v_from, least(v_to, v_today));
  if p_establishment is not null then
    v_ids := array(select x from unnest(v_ids) x
                   where x in (select y from app_hidden.employees_of_establishments(array[p_establishment], v_on) y));
  end if;
  if p_team is not null then
    v_ids := array(select x from unnest(v_ids) x
                   where exists (select 1 from app_public.team_assignments ta
                                 where ta.employee_id = x and ta.team_id = p_team
                                   and app_hidden.date_in(v_on, ta.start_date, ta.end_date)));
  end if;
  return app_hidden.planning_cells(v_ids, v_from, v_to);
end;
$$;

create or replace function app_public.planning_read(p_from date default null, p_to date default null, p_employee int default null,
                                                    p_establishment int default null, p_team int default null)
returns json
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_public.planning_read_text(p_from, p_to, p_employee, p_establishment, p_team)::json;
end;
$$;
comment on function app_public.planning_read(date, date, integer, integer, integer) is
'SPEC Planning cell and Permissions rule 3, GET /api/planning/: the cells of a window (the current week
by default, at most 62 days), with absences and pending requests; a directory reader reads its
absences.view_absence_queue perimeter, any other account its own cells; narrowed by employee,
establishment or team.';
--! EndIncluded planning/planning.sql
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
      message = 'Le salarié, la date et l''auteur d''une demande de modification ne changent pas.';
  end if;
  if new.version <> old.version + 1 then
    raise exception using errcode = 'WF190',
      message = 'Chaque écriture d''une demande de modification avance sa version d''une unité.';
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
  ('shift_change_notice_days', '7', 'Délai de prévenance d''une modification de journée, en jours (avertissement au détail)')
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
             array(select x from req, unnest(array[req.decided_by, req.corrected_by]) x where x is not null)) n
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
-- Body: date, reason, comment?, is_remote?, is_offsite?, slots? (employee is ignored: the
-- request is always on the caller's own record). Returns the record with has_recipient.
create or replace function app_public.shift_change_create(p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_employee int := app_hidden.current_employee_id();
  v_today date := app_hidden.today();
  v_body jsonb := coalesce(p_body, '{}'::jsonb);
  v_errors jsonb := '{}';
  v_date date;
  v_reason text;
  v_comment text;
  v_remote boolean;
  v_offsite boolean;
  v_planned app_public.slot[];
  v_modification app_public.day_modifications;
  v_slots app_public.slot[];
  v_noop text;
  v_id int;
  v_name text;
  v_has_recipient boolean;
begin
  if v_employee is null then
    perform app_hidden.forbidden('Votre compte n''est rattaché à aucune fiche salarié : vous ne pouvez pas demander de modification de journée.', 'WF106');
  end if;
  if jsonb_typeof(v_body) <> 'object' then
    perform app_hidden.invalid(null, 'Un objet JSON est attendu.');
  end if;

  if v_body -> 'date' is null or jsonb_typeof(v_body -> 'date') = 'null' then
    v_errors := app_hidden.add_error(v_errors, 'date', 'Ce champ est obligatoire.');
  elsif jsonb_typeof(v_body -> 'date') <> 'string' or (v_body ->> 'date') !~ '^\d{4}-\d{2}-\d{2}$' then
    v_errors := app_hidden.add_error(v_errors, 'date', 'Date invalide : format attendu AAAA-MM-JJ.');
  else
    begin
      v_date := (v_body ->> 'date')::date;
    exception when others then
      v_errors := app_hidden.add_error(v_errors, 'date', 'Date invalide : ce jour n''existe pas.');
    end;
  end if;

  if v_body -> 'reason' is null or jsonb_typeof(v_body -> 'reason') = 'null' or btrim(v_body ->> 'reason') = '' then
    v_errors := app_hidden.add_error(v_errors, 'reason', 'Ce champ est obligatoire.');
  elsif jsonb_typeof(v_body -> 'reason') <> 'string'
        or not exists (select 1 from app_public.shift_change_reasons r where r.code = v_body ->> 'reason') then
    v_errors := app_hidden.add_error(v_errors, 'reason',
      'Motif inconnu. Valeurs possibles : '
      || (select string_agg(r.code, ', ' order by r.position) from app_public.shift_change_reasons r) || '.');
  else
    v_reason := v_body ->> 'reason';
  end if;

  if v_body -> 'comment' is not null and jsonb_typeof(v_body -> 'comment') not in ('null', 'string') then
    v_errors := app_hidden.add_error(v_errors, 'comment', 'Une chaîne de caractères est attendue.');
  else
    v_comment := nullif(btrim(v_body ->> 'comment'), '');
    if length(v_comment) > 2000 then
      v_errors := app_hidden.add_error(v_errors, 'comment', 'Au plus 2000 caractères.');
    end if;
  end if;

  if not app_hidden.json_bool_ok(v_body -> 'is_remote') then
    v_errors := app_hidden.add_error(v_errors, 'is_remote', 'Un booléen (true ou false) est attendu.');
  end if;
  if not app_hidden.json_bool_ok(v_body -> 'is_offsite') then
    v_errors := app_hidden.add_error(v_errors, 'is_offsite', 'Un booléen (true ou false) est attendu.');
  end if;
  perform app_hidden.raise_errors(v_errors);
  v_remote := coalesce((v_body ->> 'is_remote')::boolean, false);
  v_offsite := coalesce((v_body ->> 'is_offsite')::boolean, false);

  if v_date < v_today - 14 then
    perform app_hidden.invalid('date',
      format('Une demande de modification ne peut pas porter sur un jour antérieur de plus de 14 jours : au plus tôt le %s.',
             app_hidden.fr_date(v_today - 14)), 'WV101');
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
  v_slots := app_hidden.parse_day_slots(v_body -> 'slots', 'slots', v_employee, v_date, v_planned);

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
    format('La demande de modification de %s pour le %s n''a aucun valideur : aucun compte actif ne peut la décider dans le périmètre du salarié.',
           v_name, app_hidden.fr_date(v_date)),
    'shift_change_request', v_id);

  return app_hidden.shift_change_record(v_id) || jsonb_build_object('has_recipient', v_has_recipient);
end;
$$;
comment on function app_public.shift_change_create(jsonb) is
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
    perform app_hidden.conflict('Quelqu''un a déjà décidé ou modifié cette demande entre-temps : rechargez la file des demandes.', 'WC101');
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
  if length(v_reason) > 2000 then
    perform app_hidden.invalid('reason', 'Au plus 2000 caractères.');
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
      'Vous accordez une journée différente de celle demandée : indiquez le motif de l''ajustement.');
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
  if length(v_reason) > 2000 then
    perform app_hidden.invalid('reason', 'Au plus 2000 caractères.');
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
  if v !~ '^([01]\d|2[0-3]):[0-5]\d$' then
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

create or replace function app_private.import_section(p_doc jsonb, p_section text) returns jsonb
language plpgsql volatile as $$
declare
  v jsonb := p_doc -> p_section;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return '[]'::jsonb;
  end if;
  if jsonb_typeof(v) <> 'array' then
    perform app_private.import_fail(p_section, 'expected an array');
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

create or replace function app_private.import_organisation(p_doc jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_est jsonb := '{}';
  v_teams jsonb := '{}';
  v_posts jsonb := '{}';
  v_emps jsonb := '{}';
  v_accounts jsonb := '{}';
  v_on_call jsonb := '{}';
  v_item jsonb;
  v_sub jsonb;
  v_path text;
  v_sub_path text;
  v_key text;
  v_id int;
  v_emp_id int;
  v_tpl_id int;
  i int;
  j int;
  k int;
  v_text text;
  v_keys text[];
  v_day text;
  v_days text[] := array['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
  v_first_start date;
  v_start date;
  v_end date;
  v_type_id int;
  v_role_id smallint;
  v_year int;
  v_amount numeric;
  v_counter_id int;
  v_start_at timestamptz;
  v_end_at timestamptz;
  v_time_start time;
  v_time_end time;
  v_break_start time;
  v_break_end time;
begin
  perform app_private.import_check_keys(p_doc, '$',
    array['establishments', 'teams', 'posts', 'employees', 'accounts', 'on_call']);

  -- establishments
  v_sub := app_private.import_section(p_doc, 'establishments');
  for i in 0 .. jsonb_array_length(v_sub) - 1 loop
    v_item := v_sub -> i;
    v_path := format('establishments[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['key', 'name', 'count_base']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_text := coalesce(app_private.import_text(v_item, 'count_base', v_path, false), 'ouvrables');
    if v_text not in ('ouvrables', 'ouvres') then
      perform app_private.import_fail(v_path || '.count_base', format('unknown count base "%s" (ouvrables or ouvres)', v_text));
    end if;
    if exists (select 1 from app_public.establishments e
               where lower(e.name) = lower(app_private.import_text(v_item, 'name', v_path))) then
      perform app_private.import_fail(v_path || '.name', format('an establishment named "%s" already exists', v_item ->> 'name'));
    end if;
    insert into app_public.establishments (name, count_base)
    values (app_private.import_text(v_item, 'name', v_path), v_text)
    returning id into v_id;
    v_est := app_private.import_register(v_est, v_key, v_id, v_path);
  end loop;

  -- teams
  v_sub := app_private.import_section(p_doc, 'teams');
  for i in 0 .. jsonb_array_length(v_sub) - 1 loop
    v_item := v_sub -> i;
    v_path := format('teams[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['key', 'name', 'establishments']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    insert into app_public.teams (name) values (app_private.import_text(v_item, 'name', v_path))
    returning id into v_id;
    v_teams := app_private.import_register(v_teams, v_key, v_id, v_path);
    v_keys := app_private.import_keys(v_item, 'establishments', v_path);
    for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      insert into app_public.team_establishments (team_id, establishment_id)
      values (v_id, app_private.import_lookup(v_est, v_keys[j], format('%s.establishments[%s]', v_path, j - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;

  -- posts
  v_sub := app_private.import_section(p_doc, 'posts');
  for i in 0 .. jsonb_array_length(v_sub) - 1 loop
    v_item := v_sub -> i;
    v_path := format('posts[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'code', 'label', 'establishment', 'start_time', 'end_time', 'break_start_time', 'break_end_time', 'break_paid']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_text := app_private.import_text(v_item, 'code', v_path);
    if v_text !~ '^[A-Za-z0-9][A-Za-z0-9_+\-]{0,15}$' then
      perform app_private.import_fail(v_path || '.code', format('invalid post code "%s"', v_text));
    end if;
    if exists (select 1 from app_public.absence_types t where lower(t.code) = lower(v_text)) then
      perform app_private.import_fail(v_path || '.code', format('post code "%s" is already an absence type code', v_text));
    end if;
    v_time_start := app_private.import_time(v_item, 'start_time', v_path, true);
    v_time_end := app_private.import_time(v_item, 'end_time', v_path, true);
    if v_time_start = v_time_end then
      perform app_private.import_fail(v_path || '.end_time', 'end_time must differ from start_time');
    end if;
    v_break_start := app_private.import_time(v_item, 'break_start_time', v_path);
    v_break_end := app_private.import_time(v_item, 'break_end_time', v_path);
    if (v_break_start is null) <> (v_break_end is null) then
      perform app_private.import_fail(v_path || '.break_end_time', 'break_start_time and break_end_time go together');
    end if;
    v_id := app_private.import_lookup(v_est, app_private.import_text(v_item, 'establishment', v_path),
                                      v_path || '.establishment', 'establishment');
    if exists (select 1 from app_public.posts p where p.establishment_id = v_id and lower(p.code) = lower(v_text)) then
      perform app_private.import_fail(v_path || '.code', format('post code "%s" is already used in this establishment', v_text));
    end if;
    insert into app_public.posts (code, label, establishment_id, start_time, end_time, break_start_time, break_end_time, break_paid)
    values (v_text, app_private.import_text(v_item, 'label', v_path), v_id, v_time_start, v_time_end,
            v_break_start, v_break_end, app_private.import_bool(v_item, 'break_paid', v_path, false))
    returning id into v_id;
    v_posts := app_private.import_register(v_posts, v_key, v_id, v_path);
  end loop;

  -- employees
  v_sub := app_private.import_section(p_doc, 'employees');
  for i in 0 .. jsonb_array_length(v_sub) - 1 loop
    v_item := v_sub -> i;
    v_path := format('employees[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'first_name', 'last_name', 'professional_email', 'main_establishment', 'secondary_establishments',
            'teams', 'social_security_number', 'contracts', 'week', 'counters', 'birth_date', 'is_polyvalent']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_text := app_private.import_text(v_item, 'professional_email', v_path, false);
    if v_text is not null and v_text !~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' then
      perform app_private.import_fail(v_path || '.professional_email', format('invalid e-mail "%s"', v_text));
    end if;
    insert into app_public.employees (first_name, last_name, professional_email, main_establishment_id, birth_date, is_polyvalent)
    values (app_private.import_text(v_item, 'first_name', v_path), app_private.import_text(v_item, 'last_name', v_path),
            v_text,
            app_private.import_lookup(v_est, app_private.import_text(v_item, 'main_establishment', v_path, false),
                                      v_path || '.main_establishment', 'establishment'),
            app_private.import_date(v_item, 'birth_date', v_path),
            app_private.import_bool(v_item, 'is_polyvalent', v_path, false))
    returning id into v_emp_id;
    v_emps := app_private.import_register(v_emps, v_key, v_emp_id, v_path);

    v_text := app_private.import_text(v_item, 'social_security_number', v_path, false);
    if v_text is not null then
      if v_text !~ '^[12][0-9]{2}(0[1-9]|1[0-2]|[2-9][0-9])(2[AB]|[0-9]{2})[0-9]{6}([0-9]{2})?$' then
        perform app_private.import_fail(v_path || '.social_security_number', 'invalid social security number (13 or 15 characters)');
      end if;
      insert into app_public.employee_social_security_numbers (employee_id, social_security_number) values (v_emp_id, v_text);
    end if;

    v_keys := app_private.import_keys(v_item, 'secondary_establishments', v_path);
    for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
      values (v_emp_id, app_private.import_lookup(v_est, v_keys[j], format('%s.secondary_establishments[%s]', v_path, j - 1), 'establishment'))
      on conflict do nothing;
    end loop;

    v_keys := app_private.import_keys(v_item, 'teams', v_path);
    for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      insert into app_public.team_assignments (employee_id, team_id)
      values (v_emp_id, app_private.import_lookup(v_teams, v_keys[j], format('%s.teams[%s]', v_path, j - 1), 'team'));
    end loop;

    -- contracts
    v_first_start := null;
    if v_item ? 'contracts' and jsonb_typeof(v_item -> 'contracts') <> 'null' then
      if jsonb_typeof(v_item -> 'contracts') <> 'array' then
        perform app_private.import_fail(v_path || '.contracts', 'expected an array');
      end if;
      for j in 0 .. jsonb_array_length(v_item -> 'contracts') - 1 loop
        v_sub_path := format('%s.contracts[%s]', v_path, j);
        perform app_private.import_check_keys(v_item -> 'contracts' -> j, v_sub_path, array['type', 'start', 'end', 'trial_end', 'job_title', 'weekly_hours']);
        v_text := app_private.import_text(v_item -> 'contracts' -> j, 'type', v_sub_path);
        select ct.id into v_type_id from app_public.contract_types ct where ct.code = v_text;
        if not found then
          perform app_private.import_fail(v_sub_path || '.type', format('unknown contract type "%s"', v_text));
        end if;
        v_start := app_private.import_date(v_item -> 'contracts' -> j, 'start', v_sub_path, true);
        v_end := app_private.import_date(v_item -> 'contracts' -> j, 'end', v_sub_path);
        if v_end < v_start then
          perform app_private.import_fail(v_sub_path || '.end', 'end is before start');
        end if;
        if app_private.import_date(v_item -> 'contracts' -> j, 'trial_end', v_sub_path) < v_start then
          perform app_private.import_fail(v_sub_path || '.trial_end', 'trial_end is before start');
        end if;
        if jsonb_typeof(v_item -> 'contracts' -> j -> 'weekly_hours') not in ('number', 'null') then
          perform app_private.import_fail(v_sub_path || '.weekly_hours', 'expected a number');
        end if;
        if (v_item -> 'contracts' -> j ->> 'weekly_hours')::numeric not between 0.01 and 48 then
          perform app_private.import_fail(v_sub_path || '.weekly_hours', 'expected a number of hours between 0 and 48');
        end if;
        insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, trial_end_date, job_title, weekly_hours)
        values (v_emp_id, v_type_id, v_start, v_end,
                app_private.import_date(v_item -> 'contracts' -> j, 'trial_end', v_sub_path),
                app_private.import_text(v_item -> 'contracts' -> j, 'job_title', v_sub_path, false),
                (v_item -> 'contracts' -> j ->> 'weekly_hours')::numeric);
        v_first_start := least(v_first_start, v_start);
        if v_first_start is null then v_first_start := v_start; end if;
      end loop;
    end if;

    -- weekly template, valid from the first contract start on
    if v_item ? 'week' and jsonb_typeof(v_item -> 'week') <> 'null' then
      perform app_private.import_check_keys(v_item -> 'week', v_path || '.week', v_days);
      insert into app_public.planning_templates (employee_id, valid_from)
      values (v_emp_id, coalesce(v_first_start, app_hidden.today()))
      returning id into v_tpl_id;
      for j in 1 .. 7 loop
        v_day := v_days[j];
        v_text := app_private.import_text(v_item -> 'week', v_day, v_path || '.week', false);
        if v_text is not null then
          insert into app_public.planning_template_slots (template_id, weekday, post_id)
          values (v_tpl_id, j, app_private.import_lookup(v_posts, v_text, v_path || '.week.' || v_day, 'post code'));
        end if;
      end loop;
    end if;

    -- counters: each opens a counter for the year and writes its Acquis in the journal
    if v_item ? 'counters' and jsonb_typeof(v_item -> 'counters') <> 'null' then
      if jsonb_typeof(v_item -> 'counters') <> 'array' then
        perform app_private.import_fail(v_path || '.counters', 'expected an array');
      end if;
      for j in 0 .. jsonb_array_length(v_item -> 'counters') - 1 loop
        v_sub_path := format('%s.counters[%s]', v_path, j);
        perform app_private.import_check_keys(v_item -> 'counters' -> j, v_sub_path, array['code', 'year', 'acquired']);
        v_text := app_private.import_text(v_item -> 'counters' -> j, 'code', v_sub_path);
        if not exists (select 1 from app_public.counter_kinds k where k.code = v_text) then
          perform app_private.import_fail(v_sub_path || '.code', format('unknown counter code "%s"', v_text));
        end if;
        if jsonb_typeof(v_item -> 'counters' -> j -> 'year') <> 'number'
           or (v_item -> 'counters' -> j ->> 'year') !~ '^\d{4}$' then
          perform app_private.import_fail(v_sub_path || '.year', 'expected a year such as 2026');
        end if;
        v_year := (v_item -> 'counters' -> j ->> 'year')::int;
        v_amount := null;
        if (v_item -> 'counters' -> j ->> 'acquired') is not null then
          if (v_item -> 'counters' -> j ->> 'acquired') !~ '^-?\d{1,6}(\.\d{1,2})?$' then
            perform app_private.import_fail(v_sub_path || '.acquired', 'expected a decimal string such as "25.00"');
          end if;
          v_amount := (v_item -> 'counters' -> j ->> 'acquired')::numeric;
        end if;
        if exists (select 1 from app_public.counters c where c.employee_id = v_emp_id and c.code = v_text and c.year = v_year) then
          perform app_private.import_fail(v_sub_path, format('counter %s %s is listed twice', v_text, v_year));
        end if;
        insert into app_public.counters (employee_id, code, year) values (v_emp_id, v_text, v_year)
        returning id into v_counter_id;
        if coalesce(v_amount, 0) <> 0 then
          insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment)
          values (v_counter_id, 'acquired', v_amount, 'grant', 'Import de l''organisation');
        end if;
      end loop;
    end if;
  end loop;

  -- accounts
  v_sub := app_private.import_section(p_doc, 'accounts');
  for i in 0 .. jsonb_array_length(v_sub) - 1 loop
    v_item := v_sub -> i;
    v_path := format('accounts[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'username', 'password_hash', 'employee', 'is_staff', 'is_superuser', 'is_active', 'permissions', 'roles']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_text := app_private.import_text(v_item, 'username', v_path);
    if v_text !~ '^[A-Za-z0-9._@+\-]{2,150}$' then
      perform app_private.import_fail(v_path || '.username', format('invalid username "%s" (letters, digits and . _ @ + -)', v_text));
    end if;
    if exists (select 1 from app_public.accounts a where lower(a.username) = lower(v_text)) then
      perform app_private.import_fail(v_path || '.username', format('username "%s" is already taken', v_text));
    end if;
    v_emp_id := app_private.import_lookup(v_emps, app_private.import_text(v_item, 'employee', v_path, false),
                                          v_path || '.employee', 'employee');
    if v_emp_id is not null and exists (select 1 from app_public.accounts a where a.employee_id = v_emp_id) then
      perform app_private.import_fail(v_path || '.employee', format('employee "%s" already has an account', v_item ->> 'employee'));
    end if;
    insert into app_public.accounts (username, employee_id, is_active, is_staff, is_superuser)
    values (v_text, v_emp_id,
            app_private.import_bool(v_item, 'is_active', v_path, true),
            app_private.import_bool(v_item, 'is_staff', v_path, false),
            app_private.import_bool(v_item, 'is_superuser', v_path, false))
    returning id into v_id;
    v_accounts := app_private.import_register(v_accounts, v_key, v_id, v_path);
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

    if v_item ? 'roles' and jsonb_typeof(v_item -> 'roles') <> 'null' then
      if jsonb_typeof(v_item -> 'roles') <> 'array' then
        perform app_private.import_fail(v_path || '.roles', 'expected an array');
      end if;
      for j in 0 .. jsonb_array_length(v_item -> 'roles') - 1 loop
        v_sub_path := format('%s.roles[%s]', v_path, j);
        perform app_private.import_check_keys(v_item -> 'roles' -> j, v_sub_path, array['role', 'establishments', 'start', 'end']);
        v_text := app_private.import_text(v_item -> 'roles' -> j, 'role', v_sub_path);
        select r.id into v_role_id from app_public.roles r where r.name = v_text;
        if not found then
          perform app_private.import_fail(v_sub_path || '.role', format('unknown role "%s"', v_text));
        end if;
        v_start := app_private.import_date(v_item -> 'roles' -> j, 'start', v_sub_path);
        v_end := app_private.import_date(v_item -> 'roles' -> j, 'end', v_sub_path);
        if v_end < v_start then
          perform app_private.import_fail(v_sub_path || '.end', 'end is before start');
        end if;
        v_keys := app_private.import_keys(v_item -> 'roles' -> j, 'establishments', v_sub_path);
        -- Listing Salarié again for an employee's account changes nothing.
        if v_role_id = 7 and v_emp_id is not null and v_start is null and v_end is null
           and coalesce(array_length(v_keys, 1), 0) = 0 then
          continue;
        end if;
        insert into app_public.role_attributions (account_id, role_id, start_date, end_date)
        values (v_id, v_role_id, v_start, v_end)
        returning id into v_type_id;
        for k in 1 .. coalesce(array_length(v_keys, 1), 0) loop
          insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
          values (v_type_id, app_private.import_lookup(v_est, v_keys[k], format('%s.establishments[%s]', v_sub_path, k - 1), 'establishment'))
          on conflict do nothing;
        end loop;
      end loop;
    end if;

    -- An account without a usable password is invited when a professional e-mail exists.
    if not v_item ? 'password_hash' then
      perform app_private.queue_invitation(v_id);
    end if;
  end loop;

  -- on-call periods
  v_sub := app_private.import_section(p_doc, 'on_call');
  for i in 0 .. jsonb_array_length(v_sub) - 1 loop
    v_item := v_sub -> i;
    v_path := format('on_call[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['account', 'establishments', 'start', 'end', 'comment']);
    v_start_at := app_private.import_timestamptz(v_item, 'start', v_path);
    v_end_at := app_private.import_timestamptz(v_item, 'end', v_path);
    if v_end_at <= v_start_at then
      perform app_private.import_fail(v_path || '.end', 'end must be after start');
    end if;
    insert into app_public.on_call_periods (account_id, start_at, end_at, comment)
    values (app_private.import_lookup(v_accounts, app_private.import_text(v_item, 'account', v_path), v_path || '.account', 'account'),
            v_start_at, v_end_at, app_private.import_text(v_item, 'comment', v_path, false))
    returning id into v_id;
    v_on_call := v_on_call || jsonb_build_object(i::text, v_id);
    v_keys := app_private.import_keys(v_item, 'establishments', v_path);
    if coalesce(array_length(v_keys, 1), 0) = 0 then
      perform app_private.import_fail(v_path || '.establishments', 'at least one establishment');
    end if;
    for j in 1 .. array_length(v_keys, 1) loop
      insert into app_public.on_call_period_establishments (period_id, establishment_id)
      values (v_id, app_private.import_lookup(v_est, v_keys[j], format('%s.establishments[%s]', v_path, j - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;

  return jsonb_build_object('establishments', v_est, 'teams', v_teams, 'posts', v_posts,
                            'employees', v_emps, 'accounts', v_accounts, 'on_call', v_on_call);
end;
$$;
--! EndIncluded org/import.sql
--! Included api/reference.sql
create or replace function app_hidden.absence_type_json(p_type_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', t.id,
    'code', t.code,
    'name', t.name,
    'category', coalesce(p.name, c.name),
    'subcategory', case when c.parent_id is not null then c.name end,
    'unit', t.unit,
    'paid', t.paid,
    'splittable', t.splittable,
    'annual_cap', app_hidden.fmt_quantity(t.annual_cap),
    'cap_overrun', t.cap_overrun,
    'contract_types', coalesce((select jsonb_agg(ct.code order by ct.code)
                                from app_public.absence_type_contract_types atc
                                join app_public.contract_types ct on ct.id = atc.contract_type_id
                                where atc.absence_type_id = t.id), '[]'::jsonb),
    'half_day_allowed', t.half_day_allowed,
    'documents_expected', t.documents_expected,
    'validation_required', t.validation_required,
    'annualisation_effect', t.annualisation_effect,
    'counter_codes', coalesce((select jsonb_agg(ca.counter_code order by ca.counter_code)
                               from app_public.counter_associations ca
                               join app_public.counter_kinds k on k.code = ca.counter_code
                               where ca.absence_type_id = t.id and ca.is_active and k.is_consumable), '[]'::jsonb))
  from app_public.absence_types t
  join app_public.absence_categories c on c.id = t.category_id
  left join app_public.absence_categories p on p.id = c.parent_id
  where t.id = p_type_id;
$$;

-- GET /api/absence-types/: active types only, with their counters and contract types.
create or replace function app_public.absence_types_list(p_page int default 1, p_page_size int default 50) returns jsonb
language sql stable as $$
  with types as (
    select t.*, c.parent_id, c.name as category_name, p.name as parent_name
    from app_public.absence_types t
    join app_public.absence_categories c on c.id = t.category_id
    left join app_public.absence_categories p on p.id = c.parent_id
    where t.is_active
  )
  select jsonb_build_object(
    'count', (select count(*) from types),
    'results', coalesce((
      select jsonb_agg(app_hidden.absence_type_json(t.id) order by t.position, t.code)
      from (select * from types order by position, code
            limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) t), '[]'::jsonb));
$$;
comment on function app_public.absence_types_list(integer, integer) is
'SPEC Absence types, GET /api/absence-types/: one page of the active absence types, each with its
counter_codes and contract types; the API keeps the reference read-only.';
--! EndIncluded api/reference.sql
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
language sql immutable as $$
  select app_hidden.fmt_quantity(p_quantity) || ' '
         || case when p_unit = 'hour' then case when p_quantity <= 1 then 'heure' else 'heures' end
                 else case when p_quantity <= 1 then 'jour' else 'jours' end end;
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
language sql immutable as $$
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
  select format('l''absence n° %s (%s, %s)', p_absence.id, t.name,
                app_hidden.absence_period_fr(p_absence.date_start, p_absence.date_end, p_absence.start_half,
                                             p_absence.end_half, p_absence.start_time, p_absence.end_time))
  from app_public.absence_types t where t.id = p_absence.type_id;
$$;

-- The active statuses: drawn in the planning, counted, overlapping refused.
create or replace function app_hidden.absence_is_active(p_status text) returns boolean
language sql immutable parallel safe as $$
  select p_status in ('pending', 'validated', 'cancellation_requested');
$$;

-- Counters an absence would move: one line per consumable counter associated with the
-- type and per civil year of the period (an absence spanning two years moves each year's
-- counter for its share). counter_id is null when the counter of that year is not open.
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.absence_counter_plan(p_draft app_hidden.absence_draft)
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
    cross join lateral app_hidden.absence_shares(p_draft.employee_id, t.unit, p_draft.date_start, p_draft.date_end,
                                                 p_draft.start_half, p_draft.end_half,
                                                 p_draft.start_time, p_draft.end_time) s
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

-- The draft of a body (creation) or of a stored absence corrected by a body: a key present
-- in the body wins (null included), an absent key keeps the stored value.
create or replace function app_hidden.absence_draft_of(p_body jsonb, p_base app_public.absences default null)
returns app_hidden.absence_draft
language plpgsql stable as $$
declare
  d app_hidden.absence_draft;
begin
  d.employee_id := case when p_body ? 'employee' then (p_body ->> 'employee')::int else p_base.employee_id end;
  d.type_id := case when p_body ? 'type' then (p_body ->> 'type')::int else p_base.type_id end;
  d.date_start := case when p_body ? 'date_start' then (p_body ->> 'date_start')::date else p_base.date_start end;
  d.date_end := case when p_body ? 'date_end' then (p_body ->> 'date_end')::date else p_base.date_end end;
  d.start_half := case when p_body ? 'start_half' then p_body ->> 'start_half' else p_base.start_half end;
  d.end_half := case when p_body ? 'end_half' then p_body ->> 'end_half' else p_base.end_half end;
  d.start_time := case when p_body ? 'start_time' then (p_body ->> 'start_time')::time else p_base.start_time end;
  d.end_time := case when p_body ? 'end_time' then (p_body ->> 'end_time')::time else p_base.end_time end;
  -- A creation without date_end lies on one date (hourly types, single days).
  if p_base.id is null and d.date_end is null then
    d.date_end := d.date_start;
  end if;
  return d;
end;
$$;

-- After a requalification or an adjustment, fields the new type cannot carry are dropped
-- unless the body names them (then the rules refuse them): an hourly type has no half-day,
-- a day type has no hours, and a whole-day type is taken whole ("an adjustment must take
-- it whole"). An unchanged absence keeps what it has (a half-day stored before the rule
-- stays as it is).
create or replace function app_hidden.absence_draft_normalize(p_draft app_hidden.absence_draft, p_body jsonb,
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
    if not p_body ? 'start_half' then d.start_half := null; end if;
    if not p_body ? 'end_half' then d.end_half := null; end if;
  else
    if not p_body ? 'start_time' then d.start_time := null; end if;
    if not p_body ? 'end_time' then d.end_time := null; end if;
    if not v_type.half_day_allowed then
      if not p_body ? 'start_half' then d.start_half := null; end if;
      if not p_body ? 'end_half' then d.end_half := null; end if;
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

-- "du 20/11/2026 14:00 au 20/11/2026 16:00" for an event.
create or replace function app_hidden.event_period_fr(p_start timestamptz, p_end timestamptz) returns text
language sql stable as $$
  select format('du %s %s au %s %s',
                app_hidden.fr_date(app_hidden.business_date(p_start)),
                to_char(p_start at time zone app_hidden.business_timezone(), 'HH24:MI'),
                app_hidden.fr_date(app_hidden.business_date(p_end)),
                to_char(p_end at time zone app_hidden.business_timezone(), 'HH24:MI'));
$$;

/*
 * Evaluates a draft against every declaration rule. Returns
 *   {"quantity": numeric|null, "unit": "day"|"hour"|null, "errors": {field: [msg]},
 *    "warnings": [msg], "plan": [{"counter_id", "code", "year", "quantity"}],
 *    "events": [{"id", "title", "start_at", "end_at"}]}
 * quantity is null when a rule refuses the absence (a counters error alone keeps it).
 *   p_exclude_id : the absence itself (edit, preview of a row, validation): excluded from
 *                  overlap, caps and splitting, and its own counter position is available.
 *   p_retro      : 'employee' (today - 14 days), 'manager' (1 December of the previous
 *                  year) or null (no retroactivity rule).
 *   p_notice_from: submission time of an employee's own request (notice periods), or null.
 *   p_today      : the business date.
 */
create or replace function app_private.absence_evaluate(p_draft app_hidden.absence_draft, p_exclude_id int, p_retro text,
                                             p_notice_from timestamptz, p_today date)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := p_draft;
  v_errors jsonb := '{}'::jsonb;
  v_warnings jsonb := '[]'::jsonb;
  v_plan jsonb := '[]'::jsonb;
  v_events jsonb := '[]'::jsonb;
  v_type app_public.absence_types;
  v_employee app_public.employees;
  v_has_type boolean := false;
  v_has_employee boolean := false;
  v_base text;
  v_quantity numeric;
  v_period tsrange;
  v_limit date;
  v_contract record;
  v_total numeric;
  v_available numeric;
  v_notice interval;
  v_start_at timestamptz;
  v_count int;
  v_other app_public.absences;
  r record;
  s record;
begin
  -- Who and what.
  if d.employee_id is null then
    v_errors := app_hidden.add_error(v_errors, 'employee', 'Ce champ est obligatoire.');
  else
    select * into v_employee from app_public.employees e where e.id = d.employee_id;
    if found then
      v_has_employee := true;
    else
      v_errors := app_hidden.add_error(v_errors, 'employee', 'Salarié introuvable.');
    end if;
  end if;
  if d.type_id is null then
    v_errors := app_hidden.add_error(v_errors, 'type', 'Ce champ est obligatoire.');
  else
    select * into v_type from app_public.absence_types t where t.id = d.type_id and t.is_active;
    if found then
      v_has_type := true;
    else
      v_errors := app_hidden.add_error(v_errors, 'type', 'Motif d''absence inconnu ou inactif.');
    end if;
  end if;

  -- Period, half-days and hours (rules 2, 4, 5).
  if d.date_start is null then
    v_errors := app_hidden.add_error(v_errors, 'date_start', 'Ce champ est obligatoire.');
  end if;
  if d.date_end is null then
    d.date_end := d.date_start;
  end if;
  if d.date_start not between date '2000-01-01' and date '2100-12-31' then
    v_errors := app_hidden.add_error(v_errors, 'date_start', 'Date hors de la plage acceptée (années 2000 à 2100).');
  end if;
  if d.date_end not between date '2000-01-01' and date '2100-12-31' then
    v_errors := app_hidden.add_error(v_errors, 'date_end', 'Date hors de la plage acceptée (années 2000 à 2100).');
  end if;
  if d.date_start is not null and d.date_end < d.date_start then
    v_errors := app_hidden.add_error(v_errors, 'date_end', 'La date de fin ne peut pas précéder la date de début.');
  elsif d.date_end - d.date_start > 1096 then
    -- The longest leaves (parental leave, renewed) last three years; beyond is an input error.
    v_errors := app_hidden.add_error(v_errors, 'date_end',
      'Une absence ne peut pas dépasser trois ans : déposez des périodes successives.');
  end if;
  if d.start_half is not null and d.start_half not in ('morning', 'afternoon') then
    v_errors := app_hidden.add_error(v_errors, 'start_half', 'Valeurs possibles : morning, afternoon ou null.');
  end if;
  if d.end_half is not null and d.end_half not in ('morning', 'afternoon') then
    v_errors := app_hidden.add_error(v_errors, 'end_half', 'Valeurs possibles : morning, afternoon ou null.');
  end if;
  if v_has_type and d.date_start is not null then
    if v_type.unit = 'hour' then
      if d.start_half is not null or d.end_half is not null then
        v_errors := app_hidden.add_error(v_errors, 'start_half',
          format('Le motif « %s » se pose en heures : pas de demi-journée.', v_type.name));
      end if;
      if d.start_time is null or d.end_time is null then
        v_errors := app_hidden.add_error(v_errors, 'start_time',
          'Un motif en heures demande une heure de début et une heure de fin.');
      elsif d.end_time <= d.start_time then
        v_errors := app_hidden.add_error(v_errors, 'end_time', 'L''heure de fin doit suivre l''heure de début.');
      end if;
      if d.date_end <> d.date_start then
        v_errors := app_hidden.add_error(v_errors, 'date_end',
          'Une absence en heures porte sur une seule date : la date de fin doit être celle du début.');
      end if;
    else
      if d.start_time is not null or d.end_time is not null then
        v_errors := app_hidden.add_error(v_errors, 'start_time',
          format('Le motif « %s » se pose en jours : retirez les heures de début et de fin.', v_type.name));
      end if;
      if d.date_start = d.date_end and d.start_half = 'afternoon' and d.end_half = 'morning' then
        v_errors := app_hidden.add_error(v_errors, 'start_half',
          'Une absence d''une seule journée ne peut pas commencer l''après-midi et finir le matin.');
      elsif not v_type.half_day_allowed and (d.start_half = 'afternoon' or d.end_half = 'morning') then
        v_errors := app_hidden.add_error(v_errors, 'start_half',
          format('Le motif « %s » se pose par journées entières : pas de demi-journée.', v_type.name));
      end if;
    end if;
  end if;

  -- Without a readable period and type, no other rule can run.
  if not (v_has_type and v_has_employee and d.date_start is not null)
     or v_errors ?| array['date_start', 'date_end', 'start_half', 'end_half', 'start_time', 'end_time'] then
    return jsonb_build_object('quantity', null, 'unit', case when v_has_type then v_type.unit end,
                              'errors', v_errors, 'warnings', v_warnings, 'plan', v_plan, 'events', v_events);
  end if;

  -- Count (rule 1, rule 5).
  v_base := app_hidden.employee_count_base(d.employee_id);
  select coalesce(sum(x.quantity), 0) into v_quantity
  from app_hidden.absence_shares(d.employee_id, v_type.unit, d.date_start, d.date_end, d.start_half, d.end_half,
                                 d.start_time, d.end_time) x;
  if v_quantity = 0 then
    v_warnings := v_warnings || to_jsonb(format(
      'Cette période ne compte aucun jour décompté (base %s : dimanches et jours fériés exclus%s).',
      case when v_base = 'ouvres' then 'jours ouvrés' else 'jours ouvrables' end,
      case when v_base = 'ouvres' then ', samedis exclus' else '' end));
  end if;
  v_period := app_hidden.absence_period(d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time);

  -- Retroactivity (rule 13).
  if p_retro = 'employee' then
    v_limit := p_today - 14;
    if d.date_start < v_limit then
      v_errors := app_hidden.add_error(v_errors, 'date_start', format(
        'Une demande ne peut pas remonter au-delà de 14 jours : la date de début doit être au plus tôt le %s.',
        app_hidden.fr_date(v_limit)));
    end if;
  elsif p_retro = 'manager' then
    v_limit := make_date(extract(year from p_today)::int - 1, 12, 1);
    if d.date_start < v_limit then
      v_errors := app_hidden.add_error(v_errors, 'date_start', format(
        'Une déclaration ne peut pas remonter avant le 1er décembre de l''année précédente : la date de début doit être au plus tôt le %s.',
        app_hidden.fr_date(v_limit)));
    end if;
  end if;

  -- Contract types (rule 8): the contract in force on the first day.
  if exists (select 1 from app_public.absence_type_contract_types x where x.absence_type_id = v_type.id) then
    select ct.id, ct.code into v_contract
    from app_public.contracts c join app_public.contract_types ct on ct.id = c.contract_type_id
    where c.employee_id = d.employee_id and c.start_date <= d.date_start
      and (c.end_date is null or c.end_date >= d.date_start)
    order by c.start_date desc limit 1;
    if v_contract.id is null then
      v_errors := app_hidden.add_error(v_errors, 'type', format(
        'Le motif « %s » est réservé aux contrats %s ; aucun contrat n''est en vigueur le %s.',
        v_type.name, (select string_agg(ct.code, ', ' order by ct.code)
                      from app_public.absence_type_contract_types x
                      join app_public.contract_types ct on ct.id = x.contract_type_id
                      where x.absence_type_id = v_type.id),
        app_hidden.fr_date(d.date_start)));
    elsif not exists (select 1 from app_public.absence_type_contract_types x
                      where x.absence_type_id = v_type.id and x.contract_type_id = v_contract.id) then
      v_errors := app_hidden.add_error(v_errors, 'type', format(
        'Le motif « %s » est réservé aux contrats %s ; le contrat en vigueur le %s est : %s.',
        v_type.name, (select string_agg(ct.code, ', ' order by ct.code)
                      from app_public.absence_type_contract_types x
                      join app_public.contract_types ct on ct.id = x.contract_type_id
                      where x.absence_type_id = v_type.id),
        app_hidden.fr_date(d.date_start), v_contract.code));
    end if;
  end if;

  -- Overlap (rules 2, 3): morning and afternoon of one date do not overlap.
  for v_other in
    select a.* from app_public.absences a
    where a.employee_id = d.employee_id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id and a.period && v_period
    order by a.date_start, a.id
  loop
    v_errors := app_hidden.add_error(v_errors, 'date_start', format(
      'Cette période chevauche %s.', app_hidden.absence_label(v_other)));
  end loop;

  -- Annual cap over the civil year, across absences (rule 6, SYN_ELU of rule 17).
  if v_type.annual_cap is not null then
    for s in
      select x.year, x.quantity from app_hidden.absence_shares(d.employee_id, v_type.unit, d.date_start, d.date_end,
                                                              d.start_half, d.end_half, d.start_time, d.end_time) x
    loop
      select s.quantity + coalesce(sum(o.quantity), 0) into v_total
      from app_public.absences a
      cross join lateral app_hidden.absence_shares(a.employee_id, v_type.unit, a.date_start, a.date_end, a.start_half,
                                                   a.end_half, a.start_time, a.end_time) o
      where a.employee_id = d.employee_id and a.type_id = v_type.id and app_hidden.absence_is_active(a.status)
        and a.id is distinct from p_exclude_id
        and a.date_start <= make_date(s.year, 12, 31) and a.date_end >= make_date(s.year, 1, 1)
        and o.year = s.year;
      if v_total > v_type.annual_cap then
        if v_type.cap_overrun = 'refuse' then
          v_errors := app_hidden.add_error(v_errors, 'date_end', format(
            'Plafond annuel dépassé pour le motif « %s » sur l''année %s : demande de %s, total de %s avec cette demande, pour un plafond de %s.',
            v_type.name, s.year, app_hidden.quantity_fr(s.quantity, v_type.unit), app_hidden.quantity_fr(v_total, v_type.unit),
            app_hidden.quantity_fr(v_type.annual_cap, v_type.unit)));
        else
          v_warnings := v_warnings || to_jsonb(format(
            'Plafond annuel dépassé pour le motif « %s » sur l''année %s : demande de %s, total de %s avec cette demande, pour un plafond de %s.',
            v_type.name, s.year, app_hidden.quantity_fr(s.quantity, v_type.unit), app_hidden.quantity_fr(v_total, v_type.unit),
            app_hidden.quantity_fr(v_type.annual_cap, v_type.unit)));
        end if;
      end if;
    end loop;
  end if;

  -- Non-splittable type (rule 7): another period of the same civil year separated by a gap
  -- (a counted day between them) warns; contiguous periods do not.
  if not v_type.splittable then
    select a.* into v_other from app_public.absences a
    where a.employee_id = d.employee_id and a.type_id = v_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and extract(year from a.date_start) in (extract(year from d.date_start), extract(year from d.date_end))
      and not (a.period && v_period)
      and exists (select 1
                  from generate_series(least(a.date_end, d.date_end) + 1,
                                       greatest(a.date_start, d.date_start) - 1, interval '1 day') g
                  where app_hidden.is_counted_day(g::date, v_base))
    order by a.date_start limit 1;
    if found then
      v_warnings := v_warnings || to_jsonb(format(
        'Le motif « %s » n''est pas fractionnable : %s, de la même année, est séparée de cette période.',
        v_type.name, app_hidden.absence_label(v_other)));
    end if;
  end if;

  -- Counters (rule 9): an open counter per year, units that match, enough remaining.
  for r in select * from app_private.absence_counter_plan(d) loop
    if r.counter_unit <> r.type_unit then
      v_errors := app_hidden.add_error(v_errors, 'counters', format(
        'Le compteur %s est tenu en %s alors que le motif « %s » se pose en %s : demande refusée.',
        r.code, case when r.counter_unit = 'hour' then 'heures' else 'jours' end, v_type.name,
        case when r.type_unit = 'hour' then 'heures' else 'jours' end));
    elsif r.counter_id is null then
      v_errors := app_hidden.add_error(v_errors, 'counters', format(
        'Aucun compteur %s ouvert pour %s : le motif « %s » ne peut pas être posé sur cette année.',
        r.code, r.year, v_type.name));
    else
      select app_private.counter_remaining(r.counter_id)
             + coalesce((select sum(n.quantity) from app_private.absence_counter_nets(array[p_exclude_id]) n
                         where p_exclude_id is not null and n.counter_id = r.counter_id), 0)
        into v_available;
      if r.quantity > v_available then
        v_errors := app_hidden.add_error(v_errors, 'counters', format(
          'Solde insuffisant sur le compteur %s %s : demande de %s, solde disponible de %s.',
          r.code, r.year, app_hidden.quantity_fr(r.quantity, r.counter_unit),
          app_hidden.quantity_fr(v_available, r.counter_unit)));
      end if;
      v_plan := v_plan || jsonb_build_object('counter_id', r.counter_id, 'code', r.code, 'year', r.year,
                                             'quantity', r.quantity);
    end if;
  end loop;

  -- Agreement rules: warnings only, never refusals (rule 16).
  if v_type.warn_max_hours_per_absence is not null and v_quantity > v_type.warn_max_hours_per_absence then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : %s demandées, au-delà des %s (trajet compris) prévues par l''accord.',
      v_type.name, app_hidden.quantity_fr(v_quantity, 'hour'), app_hidden.hours_fr(v_type.warn_max_hours_per_absence)));
  end if;
  if v_type.warn_max_per_quarter is not null then
    select count(*) into v_count from app_public.absences a
    where a.employee_id = d.employee_id and a.type_id = v_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and date_trunc('quarter', a.date_start) = date_trunc('quarter', d.date_start);
    if v_count + 1 > v_type.warn_max_per_quarter then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : l''accord en prévoit %s par trimestre civil ; %s autre(s) absence(s) de ce motif existe(nt) déjà au %se trimestre %s.',
        v_type.name, v_type.warn_max_per_quarter, v_count, extract(quarter from d.date_start),
        extract(year from d.date_start)));
    end if;
  end if;
  if v_type.warn_max_hours_per_year is not null then
    select v_quantity + coalesce(sum(a.counted_quantity), 0) into v_total from app_public.absences a
    where a.employee_id = d.employee_id and a.type_id = v_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and extract(year from a.date_start) = extract(year from d.date_start);
    if v_total > v_type.warn_max_hours_per_year then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : %s sur l''année %s avec cette demande, au-delà des %s par an prévues par l''accord.',
        v_type.name, app_hidden.quantity_fr(v_total, v_type.unit), extract(year from d.date_start),
        app_hidden.quantity_fr(v_type.warn_max_hours_per_year, v_type.unit)));
    end if;
  end if;
  if v_type.warn_min_duration is not null and v_type.warn_max_duration is not null then
    if d.date_end + 1 < d.date_start + v_type.warn_min_duration or d.date_end + 1 > d.date_start + v_type.warn_max_duration then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : l''accord prévoit une durée de %s à %s.', v_type.name,
        app_hidden.interval_fr(v_type.warn_min_duration), app_hidden.interval_fr(v_type.warn_max_duration)));
    end if;
  elsif v_type.warn_max_duration is not null and d.date_end + 1 > d.date_start + v_type.warn_max_duration then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : durée supérieure aux %s prévus par l''accord.', v_type.name,
      app_hidden.interval_fr(v_type.warn_max_duration)));
  elsif v_type.warn_min_duration is not null and d.date_end + 1 < d.date_start + v_type.warn_min_duration then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : durée inférieure aux %s prévus par l''accord.', v_type.name,
      app_hidden.interval_fr(v_type.warn_min_duration)));
  end if;
  if v_type.warn_min_seniority is not null
     and coalesce((select min(c.start_date) from app_public.contracts c where c.employee_id = d.employee_id), d.date_start)
         + v_type.warn_min_seniority > d.date_start then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : moins de %s d''ancienneté au %s (condition de l''accord).', v_type.name,
      app_hidden.interval_fr(v_type.warn_min_seniority), app_hidden.fr_date(d.date_start)));
  end if;
  if v_employee.is_polyvalent then
    select c.trial_end_date into v_limit from app_public.contracts c
    where c.employee_id = d.employee_id and c.trial_end_date is not null
      and c.start_date <= d.date_end and c.trial_end_date >= d.date_start
    order by c.start_date desc limit 1;
    if found then
      v_warnings := v_warnings || to_jsonb(format(
        'Absence pendant la période d''essai d''un agent polyvalent (fin de la période d''essai le %s).',
        app_hidden.fr_date(v_limit)));
    end if;
  end if;

  -- Notice periods: an employee's own request only (rule 16).
  if p_notice_from is not null then
    if v_type.notice_working_days is not null then
      v_limit := app_hidden.add_working_days(app_hidden.business_date(p_notice_from), v_type.notice_working_days, v_base);
      if d.date_start < v_limit then
        v_warnings := v_warnings || to_jsonb(format(
          'Délai de prévenance de %s jours %s non respecté pour le motif « %s » : demande du %s pour le %s.',
          v_type.notice_working_days, case when v_base = 'ouvres' then 'ouvrés' else 'ouvrables' end, v_type.name,
          app_hidden.fr_date(app_hidden.business_date(p_notice_from)), app_hidden.fr_date(d.date_start)));
      end if;
    end if;
    v_notice := v_type.notice_period;
    if v_type.notice_period_long is not null
       and not exists (select 1 from app_public.absences a
                       join app_public.absence_types t on t.id = a.type_id
                       where a.employee_id = d.employee_id and t.code in ('MAT', 'ADO')
                         and app_hidden.absence_is_active(a.status)
                         and a.date_end between d.date_start - 7 and d.date_start - 1) then
      -- Parental leave that does not directly follow a maternity or adoption leave.
      v_notice := v_type.notice_period_long;
    end if;
    if v_notice is not null then
      v_start_at := (d.date_start + coalesce(d.start_time, case when d.start_half = 'afternoon' then time '12:00' else time '00:00' end))
                    at time zone app_hidden.business_timezone();
      if p_notice_from + v_notice > v_start_at then
        v_warnings := v_warnings || to_jsonb(format(
          'Délai de prévenance de %s non respecté pour le motif « %s » : demande du %s pour le %s.',
          app_hidden.interval_fr(v_notice), v_type.name,
          app_hidden.fr_date(app_hidden.business_date(p_notice_from)), app_hidden.fr_date(d.date_start)));
      end if;
    end if;
  end if;

  -- Events of the employee during the absence: an alert, not a refusal.
  v_events := app_private.absence_event_conflicts(d.employee_id, v_period);
  for r in select * from jsonb_array_elements(v_events) x(e) loop
    v_warnings := v_warnings || to_jsonb(format('Conflit avec l''événement « %s » %s.', r.e ->> 'title',
      app_hidden.event_period_fr((r.e ->> 'start_at')::timestamptz, (r.e ->> 'end_at')::timestamptz)));
  end loop;

  return jsonb_build_object(
    'quantity', case when exists (select 1 from jsonb_object_keys(v_errors) k where k <> 'counters') then null
                     else v_quantity end,
    'unit', v_type.unit,
    'errors', v_errors,
    'warnings', v_warnings,
    'plan', v_plan,
    'events', v_events);
end;
$$;
--! EndIncluded absences/rules.sql
--! Included counters/functions.sql
-- The counter journal seen from absences (SPEC rule 9, CONTRACT section 7).
--
-- An active absence (pending, validated, cancellation requested) holds, on each counter
-- its type consumes and for each civil year of its period, its share of the count:
--   * in Planifiés (planned) while it is a request, or while it has not started;
--   * in Pris (taken) once it is granted and started (date_start <= today).
-- A pending request that already started stays in Planifiés until it is granted: a refusal
-- or a withdrawal then only releases it, and nothing is ever taken by a request that was
-- not granted. An inactive absence (refused, cancelled, withdrawn) holds nothing.
--
-- app_private.absence_sync_counters moves the journal from what the absence holds to what
-- it must hold, after locking every counter concerned (ordered by id, so parallel requests
-- serialise without deadlock) and checking that no counter it debits more goes below zero.

-- Remaining of a counter (acquired - taken - planned), from the journal.
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_private.counter_remaining(p_counter_id int) returns numeric
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select coalesce(sum(case when m.bucket = 'acquired' then m.quantity else -m.quantity end), 0)::numeric(8,2)
          from app_private.counter_movements m where m.counter_id = p_counter_id);
end;
$$;

-- What an absence must hold now: one line per (counter, bucket).
create or replace function app_private.absence_counter_target(p_absence app_public.absences, p_today date)
returns table (counter_id int, code text, year int, bucket text, quantity numeric, counter_unit text, type_unit text)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
begin
  return query
  select p.counter_id, p.code, p.year,
         case when p_absence.status in ('validated', 'cancellation_requested') and p_absence.date_start <= p_today
              then 'taken' else 'planned' end,
         p.quantity, p.counter_unit, p.type_unit
  from app_private.absence_counter_plan(row(p_absence.employee_id, p_absence.type_id, p_absence.date_start,
                                            p_absence.date_end, p_absence.start_half, p_absence.end_half,
                                            p_absence.start_time, p_absence.end_time)::app_hidden.absence_draft) p
  where p_absence.id is not null and app_hidden.absence_is_active(p_absence.status);
end;
$$;

create or replace function app_private.counter_movement(p_counter_id int, p_bucket text, p_quantity numeric, p_kind text,
                                             p_absence_id int, p_transition text)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if p_quantity <> 0 then
    insert into app_private.counter_movements (counter_id, bucket, quantity, kind, absence_id, transition, actor_account_id)
    values (p_counter_id, p_bucket, p_quantity, p_kind, p_absence_id, p_transition, app_hidden.current_account_id());
  end if;
end;
$$;

/*
 * Brings the journal of one absence to what it must hold (the absence may have been
 * deleted: it then holds nothing). p_transition names the cause in the journal:
 * create, edit, validate, refuse, withdraw, request_cancellation, cancel, start.
 *   edit: the old position is compensated and the new one written, so the balance moves
 *         by the difference and the journal shows both;
 *   otherwise: reservation / release (Planifiés), start + consumption (Planifiés → Pris),
 *         consumption / restitution (Pris).
 * Refuses with 400 under `counters` (nothing written: the transaction aborts) when a
 * counter is missing, its unit does not match, or a debit exceeds its remaining.
 * Returns the effects: [{"counter", "year", "column", "direction", "quantity"}].
 */
create or replace function app_private.absence_sync_counters(p_absence_id int, p_transition text, p_today date default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := coalesce(p_today, app_hidden.today());
  v_absence app_public.absences;
  v_target jsonb := '[]'::jsonb;
  v_current jsonb;
  v_ids int[];
  v_effects jsonb := '[]'::jsonb;
  v_remaining numeric;
  v_moved numeric;
  r record;
begin
  select * into v_absence from app_public.absences a where a.id = p_absence_id;
  for r in select * from app_private.absence_counter_target(v_absence, v_today) loop
    if r.counter_unit <> r.type_unit then
      perform app_hidden.invalid('counters', format(
        'Le compteur %s est tenu en %s alors que le motif se pose en %s : demande refusée.', r.code,
        case when r.counter_unit = 'hour' then 'heures' else 'jours' end,
        case when r.type_unit = 'hour' then 'heures' else 'jours' end), 'WV301');
    elsif r.counter_id is null then
      perform app_hidden.invalid('counters', format('Aucun compteur %s ouvert pour %s.', r.code, r.year), 'WV301');
    end if;
    v_target := v_target || jsonb_build_object('counter_id', r.counter_id, 'code', r.code, 'year', r.year,
                                               'bucket', r.bucket, 'quantity', r.quantity);
  end loop;
  select coalesce(jsonb_agg(jsonb_build_object('counter_id', n.counter_id, 'code', n.code, 'year', n.year,
                                               'bucket', n.bucket, 'quantity', n.quantity)), '[]'::jsonb)
    into v_current
  from app_private.absence_counter_nets(array[p_absence_id]) n;

  v_ids := array(select distinct (x ->> 'counter_id')::int from jsonb_array_elements(v_target || v_current) x order by 1);
  if cardinality(v_ids) = 0 then
    return v_effects;
  end if;
  -- Serialise movements per counter.
  perform 1 from app_public.counters c where c.id = any (v_ids) order by c.id for update;

  -- Per counter and bucket: target (t) and current (c) positions.
  for r in
    with t as (
      select (x ->> 'counter_id')::int as counter_id, x ->> 'bucket' as bucket, (x ->> 'quantity')::numeric as quantity
      from jsonb_array_elements(v_target) x
    ), c as (
      select (x ->> 'counter_id')::int as counter_id, x ->> 'bucket' as bucket, (x ->> 'quantity')::numeric as quantity
      from jsonb_array_elements(v_current) x
    ), per_counter as (
      select k.id as counter_id, k.code, k.year::int as year, kk.unit,
             coalesce((select sum(t.quantity) from t where t.counter_id = k.id and t.bucket = 'planned'), 0) as tp,
             coalesce((select sum(t.quantity) from t where t.counter_id = k.id and t.bucket = 'taken'), 0) as tt,
             coalesce((select sum(c.quantity) from c where c.counter_id = k.id and c.bucket = 'planned'), 0) as cp,
             coalesce((select sum(c.quantity) from c where c.counter_id = k.id and c.bucket = 'taken'), 0) as ct
      from app_public.counters k join app_public.counter_kinds kk on kk.code = k.code
      where k.id = any (v_ids)
    )
    select * from per_counter order by counter_id
  loop
    -- Never overdraw: a counter debited more must keep a remaining >= 0.
    if r.tp + r.tt > r.cp + r.ct then
      v_remaining := app_private.counter_remaining(r.counter_id);
      if v_remaining < (r.tp + r.tt) - (r.cp + r.ct) then
        perform app_hidden.invalid('counters', format(
          'Solde insuffisant sur le compteur %s %s : demande de %s, solde disponible de %s.', r.code, r.year,
          app_hidden.quantity_fr(r.tp + r.tt, r.unit), app_hidden.quantity_fr(v_remaining + r.cp + r.ct, r.unit)), 'WV301');
      end if;
    end if;

    if p_transition = 'edit' then
      if r.tp <> r.cp then
        perform app_private.counter_movement(r.counter_id, 'planned', -r.cp, 'compensation', p_absence_id, p_transition);
        perform app_private.counter_movement(r.counter_id, 'planned', r.tp, 'reservation', p_absence_id, p_transition);
      end if;
      if r.tt <> r.ct then
        perform app_private.counter_movement(r.counter_id, 'taken', -r.ct, 'compensation', p_absence_id, p_transition);
        perform app_private.counter_movement(r.counter_id, 'taken', r.tt, 'consumption', p_absence_id, p_transition);
      end if;
    else
      -- Planifiés → Pris first (the start of a reservation), then what remains.
      v_moved := least(greatest(r.cp - r.tp, 0), greatest(r.tt - r.ct, 0));
      perform app_private.counter_movement(r.counter_id, 'planned', -v_moved, 'start', p_absence_id, p_transition);
      perform app_private.counter_movement(r.counter_id, 'taken', v_moved, 'consumption', p_absence_id, p_transition);
      perform app_private.counter_movement(r.counter_id, 'planned', r.tp - r.cp + v_moved,
                                           case when r.tp - r.cp + v_moved > 0 then 'reservation' else 'release' end,
                                           p_absence_id, p_transition);
      perform app_private.counter_movement(r.counter_id, 'taken', r.tt - r.ct - v_moved,
                                           case when r.tt - r.ct - v_moved > 0 then 'consumption' else 'restitution' end,
                                           p_absence_id, p_transition);
    end if;

    if r.tp <> r.cp then
      v_effects := v_effects || jsonb_build_object('counter', r.code, 'year', r.year, 'column', 'planned',
        'direction', case when r.tp > r.cp then 'debit' else 'credit' end,
        'quantity', app_hidden.fmt_quantity(abs(r.tp - r.cp)));
    end if;
    if r.tt <> r.ct then
      v_effects := v_effects || jsonb_build_object('counter', r.code, 'year', r.year, 'column', 'taken',
        'direction', case when r.tt > r.ct then 'debit' else 'credit' end,
        'quantity', app_hidden.fmt_quantity(abs(r.tt - r.ct)));
    end if;
  end loop;
  return v_effects;
end;
$$;

-- Effects of a draft compared with what an absence holds (preview): the same shape as the
-- effects of absence_sync_counters, without writing anything. p_plan is the "plan" of
-- app_private.absence_evaluate, p_bucket the column the draft would use.
create or replace function app_private.absence_counter_effects(p_plan jsonb, p_bucket text, p_absence_id int)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with t as (
    select x ->> 'code' as code, (x ->> 'year')::int as year, p_bucket as bucket, (x ->> 'quantity')::numeric as quantity
    from jsonb_array_elements(coalesce(p_plan, '[]'::jsonb)) x
  ), c as (
    select n.code, n.year, n.bucket, n.quantity from app_private.absence_counter_nets(array[p_absence_id]) n
  ), keys as (
    select code, year, bucket from t union select code, year, bucket from c
  ), diff as (
    select k.code, k.year, k.bucket,
           coalesce((select sum(t.quantity) from t where t.code = k.code and t.year = k.year and t.bucket = k.bucket), 0)
           - coalesce((select sum(c.quantity) from c where c.code = k.code and c.year = k.year and c.bucket = k.bucket), 0)
             as delta
    from keys k
  )
  select coalesce(jsonb_agg(jsonb_build_object('counter', d.code, 'year', d.year, 'column', d.bucket,
                                               'direction', case when d.delta > 0 then 'debit' else 'credit' end,
                                               'quantity', app_hidden.fmt_quantity(abs(d.delta)))
                            order by d.code, d.year, d.bucket desc), '[]'::jsonb)
  from diff d where d.delta <> 0;
$$;

-- What granting a cancellation would recredit (cancellation_counter_effects), per absence.
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.absence_cancellation_effects(p_absence_ids int[])
returns table (absence_id int, effects jsonb)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select n.absence_id,
           jsonb_agg(jsonb_build_object('counter', n.code, 'year', n.year, 'column', n.bucket, 'direction', 'credit',
                                        'quantity', app_hidden.fmt_quantity(n.quantity))
                     order by n.code, n.year, n.bucket desc)
    from app_private.absence_counter_nets(p_absence_ids) n
    where n.quantity > 0
    group by n.absence_id;
end;
$$;

-- Daily job: granted absences that started move from Planifiés to Pris. Idempotent (an
-- absence already moved holds nothing in Planifiés). Returns the number of absences moved;
-- an absence whose counter was closed meanwhile is left as it is (a warning is logged).
create or replace function app_private.consume_started_absences(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
  v_count int := 0;
begin
  for v_id in
    select a.id from app_public.absences a
    where a.status in ('validated', 'cancellation_requested') and a.date_start <= p_today
      and exists (select 1 from app_private.counter_movements m
                  where m.absence_id = a.id and m.bucket = 'planned'
                  group by m.counter_id having sum(m.quantity) > 0)
    order by a.id
  loop
    begin
      perform app_private.absence_sync_counters(v_id, 'start', p_today);
      v_count := v_count + 1;
    exception when sqlstate 'WV301' then
      -- A counter closed since the reservation: this absence stays in Planifiés (its
      -- reservation is visible and released by a cancellation); the others move on.
      raise warning 'consume_started_absences: absence % not moved: %', v_id, sqlerrm;
    end;
  end loop;
  return v_count;
end;
$$;

-- Balances of an employee's counters for a year, summed over the journal.
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.counter_balances_of(p_employee int, p_year int)
returns table (id int, code text, name text, unit text, year int, is_active boolean,
               acquired numeric, taken numeric, planned numeric)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select c.id, c.code, k.name, k.unit, c.year::int, c.is_active,
           coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0)::numeric(8,2),
           coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0)::numeric(8,2),
           coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0)::numeric(8,2)
    from app_public.counters c
    join app_public.counter_kinds k on k.code = c.code
    left join app_private.counter_movements m on m.counter_id = c.id
    where c.employee_id = p_employee and c.year = p_year
    group by c.id, k.name, k.unit, k.position
    order by k.position, c.code;
end;
$$;

-- GET /api/counters/?employee=&year=: the employee reads their own; holders of
-- absences.view_absence_queue read their perimeter; anybody else gets 404.
create or replace function app_public.counters_read(p_employee int default null, p_year int default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int := coalesce(p_employee, app_hidden.current_employee_id());
  v_year int := coalesce(p_year, extract(year from app_hidden.today())::int);
begin
  if v_employee is null
     or not exists (select 1 from app_public.employees e where e.id = v_employee)
     or not (app_hidden.is_current_employee(v_employee)
             or exists (select 1 from app_hidden.perimeter_employee_ids('absences.view_absence_queue') x(id)
                        where x.id = v_employee)) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  if v_year not between 2000 and 2100 then
    perform app_hidden.invalid('year', 'Année invalide : entre 2000 et 2100.', 'WV302');
  end if;
  return coalesce((
    select jsonb_object_agg(b.code, jsonb_build_object(
             'id', b.id, 'code', b.code, 'name', b.name, 'unit', b.unit, 'year', b.year, 'is_active', b.is_active,
             'acquired', app_hidden.fmt_quantity(b.acquired), 'taken', app_hidden.fmt_quantity(b.taken),
             'planned', app_hidden.fmt_quantity(b.planned),
             'remaining', app_hidden.fmt_quantity(b.acquired - b.taken - b.planned),
             'labels', jsonb_build_object('acquired', 'Acquis', 'taken', 'Pris', 'planned', 'Planifiés',
                                          'remaining', 'Restant')))
    from app_private.counter_balances_of(v_employee, v_year) b), '{}'::jsonb);
end;
$$;
comment on function app_public.counters_read(integer, integer) is
'SPEC Counters, GET /api/counters/?employee=&year=: the counters of an employee for a civil year
(default: the caller, this year), keyed by counter code with Acquis, Pris, Planifiés and Restant; the
employee reads their own, holders of absences.view_absence_queue their perimeter, anybody else gets 404.';
--! EndIncluded counters/functions.sql
--! Included absences/json.sql
-- The absence record as the API shows it (CONTRACT sections 3 and 4). One statement builds
-- any number of records (lists are not N+1): types, employees, documents and the counter
-- positions are joined, not fetched per row.

create or replace function app_hidden.absence_status_label(p_status text) returns text
language sql immutable as $$
  select case p_status
    when 'pending' then 'En attente'
    when 'validated' then 'Validée'
    when 'refused' then 'Refusée'
    when 'cancellation_requested' then 'Annulation demandée'
    when 'cancelled' then 'Annulée'
  end;
$$;

-- Records of the absences p_ids (as the caller sees them), in the order of p_ids.
-- Documents carry `file` only for readers allowed to read their content. In a list
-- (p_in_list), warnings are null (CONTRACT: list reads carry no warnings).
-- plpgsql (not sql) with force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_hidden.absences_json(p_ids int[], p_public_url text, p_in_list boolean default false) returns jsonb
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
begin
  return (
    with ids as (
      select u.id, u.ord from unnest(p_ids) with ordinality as u(id, ord)
    ),
    file_readers as (
      select x.id from app_hidden.perimeter_employee_ids('absences.view_absencedocument_file') as x(id)
      union
      select app_hidden.current_employee_id()
    ),
    -- Only a granted absence carries its cancellation's effects (a queue of pending requests
    -- or a fresh request computes none).
    effects as (
      select * from app_private.absence_cancellation_effects(array(
        select a.id from app_public.absences a
        where a.id = any (p_ids) and a.status in ('validated', 'cancellation_requested')))
    ),
    docs as (
      select d.absence_id,
             jsonb_agg(jsonb_build_object('id', d.id, 'filename', d.filename, 'content_type', d.content_type,
                                          'size_bytes', d.size_bytes, 'uploaded_at', d.uploaded_at,
                                          'uploaded_by', d.uploaded_by_name)
                       || case when a.employee_id in (select f.id from file_readers f)
                               then jsonb_build_object('file', coalesce(rtrim(p_public_url, '/'), '')
                                                               || '/api/absence-documents/' || d.id || '/file/')
                               else '{}'::jsonb end
                       order by d.id) as documents
      from app_public.absence_documents d
      join app_public.absences a on a.id = d.absence_id
      where d.absence_id = any (p_ids)
      group by d.absence_id
    )
    select coalesce(jsonb_agg(
      jsonb_build_object(
        'id', a.id,
        'employee', a.employee_id,
        'employee_name', e.first_name || ' ' || e.last_name,
        'type', a.type_id,
        'type_code', t.code,
        'type_name', t.name,
        'date_start', a.date_start,
        'date_end', a.date_end,
        'start_half', a.start_half,
        'end_half', a.end_half,
        'start_time', to_char(a.start_time, 'HH24:MI'),
        'end_time', to_char(a.end_time, 'HH24:MI'),
        'comment', a.comment,
        'status', a.status,
        'status_label', app_hidden.absence_status_label(a.status),
        'version', a.version,
        'counted_quantity', app_hidden.fmt_quantity(a.counted_quantity),
        'counted_unit', a.counted_unit,
        'author', a.author_account_id,
        'submitted_at', a.submitted_at,
        'created_at', a.created_at,
        'updated_at', a.updated_at)
      || jsonb_build_object(
        'decided_by', a.decided_by,
        'decided_at', a.decided_at,
        'decision_reason', a.decision_reason,
        'corrected_by', a.corrected_by,
        'cancellation_comment', a.cancellation_comment,
        'cancellation_requested_at', a.cancellation_requested_at,
        'cancellation_decided_at', a.cancellation_decided_at,
        'cancellation_decision_reason', a.cancellation_decision_reason,
        'cancellation_counter_effects',
          case when a.status in ('validated', 'cancellation_requested') then coalesce(ef.effects, '[]'::jsonb) end,
        'cancelled_by', a.cancelled_by,
        'cancelled_at', a.cancelled_at,
        'warnings', case when p_in_list then null else a.warnings end,
        'documents', coalesce(dc.documents, '[]'::jsonb))
      order by ids.ord), '[]'::jsonb)
    from ids
    join app_public.absences a on a.id = ids.id
    join app_public.absence_types t on t.id = a.type_id
    left join app_public.employees e on e.id = a.employee_id
    left join effects ef on ef.absence_id = a.id
    left join docs dc on dc.absence_id = a.id
  );
end;
$$;

create or replace function app_hidden.absence_json(p_id int, p_public_url text) returns jsonb
language sql stable as $$
  select app_hidden.absences_json(array[p_id], p_public_url) -> 0;
$$;

-- The planned day of a date, for the decision panel: description, net minutes, slots.
create or replace function app_hidden.planned_day_json(p_employee int, p_date date) returns jsonb
language sql stable as $$
  select jsonb_build_object('date', p_date,
                            'description', app_hidden.slots_description(s.slots),
                            'minutes', app_hidden.slots_minutes(s.slots),
                            'is_rest_day', cardinality(s.slots) = 0,
                            'slots', app_hidden.slots_json(s.slots))
  from (select app_hidden.planned_slots(p_employee, p_date) as slots) s;
$$;
--! EndIncluded absences/json.sql
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
    elsif (f ->> 'size_bytes')::int > 10485760 or (f ->> 'size_bytes')::int < 1 then
      v_errors := app_hidden.add_error(v_errors, p_field, 'Fichier trop volumineux : 10 Mo au plus par fichier.');
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
    perform app_hidden.forbidden('Vous n''avez pas le droit de lire le contenu de ce justificatif.', 'WF401');
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
    perform app_hidden.not_found('Aucune attestation d''honorabilité n''a été déposée pour ce salarié.', 'WN402');
  end if;
  return v;
end;
$$;
comment on function app_public.honorability_certificate_get(integer, text) is
'SPEC Documents, GET /api/employees/<id>/honorability-certificate/: the metadata of the employee''s
honorability certificate (the file key only for readers of the content, Permissions rule 5); 404 when
the record is not readable or no certificate was deposited.';

-- PUT /api/employees/<id>/honorability-certificate/ (multipart, one file under `file`).
create or replace function app_public.honorability_certificate_put(p_employee int, p_body jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb;
  f jsonb := p_body -> 'file';
begin
  perform app_hidden.honorability_target(p_employee);
  if not app_hidden.can_deposit_honorability(p_employee) then
    perform app_hidden.refuse_outside_or_forbid(p_employee,
      'Vous n''avez pas le droit de déposer l''attestation d''honorabilité de ce salarié.', 'WF402');
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
      'Vous n''avez pas le droit de retirer l''attestation d''honorabilité de ce salarié.', 'WF402');
  end if;
  if not exists (select 1 from app_public.honorability_certificates h where h.employee_id = p_employee) then
    perform app_hidden.not_found('Aucune attestation d''honorabilité n''a été déposée pour ce salarié.', 'WN402');
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
      'Vous n''avez pas le droit de lire le contenu de cette attestation.', 'WF401');
  end if;
  select * into v from app_public.honorability_certificates h where h.employee_id = p_employee;
  if not found then
    perform app_hidden.not_found('Aucune attestation d''honorabilité n''a été déposée pour ce salarié.', 'WN402');
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
create or replace function app_hidden.absence_check_version(p_absence app_public.absences, p_body jsonb, p_required boolean)
returns void
language plpgsql stable as $$
begin
  if p_body ? 'version' and jsonb_typeof(p_body -> 'version') <> 'null' then
    if (p_body ->> 'version')::int <> p_absence.version then
      perform app_hidden.conflict(
        'Quelqu''un d''autre a déjà traité cette absence (version périmée) : rechargez la file et recommencez.', 'WC201');
    end if;
  elsif p_required then
    perform app_hidden.invalid('version', 'Ce champ est obligatoire.');
  end if;
end;
$$;

-- The caller decides absences of this employee: the permission through a role, the
-- perimeter, and never their own request.
create or replace function app_hidden.absence_check_decider(p_absence app_public.absences) returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('absences.decide_absence') then
    perform app_hidden.forbidden('Votre rôle ne permet pas de décider des demandes d''absence.', 'WF201');
  end if;
  if not app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_absence.employee_id) then
    perform app_hidden.forbidden('Ce salarié est hors de votre périmètre de décision.', 'WF201');
  end if;
  if p_absence.employee_id = app_hidden.current_employee_id() then
    perform app_hidden.forbidden('Vous ne pouvez pas décider de votre propre demande d''absence.', 'WF202');
  end if;
end;
$$;

-- Whether the caller decides the absences of this employee, as absence_check_decider rules:
-- the right over the employee's perimeter, never on its own absence. Never NULL. Read by the
-- decision panel's hint (below) and the back-office's abilities (sql/backoffice/absences.sql).
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
      'La correction d''une absence est réservée à l''encadrement : retirez votre demande en attente ou demandez l''annulation d''une absence accordée.',
      'WF203');
  end if;
  if not app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', p_absence.employee_id) then
    perform app_hidden.forbidden('La correction d''une absence est réservée à l''encadrement de son périmètre.', 'WF203');
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
    when app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_employee) then null
    when app_hidden.current_account_has('absences.decide_absence') then
      'Ce salarié n''est pas dans votre périmètre : vous ne pouvez pas déclarer d''absence pour lui.'
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
        format('L''absence %s de %s chevauche l''événement « %s » %s.', app_hidden.absence_subject(p_absence),
               app_hidden.employee_name(p_absence.employee_id), e ->> 'title',
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

-- The retroactive window of a decider (1 December of the previous year), applied when a
-- decider grants a cancellation or cancels a granted absence.
create or replace function app_hidden.absence_check_decider_window(p_absence app_public.absences) returns void
language plpgsql stable as $$
declare
  v_limit date := make_date(extract(year from app_hidden.today())::int - 1, 12, 1);
begin
  if p_absence.date_start < v_limit then
    perform app_hidden.invalid('date_start', format(
      'Cette absence commence avant le %s : elle est hors de la période sur laquelle une décision peut revenir (1er décembre de l''année précédente).',
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
create or replace function app_public.absences_list(p_status text default null, p_employee int default null,
                                         p_from date default null, p_to date default null,
                                         p_page int default 1, p_page_size int default 50,
                                         p_public_url text default null,
                                         p_establishment int default null, p_type int default null)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
-- force_custom_plan: the index depends on each call's values (docs/architecture.md, Performance notes).
set plan_cache_mode = force_custom_plan as $$
declare
  v_count int;
  v_ids int[];
  -- Employees whose absences the list shows; null for the whole association (no filter).
  v_readers int[] := app_hidden.absences_list_readers();
begin
  -- Filters and perimeter: app_hidden.absences_selection (sql/absences/export.sql), shared
  -- with the export. Filtered by state and employee only, the total is a sum of the kept counts
  -- (app_private.absence_status_counts) rather than a count of every matching row.
  if p_from is null and p_to is null and p_type is null and p_establishment is null then
    select coalesce(sum(c.n), 0)::int into v_count
    from app_private.absence_status_counts c
    where (v_readers is null or c.employee_id = any (v_readers))
      and (p_status is null or c.status = p_status)
      and (p_employee is null or c.employee_id = p_employee);
  end if;
  -- Not materialized: the page alone reads the index in date order and stops at its limit
  -- (the selection's filter check still runs: an unknown status is a 400 either way).
  with visible as not materialized (
    select a.id, a.date_start
    from app_hidden.absences_selection(v_readers, p_status, p_employee, p_from, p_to, p_establishment, p_type) a
  )
  select coalesce(v_count, (select count(*) from visible)),
         array(select v.id from visible v order by v.date_start desc, v.id desc
               limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size))
    into v_count, v_ids;
  return jsonb_build_object('count', v_count, 'results', app_hidden.absences_json(v_ids, p_public_url, true));
end;
$$;
comment on function app_public.absences_list(text, integer, date, date, integer, integer, text, integer, integer) is
'SPEC Absences, GET /api/absences/ and Permissions rules 3 and 19: the absences the caller reads (its
own; for the manager workspace, the absences.view_absence_queue perimeter) filtered by status (an
unknown one gives 400 under status), employee, date window, establishment (main or secondary workplace)
and type, newest first; one page with the count, warnings null on every row.';

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
create or replace function app_public.absence_create(p_body jsonb, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_today date := app_hidden.today();
  v_now timestamptz := app_hidden.now();
  d app_hidden.absence_draft := app_hidden.absence_draft_of(p_body, null);
  v_own boolean;
  v_filer_error text;
  v_eval jsonb;
  v_errors jsonb;
  v_absence app_public.absences;
  v_has_recipient boolean;
  v_subject text;
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
  v_errors := (v_eval -> 'errors') || app_hidden.document_metadata_errors(p_body -> 'add_documents', 'add_documents');
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV200');
  end if;

  insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, start_time,
                                   end_time, comment, status, counted_quantity, counted_unit, author_account_id,
                                   submitted_at, warnings)
  values (d.employee_id, d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time,
          nullif(btrim(p_body ->> 'comment'), ''), case when v_own then 'pending' else 'validated' end,
          (v_eval ->> 'quantity')::numeric, v_eval ->> 'unit', v_account,
          case when v_own then v_now end, v_eval -> 'warnings')
  returning * into v_absence;

  perform app_hidden.absence_documents_insert(v_absence.id, p_body -> 'add_documents');
  perform app_private.absence_sync_counters(v_absence.id, 'create', v_today);
  perform app_private.absence_alert_events(v_absence, v_eval -> 'events');

  if v_own then
    v_subject := app_hidden.absence_subject(v_absence);
    v_has_recipient := app_private.notify_filing(
      v_absence.employee_id, v_absence.date_start, 'absences.decide_absence', v_account,
      'Nouvelle demande d''absence',
      format('%s demande une absence %s (%s).', app_hidden.employee_name(v_absence.employee_id), v_subject,
             app_hidden.quantity_fr(v_absence.counted_quantity, v_absence.counted_unit)),
      'Demande d''absence sans valideur',
      format('La demande d''absence %s de %s n''a aucun valideur : aucun compte habilité à décider des absences ne couvre ce salarié. Un administrateur doit la traiter.',
             v_subject, app_hidden.employee_name(v_absence.employee_id)),
      'absence', v_absence.id);
  end if;

  return app_hidden.absence_json(v_absence.id, p_public_url)
         || jsonb_build_object('has_recipient', v_has_recipient);
end;
$$;
comment on function app_public.absence_create(jsonb, text) is
'SPEC Absences, POST /api/absences/ and declaration rules 1-13: files an absence. The request of an
employee for their own record is born pending (counters reserved, deciders notified); the declaration of
a manager for an employee of the decision perimeter is born validated (nobody notified): the author
decides the state, not the role. Returns the absence with its warnings.';

-- The preview answer of CONTRACT section 4.
create or replace function app_hidden.absence_preview_answer(p_eval jsonb, p_effects jsonb) returns jsonb
language sql immutable as $$
  select jsonb_build_object(
    'quantity', app_hidden.fmt_quantity((p_eval ->> 'quantity')::numeric),
    'unit', p_eval -> 'unit',
    'counter_effects', coalesce(p_effects, '[]'::jsonb),
    'warnings', coalesce(p_eval -> 'warnings', '[]'::jsonb),
    'errors', coalesce(p_eval -> 'errors', '{}'::jsonb));
$$;

-- POST /api/absences/preview/: what a creation would do, without writing anything. Always
-- answers (errors are part of the answer). Without `employee`, the caller's own record.
create or replace function app_public.absence_preview(p_body jsonb) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := app_hidden.absence_draft_of(p_body, null);
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
comment on function app_public.absence_preview(jsonb) is
'SPEC Absences, POST /api/absences/preview/ and preview rules 1-4: what creating this body would do
(quantity, unit, counter_effects, warnings, errors keyed by the field to correct), writing nothing;
without employee, for the caller''s own record.';

-- POST /api/absences/<id>/preview/: what a correction would do (manager side). The row
-- excludes itself from overlap, caps and splitting; effects are the difference with what
-- it holds now.
create or replace function app_public.absence_preview_row(p_id int, p_body jsonb) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  d app_hidden.absence_draft;
  v_body jsonb := p_body - 'employee';
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
  d := app_hidden.absence_draft_normalize(app_hidden.absence_draft_of(v_body, v), v_body, v);
  v_eval := app_private.absence_evaluate(d, v.id, 'manager',
                                         case when v.author_account_id = app_private.employee_account_id(v.employee_id)
                                              then v.submitted_at end, v_today);
  v_bucket := case when v.status in ('validated', 'cancellation_requested') and d.date_start <= v_today
                   then 'taken' else 'planned' end;
  return app_hidden.absence_preview_answer(v_eval, app_private.absence_counter_effects(v_eval -> 'plan', v_bucket, v.id));
end;
$$;
comment on function app_public.absence_preview_row(integer, jsonb) is
'SPEC Absences, POST /api/absences/<id>/preview/ (manager side): what correcting this absence with the
body would do, writing nothing; the row excludes itself from overlap, cap and splitting, and counter
effects are the difference with what it holds now.';

-- PATCH /api/absences/<id>/ (manager side): corrections of the period, the type, the hours
-- or the comment rerun every declaration rule and compensate the counters; documents may
-- be added (add_documents) and removed (remove_document_ids, which must belong to it).
create or replace function app_public.absence_update(p_id int, p_body jsonb, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_new app_public.absences;
  d app_hidden.absence_draft;
  v_body jsonb := p_body - 'employee' - 'status';
  v_today date := app_hidden.today();
  v_period_changed boolean;
  v_comment_changed boolean;
  v_remove int[];
  v_errors jsonb := '{}'::jsonb;
  v_eval jsonb;
  v_bad int;
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_corrector(v);
  perform app_hidden.absence_check_version(v, v_body, false);

  d := app_hidden.absence_draft_normalize(app_hidden.absence_draft_of(v_body, v), v_body, v);
  v_period_changed := row(d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time)
    is distinct from row(v.type_id, v.date_start, v.date_end, v.start_half, v.end_half, v.start_time, v.end_time);
  v_comment_changed := v_body ? 'comment' and nullif(btrim(v_body ->> 'comment'), '') is distinct from v.comment;
  if jsonb_typeof(v_body -> 'remove_document_ids') = 'array' then
    v_remove := array(select (x #>> '{}')::int from jsonb_array_elements(v_body -> 'remove_document_ids') x);
  end if;

  if v.status in ('refused', 'cancelled') then
    perform app_hidden.invalid('status', format('Une absence %s ne se modifie plus.',
      case when v.status = 'refused' then 'refusée' else 'annulée' end), 'WV210');
  end if;
  if v.status = 'cancellation_requested' and (v_period_changed or v_comment_changed) then
    perform app_hidden.invalid('status',
      'Une demande d''annulation est en cours : décidez-la avant de corriger cette absence.', 'WV210');
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
      format('Le document n° %s n''appartient pas à cette absence : rien n''a été modifié.', v_bad));
  end if;
  v_errors := v_errors || app_hidden.document_metadata_errors(v_body -> 'add_documents', 'add_documents');
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
     and coalesce(jsonb_array_length(nullif(v_body -> 'add_documents', 'null'::jsonb)), 0) = 0 then
    return app_hidden.absence_json(v.id, p_public_url);
  end if;

  perform app_private.set_audit_verb(case when v_period_changed or v_comment_changed then 'Correction' else 'Modification' end);
  update app_public.absences a set
    type_id = d.type_id, date_start = d.date_start, date_end = d.date_end, start_half = d.start_half,
    end_half = d.end_half, start_time = d.start_time, end_time = d.end_time,
    comment = case when v_comment_changed then nullif(btrim(v_body ->> 'comment'), '') else a.comment end,
    counted_quantity = case when v_period_changed then (v_eval ->> 'quantity')::numeric else a.counted_quantity end,
    counted_unit = case when v_period_changed then v_eval ->> 'unit' else a.counted_unit end,
    warnings = case when v_period_changed then v_eval -> 'warnings' else a.warnings end,
    corrected_by = case when v_period_changed or v_comment_changed then app_hidden.current_account_id() else a.corrected_by end,
    version = a.version + 1
  where a.id = v.id
  returning * into v_new;
  perform app_private.set_audit_verb('');

  delete from app_public.absence_documents doc where doc.absence_id = v.id and doc.id = any (v_remove);
  perform app_hidden.absence_documents_insert(v.id, v_body -> 'add_documents');
  if v_period_changed then
    perform app_private.absence_sync_counters(v.id, 'edit', v_today);
    perform app_private.absence_alert_events(v_new, v_eval -> 'events');
  end if;
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_update(integer, jsonb, text) is
'SPEC Absences, PATCH /api/absences/<id>/ and declaration rules 1-11 and 18 (manager side; an employee
gets 403): corrects the period, type, hours or comment, rerunning every declaration rule and
compensating the counters, and adds (add_documents) or removes (remove_document_ids, which must belong
to it) documents. Returns the absence with its warnings and documents.';

-- POST /api/absences/<id>/documents/ (multipart add_documents): the employee concerned
-- and the manager perimeter deposit documents on an absence that is not refused or
-- cancelled (e.g. after a missing-document reminder).
create or replace function app_public.absence_add_documents(p_id int, p_body jsonb, p_public_url text default null) returns jsonb
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
  v_errors := app_hidden.document_metadata_errors(p_body -> 'add_documents', 'add_documents');
  if v_errors = '{}'::jsonb and coalesce(jsonb_array_length(nullif(p_body -> 'add_documents', 'null'::jsonb)), 0) = 0 then
    v_errors := app_hidden.add_error(v_errors, 'add_documents', 'Déposez au moins un fichier (PDF, JPG ou PNG).');
  end if;
  perform app_hidden.raise_errors(v_errors);
  perform app_private.set_audit_verb('Modification');
  update app_public.absences a set version = a.version + 1 where a.id = v.id;
  perform app_private.set_audit_verb('');
  perform app_hidden.absence_documents_insert(v.id, p_body -> 'add_documents');
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
        when 'cancellation_requested' then 'Seule une demande en attente peut être retirée : l''annulation de cette absence est déjà demandée.'
        when 'refused' then 'Seule une demande en attente peut être retirée : une demande refusée reste au dossier.'
        else 'Seule une demande en attente peut être retirée : cette absence est annulée.' end, 'WV210');
    end if;
    delete from app_public.absences a where a.id = v.id;
    perform app_private.absence_sync_counters(v.id, 'withdraw');
    return null;
  end if;

  if v.status = 'pending' then
    perform app_hidden.forbidden(
      'Seul le salarié concerné peut retirer une demande en attente ; pour l''écarter, refusez-la.', 'WF206');
  end if;
  if v.status <> 'validated' then
    perform app_hidden.invalid('status', case v.status
      when 'cancellation_requested' then 'Une demande d''annulation est en cours : accordez-la ou refusez-la.'
      when 'refused' then 'Une demande refusée n''est jamais effacée.'
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
create or replace function app_public.absence_validate(p_id int, p_body jsonb, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_new app_public.absences;
  d app_hidden.absence_draft;
  v_body jsonb;
  v_reason text := nullif(btrim(p_body ->> 'reason'), '');
  v_today date := app_hidden.today();
  v_corrected boolean;
  v_eval jsonb;
  v_key text;
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_body, true);
  perform app_hidden.absence_check_decider(v);

  if v.status = 'cancellation_requested' then
    foreach v_key in array array['date_end', 'type', 'start_time', 'end_time'] loop
      if p_body ? v_key then
        perform app_hidden.invalid(v_key, 'Une annulation ne se corrige pas : accordez-la ou refusez-la.', 'WV212');
      end if;
    end loop;
    perform app_hidden.absence_check_decider_window(v);
    v := app_hidden.absence_cancel(v, true);
    perform app_private.absence_notify_employee(v, 'Annulation d''absence acceptée',
      format('Votre demande d''annulation de l''absence %s a été acceptée : l''absence est annulée.',
             app_hidden.absence_subject(v)), 'info');
    return app_hidden.absence_json(v.id, p_public_url);
  end if;
  if v.status <> 'pending' then
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être décidée.', 'WV210');
  end if;

  v_body := (select coalesce(jsonb_object_agg(k, p_body -> k), '{}'::jsonb)
             from unnest(array['date_end', 'type', 'start_time', 'end_time']) k where p_body ? k);
  d := app_hidden.absence_draft_normalize(app_hidden.absence_draft_of(v_body, v), v_body, v);
  v_corrected := row(d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time)
    is distinct from row(v.type_id, v.date_start, v.date_end, v.start_half, v.end_half, v.start_time, v.end_time);
  if v_corrected then
    if v_reason is null then
      perform app_hidden.invalid('reason',
        'Un motif est obligatoire quand la décision corrige la demande (date de fin, motif d''absence ou heures).', 'WV211');
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
      format('Votre demande d''absence %s a été validée avec modification : %s accordé(e) (%s). Motif : %s',
             app_hidden.absence_subject(v), app_hidden.absence_subject(v_new),
             app_hidden.quantity_fr(v_new.counted_quantity, v_new.counted_unit), v_reason)
    else
      format('Votre demande d''absence %s a été validée.', app_hidden.absence_subject(v_new))
      || coalesce(' Motif : ' || v_reason, '')
    end, 'info');
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_validate(integer, jsonb, text) is
'SPEC Absences, POST /api/absences/<id>/validate/ and declaration rules 10, 11, 15 and 20: with the
current version (else 409), a holder of absences.decide_absence who is not the author validates a
pending absence, optionally correcting end date, type or hours (every declaration rule rerun, a reason
required), or grants a requested cancellation (cancelled, counters recredited). The requester is
notified.';

-- POST /api/absences/<id>/refuse/ {version, reason}
--   pending → refused (the reservation is released; the request stays on file);
--   cancellation_requested → validated (the cancellation is refused; counters unchanged).
create or replace function app_public.absence_refuse(p_id int, p_body jsonb, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_reason text := nullif(btrim(p_body ->> 'reason'), '');
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_body, true);
  perform app_hidden.absence_check_decider(v);
  if v.status not in ('pending', 'cancellation_requested') then
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être décidée.', 'WV210');
  end if;
  if v_reason is null then
    perform app_hidden.invalid('reason', 'Un refus doit être motivé : indiquez la raison.', 'WV211');
  end if;

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
      format('Votre demande d''absence %s a été refusée. Motif : %s', app_hidden.absence_subject(v), v_reason), 'error');
  else
    update app_public.absences a set
      status = 'validated', cancellation_decided_at = app_hidden.now(),
      cancellation_decided_by = app_hidden.current_account_id(), cancellation_decision_reason = v_reason,
      version = a.version + 1
    where a.id = v.id
    returning * into v;
    perform app_private.set_audit_verb('');
    perform app_private.absence_notify_employee(v, 'Annulation d''absence refusée',
      format('Votre demande d''annulation de l''absence %s a été refusée : l''absence est maintenue. Motif : %s',
             app_hidden.absence_subject(v), v_reason), 'error');
  end if;
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_refuse(integer, jsonb, text) is
'SPEC Absences, POST /api/absences/<id>/refuse/: with the current version (else 409) and a non-empty
reason, a holder of absences.decide_absence refuses a pending absence (reservation released, the request
stays on file) or a requested cancellation (the absence stays validated, counters unchanged). The
requester is notified.';

-- POST /api/absences/<id>/request-cancellation/ {comment?, version?}: the owner of a
-- granted absence starting at most 14 days ago asks for its cancellation. It stays drawn
-- and counted until a decider grants it; the deciders are notified.
create or replace function app_public.absence_request_cancellation(p_id int, p_body jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_limit date := app_hidden.today() - 14;
begin
  v := app_hidden.absence_lock(p_id);
  if v.employee_id is distinct from app_hidden.current_employee_id() then
    perform app_hidden.forbidden('Seul le salarié concerné peut demander l''annulation de son absence.', 'WF205');
  end if;
  perform app_hidden.absence_check_version(v, p_body, false);
  if v.status <> 'validated' then
    perform app_hidden.invalid('status', case v.status
      when 'cancellation_requested' then 'L''annulation de cette absence est déjà demandée.'
      when 'pending' then 'Seule une absence accordée peut faire l''objet d''une demande d''annulation : retirez plutôt votre demande en attente.'
      else 'Seule une absence accordée peut faire l''objet d''une demande d''annulation.' end, 'WV210');
  end if;
  if v.date_start < v_limit then
    perform app_hidden.invalid('date_start', format(
      'L''annulation ne peut plus être demandée : l''absence a commencé avant le %s (14 jours au plus).',
      app_hidden.fr_date(v_limit)), 'WV214');
  end if;

  perform app_private.set_audit_verb('Demande d''annulation');
  update app_public.absences a set
    status = 'cancellation_requested', cancellation_comment = nullif(btrim(p_body ->> 'comment'), ''),
    cancellation_requested_at = app_hidden.now(), cancellation_decided_at = null, cancellation_decided_by = null,
    cancellation_decision_reason = null, version = a.version + 1
  where a.id = v.id
  returning * into v;
  perform app_private.set_audit_verb('');
  perform app_private.notify_deciders(v.employee_id, v.date_start, 'absences.decide_absence',
    app_hidden.current_account_id(), 'Demande d''annulation d''absence',
    format('%s demande l''annulation de son absence %s.', app_hidden.employee_name(v.employee_id),
           app_hidden.absence_subject(v)) || coalesce(' Commentaire : ' || v.cancellation_comment, ''),
    'absence', v.id);
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_request_cancellation(integer, jsonb, text) is
'SPEC Absences, POST /api/absences/<id>/request-cancellation/ and declaration rule 15: the owner of a
granted absence starting at most 14 days ago asks for its cancellation; it stays drawn in the planning
and counted until a decider rules, and the deciders are notified.';
--! EndIncluded absences/api.sql
--! Included absences/export.sql
-- The absences a list shows, written once for GET /api/absences/ (app_public.absences_list)
-- and its export (GET /api/absences/export/, app_public.absences_export): filters, perimeter.
--
-- The selection and the export are plain `language sql`, without security definer nor SET:
-- the planner inlines them into the caller's query, so that the export's cursor really
-- streams (a plpgsql or security definer set-returning function fills its whole result
-- before the first row). Inlined into the export, they run as the visitor; inlined into
-- absences_list, as wfm_api: RLS on absences is the same for both.

-- Refuses bad list filters (400 under the field). Returns true, so that the selection can
-- call it in its WHERE clause: without a column in its arguments, it is evaluated once,
-- before the first row (a one-time filter), even when no absence matches.
create or replace function app_hidden.absences_filters_check(p_status text, p_from date, p_to date) returns boolean
language plpgsql stable as $$
begin
  if p_status is not null and p_status not in ('pending', 'validated', 'refused', 'cancellation_requested', 'cancelled') then
    perform app_hidden.invalid('status', format(
      'Paramètre status inconnu : « %s ». Valeurs possibles : pending, validated, refused, cancellation_requested, cancelled.',
      p_status), 'WV220');
  end if;
  if p_from is not null and p_to is not null and p_to < p_from then
    perform app_hidden.invalid('to', 'Le paramètre to ne peut pas précéder from.', 'WV220');
  end if;
  return true;
end;
$$;

-- Employees whose absences the lists show; null for the whole association (no filter).
create or replace function app_hidden.absences_list_readers() returns int[]
language plpgsql stable as $$
begin
  if app_hidden.perimeter_is_whole('absences.view_absence_queue') then
    return null;
  end if;
  return array(select app_hidden.absence_api_reader_ids());
end;
$$;

-- GET /api/absences/?status=&employee=&from=&to=&establishment=&type= (and its export).
-- establishment: the employee's main or secondary workplace; type: the absence type.
-- p_readers: app_hidden.absences_list_readers(), computed once by the caller (absences_list
-- plans with its value: its size decides between the indexes; the export passes an
-- uncorrelated sub-select). Another array widens nothing: RLS on absences still applies.
create or replace function app_hidden.absences_selection(p_readers int[], p_status text, p_employee int, p_from date,
                                                         p_to date, p_establishment int, p_type int)
returns setof app_public.absences
language sql stable as $$
  select a.*
  from app_public.absences a
  where app_hidden.absences_filters_check(p_status, p_from, p_to)
    and (p_readers is null or a.employee_id = any (p_readers))
    and (p_status is null or a.status = p_status)
    and (p_employee is null or a.employee_id = p_employee)
    and (p_from is null or a.date_end >= p_from)
    and (p_to is null or a.date_start <= p_to)
    and (p_type is null or a.type_id = p_type)
    and (p_establishment is null
         or exists (select 1 from app_public.employees e
                    where e.id = a.employee_id and e.main_establishment_id = p_establishment)
         or exists (select 1 from app_public.employee_secondary_establishments s
                    where s.employee_id = a.employee_id and s.establishment_id = p_establishment));
$$;

-- GET /api/absences/export/?format=csv|xlsx&<the list's filters>: the list's rows and order,
-- one line per absence, with the columns of the list that a spreadsheet reads (the list's
-- readers read the comment and the decision reason too; documents are counted, never linked).
-- Half-days and units in French (the file is read by people).
create or replace function app_public.absences_export(p_status text default null, p_employee int default null,
                                                      p_from date default null, p_to date default null,
                                                      p_establishment int default null, p_type int default null)
returns table (id int, employee int, employee_name text, type_code text, type_name text,
               date_start date, date_end date, start_half text, end_half text, start_time text, end_time text,
               counted_quantity numeric, counted_unit text, status text, status_label text,
               comment text, decision_reason text, documents bigint, submitted_at timestamptz, decided_at timestamptz)
language sql stable as $$
  select a.id, a.employee_id, e.first_name || ' ' || e.last_name, t.code, t.name,
         a.date_start, a.date_end,
         case a.start_half when 'afternoon' then 'Après-midi' when 'morning' then 'Matin' end,
         case a.end_half when 'afternoon' then 'Après-midi' when 'morning' then 'Matin' end,
         to_char(a.start_time, 'HH24:MI'), to_char(a.end_time, 'HH24:MI'),
         a.counted_quantity, case a.counted_unit when 'day' then 'jours' when 'hour' then 'heures' end, a.status, app_hidden.absence_status_label(a.status),
         a.comment, a.decision_reason,
         (select count(*) from app_public.absence_documents d where d.absence_id = a.id),
         a.submitted_at, a.decided_at
  from app_hidden.absences_selection((select app_hidden.absences_list_readers()), p_status, p_employee, p_from, p_to, p_establishment, p_type) a
  join app_public.absence_types t on t.id = a.type_id
  left join app_public.employees e on e.id = a.employee_id
  order by a.date_start desc, a.id desc;
$$;
comment on function app_public.absences_export(text, integer, date, date, integer, integer) is 'SPEC Absences (the list) and issue 16 exports, GET /api/absences/export/: every absence the list shows for the same filters and perimeter, in its order and with its column rules, as rows streamed to the CSV or XLSX file.';
--! EndIncluded absences/export.sql
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
        message = format('Transition d''état interdite : %s → %s.', old.status, new.status);
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
      message = format('Transition d''état interdite : %s → %s.', old.status, new.status);
  end if;
  if new.version <> old.version + 1 then
    raise exception using errcode = 'WV910', detail = 'version',
      message = 'Chaque écriture d''une absence avance sa version d''une unité.';
  end if;
  if new.employee_id <> old.employee_id or new.author_account_id is distinct from old.author_account_id
     or new.created_at <> old.created_at then
    raise exception using errcode = 'WV910', detail = 'employee',
      message = 'Le salarié et l''auteur d''une absence ne changent pas.';
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
insert into app_private.audit_models (model, label) values ('absence_document', 'Justificatif d''absence')
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
--! Included absences/status_counts.sql
-- Number of absences per employee and state, kept by the triggers below in the transaction
-- that writes the absences: the queue's total (GET /api/absences/?status=) becomes a sum over
-- the readable employees instead of a count of every matching row (95 000 pending requests
-- for a whole-association reader at 1 M absences). Exact: same transaction, same snapshot.

create table if not exists app_private.absence_status_counts (
  status text not null,
  employee_id int not null,
  n int not null check (n > 0),
  primary key (status, employee_id)
);
create index if not exists absence_status_counts_employee_idx on app_private.absence_status_counts (employee_id);

-- The perimeter of the absences themselves: a reader sums only the employees whose absences
-- it reads (app_public.absences, select_own_or_perimeter).
alter table app_private.absence_status_counts enable row level security;
drop policy if exists select_own_or_perimeter on app_private.absence_status_counts;
create policy select_own_or_perimeter on app_private.absence_status_counts for select to wfm_api
  using ((select app_hidden.perimeter_is_whole('absences.view_absence_queue')
                 or app_hidden.perimeter_is_whole('employee.view_payroll'))
         or employee_id in (select app_hidden.absence_reader_employee_ids()));
grant select on app_private.absence_status_counts to wfm_api;

-- One absence more (p_delta 1) or less (-1) in a state; a count that reaches zero goes.
create or replace function app_private.absence_status_count_add(p_status text, p_employee int, p_delta int) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if p_delta > 0 then
    insert into app_private.absence_status_counts as c (status, employee_id, n)
    values (p_status, p_employee, p_delta)
    on conflict (status, employee_id) do update set n = c.n + excluded.n;
  else
    delete from app_private.absence_status_counts c
    where c.status = p_status and c.employee_id = p_employee and c.n <= -p_delta;
    if not found then
      update app_private.absence_status_counts c set n = c.n + p_delta
      where c.status = p_status and c.employee_id = p_employee;
    end if;
  end if;
end;
$$;

create or replace function app_private.tg_absences__status_counts() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- A change of state touches two counts: always in the order of their keys, so that two
  -- transitions of one employee's absences in opposite directions never deadlock.
  if tg_op = 'UPDATE' and (new.status, new.employee_id) < (old.status, old.employee_id) then
    perform app_private.absence_status_count_add(new.status, new.employee_id, 1);
    perform app_private.absence_status_count_add(old.status, old.employee_id, -1);
    return null;
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    perform app_private.absence_status_count_add(old.status, old.employee_id, -1);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform app_private.absence_status_count_add(new.status, new.employee_id, 1);
  end if;
  return null;
end;
$$;
drop trigger if exists _600_status_counts on app_public.absences;
create or replace trigger _600_status_counts after insert or delete on app_public.absences
  for each row execute function app_private.tg_absences__status_counts();
drop trigger if exists _600_status_counts_update on app_public.absences;
create or replace trigger _600_status_counts_update after update of status, employee_id on app_public.absences
  for each row when (old.status is distinct from new.status or old.employee_id is distinct from new.employee_id)
  execute function app_private.tg_absences__status_counts();

create or replace function app_private.tg_absences__status_counts_truncate() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  truncate app_private.absence_status_counts;
  return null;
end;
$$;
drop trigger if exists _600_status_counts_truncate on app_public.absences;
create or replace trigger _600_status_counts_truncate after truncate on app_public.absences
  for each statement execute function app_private.tg_absences__status_counts_truncate();

-- Recounted in one scan whenever this file is applied (a migration, or a bulk load written with
-- the triggers off): the counts then hold for the absences as they are.
create or replace function app_private.absence_status_counts_rebuild() returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- No absence is written meanwhile: the recount and the triggers never both count one.
  lock table app_public.absences in share mode;
  delete from app_private.absence_status_counts;
  insert into app_private.absence_status_counts (status, employee_id, n)
  select a.status, a.employee_id, count(*)::int from app_public.absences a group by a.status, a.employee_id;
end;
$$;
select app_private.absence_status_counts_rebuild();
--! EndIncluded absences/status_counts.sql
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
      'Impossible de désactiver ou de supprimer %s : %s compteur(s) %s actif(s) n''aurai(en)t plus aucun motif associé. Fermez d''abord ces compteurs.',
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
                                             format('l''association au compteur %s', old.counter_code));
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
-- functions: reading a JSON body field by field (a wrong type answers 400 under the field),
-- the caller's establishment scope, staff status, names across RLS, search patterns.

-- A body field as text: null when absent or null; 400 under the field when not a string.
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

create or replace function app_hidden.in_bool(p_body jsonb, p_key text, p_field text default null) returns boolean
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) <> 'boolean' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Un booléen (true ou false) est attendu.');
  end if;
  return v::boolean;
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
    perform app_hidden.invalid(coalesce(p_field, p_key), format('Date invalide : %s n''existe pas.', v_text));
  end;
end;
$$;

-- A timestamp with an explicit offset (ISO 8601).
create or replace function app_hidden.in_timestamptz(p_body jsonb, p_key text, p_field text default null) returns timestamptz
language plpgsql stable as $$
declare
  v jsonb := p_body -> p_key;
  v_text text;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  v_text := v #>> '{}';
  if jsonb_typeof(v) <> 'string'
     or v_text !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)$' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Horodatage invalide : format ISO 8601 avec fuseau attendu (2026-11-16T09:00:00+01:00).');
  end if;
  begin
    return v_text::timestamptz;
  exception when others then
    perform app_hidden.invalid(coalesce(p_field, p_key), format('Horodatage invalide : %s n''existe pas.', v_text));
  end;
end;
$$;

-- A JSON array field (null when absent or null; 400 when not an array).
create or replace function app_hidden.in_array(p_body jsonb, p_key text, p_field text default null) returns jsonb
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) <> 'array' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Une liste est attendue.');
  end if;
  return v;
end;
$$;

-- A list of ids; duplicates are refused.
create or replace function app_hidden.in_ids(p_body jsonb, p_key text, p_field text default null) returns int[]
language plpgsql immutable as $$
declare
  v jsonb := app_hidden.in_array(p_body, p_key, p_field);
  v_ids int[];
begin
  if v is null then
    return null;
  end if;
  if exists (select 1 from jsonb_array_elements(v) x
             where jsonb_typeof(x) <> 'number' or (x #>> '{}') !~ '^[0-9]{1,9}$') then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Une liste d''identifiants (nombres entiers) est attendue.');
  end if;
  v_ids := array(select (x #>> '{}')::int from jsonb_array_elements(v) x);
  if cardinality(v_ids) <> (select count(distinct i) from unnest(v_ids) i) then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'La liste contient des doublons.');
  end if;
  return v_ids;
end;
$$;

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
--! Included employees/tables.sql
-- Annexes of the employee record: emergency contacts and attachments (HR documents).

create table if not exists app_public.employee_emergency_contacts (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  name text not null check (btrim(name) <> '' and length(name) <= 150),
  relationship text check (length(relationship) <= 100),
  phone text not null check (phone ~ '^\+?[0-9][0-9 .\-]{4,22}[0-9]$'),
  alternate_phone text check (alternate_phone ~ '^\+?[0-9][0-9 .\-]{4,22}[0-9]$'),
  email text check (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' and length(email) <= 254),
  position smallint not null default 1 check (position between 1 and 10),
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now()
);
create index if not exists employee_emergency_contacts_employee_idx on app_public.employee_emergency_contacts (employee_id, position);

create table if not exists app_public.employee_attachments (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  title text not null check (btrim(title) <> '' and length(title) <= 200),
  filename text not null check (length(filename) between 1 and 255),
  content_type text not null check (content_type in ('application/pdf', 'image/jpeg', 'image/png')),
  size_bytes int not null check (size_bytes > 0 and size_bytes <= 10485760),
  -- Name of the file in the storage directory (random, never derived from user input).
  storage_key text not null unique check (storage_key ~ '^[0-9a-f]{32}$'),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  uploaded_at timestamptz not null default app_hidden.now(),
  uploaded_by int references app_public.accounts on delete set null,
  uploaded_by_name text not null,
  updated_at timestamptz not null default app_hidden.now()
);
create index if not exists employee_attachments_employee_idx on app_public.employee_attachments (employee_id, uploaded_at desc);

create or replace trigger _100_timestamps before insert or update on app_public.employee_emergency_contacts
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _100_timestamps before insert or update on app_public.employee_attachments
  for each row execute function app_hidden.tg__timestamps();

-- A deleted attachment's file is removed from the storage directory after commit (a
-- rolled-back deletion never loses a file).
create or replace function app_private.tg_employee_attachments__storage_garbage() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  insert into app_private.storage_garbage (storage_key) values (old.storage_key) on conflict do nothing;
  return old;
end;
$$;
create or replace trigger _900_storage_garbage after delete on app_public.employee_attachments
  for each row execute function app_private.tg_employee_attachments__storage_garbage();

-- Audit of every write of the employee record and its parts.
create or replace trigger _500_audit after insert or update on app_public.employees
  for each row execute function app_private.tg__audit('employee');
create or replace trigger _500_audit_delete before delete on app_public.employees
  for each row execute function app_private.tg__audit('employee');
create or replace trigger _500_audit after insert or update on app_public.contracts
  for each row execute function app_private.tg__audit('contract');
create or replace trigger _500_audit_delete before delete on app_public.contracts
  for each row execute function app_private.tg__audit('contract');
create or replace trigger _500_audit after insert or update on app_public.team_assignments
  for each row execute function app_private.tg__audit('team_assignment');
create or replace trigger _500_audit_delete before delete on app_public.team_assignments
  for each row execute function app_private.tg__audit('team_assignment');
create or replace trigger _500_audit after insert or update on app_public.employee_secondary_establishments
  for each row execute function app_private.tg__audit_child('employee_secondary_establishment', 'employee_id');
create or replace trigger _500_audit_delete before delete on app_public.employee_secondary_establishments
  for each row execute function app_private.tg__audit_child('employee_secondary_establishment', 'employee_id');
create or replace trigger _500_audit after insert or update on app_public.employee_emergency_contacts
  for each row execute function app_private.tg__audit('emergency_contact');
create or replace trigger _500_audit_delete before delete on app_public.employee_emergency_contacts
  for each row execute function app_private.tg__audit('emergency_contact');
create or replace trigger _500_audit after insert or update on app_public.employee_attachments
  for each row execute function app_private.tg__audit('employee_attachment');
create or replace trigger _500_audit_delete before delete on app_public.employee_attachments
  for each row execute function app_private.tg__audit('employee_attachment');

-- The social security number is audited without its value: the audit log is read by
-- accounts that may not read the number.
create or replace function app_private.tg_employee_social_security_numbers__audit() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_masked jsonb := jsonb_build_object('social_security_number', '(masqué)');
begin
  if tg_op = 'INSERT' then
    perform app_private.write_audit('Creation', 'employee_social_security_number', new.employee_id, null,
                                    v_masked || jsonb_build_object('employee_id', new.employee_id));
    return new;
  elsif tg_op = 'UPDATE' then
    perform app_private.write_audit('Modification', 'employee_social_security_number', new.employee_id,
                                    v_masked || jsonb_build_object('employee_id', old.employee_id),
                                    v_masked || jsonb_build_object('employee_id', new.employee_id));
    return new;
  else
    perform app_private.write_audit('Suppression', 'employee_social_security_number', old.employee_id,
                                    v_masked || jsonb_build_object('employee_id', old.employee_id), null);
    return old;
  end if;
end;
$$;
create or replace trigger _500_audit after insert or update on app_public.employee_social_security_numbers
  for each row execute function app_private.tg_employee_social_security_numbers__audit();
create or replace trigger _500_audit_delete before delete on app_public.employee_social_security_numbers
  for each row execute function app_private.tg_employee_social_security_numbers__audit();
--! EndIncluded employees/tables.sql
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
  v_body := format('L''adresse e-mail de votre compte a été modifiée par %s le %s : %s. '
                   'Si vous n''êtes pas à l''origine de ce changement, prévenez immédiatement votre service RH.',
                   v_by, app_hidden.fr_date(app_hidden.today()), coalesce(p_new, 'aucune adresse'));
  perform app_private.notify(v_account, 'Adresse e-mail modifiée', v_body, 'warning', 'employee', p_employee);
  if p_old is not null then
    insert into app_private.email_outbox (kind, to_address, subject, body_text, account_id)
    values ('email_changed', p_old, 'Adresse e-mail de votre compte modifiée',
            E'Bonjour,\n\n' || v_body || E'\n\nCe message est envoyé à votre ancienne adresse.', v_account);
  end if;
end;
$$;

-- Is a username free (case-insensitive), whatever accounts the caller may read?
create or replace function app_private.username_taken(p_username text) returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (select 1 from app_public.accounts a where lower(a.username) = lower(p_username));
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
                                      || app_hidden.ascii_slug(v_employee.last_name)), 140);
    if length(v_base) < 2 then
      v_base := 'salarie' || p_employee_id;
    end if;
    perform pg_advisory_xact_lock(hashtext('username:' || v_base));
    v_username := v_base;
    while exists (select 1 from app_public.accounts a where lower(a.username) = lower(v_username)) loop
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

-- Validation and write of the record, shared by creation (p_id null) and update. Runs as
-- the API function's role (wfm_api): every write goes through the policies.
create or replace function app_hidden.employee_save(p_id int, p_body jsonb, p_partial boolean) returns int
language plpgsql volatile as $$
declare
  v_creating boolean := p_id is null;
  v_me int := app_hidden.current_account_id();
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_employee_record');
  v_old app_public.employees;
  v_errors jsonb := '{}';
  v_id int := p_id;
  v_first_name text;
  v_last_name text;
  v_email text;
  v_birth_date date;
  v_polyvalent boolean;
  v_main int;
  v_secondaries int[];
  v_old_secondaries int[];
  v_ssn text;
  v_username text;
  v_contracts jsonb;
  v_teams jsonb;
  v_item jsonb;
  v_label text;
  v_type int;
  v_start date;
  v_end date;
  v_trial date;
  v_job text;
  v_hours numeric;
  v_item_id int;
  v_team int;
  v_kept int[] := '{}';
  i int;
  j int;
  v_ranges daterange[];
  v_starts date[];
  v_team_ids int[];
  v_existing app_public.team_assignments;
begin
  if not v_creating then
    select * into v_old from app_public.employees e where e.id = p_id;
    if not found then
      perform app_hidden.not_found('Salarié introuvable.');
    end if;
  end if;

  -- The key itself is refused to whoever may not read the number (before anything else).
  if p_body ? 'social_security_number' then
    if v_creating and not app_hidden.current_account_has('employee.view_social_security_number')
       or not v_creating and not app_hidden.may(v_me, 'employee.view_social_security_number', p_id) then
      perform app_hidden.forbidden('Vous n''avez pas le droit de lire ni d''écrire le numéro de sécurité sociale : '
                                   'retirez ce champ de la requête.', 'WF501');
    end if;
  end if;
  if not app_hidden.current_account_has('employee.change_employee_record') then
    if v_creating then
      perform app_hidden.forbidden('Vous n''avez pas le droit de créer ou de modifier une fiche salarié.', 'WF502');
    end if;
    -- A record outside every perimeter of the caller: not found before forbidden (SPEC Errors).
    perform app_hidden.refuse_outside_or_forbid(p_id,
      'Vous n''avez pas le droit de créer ou de modifier une fiche salarié.', 'WF502');
  end if;
  if not v_creating and not app_hidden.may(v_me, 'employee.change_employee_record', p_id) then
    -- Outside the perimeter: not found (SPEC Errors), as for every row outside it.
    perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
  end if;

  -- Scalar fields.
  v_first_name := coalesce(app_hidden.in_trimmed(p_body, 'first_name'), case when p_body ? 'first_name' then null else v_old.first_name end);
  if (v_creating or not p_partial or p_body ? 'first_name') and app_hidden.in_trimmed(p_body, 'first_name') is null then
    v_errors := app_hidden.add_error(v_errors, 'first_name', 'Le prénom est obligatoire.');
  elsif length(v_first_name) > 100 then
    v_errors := app_hidden.add_error(v_errors, 'first_name', 'Au plus 100 caractères.');
  end if;
  v_last_name := coalesce(app_hidden.in_trimmed(p_body, 'last_name'), case when p_body ? 'last_name' then null else v_old.last_name end);
  if (v_creating or not p_partial or p_body ? 'last_name') and app_hidden.in_trimmed(p_body, 'last_name') is null then
    v_errors := app_hidden.add_error(v_errors, 'last_name', 'Le nom est obligatoire.');
  elsif length(v_last_name) > 100 then
    v_errors := app_hidden.add_error(v_errors, 'last_name', 'Au plus 100 caractères.');
  end if;

  v_email := case when p_body ? 'professional_email' then app_hidden.in_trimmed(p_body, 'professional_email')
                  else v_old.professional_email end;
  if p_body ? 'professional_email' and v_email is not null
     and (v_email !~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' or length(v_email) > 254) then
    v_errors := app_hidden.add_error(v_errors, 'professional_email', 'Adresse e-mail invalide (exemple : prenom.nom@etablissement.fr).');
  elsif not v_creating and v_email is distinct from v_old.professional_email
        and not app_hidden.account_rights_covered(app_private.employee_account_id(p_id)) then
    -- The address receives the password-reset links of the account: changing it hands the
    -- account over (issue 11).
    v_errors := app_hidden.add_error(v_errors, 'professional_email',
      'Ce compte détient des droits que vous ne couvrez pas : seul un responsable qui les couvre peut changer '
      'son adresse e-mail (elle reçoit les liens de réinitialisation du mot de passe).');
  end if;

  v_birth_date := case when p_body ? 'birth_date' then app_hidden.in_date(p_body, 'birth_date') else v_old.birth_date end;
  if p_body ? 'birth_date' and v_birth_date is not null
     and (v_birth_date >= app_hidden.today() or v_birth_date < date '1900-01-01') then
    v_errors := app_hidden.add_error(v_errors, 'birth_date', 'Date de naissance invalide : elle doit être passée et postérieure au 01/01/1900.');
  end if;

  v_polyvalent := coalesce(app_hidden.in_bool(p_body, 'is_polyvalent'), v_old.is_polyvalent, false);

  v_main := case when p_body ? 'main_establishment' then app_hidden.in_int(p_body, 'main_establishment')
                 else v_old.main_establishment_id end;
  if p_body ? 'main_establishment' and v_main is not null
     and not exists (select 1 from app_public.establishments e where e.id = v_main) then
    v_errors := app_hidden.add_error(v_errors, 'main_establishment', format('Établissement n° %s introuvable.', v_main));
  elsif v_scope is not null and (v_creating or v_main is distinct from v_old.main_establishment_id) then
    if v_main is null then
      v_errors := app_hidden.add_error(v_errors, 'main_establishment',
        'Choisissez un établissement principal de votre périmètre : sans lui, la fiche sortirait de votre périmètre.');
    elsif not v_main = any (v_scope) then
      v_errors := app_hidden.add_error(v_errors, 'main_establishment', 'Cet établissement n''est pas dans votre périmètre.');
    end if;
  end if;

  v_old_secondaries := case when v_creating then '{}'::int[]
                            else array(select ses.establishment_id from app_public.employee_secondary_establishments ses
                                       where ses.employee_id = p_id) end;
  v_secondaries := app_hidden.in_ids(p_body, 'secondary_establishments');
  if v_secondaries is not null then
    if exists (select 1 from unnest(v_secondaries) s(id)
               where not exists (select 1 from app_public.establishments e where e.id = s.id)) then
      v_errors := app_hidden.add_error(v_errors, 'secondary_establishments',
        format('Établissement introuvable : %s.', (select string_agg(s.id::text, ', ') from unnest(v_secondaries) s(id)
                                                   where not exists (select 1 from app_public.establishments e where e.id = s.id))));
    elsif v_main = any (v_secondaries) then
      v_errors := app_hidden.add_error(v_errors, 'secondary_establishments',
        'L''établissement principal ne peut pas être aussi un établissement secondaire.');
    elsif v_scope is not null and exists (
        select 1 from ((select unnest(v_secondaries) except select unnest(v_old_secondaries))
                       union
                       (select unnest(v_old_secondaries) except select unnest(v_secondaries))) d(id)
        where not d.id = any (v_scope)) then
      v_errors := app_hidden.add_error(v_errors, 'secondary_establishments',
        'Vous ne pouvez ajouter ou retirer que des établissements de votre périmètre.');
    end if;
  end if;

  if p_body ? 'social_security_number' then
    v_ssn := upper(replace(app_hidden.in_trimmed(p_body, 'social_security_number'), ' ', ''));
    if v_ssn is not null
       and v_ssn !~ '^[12][0-9]{2}(0[1-9]|1[0-2]|[2-9][0-9])(2[AB]|[0-9]{2})[0-9]{6}([0-9]{2})?$' then
      v_errors := app_hidden.add_error(v_errors, 'social_security_number',
        'Numéro de sécurité sociale invalide : 13 chiffres, ou 15 avec la clé (exemple : 2850175123456).');
    end if;
  end if;

  if p_body ? 'username' then
    if not v_creating then
      v_errors := app_hidden.add_error(v_errors, 'username', 'L''identifiant se choisit à la création de la fiche seulement.');
    else
      v_username := app_hidden.in_trimmed(p_body, 'username');
      if v_username is not null and v_username !~ '^[A-Za-z0-9._@+\-]{2,150}$' then
        v_errors := app_hidden.add_error(v_errors, 'username',
          'Identifiant invalide : de 2 à 150 caractères parmi lettres, chiffres et . _ @ + -.');
      elsif v_username is not null and app_private.username_taken(v_username) then
        v_errors := app_hidden.add_error(v_errors, 'username', format('L''identifiant « %s » est déjà utilisé.', v_username));
      end if;
    end if;
  end if;

  -- Contracts: the list sent replaces the record's contracts (an item with id updates that
  -- contract, an item without id creates one, a contract left out is deleted).
  v_contracts := app_hidden.in_array(p_body, 'contracts');
  if v_contracts is not null then
    v_ranges := '{}';
    v_starts := '{}';
    for i in 0 .. jsonb_array_length(v_contracts) - 1 loop
      v_item := v_contracts -> i;
      v_label := format('Contrat n° %s : ', i + 1);
      if jsonb_typeof(v_item) <> 'object' then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'un objet est attendu.');
        continue;
      end if;
      v_item_id := app_hidden.in_int(v_item, 'id', 'contracts');
      if v_item_id is not null and (v_creating or not exists (select 1 from app_public.contracts c
                                                            where c.id = v_item_id and c.employee_id = p_id)) then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'ce contrat n''appartient pas à ce salarié.');
      end if;
      v_type := app_hidden.in_int(v_item, 'type', 'contracts');
      if v_type is null then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'le type de contrat est obligatoire.');
      elsif not exists (select 1 from app_public.contract_types ct where ct.id = v_type) then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || format('type de contrat n° %s introuvable.', v_type));
      end if;
      v_start := app_hidden.in_date(v_item, 'start_date', 'contracts');
      v_end := app_hidden.in_date(v_item, 'end_date', 'contracts');
      v_trial := app_hidden.in_date(v_item, 'trial_end_date', 'contracts');
      if v_start is null then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la date de début est obligatoire.');
      else
        if v_end < v_start then
          v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la date de fin précède la date de début.');
        end if;
        if v_trial < v_start then
          v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la fin de période d''essai précède la date de début.');
        elsif v_trial > v_end then
          v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la fin de période d''essai dépasse la fin du contrat.');
        end if;
      end if;
      v_job := app_hidden.in_trimmed(v_item, 'job_title', 'contracts');
      if length(v_job) > 200 then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'l''intitulé de poste fait au plus 200 caractères.');
      end if;
      v_hours := app_hidden.in_numeric(v_item, 'weekly_hours', 'contracts');
      if v_hours is not null and (v_hours <= 0 or v_hours > 48) then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la durée hebdomadaire doit être comprise entre 0 et 48 heures.');
      end if;
      if v_start is not null and (v_end is null or v_end >= v_start) then
        for j in 1 .. coalesce(array_length(v_ranges, 1), 0) loop
          if v_ranges[j] && daterange(v_start, v_end, '[]') then
            v_errors := app_hidden.add_error(v_errors, 'contracts',
              format('Les contrats n° %s et n° %s se chevauchent : un salarié a un seul contrat à la fois.', j, i + 1));
          end if;
        end loop;
      end if;
      v_ranges := v_ranges || case when v_start is not null and (v_end is null or v_end >= v_start)
                                   then daterange(v_start, v_end, '[]') else 'empty'::daterange end;
    end loop;
  end if;

  -- Team assignments: same replacement rule; a restricted writer adds, changes or removes
  -- only assignments to teams having an establishment in their perimeter.
  v_teams := app_hidden.in_array(p_body, 'teams');
  if v_teams is not null then
    v_ranges := '{}';
    v_team_ids := '{}';
    for i in 0 .. jsonb_array_length(v_teams) - 1 loop
      v_item := v_teams -> i;
      v_label := format('Affectation n° %s : ', i + 1);
      if jsonb_typeof(v_item) <> 'object' then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'un objet est attendu.');
        v_ranges := v_ranges || 'empty'::daterange;
        v_team_ids := v_team_ids || null::int;
        continue;
      end if;
      v_item_id := app_hidden.in_int(v_item, 'id', 'teams');
      v_existing := null;
      if v_item_id is not null then
        select * into v_existing from app_public.team_assignments ta where ta.id = v_item_id and ta.employee_id = p_id;
        if v_creating or v_existing.id is null then
          v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'cette affectation n''appartient pas à ce salarié.');
        end if;
      end if;
      v_team := app_hidden.in_int(v_item, 'team', 'teams');
      v_start := app_hidden.in_date(v_item, 'start_date', 'teams');
      v_end := app_hidden.in_date(v_item, 'end_date', 'teams');
      if v_team is null then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'l''équipe est obligatoire.');
      elsif not exists (select 1 from app_public.teams t where t.id = v_team) then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || format('équipe n° %s introuvable.', v_team));
      elsif v_scope is not null
            and (v_existing.id is null or v_existing.team_id <> v_team or v_existing.start_date is distinct from v_start
                 or v_existing.end_date is distinct from v_end)
            and not exists (select 1 from app_public.team_establishments te
                            where te.team_id = v_team and te.establishment_id = any (v_scope)) then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'cette équipe n''a aucun établissement dans votre périmètre.');
      end if;
      if v_end < v_start then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'la date de fin précède la date de début.');
      elsif v_team is not null then
        for j in 1 .. coalesce(array_length(v_ranges, 1), 0) loop
          if v_team_ids[j] = v_team and v_ranges[j] && daterange(v_start, v_end, '[]') then
            v_errors := app_hidden.add_error(v_errors, 'teams',
              format('Les affectations n° %s et n° %s à la même équipe se chevauchent.', j, i + 1));
          end if;
        end loop;
      end if;
      v_ranges := v_ranges || case when v_end is null or v_start is null or v_end >= v_start
                                   then daterange(v_start, v_end, '[]') else 'empty'::daterange end;
      v_team_ids := v_team_ids || v_team;
    end loop;
    if v_scope is not null and not v_creating and exists (
        select 1 from app_public.team_assignments ta
        where ta.employee_id = p_id
          and not ta.id in (select (x ->> 'id')::int from jsonb_array_elements(v_teams) x
                            where jsonb_typeof(x) = 'object' and jsonb_typeof(x -> 'id') = 'number')
          and not exists (select 1 from app_public.team_establishments te
                          where te.team_id = ta.team_id and te.establishment_id = any (v_scope))) then
      v_errors := app_hidden.add_error(v_errors, 'teams',
        'Vous ne pouvez pas retirer une affectation à une équipe hors de votre périmètre.');
    end if;
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

  if p_body ? 'social_security_number' then
    -- Created records: the number needs the right on the new record too.
    if v_creating and not app_hidden.may(v_me, 'employee.view_social_security_number', v_id) then
      perform app_hidden.forbidden('Vous n''avez pas le droit d''écrire le numéro de sécurité sociale de ce salarié : '
                                   'retirez ce champ de la requête.', 'WF501');
    end if;
    if v_ssn is null then
      delete from app_public.employee_social_security_numbers s where s.employee_id = v_id;
    else
      insert into app_public.employee_social_security_numbers (employee_id, social_security_number)
      values (v_id, v_ssn)
      on conflict (employee_id) do update set social_security_number = excluded.social_security_number
      where app_public.employee_social_security_numbers.social_security_number is distinct from excluded.social_security_number;
    end if;
  end if;

  if v_secondaries is not null then
    delete from app_public.employee_secondary_establishments ses
    where ses.employee_id = v_id and not ses.establishment_id = any (v_secondaries);
    insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
    select v_id, s.id from unnest(v_secondaries) s(id)
    on conflict do nothing;
  end if;

  if v_contracts is not null then
    delete from app_public.contracts c
    where c.employee_id = v_id
      and not c.id in (select (x ->> 'id')::int from jsonb_array_elements(v_contracts) x where x ? 'id' and x ->> 'id' is not null);
    for v_item in select x from jsonb_array_elements(v_contracts) x loop
      v_item_id := app_hidden.in_int(v_item, 'id', 'contracts');
      if v_item_id is null then
        insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, trial_end_date, job_title, weekly_hours)
        values (v_id, app_hidden.in_int(v_item, 'type'), app_hidden.in_date(v_item, 'start_date'),
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
  end if;

  if v_teams is not null then
    delete from app_public.team_assignments ta
    where ta.employee_id = v_id
      and not ta.id in (select (x ->> 'id')::int from jsonb_array_elements(v_teams) x where x ? 'id' and x ->> 'id' is not null);
    for v_item in select x from jsonb_array_elements(v_teams) x loop
      v_item_id := app_hidden.in_int(v_item, 'id', 'teams');
      if v_item_id is null then
        insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
        values (v_id, app_hidden.in_int(v_item, 'team'), app_hidden.in_date(v_item, 'start_date'), app_hidden.in_date(v_item, 'end_date'));
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
  end if;

  return v_id;
end;
$$;

-- POST /api/employees/: the record, its contracts and assignments, and its account (no
-- usable password; invitation queued when a professional e-mail exists).
create or replace function app_public.employee_create(p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
  v_account jsonb;
  v_doc jsonb;
begin
  v_id := app_hidden.employee_save(null, p_body, false);
  v_account := app_private.open_employee_account(v_id, app_hidden.in_trimmed(p_body, 'username'));
  select j.doc into v_doc from app_hidden.employees_json(array[v_id]) j;
  return v_doc || jsonb_build_object('account', (v_account - 'invitation_queued') || jsonb_build_object('is_active', true),
                                     'invitation_queued', (v_account ->> 'invitation_queued')::boolean);
end;
$$;
comment on function app_public.employee_create(jsonb) is
'SPEC Permissions (employee.change_employee_record) and Authentication rule 4, POST /api/employees/: HR
creates an employee record with its contracts and team assignments, and opens its account (Salarié, no
usable password; a set-password invitation queued when a professional e-mail is given). Returns the
record with invitation_queued.';

-- PATCH /api/employees/<id>/: only the keys sent.
create or replace function app_public.employee_update(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.employee_save(p_id, p_body, true);
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  return v_doc;
end;
$$;
comment on function app_public.employee_update(integer, jsonb) is
'SPEC Permissions (employee.change_employee_record, employee.view_social_security_number), PATCH
/api/employees/<id>/: HR changes the keys sent of a record of its perimeter (a list sent replaces
contracts or team assignments; 404 outside the perimeter; the social security number key from a
non-reader gives 403).';

-- PUT /api/employees/<id>/: first_name and last_name required; other keys as PATCH (lists
-- absent stay as they are).
create or replace function app_public.employee_replace(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.employee_save(p_id, p_body, false);
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  return v_doc;
end;
$$;
comment on function app_public.employee_replace(integer, jsonb) is
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
      perform app_hidden.forbidden('Vous n''avez pas le droit de modifier ces informations de la fiche salarié.', 'WF560');
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
    perform app_hidden.forbidden('Vous n''avez pas le droit de lire ces informations de la fiche salarié.', 'WF560');
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

-- Problems of one contact object, as (field, message) pairs.
create or replace function app_hidden.emergency_contact_problems(p_item jsonb) returns table (field text, message text)
language plpgsql immutable as $$
declare
  v_phone_pattern constant text := '^\+?[0-9][0-9 .\-]{4,22}[0-9]$';
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
  v := nullif(btrim(p_item ->> 'name'), '');
  if v is null then
    return query select 'name'::text, 'Le nom du contact est obligatoire.'::text;
  elsif length(v) > 150 then
    return query select 'name'::text, 'Au plus 150 caractères.'::text;
  end if;
  if length(btrim(p_item ->> 'relationship')) > 100 then
    return query select 'relationship'::text, 'Au plus 100 caractères.'::text;
  end if;
  v := nullif(btrim(p_item ->> 'phone'), '');
  if v is null then
    return query select 'phone'::text, 'Le numéro de téléphone est obligatoire.'::text;
  elsif v !~ v_phone_pattern then
    return query select 'phone'::text, 'Numéro de téléphone invalide (exemple : 06 12 34 56 78 ou +33 6 12 34 56 78).'::text;
  end if;
  v := nullif(btrim(p_item ->> 'alternate_phone'), '');
  if v is not null and v !~ v_phone_pattern then
    return query select 'alternate_phone'::text, 'Numéro de téléphone invalide (exemple : 06 12 34 56 78 ou +33 6 12 34 56 78).'::text;
  end if;
  v := nullif(btrim(p_item ->> 'email'), '');
  if v is not null and (v !~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' or length(v) > 254) then
    return query select 'email'::text, 'Adresse e-mail invalide.'::text;
  end if;
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
create or replace function app_public.emergency_contacts_replace(p_employee int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_items jsonb;
  v_item jsonb;
  v_errors jsonb := '{}';
  v_problem record;
  v_id int;
  i int;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_emergency_contact',
                                           'employee.change_emergency_contact', true);
  perform pg_advisory_xact_lock(hashtext('emergency-contacts:' || p_employee));
  v_items := app_hidden.in_array(p_body, 'contacts');
  if v_items is null then
    perform app_hidden.invalid('contacts', 'La liste des contacts est obligatoire (une liste vide les supprime tous).', 'WV560');
  end if;
  if jsonb_array_length(v_items) > 10 then
    perform app_hidden.invalid('contacts', 'Au plus 10 contacts d''urgence par salarié.', 'WV560');
  end if;
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    v_item := v_items -> i;
    for v_problem in select * from app_hidden.emergency_contact_problems(v_item) loop
      v_errors := app_hidden.add_error(v_errors, 'contacts', format('Contact n° %s : %s', i + 1,
        case v_problem.field when 'non_field_errors' then '' when 'name' then 'nom : ' when 'relationship' then 'lien : '
                             when 'phone' then 'téléphone : ' when 'alternate_phone' then 'autre téléphone : '
                             else 'e-mail : ' end || lower(left(v_problem.message, 1)) || substr(v_problem.message, 2)));
    end loop;
    if jsonb_typeof(v_item) = 'object' and v_item ? 'id' and jsonb_typeof(v_item -> 'id') <> 'null' then
      if jsonb_typeof(v_item -> 'id') <> 'number'
         or not exists (select 1 from app_public.employee_emergency_contacts c
                        where c.employee_id = p_employee and c.id::text = v_item ->> 'id') then
        v_errors := app_hidden.add_error(v_errors, 'contacts', format('Contact n° %s : ce contact n''appartient pas à ce salarié.', i + 1));
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
create or replace function app_public.emergency_contact_create(p_employee int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_problem record;
  v_position int;
  v_row app_public.employee_emergency_contacts;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_emergency_contact',
                                           'employee.change_emergency_contact', true);
  for v_problem in select * from app_hidden.emergency_contact_problems(p_body) loop
    v_errors := app_hidden.add_error(v_errors, v_problem.field, v_problem.message);
  end loop;
  perform app_hidden.invalid_fields(v_errors, 'WV560') where v_errors <> '{}'::jsonb;
  -- Serialise concurrent additions to the same record (the ten-contact bound holds under races).
  perform pg_advisory_xact_lock(hashtext('emergency-contacts:' || p_employee));
  select coalesce(max(c.position), 0) + 1 into v_position
  from app_public.employee_emergency_contacts c where c.employee_id = p_employee;
  if v_position > 10 then
    perform app_hidden.invalid(null, 'Au plus 10 contacts d''urgence par salarié : modifiez ou supprimez-en un.', 'WV560');
  end if;
  insert into app_public.employee_emergency_contacts (employee_id, name, relationship, phone, alternate_phone, email, position)
  values (p_employee, btrim(p_body ->> 'name'), nullif(btrim(p_body ->> 'relationship'), ''), btrim(p_body ->> 'phone'),
          nullif(btrim(p_body ->> 'alternate_phone'), ''), nullif(btrim(p_body ->> 'email'), ''), v_position)
  returning * into v_row;
  return app_hidden.emergency_contact_json(v_row);
end;
$$;
comment on function app_public.emergency_contact_create(integer, jsonb) is
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
create or replace function app_public.employee_attachment_create(p_employee int, p_body jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_files jsonb;
  v_file jsonb;
  v_title text;
  v_row app_public.employee_attachments;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', true);
  v_files := app_hidden.in_array(p_body, 'file');
  if v_files is null or jsonb_array_length(v_files) = 0 then
    perform app_hidden.invalid('file', 'Joignez un fichier PDF, JPG ou PNG (corps multipart/form-data, champ « file »).', 'WV560');
  elsif jsonb_array_length(v_files) > 1 then
    perform app_hidden.invalid('file', 'Une pièce jointe porte un seul fichier : déposez-les un par un.', 'WV560');
  end if;
  v_file := v_files -> 0;
  v_title := coalesce(app_hidden.in_trimmed(p_body, 'title'), v_file ->> 'filename');
  if length(v_title) > 200 then
    perform app_hidden.invalid('title', 'Au plus 200 caractères.', 'WV560');
  end if;
  insert into app_public.employee_attachments (employee_id, title, filename, content_type, size_bytes, storage_key, sha256,
                                               uploaded_by, uploaded_by_name)
  values (p_employee, left(v_title, 200), v_file ->> 'filename', v_file ->> 'content_type', (v_file ->> 'size_bytes')::int,
          v_file ->> 'storage_key', v_file ->> 'sha256', app_hidden.current_account_id(),
          app_hidden.account_display_name(app_hidden.current_account_id()))
  returning * into v_row;
  return app_hidden.employee_attachment_json(v_row, p_public_url);
end;
$$;
comment on function app_public.employee_attachment_create(integer, jsonb, text) is
'SPEC Permissions, POST /api/employees/<pk>/attachments/: a holder of employee.change_employee_attachment
on the employee deposits one file with an optional title.';

-- PUT/PATCH /api/employees/<pk>/attachments/<id>/ {"title"}
create or replace function app_public.employee_attachment_update(p_employee int, p_id int, p_body jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_title text;
  v_row app_public.employee_attachments;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', true);
  select * into v_row from app_public.employee_attachments a where a.id = p_id and a.employee_id = p_employee for update;
  if not found then
    perform app_hidden.not_found('Pièce jointe introuvable.');
  end if;
  v_title := app_hidden.in_trimmed(p_body, 'title');
  if v_title is null then
    perform app_hidden.invalid('title', 'Le titre est obligatoire.', 'WV560');
  elsif length(v_title) > 200 then
    perform app_hidden.invalid('title', 'Au plus 200 caractères.', 'WV560');
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
comment on function app_public.employee_attachment_update(integer, integer, jsonb, text) is
'SPEC Permissions, PUT or PATCH /api/employees/<pk>/attachments/<id>/: a holder of
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
--! Included referentials/policies.sql
-- Referentials (divisions, establishments, contract types): readable by every authenticated
-- account (sql/org/policies.sql), written by staff accounts only (SPEC, Permissions rule 6).
do $$
declare
  t text;
begin
  foreach t in array array['divisions', 'establishments', 'contract_types'] loop
    execute format('drop policy if exists insert_staff on app_public.%I', t);
    execute format('create policy insert_staff on app_public.%I for insert to wfm_api
                    with check ((select app_hidden.current_account_is_staff()))', t);
    execute format('drop policy if exists update_staff on app_public.%I', t);
    execute format('create policy update_staff on app_public.%I for update to wfm_api
                    using ((select app_hidden.current_account_is_staff()))
                    with check ((select app_hidden.current_account_is_staff()))', t);
    execute format('drop policy if exists delete_staff on app_public.%I', t);
    execute format('create policy delete_staff on app_public.%I for delete to wfm_api
                    using ((select app_hidden.current_account_is_staff()))', t);
    execute format('create or replace trigger _500_audit after insert or update on app_public.%I
                    for each row execute function app_private.tg__audit(%L)', t, left(t, -1));
    execute format('create or replace trigger _500_audit_delete before delete on app_public.%I
                    for each row execute function app_private.tg__audit(%L)', t, left(t, -1));
  end loop;
end;
$$;
--! EndIncluded referentials/policies.sql
--! Included referentials/api.sql
-- /api/divisions/, /api/establishments/, /api/contract-types/: readable by every
-- authenticated account; written by staff accounts only (others 403). scope=perimeter
-- restricts divisions and establishments to the caller's establishments
-- (app_hidden.scope_establishment_ids).

create or replace function app_hidden.require_staff() returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les référentiels s''écrivent par les comptes du personnel d''administration uniquement.', 'WF510');
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
         then 'motifs d''absence' end
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

create or replace function app_hidden.division_name(p_body jsonb, p_id int) returns text
language plpgsql stable as $$
declare
  v_name text := app_hidden.in_trimmed(p_body, 'name');
begin
  if v_name is null then
    perform app_hidden.invalid('name', 'Le nom est obligatoire.', 'WV510');
  elsif length(v_name) > 150 then
    perform app_hidden.invalid('name', 'Au plus 150 caractères.', 'WV510');
  elsif exists (select 1 from app_public.divisions d where lower(d.name) = lower(v_name) and d.id is distinct from p_id) then
    perform app_hidden.invalid('name', format('Une division s''appelle déjà « %s ».', v_name), 'WV510');
  end if;
  return v_name;
end;
$$;

create or replace function app_public.division_create(p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  perform app_hidden.require_staff();
  insert into app_public.divisions (name) values (app_hidden.division_name(p_body, null)) returning id into v_id;
  return app_public.division_get(v_id);
end;
$$;
comment on function app_public.division_create(jsonb) is
'SPEC Permissions rule 6, POST /api/divisions/: a staff account creates a division (name required, at
most 150 characters, unique whatever the case); others get 403.';

-- PATCH /api/divisions/<id>/
create or replace function app_public.division_update(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_row app_public.divisions;
begin
  perform app_hidden.require_staff();
  select * into v_row from app_public.divisions d where d.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Division introuvable.');
  end if;
  if p_body ? 'name' then
    update app_public.divisions d set name = app_hidden.division_name(p_body, p_id)
    where d.id = p_id and d.name is distinct from app_hidden.division_name(p_body, p_id);
  end if;
  return app_public.division_get(p_id);
end;
$$;
comment on function app_public.division_update(integer, jsonb) is
'SPEC Permissions rule 6, PATCH /api/divisions/<id>/: a staff account renames a division (only the keys
sent; same name rules as the creation); others get 403.';

-- PUT /api/divisions/<id>/ (name required)
create or replace function app_public.division_replace(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_row app_public.divisions;
begin
  perform app_hidden.require_staff();
  select * into v_row from app_public.divisions d where d.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Division introuvable.');
  end if;
  update app_public.divisions d set name = app_hidden.division_name(p_body, p_id)
  where d.id = p_id and d.name is distinct from app_hidden.division_name(p_body, p_id);
  return app_public.division_get(p_id);
end;
$$;
comment on function app_public.division_replace(integer, jsonb) is
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

-- Creation and update (PUT: name required; PATCH: only the keys sent).
create or replace function app_hidden.establishment_save(p_id int, p_body jsonb, p_partial boolean) returns int
language plpgsql volatile as $$
declare
  v_old app_public.establishments;
  v_errors jsonb := '{}';
  v_name text;
  v_base text;
  v_division int;
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    select * into v_old from app_public.establishments e where e.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Établissement introuvable.');
    end if;
  end if;
  v_name := coalesce(app_hidden.in_trimmed(p_body, 'name'), case when p_body ? 'name' then null else v_old.name end);
  if (p_id is null or not p_partial or p_body ? 'name') and app_hidden.in_trimmed(p_body, 'name') is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le nom est obligatoire.');
  elsif length(v_name) > 150 then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Au plus 150 caractères.');
  elsif exists (select 1 from app_public.establishments e where lower(e.name) = lower(v_name) and e.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'name', format('Un établissement s''appelle déjà « %s ».', v_name));
  end if;
  v_base := coalesce(app_hidden.in_text(p_body, 'count_base'), v_old.count_base, 'ouvrables');
  if v_base not in ('ouvrables', 'ouvres') then
    v_errors := app_hidden.add_error(v_errors, 'count_base',
      'Base de décompte invalide : « ouvrables » (lundi au samedi) ou « ouvres » (lundi au vendredi).');
  end if;
  v_division := case when p_body ? 'division' then app_hidden.in_int(p_body, 'division') else v_old.division_id end;
  if p_body ? 'division' and v_division is not null
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

create or replace function app_public.establishment_create(p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.establishment_save(null, p_body, false);
  return app_public.establishment_get(v_id);
end;
$$;
comment on function app_public.establishment_create(jsonb) is
'SPEC Permissions rule 6, POST /api/establishments/: a staff account creates an establishment (name
required and unique, count base ouvrables or ouvres for declaration rule 1, optional division); all
field errors at once; others get 403.';

-- PATCH /api/establishments/<id>/
create or replace function app_public.establishment_update(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.establishment_save(p_id, p_body, true);
  return app_public.establishment_get(v_id);
end;
$$;
comment on function app_public.establishment_update(integer, jsonb) is
'SPEC Permissions rule 6, PATCH /api/establishments/<id>/: a staff account changes the keys sent of an
establishment (name, count base, division), under the creation rules; others get 403.';

-- PUT /api/establishments/<id>/ (name required)
create or replace function app_public.establishment_replace(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.establishment_save(p_id, p_body, false);
  return app_public.establishment_get(v_id);
end;
$$;
comment on function app_public.establishment_replace(integer, jsonb) is
'SPEC Permissions rule 6, PUT /api/establishments/<id>/: a staff account rewrites an establishment (name
required), under the creation rules; others get 403.';

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

create or replace function app_hidden.contract_type_save(p_id int, p_body jsonb, p_partial boolean) returns int
language plpgsql volatile as $$
declare
  v_old app_public.contract_types;
  v_errors jsonb := '{}';
  v_code text;
  v_name text;
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
  v_code := coalesce(app_hidden.in_trimmed(p_body, 'code'), case when p_body ? 'code' then null else v_old.code end);
  if (p_id is null or not p_partial or p_body ? 'code') and app_hidden.in_trimmed(p_body, 'code') is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif not (p_id is null or not p_partial or p_body ? 'code') then
    null;  -- the code is not being written
  elsif v_code !~ '^[A-Za-z0-9À-ÖØ-öø-ÿ][A-Za-z0-9À-ÖØ-öø-ÿ _+''\-]{0,29}$' then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 30 caractères, lettres, chiffres, espaces et _ + '' -.');
  elsif exists (select 1 from app_public.contract_types t where lower(t.code) = lower(v_code) and t.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé.', v_code));
  end if;
  v_name := coalesce(app_hidden.in_trimmed(p_body, 'name'), case when p_body ? 'name' then null else v_old.name end);
  if (p_id is null or not p_partial or p_body ? 'name') and app_hidden.in_trimmed(p_body, 'name') is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le libellé est obligatoire.');
  elsif length(v_name) > 150 then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Au plus 150 caractères.');
  end if;
  v_temporary := coalesce(app_hidden.in_bool(p_body, 'is_temporary_work'), v_old.is_temporary_work, false);
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

create or replace function app_public.contract_type_create(p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.contract_type_save(null, p_body, false);
  return app_public.contract_type_get(v_id);
end;
$$;
comment on function app_public.contract_type_create(jsonb) is
'SPEC Permissions rule 6, POST /api/contract-types/: a staff account creates a contract type (code unique
whatever the case, name required, is_temporary_work); all field errors at once; others get 403.';

-- PATCH /api/contract-types/<id>/
create or replace function app_public.contract_type_update(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.contract_type_save(p_id, p_body, true);
  return app_public.contract_type_get(v_id);
end;
$$;
comment on function app_public.contract_type_update(integer, jsonb) is
'SPEC Permissions rule 6, PATCH /api/contract-types/<id>/: a staff account changes the keys sent of a
contract type, under the creation rules; others get 403.';

-- PUT /api/contract-types/<id>/ (code and name required)
create or replace function app_public.contract_type_replace(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.contract_type_save(p_id, p_body, false);
  return app_public.contract_type_get(v_id);
end;
$$;
comment on function app_public.contract_type_replace(integer, jsonb) is
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
--! Included teams/policies.sql
-- Teams: readable by every authenticated account (sql/org/policies.sql); written (edit,
-- delete, replace members, add a member, create) with employee.change_team, bounded to the
-- teams having at least one establishment in the writer's perimeter (SPEC, Permissions
-- rule 7).
--
-- | permission           | roles                                          |
-- |----------------------|------------------------------------------------|
-- | employee.change_team | Admin, RH n1, RH n2, DA, Manager n1, Manager n2 |
--
-- Team members are team_assignments: written through the team routes with this permission
-- (on employees of its perimeter), and through the employee record with
-- employee.change_employee_record (sql/employees/policies.sql).
-- Teams with at least one establishment in the perimeter of the permission (p_entirely:
-- every establishment in it). A perimeter of the whole association covers every team.
create or replace function app_hidden.team_ids_in_perimeter(p_permission text, p_entirely boolean default false)
returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with scope as (
    select app_hidden.perimeter_establishment_ids(p_permission) as ids,
           app_hidden.current_account_has(p_permission) as allowed
  )
  select t.id
  from app_public.teams t, scope
  where scope.allowed
    and (scope.ids is null
         or (not p_entirely and exists (select 1 from app_public.team_establishments te
                                        where te.team_id = t.id and te.establishment_id = any (scope.ids)))
         or (p_entirely and exists (select 1 from app_public.team_establishments te where te.team_id = t.id)
                        and not exists (select 1 from app_public.team_establishments te
                                        where te.team_id = t.id and not te.establishment_id = any (scope.ids))));
$$;

drop policy if exists insert_record_writer on app_public.teams;
create policy insert_record_writer on app_public.teams for insert to wfm_api
  with check ((select app_hidden.current_account_has('employee.change_team')));
drop policy if exists update_in_perimeter on app_public.teams;
create policy update_in_perimeter on app_public.teams for update to wfm_api
  using (id in (select app_hidden.team_ids_in_perimeter('employee.change_team')))
  with check (id in (select app_hidden.team_ids_in_perimeter('employee.change_team')));
drop policy if exists delete_entirely_in_perimeter on app_public.teams;
create policy delete_entirely_in_perimeter on app_public.teams for delete to wfm_api
  using (id in (select app_hidden.team_ids_in_perimeter('employee.change_team', true)));

-- An establishment is attached to or detached from a team only within the perimeter.
drop policy if exists insert_in_perimeter on app_public.team_establishments;
create policy insert_in_perimeter on app_public.team_establishments for insert to wfm_api
  with check ((select app_hidden.current_account_has('employee.change_team'))
              and ((select app_hidden.perimeter_establishment_ids('employee.change_team')) is null
                   or establishment_id = any (coalesce((select app_hidden.perimeter_establishment_ids('employee.change_team')), '{}'))));
drop policy if exists delete_in_perimeter on app_public.team_establishments;
create policy delete_in_perimeter on app_public.team_establishments for delete to wfm_api
  using ((select app_hidden.current_account_has('employee.change_team'))
         and ((select app_hidden.perimeter_establishment_ids('employee.change_team')) is null
              or establishment_id = any (coalesce((select app_hidden.perimeter_establishment_ids('employee.change_team')), '{}'))));

create or replace trigger _500_audit after insert or update on app_public.teams
  for each row execute function app_private.tg__audit('team');
create or replace trigger _500_audit_delete before delete on app_public.teams
  for each row execute function app_private.tg__audit('team');
create or replace trigger _500_audit after insert or update on app_public.team_establishments
  for each row execute function app_private.tg__audit_child('team_establishment', 'team_id');
create or replace trigger _500_audit_delete before delete on app_public.team_establishments
  for each row execute function app_private.tg__audit_child('team_establishment', 'team_id');

-- Members written through the team routes.
drop policy if exists insert_team_writer on app_public.team_assignments;
create policy insert_team_writer on app_public.team_assignments for insert to wfm_api
  with check (employee_id in (select app_hidden.perimeter_employee_ids('employee.change_team')));
drop policy if exists update_team_writer on app_public.team_assignments;
create policy update_team_writer on app_public.team_assignments for update to wfm_api
  using (team_id in (select app_hidden.team_ids_in_perimeter('employee.change_team')))
  with check (team_id in (select app_hidden.team_ids_in_perimeter('employee.change_team')));
drop policy if exists delete_team_writer on app_public.team_assignments;
create policy delete_team_writer on app_public.team_assignments for delete to wfm_api
  using (team_id in (select app_hidden.team_ids_in_perimeter('employee.change_team')));
--! EndIncluded teams/policies.sql
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
    perform app_hidden.forbidden('Vous n''avez pas le droit de modifier les équipes.', 'WF520');
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

-- Name and establishments of a creation or an update (PUT/creation: both required).
create or replace function app_hidden.team_save(p_id int, p_body jsonb, p_partial boolean) returns int
language plpgsql volatile as $$
declare
  v_team app_public.teams;
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_team');
  v_errors jsonb := '{}';
  v_name text;
  v_establishments int[];
  v_old_establishments int[] := '{}';
  v_outside text;
  v_id int := p_id;
begin
  if p_id is null then
    if not app_hidden.current_account_has('employee.change_team') then
      perform app_hidden.forbidden('Vous n''avez pas le droit de créer une équipe.', 'WF520');
    end if;
  else
    v_team := app_hidden.team_for_write(p_id);
    v_old_establishments := array(select te.establishment_id from app_public.team_establishments te where te.team_id = p_id);
  end if;

  v_name := coalesce(app_hidden.in_trimmed(p_body, 'name'), case when p_body ? 'name' then null else v_team.name end);
  if (p_id is null or not p_partial or p_body ? 'name') and app_hidden.in_trimmed(p_body, 'name') is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le nom de l''équipe est obligatoire.');
  elsif length(v_name) > 150 then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Au plus 150 caractères.');
  end if;

  v_establishments := app_hidden.in_ids(p_body, 'establishments');
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
create or replace function app_public.team_create(p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.team_save(null, p_body, false);
  return app_public.team_get(v_id);
end;
$$;
comment on function app_public.team_create(jsonb) is
'SPEC Permissions rule 7, POST /api/teams/: a holder of employee.change_team creates a team (name and
establishments required; an establishment outside its perimeter is refused under establishments).';

-- PATCH /api/teams/<id>/: only the keys sent.
create or replace function app_public.team_update(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.team_save(p_id, p_body, true);
  return app_public.team_get(v_id);
end;
$$;
comment on function app_public.team_update(integer, jsonb) is
'SPEC Permissions rule 7, PATCH /api/teams/<id>/: the keys sent of a team with an establishment in the
writer''s perimeter (else 404; 403 without employee.change_team).';

-- PUT /api/teams/<id>/: name and establishments required.
create or replace function app_public.team_replace(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.team_save(p_id, p_body, false);
  return app_public.team_get(v_id);
end;
$$;
comment on function app_public.team_replace(integer, jsonb) is
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
      perform app_hidden.forbidden(format('Cette équipe s''étend aussi hors de votre périmètre (%s) : '
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

-- One member of a body: employee (required), start_date (default today), end_date. Raises
-- 400 under p_field, or 403 for an employee outside the perimeter.
create or replace function app_hidden.team_member_input(p_item jsonb, p_field text, p_label text)
returns table (employee_id int, start_date date, end_date date, has_start boolean)
language plpgsql stable as $$
declare
  v_name text;
begin
  if jsonb_typeof(p_item) is distinct from 'object' then
    perform app_hidden.invalid(p_field, p_label || 'un objet est attendu.', 'WV520');
  end if;
  employee_id := app_hidden.in_int(p_item, 'employee', p_field);
  start_date := app_hidden.in_date(p_item, 'start_date', p_field);
  end_date := app_hidden.in_date(p_item, 'end_date', p_field);
  has_start := p_item ? 'start_date';
  if employee_id is null then
    perform app_hidden.invalid(p_field, p_label || 'le salarié est obligatoire.', 'WV520');
  end if;
  select n.name into v_name from app_hidden.employee_names(array[employee_id]) n;
  if v_name is null then
    perform app_hidden.invalid(p_field, p_label || format('salarié n° %s introuvable.', employee_id), 'WV520');
  end if;
  if end_date < coalesce(start_date, app_hidden.today()) then
    perform app_hidden.invalid(p_field, p_label || 'la date de fin précède la date de début.', 'WV520');
  end if;
  return next;
end;
$$;

create or replace function app_hidden.require_member_in_perimeter(p_employee int) returns void
language plpgsql stable as $$
begin
  if not app_hidden.may(app_hidden.current_account_id(), 'employee.change_team', p_employee) then
    perform app_hidden.forbidden(format('%s n''est pas dans votre périmètre : vous ne pouvez pas l''ajouter à cette équipe.',
                                        (select n.name from app_hidden.employee_names(array[p_employee]) n)), 'WF522');
  end if;
end;
$$;

-- POST /api/teams/<id>/members/ {"employee", "start_date"?, "end_date"?}
create or replace function app_public.team_member_add(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_member record;
begin
  perform app_hidden.team_for_write(p_id);
  select * into v_member from app_hidden.team_member_input(p_body, 'employee', '');
  perform app_hidden.require_member_in_perimeter(v_member.employee_id);
  if exists (select 1 from app_public.team_assignments ta
             where ta.team_id = p_id and ta.employee_id = v_member.employee_id
               and daterange(ta.start_date, ta.end_date, '[]')
                   && daterange(coalesce(v_member.start_date, app_hidden.today()), v_member.end_date, '[]')) then
    perform app_hidden.invalid('employee', 'Ce salarié fait déjà partie de cette équipe sur cette période.', 'WV520');
  end if;
  insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
  values (v_member.employee_id, p_id, coalesce(v_member.start_date, app_hidden.today()), v_member.end_date);
  return app_public.team_get(p_id);
end;
$$;
comment on function app_public.team_member_add(integer, jsonb) is
'SPEC Permissions rule 7, POST /api/teams/<id>/members/: adds an employee of the writer''s perimeter to a
team of its perimeter (403 outside), from today unless a start is given.';

-- PUT /api/teams/<id>/members/ {"members": [{"employee", "start_date"?, "end_date"?}, ...]}:
-- the list becomes the team's current and future members. A member kept keeps its
-- assignment (dates updated when sent); a new member starts today unless a start is given;
-- a member left out leaves the team yesterday (an assignment not yet started is deleted).
create or replace function app_public.team_members_replace(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_items jsonb;
  v_member record;
  v_today date := app_hidden.today();
  v_current app_public.team_assignments;
  v_employees int[] := '{}';
  i int;
begin
  perform app_hidden.team_for_write(p_id);
  v_items := app_hidden.in_array(p_body, 'members');
  if v_items is null then
    perform app_hidden.invalid('members', 'La liste des membres est obligatoire (une liste vide retire tous les membres).', 'WV520');
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
--! Included events/access.sql
-- Who reads and writes events (SPEC "Documents and other routes": /api/events/ restricted to
-- the perimeter without a parameter).
--
-- | permission         | roles                                          |
-- |--------------------|------------------------------------------------|
-- | events.change_event | Admin, RH n1, RH n2, DA, Manager n1, Manager n2 |
--
-- Reading: every account reads the events it created or takes part in; holders of
-- employee.view_employee_directory read every event (the list restricts them to their
-- perimeter unless scope=all). Writing: holders of events.change_event write the events
-- they created and those of an establishment of their perimeter.
create or replace function app_hidden.readable_event_ids() returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select ev.id from app_public.events ev where app_hidden.current_account_has('employee.view_employee_directory')
  union
  select ev.id from app_public.events ev where ev.created_by = app_hidden.current_account_id()
  union
  select ep.event_id from app_public.event_participants ep where ep.employee_id = app_hidden.current_employee_id();
$$;

create or replace function app_hidden.writable_event_ids() returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with scope as (
    select app_hidden.perimeter_establishment_ids('events.change_event') as ids,
           app_hidden.current_account_has('events.change_event') as allowed
  )
  select ev.id from app_public.events ev, scope
  where scope.allowed
    and (scope.ids is null or ev.created_by = app_hidden.current_account_id() or ev.establishment_id = any (scope.ids));
$$;

-- May the caller place an event in this establishment (null: no establishment)?
create or replace function app_hidden.event_establishment_allowed(p_establishment int) returns boolean
language sql stable as $$
  select p_establishment is null
      or app_hidden.in_scope(p_establishment, app_hidden.perimeter_establishment_ids('events.change_event'));
$$;

-- The establishment an event has before an update (read without RLS: a policy of events may
-- not query events itself).
create or replace function app_hidden.event_stored_establishment(p_id int) returns int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select ev.establishment_id from app_public.events ev where ev.id = p_id;
$$;

drop policy if exists select_readable on app_public.events;
create policy select_readable on app_public.events for select to wfm_visitor, wfm_api
  using (id in (select app_hidden.readable_event_ids()));
drop policy if exists insert_writer on app_public.events;
create policy insert_writer on app_public.events for insert to wfm_api
  with check ((select app_hidden.current_account_has('events.change_event'))
              and created_by = (select app_hidden.current_account_id())
              and app_hidden.event_establishment_allowed(establishment_id));
drop policy if exists update_writable on app_public.events;
create policy update_writable on app_public.events for update to wfm_api
  using (id in (select app_hidden.writable_event_ids()))
  with check (app_hidden.event_establishment_allowed(establishment_id)
              or establishment_id is not distinct from app_hidden.event_stored_establishment(id));
drop policy if exists delete_writable on app_public.events;
create policy delete_writable on app_public.events for delete to wfm_api
  using (id in (select app_hidden.writable_event_ids()));

drop policy if exists select_readable on app_public.event_participants;
create policy select_readable on app_public.event_participants for select to wfm_visitor, wfm_api
  using (event_id in (select app_hidden.readable_event_ids()));
drop policy if exists insert_writable on app_public.event_participants;
create policy insert_writable on app_public.event_participants for insert to wfm_api
  with check (event_id in (select app_hidden.writable_event_ids()));
drop policy if exists delete_writable on app_public.event_participants;
create policy delete_writable on app_public.event_participants for delete to wfm_api
  using (event_id in (select app_hidden.writable_event_ids()));

create index if not exists events_created_by_idx on app_public.events (created_by);

create or replace trigger _500_audit after insert or update on app_public.events
  for each row execute function app_private.tg__audit('event');
create or replace trigger _500_audit_delete before delete on app_public.events
  for each row execute function app_private.tg__audit('event');
create or replace trigger _500_audit after insert or update on app_public.event_participants
  for each row execute function app_private.tg__audit_child('event_participant', 'event_id');
create or replace trigger _500_audit_delete before delete on app_public.event_participants
  for each row execute function app_private.tg__audit_child('event_participant', 'event_id');
--! EndIncluded events/access.sql
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
    perform app_hidden.forbidden('Vous n''avez pas le droit de créer des événements.', 'WF530');
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
        format('%s a une absence %s %s qui chevauche l''événement « %s » du %s.',
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

-- Validation and write of an event (creation: p_id null). Returns the event id.
create or replace function app_hidden.event_save(p_id int, p_body jsonb, p_partial boolean) returns int
language plpgsql volatile as $$
declare
  v_old app_public.events;
  v_errors jsonb := '{}';
  v_title text;
  v_description text;
  v_establishment int;
  v_start timestamptz;
  v_end timestamptz;
  v_participants int[];
  v_missing text;
  v_id int := p_id;
begin
  if p_id is not null then
    select * into v_old from app_public.events ev where ev.id = p_id;
    if not found then
      perform app_hidden.not_found('Événement introuvable.');
    end if;
  end if;
  if not app_hidden.current_account_has('events.change_event') then
    perform app_hidden.forbidden('Vous n''avez pas le droit de créer ou de modifier des événements.', 'WF530');
  end if;
  if p_id is not null then
    if not p_id in (select app_hidden.writable_event_ids()) then
      perform app_hidden.forbidden('Vous ne modifiez que les événements que vous avez créés ou ceux d''un établissement de votre périmètre.', 'WF531');
    end if;
    perform 1 from app_public.events ev where ev.id = p_id for update;
  end if;

  v_title := coalesce(app_hidden.in_trimmed(p_body, 'title'), case when p_body ? 'title' then null else v_old.title end);
  if (p_id is null or not p_partial or p_body ? 'title') and app_hidden.in_trimmed(p_body, 'title') is null then
    v_errors := app_hidden.add_error(v_errors, 'title', 'Le titre est obligatoire.');
  elsif length(v_title) > 200 then
    v_errors := app_hidden.add_error(v_errors, 'title', 'Au plus 200 caractères.');
  end if;
  v_description := case when p_body ? 'description' then app_hidden.in_trimmed(p_body, 'description') else v_old.description end;
  if length(v_description) > 5000 then
    v_errors := app_hidden.add_error(v_errors, 'description', 'Au plus 5000 caractères.');
  end if;

  v_start := case when p_body ? 'start_at' then app_hidden.in_timestamptz(p_body, 'start_at') else v_old.start_at end;
  v_end := case when p_body ? 'end_at' then app_hidden.in_timestamptz(p_body, 'end_at') else v_old.end_at end;
  if v_start is null then
    v_errors := app_hidden.add_error(v_errors, 'start_at', 'Le début est obligatoire.');
  end if;
  if v_end is null then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin est obligatoire.');
  elsif v_end <= v_start then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin doit suivre le début.');
  end if;

  v_establishment := case when p_body ? 'establishment' then app_hidden.in_int(p_body, 'establishment') else v_old.establishment_id end;
  if p_body ? 'establishment' and v_establishment is not null then
    if not exists (select 1 from app_public.establishments e where e.id = v_establishment) then
      v_errors := app_hidden.add_error(v_errors, 'establishment', format('Établissement n° %s introuvable.', v_establishment));
    elsif v_establishment is distinct from v_old.establishment_id
          and not app_hidden.event_establishment_allowed(v_establishment) then
      v_errors := app_hidden.add_error(v_errors, 'establishment', 'Cet établissement n''est pas dans votre périmètre.');
    end if;
  end if;

  v_participants := app_hidden.in_ids(p_body, 'participants');
  if v_participants is null and p_id is null then
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
    and not exists (select 1 from app_public.event_participants ep where ep.event_id = p_id and ep.employee_id = x.id)
    and not exists (select 1 from app_hidden.perimeter_employee_ids('events.change_event') pe(id) where pe.id = x.id);
  if v_missing is not null then
    perform app_hidden.not_found(format('Salarié introuvable dans votre périmètre : %s.', v_missing), 'WN530');
  end if;

  if p_id is null then
    insert into app_public.events (title, description, establishment_id, start_at, end_at, created_by)
    values (v_title, v_description, v_establishment, v_start, v_end, app_hidden.current_account_id());
    -- Not RETURNING: the new row is not yet in the snapshot the read policy consults.
    v_id := currval(pg_get_serial_sequence('app_public.events', 'id'));
  else
    update app_public.events ev
    set title = v_title, description = v_description, establishment_id = v_establishment, start_at = v_start, end_at = v_end
    where ev.id = p_id
      and (ev.title, ev.description, ev.establishment_id, ev.start_at, ev.end_at)
          is distinct from (v_title, v_description, v_establishment, v_start, v_end);
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

-- POST /api/events/
create or replace function app_public.event_create(p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
  v_warnings jsonb;
begin
  v_id := app_hidden.event_save(null, p_body, false);
  v_warnings := app_private.event_conflicts_alert(v_id, '{}');
  return app_public.event_get(v_id) || jsonb_build_object('warnings', v_warnings);
end;
$$;
comment on function app_public.event_create(jsonb) is
'SPEC Events rule 4, POST /api/events/: a holder of events.change_event creates an event whose
participants are itself or employees of its perimeter (else 404); an overlapping absence of a
participant answers in warnings and alerts its author and deciders in the same transaction.';

-- PATCH /api/events/<id>/: only the keys sent.
create or replace function app_public.event_update(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_known int[];
  v_warnings jsonb;
begin
  v_known := array(select c.absence_id from app_private.event_absence_conflicts(p_id) c
                   where p_id in (select app_hidden.readable_event_ids()));
  perform app_hidden.event_save(p_id, p_body, true);
  v_warnings := app_private.event_conflicts_alert(p_id, v_known);
  return app_public.event_get(p_id) || jsonb_build_object('warnings', v_warnings);
end;
$$;
comment on function app_public.event_update(integer, jsonb) is
'SPEC Events rule 4, PATCH /api/events/<id>/: a holder of events.change_event changes the keys sent of an
event it created or of an establishment of its perimeter (else 403); only the absence conflicts the
update creates are alerted.';

-- PUT /api/events/<id>/: title, start_at and end_at required.
create or replace function app_public.event_replace(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_known int[];
  v_warnings jsonb;
begin
  v_known := array(select c.absence_id from app_private.event_absence_conflicts(p_id) c
                   where p_id in (select app_hidden.readable_event_ids()));
  perform app_hidden.event_save(p_id, p_body, false);
  v_warnings := app_private.event_conflicts_alert(p_id, v_known);
  return app_public.event_get(p_id) || jsonb_build_object('warnings', v_warnings);
end;
$$;
comment on function app_public.event_replace(integer, jsonb) is
'SPEC Events rule 4, PUT /api/events/<id>/: as PATCH, with title, start_at and end_at required.';

-- DELETE /api/events/<id>/
create or replace function app_public.event_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.events ev where ev.id = p_id) then
    perform app_hidden.not_found('Événement introuvable.');
  end if;
  if not app_hidden.current_account_has('events.change_event') then
    perform app_hidden.forbidden('Vous n''avez pas le droit de supprimer des événements.', 'WF530');
  end if;
  if not p_id in (select app_hidden.writable_event_ids()) then
    perform app_hidden.forbidden('Vous ne supprimez que les événements que vous avez créés ou ceux d''un établissement de votre périmètre.', 'WF531');
  end if;
  delete from app_public.events ev where ev.id = p_id;
  return null;
end;
$$;
comment on function app_public.event_delete(integer) is
'SPEC Events, DELETE /api/events/<id>/: a holder of events.change_event deletes an event it created or of
an establishment of its perimeter (else 403; 404 when not read).';
--! EndIncluded events/api.sql
--! Included on_call/access.sql
-- On-call periods (astreintes): who reads and writes them (SPEC, Permissions rule 9).
--
-- | permission                    | roles                                                        |
-- |-------------------------------|--------------------------------------------------------------|
-- | on_call.view_on_call_period   | Admin, RH n1, RH n2, DA, Manager n1, Manager n2, Service Paie |
-- | on_call.change_on_call_period | Admin, RH n1, RH n2, DA, Manager n1, Manager n2               |
--
-- The routes follow the caller's perimeter of these permissions; Salarié and Intérimaire
-- hold neither (403). A period extends the perimeter of the manager roles of its account
-- over its establishments during [start_at, end_at) (app_hidden.permission_scope).
-- One account is never on call twice at the same time.
do $$
begin
  if not exists (select 1 from pg_constraint
                 where conname = 'on_call_periods_no_overlap' and conrelid = 'app_public.on_call_periods'::regclass) then
    alter table app_public.on_call_periods
      add constraint on_call_periods_no_overlap exclude using gist (account_id with =, tstzrange(start_at, end_at) with &&);
  end if;
end;
$$;

-- Periods with at least one establishment in the permission's perimeter (p_entirely: all
-- of them). Null scope (whole association): every period.
create or replace function app_hidden.on_call_period_ids_in_perimeter(p_permission text, p_entirely boolean default false)
returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with scope as (
    select app_hidden.perimeter_establishment_ids(p_permission) as ids,
           app_hidden.current_account_has(p_permission) as allowed
  )
  select op.id from app_public.on_call_periods op, scope
  where scope.allowed
    and (scope.ids is null
         or (not p_entirely and exists (select 1 from app_public.on_call_period_establishments ope
                                        where ope.period_id = op.id and ope.establishment_id = any (scope.ids)))
         or (p_entirely and not exists (select 1 from app_public.on_call_period_establishments ope
                                        where ope.period_id = op.id and not ope.establishment_id = any (scope.ids))));
$$;

-- Readers: one's own periods; directory holders (managers see who is on call); holders of
-- the view permission on their perimeter; and every account for the periods covering its
-- own workplaces (the planning shows the on-call periods of one's teams).
create or replace function app_hidden.readable_on_call_period_ids() returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select op.id from app_public.on_call_periods op where op.account_id = app_hidden.current_account_id()
  union
  select op.id from app_public.on_call_periods op where app_hidden.current_account_has('employee.view_employee_directory')
  union
  select app_hidden.on_call_period_ids_in_perimeter('on_call.view_on_call_period')
  union
  select ope.period_id from app_public.on_call_period_establishments ope
  where ope.establishment_id in (select app_hidden.employee_establishments(app_hidden.current_employee_id(), app_hidden.today()));
$$;

drop policy if exists select_readable on app_public.on_call_periods;
create policy select_readable on app_public.on_call_periods for select to wfm_visitor, wfm_api
  using (id in (select app_hidden.readable_on_call_period_ids()));
drop policy if exists insert_writer on app_public.on_call_periods;
create policy insert_writer on app_public.on_call_periods for insert to wfm_api
  with check ((select app_hidden.current_account_has('on_call.change_on_call_period')));
drop policy if exists update_in_perimeter on app_public.on_call_periods;
create policy update_in_perimeter on app_public.on_call_periods for update to wfm_api
  using (id in (select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period', true)))
  with check (id in (select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period', true)));
drop policy if exists delete_in_perimeter on app_public.on_call_periods;
create policy delete_in_perimeter on app_public.on_call_periods for delete to wfm_api
  using (id in (select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period', true)));

drop policy if exists select_readable on app_public.on_call_period_establishments;
create policy select_readable on app_public.on_call_period_establishments for select to wfm_visitor, wfm_api
  using (period_id in (select app_hidden.readable_on_call_period_ids()));
drop policy if exists insert_in_perimeter on app_public.on_call_period_establishments;
create policy insert_in_perimeter on app_public.on_call_period_establishments for insert to wfm_api
  with check ((select app_hidden.current_account_has('on_call.change_on_call_period'))
              and app_hidden.in_scope(establishment_id, (select app_hidden.perimeter_establishment_ids('on_call.change_on_call_period'))));
drop policy if exists delete_in_perimeter on app_public.on_call_period_establishments;
create policy delete_in_perimeter on app_public.on_call_period_establishments for delete to wfm_api
  using ((select app_hidden.current_account_has('on_call.change_on_call_period'))
         and app_hidden.in_scope(establishment_id, (select app_hidden.perimeter_establishment_ids('on_call.change_on_call_period'))));

create or replace trigger _500_audit after insert or update on app_public.on_call_periods
  for each row execute function app_private.tg__audit('on_call_period');
create or replace trigger _500_audit_delete before delete on app_public.on_call_periods
  for each row execute function app_private.tg__audit('on_call_period');
create or replace trigger _500_audit after insert or update on app_public.on_call_period_establishments
  for each row execute function app_private.tg__audit_child('on_call_period_establishment', 'period_id');
create or replace trigger _500_audit_delete before delete on app_public.on_call_period_establishments
  for each row execute function app_private.tg__audit_child('on_call_period_establishment', 'period_id');
--! EndIncluded on_call/access.sql
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
    perform app_hidden.forbidden('Vous n''avez pas accès aux astreintes.', 'WF540');
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

create or replace function app_hidden.on_call_period_save(p_id int, p_body jsonb, p_partial boolean) returns int
language plpgsql volatile as $$
declare
  v_old app_public.on_call_periods;
  v_scope int[] := app_hidden.perimeter_establishment_ids('on_call.change_on_call_period');
  v_errors jsonb := '{}';
  v_account int;
  v_start timestamptz;
  v_end timestamptz;
  v_comment text;
  v_establishments int[];
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

  v_account := case when p_body ? 'account' then app_hidden.in_int(p_body, 'account') else v_old.account_id end;
  v_start := case when p_body ? 'start_at' then app_hidden.in_timestamptz(p_body, 'start_at') else v_old.start_at end;
  v_end := case when p_body ? 'end_at' then app_hidden.in_timestamptz(p_body, 'end_at') else v_old.end_at end;
  if v_account is null then
    v_errors := app_hidden.add_error(v_errors, 'account', 'Le compte d''astreinte est obligatoire.');
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
        'Ce compte ne détient aucun rôle d''encadrement à cette date : une astreinte étend le périmètre d''un rôle existant.');
    end if;
  end if;
  if v_account is not null and v_end > v_start then
    select * into v_overlap from app_private.on_call_overlap(v_account, v_start, v_end, p_id);
    if v_overlap.id is not null then
      v_errors := app_hidden.add_error(v_errors, 'start_at',
        format('Ce compte est déjà d''astreinte sur cette période (astreinte n° %s, du %s au %s).', v_overlap.id,
               to_char(v_overlap.start_at at time zone app_hidden.business_timezone(), 'DD/MM/YYYY HH24:MI'),
               to_char(v_overlap.end_at at time zone app_hidden.business_timezone(), 'DD/MM/YYYY HH24:MI')));
    end if;
  end if;

  v_comment := case when p_body ? 'comment' then app_hidden.in_trimmed(p_body, 'comment') else v_old.comment end;
  if length(v_comment) > 500 then
    v_errors := app_hidden.add_error(v_errors, 'comment', 'Au plus 500 caractères.');
  end if;

  v_establishments := app_hidden.in_ids(p_body, 'establishments');
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
    perform app_hidden.invalid('start_at', 'Ce compte est déjà d''astreinte sur cette période.', 'WV540');
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
create or replace function app_public.on_call_period_create(p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.on_call_period_save(null, p_body, false);
  return app_public.on_call_period_get(v_id);
end;
$$;
comment on function app_public.on_call_period_create(jsonb) is
'SPEC Permissions rule 9, POST /api/on-call-periods/: a writer of on-call periods (not Service Paie)
creates one for an active account holding a manager role, all its establishments in the writer''s
perimeter (else 403), not overlapping another period of that account; it extends that role''s perimeter
from start (inclusive) to end (exclusive).';

-- PATCH /api/on-call-periods/<id>/: only the keys sent.
create or replace function app_public.on_call_period_update(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.on_call_period_save(p_id, p_body, true);
  return app_public.on_call_period_get(v_id);
end;
$$;
comment on function app_public.on_call_period_update(integer, jsonb) is
'SPEC Permissions rule 9, PATCH /api/on-call-periods/<id>/: changes the keys sent of a period whose
establishments all lie in the writer''s perimeter (else 403), under the creation rules.';

-- PUT /api/on-call-periods/<id>/: account, start_at, end_at and establishments required.
create or replace function app_public.on_call_period_replace(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.on_call_period_save(p_id, p_body, false);
  return app_public.on_call_period_get(v_id);
end;
$$;
comment on function app_public.on_call_period_replace(integer, jsonb) is
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
--     movements written before the end of the month.

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
    perform app_hidden.forbidden('Vous n''avez pas accès à la consultation de la paie.', 'WF550');
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
    perform app_hidden.forbidden('Vous n''êtes pas autorisé à consulter la paie de cet établissement.', 'WF551');
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
                       order by c.sort_order, c.code) as list
      from counters c group by c.employee_id
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
create or replace function app_public.payroll_export(p_month text, p_establishment int default null, p_search text default null)
returns table (employee int, employee_name text, main_establishment_name text, contract_type text,
               contract_start date, contract_end date, job_title text, weekly_hours numeric,
               period_start date, period_end date, planned_hours numeric, absence_hours numeric, worked_hours numeric,
               absences text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select (l ->> 'employee')::int, l ->> 'employee_name', l ->> 'main_establishment_name',
         l -> 'contract' ->> 'type_name', (l -> 'contract' ->> 'start_date')::date, (l -> 'contract' ->> 'end_date')::date,
         l -> 'contract' ->> 'job_title', (l -> 'contract' ->> 'weekly_hours')::numeric,
         (l -> 'period' ->> 'start')::date, (l -> 'period' ->> 'end')::date,
         (l ->> 'planned_hours')::numeric, (l ->> 'absence_hours')::numeric, (l ->> 'worked_hours')::numeric,
         (select string_agg(format('%s : %s %s', r ->> 'type_name', replace(r ->> 'quantity', '.', ','),
                                   case r ->> 'unit' when 'hour' then 'h' else 'j' end), ' ; ' order by ord)
          from jsonb_array_elements(l -> 'absences') with ordinality as x(r, ord))
  from jsonb_array_elements(app_hidden.payroll_month(p_month, p_establishment, p_search, null, 0) -> 'results')
       with ordinality as lines(l, n)
  order by n;
$$;
comment on function app_public.payroll_export(text, integer, text) is
'SPEC Permissions rule 8 and issue 16 exports, GET /api/payroll/export/?month=&format=: every payroll line of the month
(the list''s rules and order), one row per contract, for the CSV or XLSX file; absences are their reasons'' totals, never
comments, decision reasons or documents.';
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
    perform app_hidden.forbidden('Le flux des absences du périmètre est réservé aux lecteurs des demandes d''absence.', 'WF701');
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
create or replace function app_public.calendar_feed_create(p_body jsonb, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_kind text := p_body->>'kind';
  v_token text;
begin
  perform app_hidden.calendar_feed_check(v_kind);
  v_token := app_private.calendar_feed_issue(app_hidden.current_account_id(), v_kind, false);
  if v_token is null then
    perform app_hidden.invalid('kind', 'Ce flux existe déjà : renouvelez son adresse ou supprimez-le.', 'WV701');
  end if;
  return app_hidden.calendar_feed_answer(v_kind, v_token, p_public_url);
end;
$$;
comment on function app_public.calendar_feed_create(jsonb, text) is 'SPEC (issue 16) calendar feeds, POST /api/calendar-feeds/: creates the acting account''s feed of a kind (one per kind; "perimeter" only for queue readers) and returns its secret address, shown this once.';

-- POST /api/calendar-feeds/{kind}/rotate/: a new secret; the old address answers 404.
create or replace function app_public.calendar_feed_rotate(p_kind text, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_token text;
begin
  perform app_hidden.calendar_feed_check(p_kind);
  v_token := app_private.calendar_feed_issue(app_hidden.current_account_id(), p_kind, true);
  if v_token is null then
    perform app_hidden.not_found('Aucun flux de ce type : créez-le d''abord.', 'WN701');
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
--! Included counters/establishment.sql
-- Counters by establishment and year (issue 16): GET /api/counters/establishment/ (JSON) and
-- its export GET /api/counters/establishment/export/. One line per counter of each employee
-- attached to the establishment (main or secondary workplace, or team, today) whom the caller
-- reads in the queue perimeter (absences.view_absence_queue, as GET /api/counters/), with the
-- journal's balances: Acquis, Pris, Planifiés, Restant.

-- Refuses an unknown establishment, or one outside the caller's queue perimeter (404, WN302),
-- and a bad year (400, WV302). Returns true for use in a WHERE clause.
create or replace function app_hidden.counters_establishment_check(p_establishment int, p_year int) returns boolean
language plpgsql stable as $$
begin
  if p_establishment is null
     or not app_hidden.current_account_has('absences.view_absence_queue')
     or not exists (select 1 from app_public.establishments e where e.id = p_establishment)
     or not app_hidden.in_scope(p_establishment, app_hidden.perimeter_establishment_ids('absences.view_absence_queue')) then
    perform app_hidden.not_found('Établissement introuvable ou hors de votre périmètre.', 'WN302');
  end if;
  if p_year is null or p_year not between 2000 and 2100 then
    perform app_hidden.invalid('year', 'Année invalide : entre 2000 et 2100.', 'WV302');
  end if;
  return true;
end;
$$;

-- The lines, written once for the JSON route and the export. Security definer: the balances
-- come from the journal (app_private); the employees are those of the caller's perimeter.
create or replace function app_hidden.counters_establishment_selection(p_establishment int, p_year int)
returns table (employee int, employee_name text, code text, name text, unit text,
               acquired numeric, taken numeric, planned numeric, remaining numeric)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with employees as (
    select x.id
    from app_hidden.employees_of_establishments(array[p_establishment], app_hidden.today()) x(id)
    where app_hidden.counters_establishment_check(p_establishment, p_year)
      and x.id in (select p.id from app_hidden.perimeter_employee_ids('absences.view_absence_queue') p(id))
  )
  select b.employee_id, e.first_name || ' ' || e.last_name, b.code, b.name, b.unit,
         b.acquired, b.taken, b.planned, b.remaining
  from app_private.counter_balances_at(array(select m.id from employees m), p_year, 'infinity'::timestamptz) b
  join app_public.employees e on e.id = b.employee_id
  order by lower(e.last_name), lower(e.first_name), b.employee_id, b.sort_order, b.code;
$$;

-- GET /api/counters/establishment/?establishment=&year=
create or replace function app_public.counters_establishment(p_establishment int, p_year int default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_year int := coalesce(p_year, extract(year from app_hidden.today())::int);
begin
  perform app_hidden.counters_establishment_check(p_establishment, v_year);
  return jsonb_build_object(
    'establishment', p_establishment,
    'establishment_name', (select e.name from app_public.establishments e where e.id = p_establishment),
    'year', v_year,
    'results', coalesce((
      select jsonb_agg(jsonb_build_object(
               'employee', s.employee, 'employee_name', s.employee_name, 'code', s.code, 'name', s.name,
               'unit', s.unit, 'acquired', app_hidden.fmt_quantity(s.acquired),
               'taken', app_hidden.fmt_quantity(s.taken), 'planned', app_hidden.fmt_quantity(s.planned),
               'remaining', app_hidden.fmt_quantity(s.remaining)) order by s.ord)
      from (select c.*, row_number() over () as ord
            from app_hidden.counters_establishment_selection(p_establishment, v_year) c) s), '[]'::jsonb));
end;
$$;
comment on function app_public.counters_establishment(integer, integer) is 'SPEC Counters and issue 16, GET /api/counters/establishment/?establishment=&year=: the counters (Acquis, Pris, Planifiés, Restant) of the employees attached to an establishment of the caller''s queue perimeter, for a year; 404 outside it.';

-- GET /api/counters/establishment/export/?establishment=&year=&format=
create or replace function app_public.counters_establishment_export(p_establishment int, p_year int default null)
returns table (employee int, employee_name text, code text, name text, unit text,
               acquired numeric, taken numeric, planned numeric, remaining numeric)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select c.employee, c.employee_name, c.code, c.name,
         case c.unit when 'day' then 'jours' when 'hour' then 'heures' else c.unit end,
         c.acquired, c.taken, c.planned, c.remaining
  from app_hidden.counters_establishment_selection(
    p_establishment, coalesce(p_year, extract(year from app_hidden.today())::int)) c;
$$;
comment on function app_public.counters_establishment_export(integer, integer) is 'SPEC Counters and issue 16 exports, GET /api/counters/establishment/export/: the rows of counters_establishment, one per employee and counter, for the CSV or XLSX file.';
--! EndIncluded counters/establishment.sql
--! Included documents/uploads.sql
-- A file row may only name a file uploaded by the current request. The HTTP layer streams
-- each upload to the storage directory, checks it (magic bytes, size), and lists what it
-- stored in app.uploaded_files for the transaction; API functions receive the same
-- metadata in their body. This trigger refuses any other metadata, so that no caller (a
-- staff account through GraphQL, a crafted JSON body) can point a row at another person's
-- file or at a file that was never checked. The owner (migrations, imports, a DBA) is not
-- concerned: only the API role writes through the API.
create or replace function app_private.tg__file_uploaded_by_request() returns trigger
language plpgsql volatile as $$
declare
  v_uploaded jsonb := coalesce(nullif(current_setting('app.uploaded_files', true), ''), '[]')::jsonb;
begin
  if current_user <> 'wfm_api' then
    return new;
  end if;
  if tg_op = 'UPDATE' and new.storage_key = old.storage_key then
    return new;
  end if;
  if not exists (select 1 from jsonb_array_elements(v_uploaded) f
                 where f ->> 'storage_key' = new.storage_key
                   and (f ->> 'size_bytes')::bigint = new.size_bytes
                   and f ->> 'sha256' = new.sha256
                   and f ->> 'content_type' = new.content_type) then
    raise exception using errcode = 'WV402', detail = tg_argv[0],
      message = 'Fichier illisible : déposez-le de nouveau (multipart/form-data).';
  end if;
  return new;
end;
$$;

create or replace trigger _200_uploaded_by_request before insert or update of storage_key on app_public.absence_documents
  for each row execute function app_private.tg__file_uploaded_by_request('add_documents');
create or replace trigger _200_uploaded_by_request before insert or update of storage_key on app_public.honorability_certificates
  for each row execute function app_private.tg__file_uploaded_by_request('file');
create or replace trigger _200_uploaded_by_request before insert or update of storage_key on app_public.employee_attachments
  for each row execute function app_private.tg__file_uploaded_by_request('file');
--! EndIncluded documents/uploads.sql
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
-- The planning as text is the REST route's (passed through as written); GraphQL offers
-- planningRead, typed JSON.
comment on function app_public.planning_read_text(date, date, int, int, int) is
'@behavior -*
SPEC Planning cell and Permissions rule 3, GET /api/planning/: planning_read''s answer as JSON text, which the
REST route sends as written (no parse and serialise in the service).';
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
create or replace function app_private.backoffice_session_open(p_token_hash bytea, p_account_id int, p_stage text, p_method text)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not app_hidden.account_has_backoffice_access(p_account_id) then
    raise exception using errcode = 'WF070', message = 'Ce compte n''a pas accès au back-office.';
  end if;
  insert into app_private.backoffice_sessions (token_hash, account_id, stage, method, expires_at)
  values (p_token_hash, p_account_id, p_stage, p_method,
          app_hidden.now() + case p_stage
            when 'pre' then make_interval(mins => (app_hidden.setting('backoffice_preauth_minutes'))::int)
            else make_interval(hours => (app_hidden.setting('backoffice_session_hours'))::int) end);
end;
$$;

-- The live session of a token hash, touched (idle expiry runs from the last request).
-- Expired sessions, and sessions of an account that may no longer enter, are deleted and
-- give no row.
create or replace function app_private.backoffice_session_get(p_token_hash bytea)
returns table (account_id int, stage text, method text, username text, is_superuser boolean)
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_session app_private.backoffice_sessions;
begin
  select * into v_session from app_private.backoffice_sessions s where s.token_hash = p_token_hash;
  if not found then
    return;
  end if;
  if v_session.expires_at <= app_hidden.now()
     or (v_session.stage = 'full' and v_session.last_seen_at
         + make_interval(mins => (app_hidden.setting('backoffice_idle_minutes'))::int) <= app_hidden.now())
     or not app_hidden.account_has_backoffice_access(v_session.account_id) then
    delete from app_private.backoffice_sessions s where s.id = v_session.id;
    return;
  end if;
  update app_private.backoffice_sessions s set last_seen_at = app_hidden.now() where s.id = v_session.id;
  return query
    select v_session.account_id, v_session.stage, v_session.method, a.username, a.is_superuser
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
  return found;
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

-- Removes the authenticator, the backup codes and the sessions of an account.
create or replace function app_private.backoffice_factor_delete(p_account_id int) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  delete from app_private.backoffice_factors f where f.account_id = p_account_id;
  delete from app_private.backoffice_backup_codes c where c.account_id = p_account_id;
  delete from app_private.backoffice_sessions s where s.account_id = p_account_id;
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
  app_private.backoffice_session_open(bytea, int, text, text), app_private.backoffice_session_get(bytea),
  app_private.backoffice_session_close(bytea), app_private.backoffice_factor(int),
  app_private.backoffice_enrol_start(int, text), app_private.backoffice_enrol_confirm(int, bigint, bytea[]),
  app_private.backoffice_totp_accept(int, bigint), app_private.backoffice_backup_codes(int),
  app_private.backoffice_backup_code_use(int, bigint)
  to wfm_authenticator;
--! EndIncluded backoffice/sessions.sql
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
-- both: the callers are security definer, as the log lives in app_private).
create or replace function app_hidden.audit_log_selection(
  p_model text, p_target_id bigint, p_actor text, p_verb text, p_from date, p_to date)
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
         or lower(l.actor_username) = nullif(lower(btrim(p_actor)), ''));
$$;

create or replace function app_public.audit_log_search(
  p_model text default null, p_target_id bigint default null, p_actor text default null, p_verb text default null,
  p_from date default null, p_to date default null, p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- Checked first, also when the log is empty.
  perform app_hidden.audit_log_filters_check(p_model, p_target_id, p_from, p_to);
  return (
    with lines as (
      select l.* from app_hidden.audit_log_selection(p_model, p_target_id, p_actor, p_verb, p_from, p_to) l
    )
    select jsonb_build_object(
      'count', (select count(*) from lines),
      'results', coalesce((
        select jsonb_agg(app_hidden.audit_line_json(p) order by p.at desc, p.id desc)
        from (select * from lines order by at desc, id desc
              limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) p), '[]'::jsonb)));
end;
$$;
comment on function app_public.audit_log_search(text, bigint, text, text, date, date, integer, integer) is
'SPEC Audit log and Permissions (audit.view_actionlog): for accounts holding audit.view_actionlog with
back-office access (else 403), one page of audit lines newest first, filtered by model, target, actor,
verb and date window.';

-- GET /api/audit-log/export/?format=&<the search's filters>: the same lines, newest first;
-- before and after as JSON text.
create or replace function app_public.audit_log_export(
  p_model text default null, p_target_id bigint default null, p_actor text default null, p_verb text default null,
  p_from date default null, p_to date default null)
returns table (id bigint, at timestamptz, actor int, actor_username text, actor_display_name text, verb text,
               model text, target_id bigint, before text, after text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select l.id, l.at, l.actor_account_id, l.actor_username, l.actor_display_name, l.verb, l.model, l.target_id,
         l.before::text, l.after::text
  from app_hidden.audit_log_selection(p_model, p_target_id, p_actor, p_verb, p_from, p_to) l
  order by l.at desc, l.id desc;
$$;
comment on function app_public.audit_log_export(text, bigint, text, text, date, date) is 'SPEC Audit log and issue 16 exports, GET /api/audit-log/export/: every audit line the search shows for the same filters (its readers only: audit.view_actionlog), for the CSV or XLSX file.';

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
--! Included backoffice/shift_change.sql
-- Day-change requests read by the back-office and GET /api/shift-change-requests/: the
-- filters of the list (status, date window, employee) and the establishment of the employee
-- (main or secondary workplace). Row-level security keeps each reader in their perimeter.
-- The requester reads their own requests; absences.view_absence_queue holders read their
-- perimeter. from/to are inclusive bounds on date. Newest date first. It replaces
-- app_public.shift_change_list (without the establishment) of the first migration.
drop function if exists app_public.shift_change_list(text, date, date, int, int, int);
create or replace function app_public.shift_change_search(
  p_status text default null, p_from date default null, p_to date default null, p_employee int default null,
  p_establishment int default null, p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_size int := app_hidden.page_limit(p_page_size);
  v_offset int := app_hidden.page_offset(p_page, p_page_size);
begin
  if p_status is not null and p_status not in ('pending', 'validated', 'refused') then
    perform app_hidden.invalid('status', 'Statut inconnu. Valeurs possibles : pending, validated, refused.', 'WV109');
  end if;
  if p_from is not null and p_to is not null and p_to < p_from then
    perform app_hidden.invalid('to', 'La date de fin doit être postérieure ou égale à la date de début.', 'WV108');
  end if;
  return (
    with filtered as (
      select r.id, r.date
      from app_public.shift_change_requests r
      where (p_status is null or r.status = p_status)
        and (p_from is null or r.date >= p_from)
        and (p_to is null or r.date <= p_to)
        and (p_employee is null or r.employee_id = p_employee)
        and (p_establishment is null
             or exists (select 1 from app_public.employees e
                        where e.id = r.employee_id and e.main_establishment_id = p_establishment)
             or exists (select 1 from app_public.employee_secondary_establishments s
                        where s.employee_id = r.employee_id and s.establishment_id = p_establishment))
    ),
    page as (
      select f.id, row_number() over (order by f.date desc, f.id desc) as n
      from filtered f
      order by f.date desc, f.id desc
      limit v_size offset v_offset
    )
    select jsonb_build_object(
      'count', (select count(*) from filtered),
      'results', coalesce((select jsonb_agg(x.record order by pg.n)
                           from page pg
                           join app_hidden.shift_change_records(array(select p.id from page p)) x on x.id = pg.id),
                          '[]'::jsonb)));
end;
$$;
comment on function app_public.shift_change_search(text, date, date, integer, integer, integer, integer) is
'SPEC Day-change requests, GET /api/shift-change-requests/ and Permissions rule 2 (also the back-office
list): the requests the caller reads (its own, or the absences.view_absence_queue perimeter) filtered by
status, inclusive date window, employee and establishment (main or secondary workplace), newest date
first; one page with the count.';

-- What the signed-in account may do on a request (the back-office shows only those forms;
-- the transition functions check again): decide (planning.decide_shift_change on the
-- employee), correct (employee.change_employee_record: HR), never on its own request.
create or replace function app_public.shift_change_abilities(p_id int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    'own', own,
    'decide', not own and app_hidden.may(app_hidden.current_account_id(), 'planning.decide_shift_change', r.employee_id),
    'correct', not own and app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', r.employee_id))
  from app_public.shift_change_requests r
  cross join lateral (select r.employee_id is not distinct from app_hidden.current_employee_id()
                             or r.author_account_id = app_hidden.current_account_id() as own) o
  where r.id = p_id;
$$;
comment on function app_public.shift_change_abilities(integer) is
'SPEC Permissions (back-office): what the signed-in account may do on a day-change request: decide
(planning.decide_shift_change on the employee) and correct (employee.change_employee_record, HR), never
on its own request. The transition functions check again.';
--! EndIncluded backoffice/shift_change.sql
--! Included backoffice/reference.sql
-- Reference administration of the back-office (SPEC Permissions rule 6: read by every
-- authenticated account, written by staff accounts only): absence categories (a tree of
-- two levels), absence types (reasons), posts, counter associations. The API keeps the
-- reference read-only (POST /api/absence-types/ answers 405): these functions are called by
-- the back-office only. Each write is checked here, then again by the tables' policies
-- (insert/update/delete for staff) and triggers (two-level tree, shared code namespace,
-- orphan rules of sql/counters/triggers.sql), and audited.

insert into app_private.audit_models (model, label) values
  ('absence_category', 'Catégorie d''absence'),
  ('absence_type', 'Motif d''absence'),
  ('absence_type_contract_type', 'Type de contrat d''un motif d''absence'),
  ('counter_association', 'Association motif – compteur'),
  ('post', 'Poste'),
  ('counter_adjustment', 'Ajustement manuel de compteur')
on conflict do nothing;

do $$
declare
  t text;
begin
  foreach t in array array['absence_categories', 'absence_types', 'absence_type_contract_types',
                           'counter_associations', 'posts'] loop
    execute format('drop policy if exists insert_staff on app_public.%I', t);
    execute format('create policy insert_staff on app_public.%I for insert to wfm_api
                    with check ((select app_hidden.current_account_is_staff()))', t);
    execute format('drop policy if exists update_staff on app_public.%I', t);
    execute format('create policy update_staff on app_public.%I for update to wfm_api
                    using ((select app_hidden.current_account_is_staff()))
                    with check ((select app_hidden.current_account_is_staff()))', t);
    execute format('drop policy if exists delete_staff on app_public.%I', t);
    execute format('create policy delete_staff on app_public.%I for delete to wfm_api
                    using ((select app_hidden.current_account_is_staff()))', t);
  end loop;
end;
$$;

create or replace trigger _500_audit after insert or update on app_public.absence_categories
  for each row execute function app_private.tg__audit('absence_category');
create or replace trigger _500_audit_delete before delete on app_public.absence_categories
  for each row execute function app_private.tg__audit('absence_category');
create or replace trigger _500_audit after insert or update on app_public.absence_types
  for each row execute function app_private.tg__audit('absence_type');
create or replace trigger _500_audit_delete before delete on app_public.absence_types
  for each row execute function app_private.tg__audit('absence_type');
create or replace trigger _500_audit after insert or update on app_public.absence_type_contract_types
  for each row execute function app_private.tg__audit('absence_type_contract_type');
create or replace trigger _500_audit_delete before delete on app_public.absence_type_contract_types
  for each row execute function app_private.tg__audit('absence_type_contract_type');
create or replace trigger _500_audit after insert or update on app_public.counter_associations
  for each row execute function app_private.tg__audit('counter_association');
create or replace trigger _500_audit_delete before delete on app_public.counter_associations
  for each row execute function app_private.tg__audit('counter_association');
create or replace trigger _500_audit after insert or update on app_public.posts
  for each row execute function app_private.tg__audit('post');
create or replace trigger _500_audit_delete before delete on app_public.posts
  for each row execute function app_private.tg__audit('post');

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
  with filtered as (
    select c, c.id, c.name, c.position, c.parent_id,
           coalesce(p.position, c.position) as root_position, coalesce(p.name, c.name) as root_name
    from app_public.absence_categories c
    left join app_public.absence_categories p on p.id = c.parent_id
    where p_parent is null or c.parent_id = p_parent
  ),
  page as (
    select f.c, row_number() over (order by f.root_position, f.root_name, f.parent_id nulls first, f.position, f.name, f.id) as n
    from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.absence_category_json(page.c) order by page.n) from page), '[]'::jsonb));
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
    perform app_hidden.not_found('Catégorie d''absence introuvable.');
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
      perform app_hidden.not_found('Catégorie d''absence introuvable.');
    end if;
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif v_code !~ '^[A-Z][A-Z0-9_]{1,31}$' then
    v_errors := app_hidden.add_error(v_errors, 'code',
      'Code invalide : 2 à 32 caractères, une lettre d''abord, puis lettres, chiffres ou _.');
  elsif exists (select 1 from app_public.absence_categories c where c.code = v_code and c.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par une catégorie.', v_code));
  end if;
  if v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le libellé est obligatoire.');
  elsif length(v_name) > 150 then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Au plus 150 caractères.');
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
    perform app_hidden.not_found('Catégorie d''absence introuvable.');
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
  with filtered as (
    select t.id, t.position, t.code
    from app_public.absence_types t
    join app_public.absence_categories c on c.id = t.category_id
    where (p_category is null or c.id = p_category or c.parent_id = p_category)
      and (p_active is null or t.is_active = p_active)
  ),
  page as (
    select f.id, row_number() over (order by f.position, f.code, f.id) as n from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.absence_type_admin_json(page.id) order by page.n) from page), '[]'::jsonb));
$$;
comment on function app_public.absence_types_search(integer, boolean, integer, integer) is
'SPEC Absence types, back-office: one page of every absence type, inactive ones included, filtered by
category (with its sub-categories) and activity.';

create or replace function app_public.absence_type_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.absence_types t where t.id = p_id) then
    perform app_hidden.not_found('Motif d''absence introuvable.');
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
create or replace function app_public.absence_type_save(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := app_hidden.in_trimmed(p_body, 'code');
  v_name text := app_hidden.in_trimmed(p_body, 'name');
  v_category int := app_hidden.in_int(p_body, 'category');
  v_unit text := coalesce(app_hidden.in_trimmed(p_body, 'unit'), 'day');
  v_cap numeric := app_hidden.in_numeric(p_body, 'annual_cap');
  v_overrun text := coalesce(app_hidden.in_trimmed(p_body, 'cap_overrun'), 'refuse');
  v_effect text := coalesce(app_hidden.in_trimmed(p_body, 'annualisation_effect'), 'none');
  v_half_day boolean := coalesce(app_hidden.in_bool(p_body, 'half_day_allowed'), false);
  v_contract_types int[] := coalesce(app_hidden.in_ids(p_body, 'contract_types'), '{}');
  v_clash text;
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.absence_types t where t.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Motif d''absence introuvable.');
    end if;
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif v_code !~ '^[A-Za-z0-9][A-Za-z0-9_+\-]{0,15}$' then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 16 caractères, lettres, chiffres et _ + -.');
  elsif exists (select 1 from app_public.absence_types t where lower(t.code) = lower(v_code) and t.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par un autre motif d''absence.', v_code));
  else
    v_clash := app_hidden.code_namespace_clash('absence_types', v_code);
    if v_clash is not null then
      v_errors := app_hidden.add_error(v_errors, 'code', v_clash);
    end if;
  end if;
  if v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le libellé est obligatoire.');
  elsif length(v_name) > 150 then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Au plus 150 caractères.');
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
                                          half_day_allowed, documents_expected, validation_required, annualisation_effect, position)
    values (v_code, v_name, v_category, v_unit, coalesce(app_hidden.in_bool(p_body, 'paid'), false),
            coalesce(app_hidden.in_bool(p_body, 'splittable'), true), v_cap, v_overrun,
            coalesce(app_hidden.in_bool(p_body, 'is_active'), true), v_half_day,
            coalesce(app_hidden.in_bool(p_body, 'documents_expected'), false),
            coalesce(app_hidden.in_bool(p_body, 'validation_required'), true), v_effect,
            coalesce(app_hidden.in_int(p_body, 'position'), 0))
    returning id into v_id;
  else
    update app_public.absence_types t set
      code = v_code, name = v_name, category_id = v_category, unit = v_unit,
      paid = coalesce(app_hidden.in_bool(p_body, 'paid'), t.paid),
      splittable = coalesce(app_hidden.in_bool(p_body, 'splittable'), t.splittable),
      annual_cap = v_cap, cap_overrun = v_overrun,
      is_active = coalesce(app_hidden.in_bool(p_body, 'is_active'), t.is_active),
      half_day_allowed = v_half_day,
      documents_expected = coalesce(app_hidden.in_bool(p_body, 'documents_expected'), t.documents_expected),
      validation_required = coalesce(app_hidden.in_bool(p_body, 'validation_required'), t.validation_required),
      annualisation_effect = v_effect,
      position = coalesce(app_hidden.in_int(p_body, 'position'), t.position)
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
comment on function app_public.absence_type_save(integer, jsonb) is
'SPEC Absence types and declaration rule 17, back-office: a staff account creates (p_id null) or rewrites
an absence type; all field errors at once, a code equal to a post code refused under code, and a
deactivation that would orphan an active counter refused under is_active.';

-- Deletes a type no absence uses; its associations go first, each under the orphan rule.
create or replace function app_public.absence_type_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.absence_types t where t.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Motif d''absence introuvable.');
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
  with filtered as (
    select p, p.id, p.code, e.name as establishment_name
    from app_public.posts p join app_public.establishments e on e.id = p.establishment_id
    where (p_establishment is null or p.establishment_id = p_establishment)
      and (p_active is null or p.is_active = p_active)
  ),
  page as (
    select f.p, row_number() over (order by f.establishment_name, lower(f.code), f.id) as n from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.post_admin_json(page.p) order by page.n) from page), '[]'::jsonb));
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
create or replace function app_public.post_save(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := app_hidden.in_trimmed(p_body, 'code');
  v_label text := app_hidden.in_trimmed(p_body, 'label');
  v_establishment int := app_hidden.in_int(p_body, 'establishment');
  v_start time;
  v_end time;
  v_break_start time;
  v_break_end time;
  v_clash text;
  v_field text;
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
  elsif v_code !~ '^[A-Za-z0-9][A-Za-z0-9_+\-]{0,15}$' then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 16 caractères, lettres, chiffres et _ + -.');
  elsif exists (select 1 from app_public.posts p where lower(p.code) = lower(v_code) and p.establishment_id = v_establishment
                and p.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par un poste de cet établissement.', v_code));
  else
    v_clash := app_hidden.code_namespace_clash('posts', v_code);
    if v_clash is not null then
      v_errors := app_hidden.add_error(v_errors, 'code', v_clash);
    end if;
  end if;
  if v_label is null then
    v_errors := app_hidden.add_error(v_errors, 'label', 'Le libellé est obligatoire.');
  elsif length(v_label) > 150 then
    v_errors := app_hidden.add_error(v_errors, 'label', 'Au plus 150 caractères.');
  end if;
  if v_establishment is null then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'L''établissement est obligatoire.');
  elsif not exists (select 1 from app_public.establishments e where e.id = v_establishment) then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'Établissement inconnu.');
  end if;
  foreach v_field in array array['start_time', 'end_time', 'break_start_time', 'break_end_time'] loop
    if coalesce(app_hidden.in_text(p_body, v_field), '') !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
       and (v_field in ('start_time', 'end_time') or app_hidden.in_text(p_body, v_field) is not null) then
      v_errors := app_hidden.add_error(v_errors, v_field, 'Heure invalide : format attendu HH:MM.');
    end if;
  end loop;
  perform app_hidden.invalid_fields(v_errors, 'WV517') where v_errors <> '{}'::jsonb;
  v_start := (p_body ->> 'start_time')::time;
  v_end := (p_body ->> 'end_time')::time;
  v_break_start := (p_body ->> 'break_start_time')::time;
  v_break_end := (p_body ->> 'break_end_time')::time;
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
            coalesce(app_hidden.in_bool(p_body, 'break_paid'), false), coalesce(app_hidden.in_bool(p_body, 'is_active'), true))
    returning id into v_id;
  else
    update app_public.posts p set
      code = v_code, label = v_label, establishment_id = v_establishment, start_time = v_start, end_time = v_end,
      break_start_time = v_break_start, break_end_time = v_break_end,
      break_paid = coalesce(app_hidden.in_bool(p_body, 'break_paid'), p.break_paid),
      is_active = coalesce(app_hidden.in_bool(p_body, 'is_active'), p.is_active)
    where p.id = p_id;
  end if;
  return app_public.post_get(v_id);
end;
$$;
comment on function app_public.post_save(integer, jsonb) is
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
  with filtered as (
    select ca.id, ca.counter_code, t.code
    from app_public.counter_associations ca join app_public.absence_types t on t.id = ca.absence_type_id
    where (p_counter_code is null or ca.counter_code = p_counter_code)
      and (p_absence_type is null or ca.absence_type_id = p_absence_type)
  ),
  page as (
    select f.id, row_number() over (order by f.counter_code, f.code, f.id) as n from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.counter_association_json(page.id) order by page.n) from page), '[]'::jsonb));
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
--! EndIncluded backoffice/reference.sql
--! Included backoffice/counters.sql
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
  with filtered as (
    select c.id, c.year, c.code, e.last_name, e.first_name
    from app_public.counters c
    join app_public.employees e on e.id = c.employee_id
    where (p_employee is null or c.employee_id = p_employee)
      and (p_code is null or c.code = p_code)
      and (p_year is null or c.year = p_year)
  ),
  page as (
    select f.id, row_number() over (order by f.year desc, f.last_name, f.first_name, f.code, f.id) as n from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by page.n)
                         from page join app_private.counters_admin_json(array(select id from page)) j on j.id = page.id), '[]'::jsonb));
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
    perform app_hidden.forbidden('Les compteurs s''ajustent par les comptes RH du périmètre du salarié ou du personnel d''administration.', 'WF301');
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
    v_errors := app_hidden.add_error(v_errors, 'reason', 'Le motif de l''ajustement est obligatoire.');
  elsif length(v_reason) > 500 then
    v_errors := app_hidden.add_error(v_errors, 'reason', 'Au plus 500 caractères.');
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
    perform app_hidden.forbidden('Les compteurs s''ajustent par les comptes RH du périmètre du salarié ou du personnel d''administration.', 'WF301');
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
--! EndIncluded backoffice/counters.sql
--! Included backoffice/role_attributions.sql
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
do $$
declare
  t text;
begin
  foreach t in array array['role_attributions', 'role_attribution_establishments'] loop
    execute format('drop policy if exists insert_staff on app_public.%I', t);
    execute format('create policy insert_staff on app_public.%I for insert to wfm_api
                    with check ((select app_hidden.current_account_is_staff()))', t);
    execute format('drop policy if exists update_staff on app_public.%I', t);
    execute format('create policy update_staff on app_public.%I for update to wfm_api
                    using ((select app_hidden.current_account_is_staff()))
                    with check ((select app_hidden.current_account_is_staff()))', t);
    execute format('drop policy if exists delete_staff on app_public.%I', t);
    execute format('create policy delete_staff on app_public.%I for delete to wfm_api
                    using ((select app_hidden.current_account_is_staff()))', t);
  end loop;
end;
$$;

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
      'Les attributions de rôle s''écrivent par les comptes du personnel d''administration uniquement.', 'WF580');
  end if;
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden(
      'Les attributions de rôle s''écrivent par les comptes du personnel d''administration uniquement.', 'WF580');
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
create or replace function app_hidden.role_attribution_fields(p_account int, p_role app_public.roles, p_id int, p_body jsonb)
returns table (start_date date, end_date date, establishment_ids int[])
language plpgsql stable as $$
declare
  v_errors jsonb := '{}';
  v_start date := app_hidden.in_date(p_body, 'start_date');
  v_end date := app_hidden.in_date(p_body, 'end_date');
  v_ids int[] := coalesce(app_hidden.in_ids(p_body, 'establishments'), '{}');
  v_unknown int;
begin
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

-- Grants a role to an account: {"role": "<name>", "start_date"?, "end_date"?, "establishments"?: [ids]}.
create or replace function app_public.role_attribution_grant(p_account int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_role app_public.roles;
  v_name text;
  v_fields record;
  v_id int;
begin
  perform app_hidden.role_attribution_check_editor(p_account);
  v_name := app_hidden.in_trimmed(p_body, 'role');
  select * into v_role from app_public.roles r where r.name = v_name;
  if v_name is null then
    perform app_hidden.invalid('role', 'Choisissez un rôle.', 'WV580');
  elsif not found then
    perform app_hidden.invalid('role', format('Rôle « %s » inconnu.', v_name), 'WV580');
  end if;
  select * into v_fields from app_hidden.role_attribution_fields(p_account, v_role, null, p_body);
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
comment on function app_public.role_attribution_grant(integer, jsonb) is
'SPEC Roles and Permissions rule 6, back-office: a staff account grants a role to an account of its
employee-record perimeter, with optional dates and establishments; never its own roles, never more than
it holds (403), 404 outside its reach.';

-- Changes the dates and establishments of an attribution (the role stays: grant another one).
-- Every key is written: an absent date is none, absent establishments are none.
create or replace function app_public.role_attribution_change(p_id int, p_body jsonb) returns jsonb
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
  select * into v_fields from app_hidden.role_attribution_fields(v.account_id, v_role, p_id, p_body);
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
comment on function app_public.role_attribution_change(integer, jsonb) is
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
  with found as (
    select ra.id, r.precedence, a.username,
           app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date) as current
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
  ), page as (
    select f.id, row_number() over (order by f.current desc, f.precedence, lower(f.username), f.id) as ord
    from found f
    order by f.current desc, f.precedence, lower(f.username), f.id
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from found),
    'results', coalesce((select jsonb_agg(app_hidden.role_attribution_json(p.id)
                                          || jsonb_build_object('account_username', a.username,
                                                                'account_name', app_hidden.account_display_name(a.id))
                                          order by p.ord)
                         from page p
                         join app_public.role_attributions ra on ra.id = p.id
                         join app_public.accounts a on a.id = ra.account_id), '[]'::jsonb));
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
--! EndIncluded backoffice/role_attributions.sql
--! Included backoffice/contracts.sql
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
  return app_public.employee_update(p_employee, jsonb_build_object(
    'contracts', app_private.employee_contracts_input(p_employee) || jsonb_build_array(p_contract - 'id')));
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
                when m ~ 'période d''essai' then 'trial_end_date'
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
  return app_public.employee_update(p_employee, jsonb_build_object('contracts', p_contracts));
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
  perform app_public.employee_update(p_employee, '{}'::jsonb);
  if p_version is distinct from app_hidden.employee_contracts_version(p_employee) then
    perform app_hidden.conflict('Les contrats de ce salarié ont changé depuis l''affichage du formulaire : '
                                'rechargez la fiche puis recommencez.', 'WC501');
  end if;
  if not exists (select 1 from app_public.contracts c where c.id = p_contract and c.employee_id = p_employee) then
    perform app_hidden.invalid('contract', 'Ce contrat n''appartient pas à ce salarié.', 'WV501');
  end if;
end;
$$;

-- {"contract", "version", "type", "start_date", "end_date"?, "trial_end_date"?, "job_title"?,
-- "weekly_hours"?}: that contract takes these values (an absent key empties the field).
drop function if exists app_public.employee_contract_change(int, jsonb);
create or replace function app_public.employee_contract_change(p_employee int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_contract int;
begin
  if jsonb_typeof(p_body) is distinct from 'object' then
    perform app_hidden.invalid(null, 'Un contrat (objet) est attendu.', 'WV501');
  end if;
  v_contract := app_hidden.in_int(p_body, 'contract');
  perform app_private.employee_contract_gate(p_employee, v_contract, p_body ->> 'version');
  return app_private.employee_contracts_save(p_employee, (
    select jsonb_agg(case when (c ->> 'id')::int = v_contract
                          then jsonb_build_object('id', v_contract) || (p_body - 'contract' - 'version' - 'id')
                          else c end)
    from jsonb_array_elements(app_private.employee_contracts_input(p_employee)) c));
end;
$$;
comment on function app_public.employee_contract_change(integer, jsonb) is
'SPEC Permissions (employee.change_employee_record), back-office: one contract of an employee takes the
values of the form through employee_update; 409 when the contract list changed since the form was drawn
(version), 400 under contract for a contract of another employee.';

-- {"contract", "version"}: the record without that contract.
drop function if exists app_public.employee_contract_remove(int, jsonb);
create or replace function app_public.employee_contract_remove(p_employee int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_contract int;
begin
  if jsonb_typeof(p_body) is distinct from 'object' then
    perform app_hidden.invalid(null, 'Un contrat (objet) est attendu.', 'WV501');
  end if;
  v_contract := app_hidden.in_int(p_body, 'contract');
  perform app_private.employee_contract_gate(p_employee, v_contract, p_body ->> 'version');
  return app_private.employee_contracts_save(p_employee, coalesce((
    select jsonb_agg(c) from jsonb_array_elements(app_private.employee_contracts_input(p_employee)) c
    where (c ->> 'id')::int <> v_contract), '[]'::jsonb));
end;
$$;
comment on function app_public.employee_contract_remove(integer, jsonb) is
'SPEC Permissions (employee.change_employee_record), back-office: removes one contract of an employee
through employee_update; 409 when the contract list changed since the form was drawn (version).';
--! EndIncluded backoffice/contracts.sql
--! Included backoffice/team_members.sql
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

-- {"employee"}: the team without that member (400 under `employee` if they are no current or
-- future member; 404 / 403 as team_members_replace answers).
drop function if exists app_public.team_member_remove(int, jsonb);
create or replace function app_public.team_member_remove(p_team int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
  v_members jsonb;
begin
  perform app_hidden.team_for_write(p_team);
  if jsonb_typeof(p_body) is distinct from 'object' then
    perform app_hidden.invalid(null, 'Un objet est attendu.', 'WV520');
  end if;
  v_employee := app_hidden.in_int(p_body, 'employee');
  v_members := app_private.team_members_input(p_team);
  if v_employee is null or not exists (select 1 from jsonb_array_elements(v_members) m where (m ->> 'employee')::int = v_employee) then
    perform app_hidden.invalid('employee', 'Ce salarié ne fait pas partie de cette équipe, ni aujourd''hui ni à venir.', 'WV520');
  end if;
  return app_public.team_members_replace(p_team, jsonb_build_object('members', (
    select coalesce(jsonb_agg(m), '[]'::jsonb) from jsonb_array_elements(v_members) m
    where (m ->> 'employee')::int <> v_employee)));
end;
$$;
comment on function app_public.team_member_remove(integer, jsonb) is
'SPEC Permissions rule 7 (back-office): removes one current or future member of a team through
team_members_replace and its rules (400 under employee when not a member).';
--! EndIncluded backoffice/team_members.sql
--! Included backoffice/absences.sql
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

-- The back-office form of an absence: {version, status?, type?, date_start?, date_end?,
-- start_half?, end_half?, start_time?, end_time?, comment?}. version is required (409 when
-- stale). status: only "pending" may be written, from validated or refused (the decisions
-- have their own actions); in the states cancellation requested and cancelled the field is
-- not editable. The other fields are the manager-side correction of PATCH /api/absences/<id>/
-- (absence_update: same rules, same counter compensation). One transaction: a refusal of
-- either part writes nothing.
create or replace function app_public.absence_backoffice_save(p_id int, p_body jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_status text := nullif(p_body ->> 'status', '');
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_body, true);
  if v_status is not null and v_status is distinct from v.status then
    if v.status in ('cancellation_requested', 'cancelled') then
      perform app_hidden.invalid('status', format(
        'Le statut d''une absence « %s » ne se modifie pas : %s', app_hidden.absence_status_label(v.status),
        case when v.status = 'cancelled' then 'elle est annulée.' else 'accordez ou refusez la demande d''annulation.' end),
        'WV215');
    end if;
    if v_status <> 'pending' then
      perform app_hidden.invalid('status',
        'Le statut ne peut être remis qu''« En attente » : validez ou refusez la demande avec les actions de décision.',
        'WV215');
    end if;
    v := app_hidden.absence_reopen(v);
  end if;
  return app_public.absence_update(p_id, (p_body - 'status' - 'employee') || jsonb_build_object('version', v.version),
                                   p_public_url);
end;
$$;
comment on function app_public.absence_backoffice_save(integer, jsonb, text) is
'SPEC States and transitions, Absence (back-office form): with the current version (else 409), may put a
validated or refused absence back to pending (the only status it writes) and apply the manager-side
correction of PATCH /api/absences/<id>/ (same rules, same counter compensation) in one transaction; the
status is not editable once a cancellation is requested or granted.';
--! EndIncluded backoffice/absences.sql
--! Included guards.sql
-- Guards are true or false, never NULL.
--
-- `if not app_hidden.x(...) then refuse` lets the caller through when x answers NULL (NOT NULL
-- is NULL, and `if NULL` does not run its branch). A helper that a guard or a policy negates
-- is therefore declared here, and a declared helper is under proof:
--   * test/db/61-guards-never-null.sql calls every declared helper as every kind of caller (no
--     account, accounts of each role without an employee record, an employee without a main
--     workplace, closed accounts) with every mix of NULL and ordinary arguments, and fails on a
--     NULL answer;
--   * the same file reads the catalogue (sources of the plpgsql and sql functions of app_public,
--     app_hidden and app_private, and the expressions of pg_policies) and fails when
--     `not <schema>.<helper>(` names a helper that is not declared here.
-- Declaring is one row: the signature as `regprocedure` prints it, and why the helper cannot
-- answer NULL. See docs/architecture.md, "Guards are never NULL".
create table if not exists app_private.never_null_guards (
  helper text primary key check (helper ~ '^app_(public|hidden|private)\.[a-z_]+\(.*\)$'),
  why text not null check (btrim(why) <> '')
);
alter table app_private.never_null_guards enable row level security;

insert into app_private.never_null_guards (helper, why) values
  ('app_hidden.account_has_permission(integer,text,timestamp with time zone)', 'exists'),
  ('app_hidden.current_account_has(text)', 'account_has_permission'),
  ('app_hidden.may(integer,text,integer,timestamp with time zone)', 'false for a NULL employee; exists otherwise'),
  ('app_hidden.perimeter_is_whole(text)', 'coalesce(..., false)'),
  ('app_hidden.is_current_employee(integer)', 'coalesce(p_employee = current_employee_id(), false)'),
  ('app_hidden.date_in(date,date,date)', 'coalesce(..., false)'),
  ('app_hidden.current_account_is_staff()', 'exists'),
  ('app_hidden.current_account_is_superuser()', 'coalesce(..., false)'),
  ('app_hidden.account_has_backoffice_access(integer,timestamp with time zone)', 'exists'),
  ('app_hidden.current_account_reads_audit_log()', 'conjunction of never-NULL terms'),
  ('app_hidden.account_rights_covered(integer)', 'true, false, or not exists (...)'),
  ('app_hidden.account_in_role_reach(integer)', 'false for a NULL or unknown account; else true or a never-NULL helper'),
  ('app_hidden.can_read_document_file(integer)', 'disjunction of never-NULL helpers'),
  ('app_hidden.can_deposit_honorability(integer)', 'disjunction of never-NULL helpers'),
  ('app_hidden.in_scope(integer,integer[])', 'coalesce(... = any (scope), false)'),
  ('app_hidden.event_establishment_allowed(integer)', 'in_scope'),
  ('app_hidden.json_bool_ok(jsonb)', 'is null or jsonb_typeof in (...)'),
  ('app_hidden.json_id_ok(jsonb)', 'is null or ... and ...: every term is known'),
  ('app_hidden.json_time_ok(jsonb)', 'is null or ... and ...: every term is known'),
  ('app_hidden.same_slots(app_public.slot[],app_public.slot[])', 'array equality of two arrays built by array(...)'),
  ('app_private.counter_code_has_reason(text,integer,integer)', 'exists'),
  ('app_private.job_is_due(text,timestamp with time zone)', 'coalesce(..., false)'),
  ('app_private.holds_hr_permission(integer)', 'coalesce(exists ... or exists ..., false)'),
  ('app_hidden.current_account_is_verified_superuser()', 'coalesce(is_superuser, false) and coalesce(setting, '''') = ''on'''),
  ('app_hidden.may_write_counter(integer)', 'current_account_is_staff() or coalesce(may(...), false)'),
  ('app_hidden.may_decide_absence_of(integer)', 'coalesce(may(...) and is_current_employee(...) is false, false)'),
  ('app_hidden.calendar_feed_allowed(text)', 'coalesce(case ... end, false)')
on conflict (helper) do update set why = excluded.why;
--! EndIncluded guards.sql
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
grant execute on function app_private.begin_request(int, int), app_private.begin_request_or_fail(int, int),
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
