--! Previous: sha1:8a2ac32a0f7a02f301353b1d38f7365befcf342f
--! Hash: sha1:437d89f07e7cb45dcedf7804981213b604422b3b
--! Message: Issue 12 points 2-4 and issue 15 speed: one function per declaration and employee/import rule, thresholds and the input contract named once, typed creation/transition arguments, staff refusal in the request prelude, planning in parts, faster creation routing

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
--! Included core/input_contract.sql
-- One input contract: the limits of the texts a request may carry, stated once. The table
-- CHECKs and the rules of sql/ call these functions; the route schemas (ajv and OpenAPI) take
-- the same values from src/http/input-contract.ts, which the server compares with
-- app_hidden.input_contract() at start-up (a difference stops it, naming both sides).
-- docs/architecture.md, "One input contract". A CHECK reads its function at each write only:
-- lowering a limit leaves longer rows in place (a migration that lowers one updates them first).

-- A free comment or a decision reason (absences, day-change requests, day modifications).
create or replace function app_hidden.comment_max_length() returns int
language sql immutable parallel safe as $$ select 2000 $$;

-- The comment of an on-call period.
create or replace function app_hidden.on_call_comment_max_length() returns int
language sql immutable parallel safe as $$ select 500 $$;

-- The title and the description of an event.
create or replace function app_hidden.event_title_max_length() returns int
language sql immutable parallel safe as $$ select 200 $$;

create or replace function app_hidden.event_description_max_length() returns int
language sql immutable parallel safe as $$ select 5000 $$;

-- The name of a team, a division, an establishment, a contract type, an absence type or
-- category, an emergency contact; the label of a post.
create or replace function app_hidden.name_max_length() returns int
language sql immutable parallel safe as $$ select 150 $$;

-- An employee's first or last name; an emergency contact's relationship to the employee.
create or replace function app_hidden.person_name_max_length() returns int
language sql immutable parallel safe as $$ select 100 $$;

create or replace function app_hidden.relationship_max_length() returns int
language sql immutable parallel safe as $$ select 100 $$;

-- The job title of a contract; the title of an employee's attachment.
create or replace function app_hidden.job_title_max_length() returns int
language sql immutable parallel safe as $$ select 200 $$;

create or replace function app_hidden.attachment_title_max_length() returns int
language sql immutable parallel safe as $$ select 200 $$;

-- The reason of a manual counter adjustment (back-office).
create or replace function app_hidden.adjustment_reason_max_length() returns int
language sql immutable parallel safe as $$ select 500 $$;

-- An e-mail address: its shape and its length (an employee's professional address, an
-- emergency contact's).
create or replace function app_hidden.email_pattern() returns text
language sql immutable parallel safe as $$ select '^[^@\s]+@[^@\s]+\.[^@\s]+$' $$;

create or replace function app_hidden.email_max_length() returns int
language sql immutable parallel safe as $$ select 254 $$;

-- A phone number of an emergency contact (06 12 34 56 78, +33 6 12 34 56 78...).
create or replace function app_hidden.phone_pattern() returns text
language sql immutable parallel safe as $$ select '^\+?[0-9][0-9 .\-]{4,22}[0-9]$' $$;

-- A French social security number, 13 digits or 15 with the key (spaces removed first).
create or replace function app_hidden.social_security_number_pattern() returns text
language sql immutable parallel safe as $$
  select '^[12][0-9]{2}(0[1-9]|1[0-2]|[2-9][0-9])(2[AB]|[0-9]{2})[0-9]{6}([0-9]{2})?$'
$$;

-- A username: username_min_length() to username_max_length() characters among letters, digits and . _ @ + -.
create or replace function app_hidden.username_min_length() returns int
language sql immutable parallel safe as $$ select 2 $$;

create or replace function app_hidden.username_max_length() returns int
language sql immutable parallel safe as $$ select 150 $$;

create or replace function app_hidden.username_pattern() returns text
language sql immutable parallel safe as $$
  select '^[A-Za-z0-9._@+\-]{' || app_hidden.username_min_length() || ',' || app_hidden.username_max_length() || '}$'
$$;

-- The answer to a text over its limit, under the field to correct.
create or replace function app_hidden.max_length_message(p_max int) returns text
language sql immutable parallel safe as $$ select format('Au plus %s caractères.', p_max) $$;

-- Every limit above by the name src/http/input-contract.ts gives it (the start-up comparison).
create or replace function app_hidden.input_contract() returns jsonb
language sql immutable parallel safe as $$
  select jsonb_build_object(
    'commentMaxLength', app_hidden.comment_max_length(),
    'onCallCommentMaxLength', app_hidden.on_call_comment_max_length(),
    'eventTitleMaxLength', app_hidden.event_title_max_length(),
    'eventDescriptionMaxLength', app_hidden.event_description_max_length(),
    'nameMaxLength', app_hidden.name_max_length(),
    'adjustmentReasonMaxLength', app_hidden.adjustment_reason_max_length(),
    'personNameMaxLength', app_hidden.person_name_max_length(),
    'relationshipMaxLength', app_hidden.relationship_max_length(),
    'jobTitleMaxLength', app_hidden.job_title_max_length(),
    'attachmentTitleMaxLength', app_hidden.attachment_title_max_length(),
    'emailMaxLength', app_hidden.email_max_length(),
    'usernameMaxLength', app_hidden.username_max_length(),
    'usernamePattern', app_hidden.username_pattern())
$$;

-- A CHECK constraint of a table created before its limit came from here: replaced when its
-- definition differs (a database built from sql/ alone already has the new one, inline).
create or replace function app_private.ensure_check(p_table regclass, p_name text, p_check text) returns void
language plpgsql volatile as $$
declare
  v_current text;
begin
  select pg_get_constraintdef(c.oid) into v_current
  from pg_constraint c where c.conrelid = p_table and c.conname = p_name;
  if v_current is distinct from 'CHECK ' || p_check then
    execute format('alter table %s drop constraint if exists %I', p_table, p_name);
    execute format('alter table %s add constraint %I check %s', p_table, p_name, p_check);
  end if;
end;
$$;
--! EndIncluded core/input_contract.sql
--! Included core/limits.sql
-- The thresholds of the SPEC ("Limits" and the declaration rules of Absences), each named once.
-- Rules, messages and CHECK constraints take their number from these functions; the HTTP layer's
-- copies are compared with them at start-up (src/http/manifest-check.ts). Immutable SQL: the
-- planner folds them into constants.

create or replace function app_hidden.retroactivity_days() returns int
language sql immutable parallel safe as $$ select 14 $$;
comment on function app_hidden.retroactivity_days() is
'SPEC Limits, retroactivity of an employee request: how many days back an absence request, a
cancellation request or a day-change request may reach (declaration rules 13 and 15).';

create or replace function app_hidden.employee_retroactivity_limit(p_today date) returns date
language sql immutable parallel safe as $$ select p_today - app_hidden.retroactivity_days() $$;
comment on function app_hidden.employee_retroactivity_limit(date) is
'SPEC Limits: the earliest date an employee''s own request may concern on business date p_today
(today minus app_hidden.retroactivity_days()).';

create or replace function app_hidden.manager_retroactivity_limit(p_today date) returns date
language sql immutable parallel safe as $$ select make_date(extract(year from p_today)::int - 1, 12, 1) $$;
comment on function app_hidden.manager_retroactivity_limit(date) is
'SPEC Limits, retroactivity of a manager''s declaration: 1 December of the year before p_today, the
earliest date a declaration for another employee or a decider''s decision may concern.';

create or replace function app_hidden.first_accepted_year() returns int
language sql immutable parallel safe as $$ select 2000 $$;
create or replace function app_hidden.last_accepted_year() returns int
language sql immutable parallel safe as $$ select 2100 $$;
comment on function app_hidden.first_accepted_year() is
'The first civil year a date of an absence or a counter may fall in (input sanity bound).';
comment on function app_hidden.last_accepted_year() is
'The last civil year a date of an absence or a counter may fall in (input sanity bound).';

create or replace function app_hidden.absence_max_days() returns int
language sql immutable parallel safe as $$ select 1096 $$;
comment on function app_hidden.absence_max_days() is
'Longest span between the first and last day of one absence: three years (the longest leave, a renewed
parental leave); beyond is an input error.';

create or replace function app_hidden.notice_follow_days() returns int
language sql immutable parallel safe as $$ select 7 $$;
comment on function app_hidden.notice_follow_days() is
'SPEC Absences, declaration rule 16: a parental leave starting at most this many days after a maternity
or adoption leave follows it directly and takes the short notice period.';

create or replace function app_hidden.document_max_bytes() returns int
language sql immutable parallel safe as $$ select 10 * 1024 * 1024 $$;
comment on function app_hidden.document_max_bytes() is
'SPEC Limits, document size: 10 MB (10 x 1024 x 1024 bytes, CONTRACT section 7) per absence document,
attachment and honorability certificate.';

create or replace function app_hidden.planning_max_days() returns int
language sql immutable parallel safe as $$ select 62 $$;
comment on function app_hidden.planning_max_days() is
'CONTRACT section 7: the longest window of days one planning read covers.';
--! EndIncluded core/limits.sql
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
  professional_email text check (professional_email ~ app_hidden.email_pattern()),
  -- Null main workplace: the employee is visible only to managers of the whole association.
  main_establishment_id int references app_public.establishments on delete restrict,
  birth_date date,
  -- Polyvalent agents: an absence in their trial period raises an agreement warning.
  is_polyvalent boolean not null default false,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now()
);
-- Their patterns come from sql/core/input_contract.sql (a database created before: the CHECKs are replaced).
select app_private.ensure_check('app_public.employees', 'employees_professional_email_check',
  '((professional_email ~ app_hidden.email_pattern()))');
create index if not exists employees_main_establishment_idx on app_public.employees (main_establishment_id);
create index if not exists employees_name_idx on app_public.employees (lower(last_name), lower(first_name));

-- Kept apart so that RLS, not the serializer, decides who reads it.
create table if not exists app_public.employee_social_security_numbers (
  employee_id int primary key references app_public.employees on delete cascade,
  social_security_number text not null check (social_security_number ~ app_hidden.social_security_number_pattern())
);
select app_private.ensure_check('app_public.employee_social_security_numbers',
  'employee_social_security_numbers_social_security_number_check',
  '((social_security_number ~ app_hidden.social_security_number_pattern()))');

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
  year smallint not null check (year between app_hidden.first_accepted_year() and app_hidden.last_accepted_year()),
  is_active boolean not null default true,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  unique (employee_id, code, year)
);
create index if not exists counters_code_idx on app_public.counters (code, year);
-- The accepted years are named in sql/core/limits.sql; an older database's CHECK held the numbers.
alter table app_public.counters drop constraint if exists counters_year_check,
  add constraint counters_year_check
    check (year between app_hidden.first_accepted_year() and app_hidden.last_accepted_year());

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
  comment text check (char_length(comment) <= app_hidden.comment_max_length()),
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
-- Its limit comes from sql/core/input_contract.sql (a database created before: the CHECK is replaced).
select app_private.ensure_check('app_public.shift_change_requests', 'shift_change_requests_comment_check',
  '((char_length(comment) <= app_hidden.comment_max_length()))');
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
  comment text check (char_length(comment) <= app_hidden.comment_max_length()),
  source_request_id int references app_public.shift_change_requests on delete set null,
  created_by int references app_public.accounts on delete set null,
  updated_by int references app_public.accounts on delete set null,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  unique (employee_id, date)
);
select app_private.ensure_check('app_public.day_modifications', 'day_modifications_comment_check',
  '((char_length(comment) <= app_hidden.comment_max_length()))');
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
  comment text check (char_length(comment) <= app_hidden.comment_max_length()),
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
-- Its limit comes from sql/core/input_contract.sql (a database created before: the CHECK is replaced).
select app_private.ensure_check('app_public.absences', 'absences_comment_check',
  '((char_length(comment) <= app_hidden.comment_max_length()))');
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
  size_bytes int not null check (size_bytes > 0 and size_bytes <= app_hidden.document_max_bytes()),
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
  size_bytes int not null check (size_bytes > 0 and size_bytes <= app_hidden.document_max_bytes()),
  storage_key text not null unique check (storage_key ~ '^[0-9a-f]{32}$'),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  uploaded_at timestamptz not null default app_hidden.now(),
  uploaded_by int references app_public.accounts on delete set null,
  uploaded_by_name text not null
);

-- The size limit of a file is app_hidden.document_max_bytes(); a database created when the
-- CHECKs held the number itself gets them replaced.
alter table app_public.absence_documents drop constraint if exists absence_documents_size_bytes_check,
  add constraint absence_documents_size_bytes_check check (size_bytes > 0 and size_bytes <= app_hidden.document_max_bytes());
alter table app_public.honorability_certificates drop constraint if exists honorability_certificates_size_bytes_check,
  add constraint honorability_certificates_size_bytes_check
    check (size_bytes > 0 and size_bytes <= app_hidden.document_max_bytes());

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
  title text not null check (btrim(title) <> '' and char_length(title) <= app_hidden.event_title_max_length()),
  description text check (char_length(description) <= app_hidden.event_description_max_length()),
  establishment_id int references app_public.establishments on delete set null,
  start_at timestamptz not null,
  end_at timestamptz not null,
  created_by int references app_public.accounts on delete set null,
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  constraint events_interval check (end_at > start_at)
);
-- Its limit comes from sql/core/input_contract.sql (a database created before: the CHECK is replaced).
select app_private.ensure_check('app_public.events', 'events_title_check',
  '(((btrim(title) <> ''''::text) AND (char_length(title) <= app_hidden.event_title_max_length())))');
select app_private.ensure_check('app_public.events', 'events_description_check',
  '((char_length(description) <= app_hidden.event_description_max_length()))');
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
--! Included org/policies.sql
-- Row-level security of the organisation and reference tables.
-- Request roles: wfm_visitor (reads) and wfm_api (owner of the API functions, so that their
-- reads and writes go through the same policies). The table owner bypasses RLS: only
-- app_private/app_hidden security definer helpers run as owner.

-- Reference data, readable by every authenticated account.
do $$
declare
  t text;
begin
  foreach t in array array['divisions', 'establishments', 'teams', 'team_establishments', 'posts',
                           'contract_types', 'roles', 'permissions', 'role_permissions',
                           'absence_categories', 'absence_types', 'absence_type_contract_types',
                           'counter_kinds', 'counter_associations', 'shift_change_reasons'] loop
    execute format('alter table app_public.%I enable row level security', t);
    execute format('drop policy if exists select_authenticated on app_public.%I', t);
    execute format('create policy select_authenticated on app_public.%I for select to wfm_visitor, wfm_api
                    using ((select app_hidden.current_account_id()) is not null)', t);
  end loop;
end;
$$;

-- Directory readers: their own record, the directory (encadrement reads the whole
-- association, CONTRACT: lists are entire without scope=perimeter), and the payroll
-- perimeter (Service Paie reads the people it pays). Policies test the directory
-- permission first, in an init plan: for the encadrement the row test is then a constant
-- true and the list of readable employees is never built.
create or replace function app_hidden.readable_employee_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  if app_hidden.current_account_has('employee.view_employee_directory') then
    -- The directory is every employee: the other branches add nothing to it.
    return query select e.id from app_public.employees e;
    return;
  end if;
  if not app_hidden.current_account_has('employee.view_payroll') then
    -- Without the payroll permission its perimeter is empty (most employees): no scope to compute.
    return query select x.id from (select app_hidden.current_employee_id()) x(id) where x.id is not null;
    return;
  end if;
  return query
    select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
    union
    select app_hidden.perimeter_employee_ids('employee.view_payroll');
end;
$$;

alter table app_public.employees enable row level security;
drop policy if exists select_readable on app_public.employees;
create policy select_readable on app_public.employees for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or id in (select app_hidden.readable_employee_ids()));

alter table app_public.employee_social_security_numbers enable row level security;
drop policy if exists select_ssn_permission on app_public.employee_social_security_numbers;
create policy select_ssn_permission on app_public.employee_social_security_numbers for select to wfm_visitor, wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('employee.view_social_security_number')));

alter table app_public.employee_secondary_establishments enable row level security;
drop policy if exists select_readable on app_public.employee_secondary_establishments;
create policy select_readable on app_public.employee_secondary_establishments for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));

alter table app_public.team_assignments enable row level security;
drop policy if exists select_readable on app_public.team_assignments;
create policy select_readable on app_public.team_assignments for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));

alter table app_public.contracts enable row level security;
drop policy if exists select_readable on app_public.contracts;
create policy select_readable on app_public.contracts for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));

alter table app_public.planning_templates enable row level security;
drop policy if exists select_readable on app_public.planning_templates;
create policy select_readable on app_public.planning_templates for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));

alter table app_public.planning_template_slots enable row level security;
drop policy if exists select_readable on app_public.planning_template_slots;
create policy select_readable on app_public.planning_template_slots for select to wfm_visitor, wfm_api
  using (exists (select 1 from app_public.planning_templates t where t.id = planning_template_slots.template_id));

-- Accounts: one's own, and the directory readers (who see the account of a record).
alter table app_public.accounts enable row level security;
drop policy if exists select_own_or_directory on app_public.accounts;
create policy select_own_or_directory on app_public.accounts for select to wfm_visitor, wfm_api
  using (id = (select app_hidden.current_account_id())
         or (select app_hidden.current_account_has('employee.view_employee_directory')));

alter table app_public.role_attributions enable row level security;
drop policy if exists select_own_or_directory on app_public.role_attributions;
create policy select_own_or_directory on app_public.role_attributions for select to wfm_visitor, wfm_api
  using (account_id = (select app_hidden.current_account_id())
         or (select app_hidden.current_account_has('employee.view_employee_directory')));

alter table app_public.role_attribution_establishments enable row level security;
drop policy if exists select_visible_attribution on app_public.role_attribution_establishments;
create policy select_visible_attribution on app_public.role_attribution_establishments for select to wfm_visitor, wfm_api
  using (attribution_id in (select ra.id from app_public.role_attributions ra));

alter table app_public.account_permissions enable row level security;
drop policy if exists select_own_or_directory on app_public.account_permissions;
create policy select_own_or_directory on app_public.account_permissions for select to wfm_visitor, wfm_api
  using (account_id = (select app_hidden.current_account_id())
         or (select app_hidden.current_account_has('employee.view_employee_directory')));

-- Private tables: RLS on and no policy, so only the owner (security definer helpers) reads them.
alter table app_private.account_secrets enable row level security;
alter table app_private.password_tokens enable row level security;
alter table app_private.settings enable row level security;
--! EndIncluded org/policies.sql
--! Included absences/policies.sql
-- Absences: the employee reads their own; queue readers read their perimeter; payroll
-- readers read the absences of the people they pay (the payroll routes show no comment,
-- decision reason or document). /api/absences/ narrows this to own + queue perimeter
-- (app_hidden.absence_api_reader_ids, SPEC Permissions rule 3).
create or replace function app_hidden.absence_reader_employee_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  return query
    select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
    union
    select app_hidden.perimeter_employee_ids('absences.view_absence_queue')
    union
    select app_hidden.perimeter_employee_ids('employee.view_payroll');
end;
$$;

-- Who may write an absence row at all (the API functions apply the finer rules): the
-- employee on their own record, the manager workspace on its queue perimeter.
create or replace function app_hidden.absence_writer_employee_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  return query
    select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
    union
    select app_hidden.perimeter_employee_ids('absences.view_absence_queue');
end;
$$;

-- The employees whose absences the acting account reads, as one array kept for the
-- transaction (null: every employee, a reader of the whole association). The select policy
-- asks it in every statement that reads absences (three in a creation), so a repeated ask is one
-- lookup in a transaction-local setting, keyed like the memo of sql/perimeter.sql (account,
-- employee record, instant, generation of the perimeter tables); plain plpgsql, neither
-- security definer nor SET, so that a repeated ask costs no context switch (docs/architecture.md,
-- Performance notes). An account holding neither permission (most employees) reads its own
-- record only: one existence test instead of two perimeter scopes.
create or replace function app_hidden.absence_readers() returns int[]
language plpgsql stable as $$
declare
  v_account int := app_hidden.current_account_id();
  v_key text := pg_catalog.concat(v_account, '|', pg_catalog.current_setting('app.employee_id', true), '|',
                                  app_hidden.now(), '|', app_hidden.perimeter_generation(), '|');
  v_memo text := pg_catalog.current_setting('app.memo_absence_readers', true);
  v_readers int[];
begin
  if pg_catalog.left(v_memo, pg_catalog.length(v_key)) = v_key then
    v_memo := pg_catalog.substr(v_memo, pg_catalog.length(v_key) + 1);
    return case when v_memo = 'W' then null else v_memo::int[] end;
  end if;
  if not (app_hidden.account_has_permission(v_account, 'absences.view_absence_queue')
          or app_hidden.account_has_permission(v_account, 'employee.view_payroll')) then
    v_readers := array(select x from (select app_hidden.current_employee_id()) e(x) where x is not null);
  elsif app_hidden.perimeter_is_whole('absences.view_absence_queue')
        or app_hidden.perimeter_is_whole('employee.view_payroll') then
    v_readers := null;
  else
    v_readers := array(select app_hidden.absence_reader_employee_ids());
  end if;
  perform pg_catalog.set_config('app.memo_absence_readers', v_key || coalesce(v_readers::text, 'W'), true);
  return v_readers;
end;
$$;

alter table app_public.absences enable row level security;
-- (A reader of the whole association needs no list: the init plan answers for every row.)
drop policy if exists select_own_or_perimeter on app_public.absences;
create policy select_own_or_perimeter on app_public.absences for select to wfm_visitor, wfm_api
  using ((select app_hidden.absence_readers() is null)
         or employee_id in (select unnest(app_hidden.absence_readers())));
-- Filing: for oneself, or a declaration inside the decision perimeter.
drop policy if exists insert_own_or_decider on app_public.absences;
create policy insert_own_or_decider on app_public.absences for insert to wfm_api
  with check (employee_id = (select app_hidden.current_employee_id())
              or employee_id in (select app_hidden.perimeter_employee_ids('absences.decide_absence')));
drop policy if exists update_own_or_perimeter on app_public.absences;
create policy update_own_or_perimeter on app_public.absences for update to wfm_api
  using (employee_id in (select app_hidden.absence_writer_employee_ids()))
  with check (employee_id in (select app_hidden.absence_writer_employee_ids()));
-- Only the owner withdraws (a pending request; the guard trigger refuses any other state).
drop policy if exists delete_own on app_public.absences;
create policy delete_own on app_public.absences for delete to wfm_api
  using (employee_id = (select app_hidden.current_employee_id()));

-- Correlated: each document looks up its absence (primary key, the absence's own policy
-- applies), where "absence_id in (select a.id from absences)" hashed every readable absence
-- (100 000 for a whole-association reader) for each statement that touched documents.
alter table app_public.absence_documents enable row level security;
drop policy if exists select_visible_absence on app_public.absence_documents;
create policy select_visible_absence on app_public.absence_documents for select to wfm_visitor, wfm_api
  using (exists (select 1 from app_public.absences a where a.id = absence_documents.absence_id));
-- Depositing is open to the owner and to the manager perimeter without the read right.
drop policy if exists insert_writer on app_public.absence_documents;
create policy insert_writer on app_public.absence_documents for insert to wfm_api
  with check (exists (select 1 from app_public.absences a
                      where a.id = absence_documents.absence_id
                        and a.employee_id in (select app_hidden.absence_writer_employee_ids())));
-- Removing needs the right to correct the absence (issue 11): the decision perimeter. (A
-- withdrawal by the owner erases the absence; its documents go by the foreign key's cascade.)
drop policy if exists delete_writer on app_public.absence_documents;
create policy delete_writer on app_public.absence_documents for delete to wfm_api
  using (exists (select 1 from app_public.absences a
                 where a.id = absence_documents.absence_id
                   and a.employee_id in (select app_hidden.perimeter_employee_ids('absences.decide_absence'))));

alter table app_public.honorability_certificates enable row level security;
drop policy if exists select_own_or_directory on app_public.honorability_certificates;
create policy select_own_or_directory on app_public.honorability_certificates for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));
create or replace function app_hidden.honorability_writer_employee_ids() returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
  union
  select app_hidden.perimeter_employee_ids('absences.view_absence_queue')
  union
  select app_hidden.perimeter_employee_ids('employee.change_employee_record');
$$;
drop policy if exists insert_writer on app_public.honorability_certificates;
create policy insert_writer on app_public.honorability_certificates for insert to wfm_api
  with check (employee_id in (select app_hidden.honorability_writer_employee_ids()));
drop policy if exists update_writer on app_public.honorability_certificates;
create policy update_writer on app_public.honorability_certificates for update to wfm_api
  using (employee_id in (select app_hidden.honorability_writer_employee_ids()))
  with check (employee_id in (select app_hidden.honorability_writer_employee_ids()));
drop policy if exists delete_writer on app_public.honorability_certificates;
create policy delete_writer on app_public.honorability_certificates for delete to wfm_api
  using (employee_id in (select app_hidden.honorability_writer_employee_ids()));

alter table app_private.storage_garbage enable row level security;
--! EndIncluded absences/policies.sql
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

-- The prelude of every authenticated API request (src/db/transaction.ts): the reload of
-- begin_request, where an inactive or unknown account is an error (WA001, answered 401) that
-- aborts the transaction, so that the statements sent behind it do nothing and the commit
-- rolls back. A route the manifest reserves to staff (auth 'staff') passes p_staff_only: an
-- account that is neither staff nor superuser is refused here (WF002, 403), before the route's
-- function and before its input is read (the router asks this prelude alone when the input is
-- refused, so that such a caller gets 403, not 400).
drop function if exists app_private.begin_request_or_fail(int, int);
create or replace function app_private.begin_request_or_fail(p_account_id int, p_impersonator_id int default null,
                                                             p_staff_only boolean default false) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account jsonb := app_private.begin_request(p_account_id, p_impersonator_id);
begin
  if v_account is null then
    raise exception using errcode = 'WA001', message = 'Compte inactif ou inconnu.';
  end if;
  if p_staff_only and not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Réservé aux comptes du personnel d’administration.', 'WF002');
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
    left join app_public.role_attribution_establishments rae on rae.attribution_id = ra.id
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
-- Text, not json: the service sends it as is (app_public.planning_read_text, in parts:
-- planning_read_chunks), and a cast to json would parse the whole answer once more only to check it.
-- How it stays cheap for a month of 200 employees (6 000 cells, 2.5 MB):
--   * a worked or rest block is written in two parts: its head, up to "pending_request":, which
--     depends on the planned day only (written once per post of the templates, once per day
--     modification), and its tail, the pending request and the on-call periods of the cell;
--   * most cells are a day of their employee's one template with the usual tail (no pending
--     request, no on-call period): each template's week is written once (seven blocks texts),
--     and such a cell is its employee's week at its weekday, without any join;
--   * the other cells (a day modification, granted absences, a pending request, an on-call
--     period, or an employee with several templates in the window) are computed one by one,
--     the absences' blocks already in order; only a cell with an hourly absence sorts its
--     blocks;
--   * each employee's cells are aggregated in the order of the days, so the answer sorts
--     employees, not cells; the answer is one aggregate of its parts (head, employees' cells,
--     holidays), not concatenations that would each copy its 2.5 MB.
drop function if exists app_hidden.planning_cells(int[], date, date);
create or replace function app_hidden.planning_cells(p_employee_ids int[], p_from date, p_to date) returns text
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
declare
  -- The head of a rest block in a day without modification.
  v_rest_head constant text := '{"kind":"rest","post":null,"post_code":null,"post_label":null,"establishment":null'
    || ',"start_time":null,"end_time":null,"break_start_time":null,"break_end_time":null'
    || ',"break_paid":false,"minutes":0,"is_remote":false,"is_offsite":false'
    || ',"modified":false,"comment":null,"absence":null,"pending_request":';
  -- The same rest block with the usual tail: no pending request, no on-call period.
  v_rest_block constant text := v_rest_head || 'null,"on_call":[]}';
begin
  return (
    with days as (
      select d::date as date, app_hidden.json_date(d::date) as date_json, extract(isodow from d)::int as weekday
      from generate_series(p_from, p_to, interval '1 day') d
    ),
    emp as (
      select e.id, e.first_name, e.last_name, e.main_establishment_id,
             row_number() over (order by lower(e.last_name), lower(e.first_name), e.id) as ord
      from app_public.employees e
      where e.id = any (p_employee_ids)
    ),
    -- The templates valid at some day of the window.
    tpl as (
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
    -- The slots of those templates.
    template_slot as materialized (
      select ts.template_id, ts.weekday, ts.post_id, ts.position
      from app_public.planning_template_slots ts
      where ts.template_id in (select tpl.id from tpl)
    ),
    -- The head of a worked block of each post the templates plan (a template's slot is its
    -- post's, never remote, in a day without modification): written once per post, not per slot.
    post_head as materialized (
      select p.id, extract(epoch from p.start_time)::int / 60 as start_minute,
             '{"kind":"work","post":' || p.id
             || ',"post_code":' || app_hidden.json_text(p.code) || ',"post_label":' || app_hidden.json_text(p.label)
             || ',"establishment":' || app_hidden.json_int(p.establishment_id)
             || ',"start_time":' || app_hidden.json_hm(p.start_time)
             || ',"end_time":' || app_hidden.json_hm(p.end_time)
             || ',"break_start_time":' || app_hidden.json_hm(p.break_start_time)
             || ',"break_end_time":' || app_hidden.json_hm(p.break_end_time)
             || ',"break_paid":' || app_hidden.json_bool(coalesce(p.break_paid, false))
             || ',"minutes":' || app_hidden.json_int(app_hidden.slot_minutes(app_hidden.post_slot(p)))
             || ',"is_remote":false,"is_offsite":false,"modified":false,"comment":null,"absence":null,"pending_request":'
               as head
      from app_public.posts p
      where p.id in (select ts.post_id from template_slot ts)
    ),
    -- The heads of a template's weekday, by start time, with their start minutes (aggregated
    -- from sorted input: an aggregate's own order by would sort each group apart), and its
    -- blocks with the usual tail.
    template_day as (
      select y.template_id, y.weekday, y.heads, y.starts,
             array_to_string(y.heads, 'null,"on_call":[]},') || 'null,"on_call":[]}' as blocks
      from (
        select x.template_id, x.weekday, array_agg(x.head) as heads, array_agg(x.start_minute) as starts
        from (select ts.template_id, ts.weekday, ph.head, ph.start_minute
              from template_slot ts
              join post_head ph on ph.id = ts.post_id
              order by ts.template_id, ts.weekday, ph.start_minute, ts.position) x
        group by x.template_id, x.weekday
      ) y
    ),
    -- Each template's week: the blocks of its seven weekdays (a rest when none), usual tail.
    template_week as (
      select x.template_id, array_agg(x.blocks) as week
      from (select t.id as template_id, coalesce(td.blocks, v_rest_block) as blocks
            from tpl t
            cross join generate_series(1, 7) wd
            left join template_day td on td.template_id = t.id and td.weekday = wd
            order by t.id, wd) x
      group by x.template_id
    ),
    -- The heads of each day modification, by start time (a rest when it has no slot).
    modification as (
      select x.employee_id, x.date, array_agg(x.head) as heads, array_agg(x.start_minute) as starts
      from (
        select m.employee_id, m.date, coalesce(extract(epoch from sl.start_time)::int / 60, 0) as start_minute,
               case when sl.n is null
                    then '{"kind":"rest","post":null,"post_code":null,"post_label":null,"establishment":null'
                         || ',"start_time":null,"end_time":null,"break_start_time":null,"break_end_time":null'
                         || ',"break_paid":false,"minutes":0,"is_remote":false,"is_offsite":false'
                         || ',"modified":true,"comment":' || app_hidden.json_text(m.comment)
                         || ',"absence":null,"pending_request":'
                    else '{"kind":"work","post":' || app_hidden.json_int(sl.post_id)
                         || ',"post_code":' || app_hidden.json_text(po.code) || ',"post_label":' || app_hidden.json_text(po.label)
                         || ',"establishment":' || app_hidden.json_int(sl.establishment_id)
                         || ',"start_time":' || app_hidden.json_hm(sl.start_time)
                         || ',"end_time":' || app_hidden.json_hm(sl.end_time)
                         || ',"break_start_time":' || app_hidden.json_hm(sl.break_start_time)
                         || ',"break_end_time":' || app_hidden.json_hm(sl.break_end_time)
                         || ',"break_paid":' || app_hidden.json_bool(coalesce(sl.break_paid, false))
                         || ',"minutes":' || app_hidden.json_int(app_hidden.slot_minutes(
                                               row(sl.start_time, sl.end_time, sl.break_start_time, sl.break_end_time,
                                                   sl.break_paid, sl.post_id, sl.establishment_id, sl.is_remote)::app_public.slot))
                         || ',"is_remote":' || app_hidden.json_bool(coalesce(sl.is_remote, false) or coalesce(m.is_remote, false))
                         || ',"is_offsite":' || app_hidden.json_bool(coalesce(m.is_offsite, false))
                         || ',"modified":true,"comment":' || app_hidden.json_text(m.comment)
                         || ',"absence":null,"pending_request":'
               end as head
        from app_public.day_modifications m
        left join lateral unnest(m.slots) with ordinality
          as sl(start_time, end_time, break_start_time, break_end_time, break_paid, post_id, establishment_id, is_remote, n) on true
        left join app_public.posts po on po.id = sl.post_id
        where m.employee_id = any (p_employee_ids) and m.date between p_from and p_to
        order by m.employee_id, m.date, 3, sl.n
      ) x
      group by x.employee_id, x.date
    ),
    absence_day as (
      select a.employee_id, d.date, a.id, a.type_id, t.code as type_code, t.name as type_name,
             a.date_start, a.date_end, a.start_half, a.end_half, a.start_time, a.end_time, a.comment, a.status,
             case when a.start_time is not null then 'hours'
                  when d.date = a.date_start and a.start_half is not distinct from 'afternoon' then 'afternoon'
                  when d.date = a.date_end and a.end_half is not distinct from 'morning' then 'morning'
                  else 'day' end as part
      from app_public.absences a
      join app_public.absence_types t on t.id = a.type_id
      cross join lateral generate_series(greatest(a.date_start, p_from), least(a.date_end, p_to), interval '1 day') as g(day)
      cross join lateral (select g.day::date as date) d
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
    -- The tail of the worked or rest blocks of the cells that have a day modification, granted
    -- absences, a pending request or an on-call period: the pending request, the on-call periods.
    cell_tail as (
      select k.employee_id, k.date, pend.pending, coalesce(oc.on_call::text, '[]') as on_call,
             pend.pending || ',"on_call":' || coalesce(oc.on_call::text, '[]') || '}' as tail
      from (select x.employee_id, x.date from modification x
            union select x.employee_id, x.date from granted x
            union select x.employee_id, x.date from pending_absence x
            union select x.employee_id, x.date from pending_shift_change x
            union select x.employee_id, x.date from on_call x) k
      left join pending_absence pa on pa.employee_id = k.employee_id and pa.date = k.date
      left join pending_shift_change ps on ps.employee_id = k.employee_id and ps.date = k.date
      left join on_call oc on oc.employee_id = k.employee_id and oc.date = k.date
      cross join lateral (
        select case when pa.id is not null then '{"kind":"absence","id":' || pa.id || ',"is_cancellation":false}'
                    when ps.id is not null then '{"kind":"shift_change","id":' || ps.id || ',"is_cancellation":false}'
                    else 'null'
               end as pending
      ) pend
    ),
    -- The absence blocks of each cell, in their order (k1: morning or whole day, hourly, afternoon;
    -- k2: start minute), aggregated from sorted input.
    absence_blocks as (
      select b.employee_id, b.date, bool_or(b.whole) as whole,
             array_agg(b.block) as blocks, array_agg(b.k1) as k1s, array_agg(b.k2) as k2s,
             string_agg(b.block, ',') filter (where b.k1 = 0) as before_blocks,
             string_agg(b.block, ',') filter (where b.k1 = 2) as after_blocks, bool_or(b.k1 = 1) as hourly
      from (
        select g.employee_id, g.date, g.whole,
               case g.part when 'afternoon' then 2 when 'hours' then 1 else 0 end as k1,
               coalesce(extract(epoch from g.start_time)::int / 60, 0) as k2,
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
                                                when g.whole then t.pending
                                                else 'null' end
               || ',"on_call":' || t.on_call || '}' as block
        from granted g
        join cell_tail t on t.employee_id = g.employee_id and t.date = g.date
        order by g.employee_id, g.date, 4, 5
      ) b
      group by b.employee_id, b.date
    ),
    cell_extra as (
      select t.employee_id, t.date, t.tail, m.heads, m.starts, ab.whole, ab.blocks, ab.k1s, ab.k2s,
             ab.before_blocks, ab.after_blocks, ab.hourly
      from cell_tail t
      left join modification m on m.employee_id = t.employee_id and m.date = t.date
      left join absence_blocks ab on ab.employee_id = t.employee_id and ab.date = t.date
    ),
    -- The cells computed one by one: those with something of their own, and every cell of an
    -- employee with several templates in the window (the latest valid_from first).
    special_cell as (
      select c.employee_id, c.date,
             case when x.employee_id is null then coalesce(td.blocks, v_rest_block)
                  when x.blocks is null then array_to_string(coalesce(x.heads, td.heads, array[v_rest_head]), x.tail || ',') || x.tail
                  when x.whole then array_to_string(x.blocks, ',')
                  -- a half day: the morning's absence, the worked (or rest) blocks, the afternoon's
                  when not x.hourly
                    then concat_ws(',', x.before_blocks,
                                   array_to_string(coalesce(x.heads, td.heads, array[v_rest_head]), x.tail || ',') || x.tail,
                                   x.after_blocks)
                  -- hourly absences among the worked (or rest) blocks, sorted together; at the same
                  -- start time, the worked slot before the hourly absence
                  else (select string_agg(b.block, ',' order by b.k1, b.k2, b.k3)
                        from (select a.block, a.k1, a.k2, 1 as k3
                              from unnest(x.blocks, x.k1s, x.k2s) as a(block, k1, k2)
                              union all
                              select h.head || x.tail, 1, h.start_minute, 0
                              from unnest(coalesce(x.heads, td.heads, array[v_rest_head]), coalesce(x.starts, td.starts, '{0}'::int[]))
                                as h(head, start_minute)) b)
             end as blocks
      from (
        select distinct on (s.employee_id, s.date) s.employee_id, s.date, t.id as template_id
        from (select x.employee_id, x.date from cell_extra x
              union
              select et.employee_id, d.date from emp_template et cross join days d where et.templates > 1) s
        left join tpl t on t.employee_id = s.employee_id and t.valid_from <= s.date and (t.valid_to is null or t.valid_to >= s.date)
        order by s.employee_id, s.date, t.valid_from desc
      ) c
      left join template_day td on td.template_id = c.template_id and td.weekday = extract(isodow from c.date)::int
      left join cell_extra x on x.employee_id = c.employee_id and x.date = c.date
    ),
    special_of_employee as (
      select s.employee_id, array_agg(s.date) as dates, array_agg(s.blocks) as blocks
      from special_cell s
      group by s.employee_id
    ),
    -- Each employee's cells, in the order of the days: a special cell, else the day of its one
    -- template's week while the template is valid, else a rest.
    employee_cells as (
      select e.ord, cells.text
      from emp e
      left join emp_template et on et.employee_id = e.id and et.templates = 1
      left join template_week tw on tw.template_id = et.template_id
      left join special_of_employee se on se.employee_id = e.id
      cross join lateral (
        select string_agg(case when e.ord = 1 and d.date = p_from then '{"employee":' else ',{"employee":' end
                          || e.id || ',"date":' || d.date_json || ',"blocks":['
                          || coalesce(se.blocks[array_position(se.dates, d.date)],
                                      case when d.date between et.valid_from and et.valid_to then tw.week[d.weekday] end,
                                      v_rest_block)
                          || ']}', '') as text
        from days d
      ) cells
    )
    -- The answer as one aggregate of its parts in order (concatenations would copy 2.5 MB each).
    select string_agg(part.text, '' order by part.k)
    from (
      select 0::bigint as k,
             '{"from":' || app_hidden.json_date(p_from) || ',"to":' || app_hidden.json_date(p_to)
             || ',"employees":[' || coalesce((select string_agg(
                  '{"id":' || e.id || ',"name":' || app_hidden.json_text(e.first_name || ' ' || e.last_name)
                  || ',"first_name":' || app_hidden.json_text(e.first_name) || ',"last_name":' || app_hidden.json_text(e.last_name)
                  || ',"main_establishment":' || app_hidden.json_int(e.main_establishment_id) || '}', ',' order by e.ord)
                  from emp e), '')
             || '],"cells":[' as text
      union all
      select c.ord, c.text from employee_cells c
      union all
      select 9223372036854775807,
             '],"holidays":[' || coalesce((select string_agg(
                  '{"date":' || app_hidden.json_date(h.day) || ',"name":' || app_hidden.json_text(h.name) || '}', ',' order by h.day)
                  from generate_series(extract(year from p_from)::int, extract(year from p_to)::int) y,
                       lateral app_public.public_holidays(y) h
                  where h.day between p_from and p_to), '')
             || ']}'
    ) part
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
-- planning_read_text is the JSON text as written, which the service passes through (a month
-- of 200 employees is 2.5 MB); the route calls planning_read_chunks, the same bytes in parts.
-- planning_read is the same answer typed json, for SQL callers and GraphQL.
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
  if v_to - v_from + 1 > app_hidden.planning_max_days() then
    perform app_hidden.invalid('to', format('Le planning se lit sur %s jours au plus (ici %s jours) : réduisez la période.',
                                            app_hidden.planning_max_days(), v_to - v_from + 1), 'WV108');
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

-- The same answer in bytes of at most 64 KiB, in order, for the route to send as they come: one
-- 2.5 MB value was received whole by the service's driver, in a buffer doubled up to 4 MiB
-- per request (docs/architecture.md, Performance notes).
create or replace function app_public.planning_read_chunks(p_from date default null, p_to date default null, p_employee int default null,
                                                           p_establishment int default null, p_team int default null)
returns setof bytea
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_answer bytea := convert_to(app_public.planning_read_text(p_from, p_to, p_employee, p_establishment, p_team), 'UTF8');
begin
  return query select substring(v_answer from i for 65536) from generate_series(1, length(v_answer), 65536) i;
end;
$$;
--! EndIncluded planning/planning.sql
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
    perform app_hidden.forbidden('Votre compte n''est rattaché à aucune fiche salarié : vous ne pouvez pas demander de modification de journée.', 'WF106');
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
    format('La demande de modification de %s pour le %s n''a aucun valideur : aucun compte actif ne peut la décider dans le périmètre du salarié.',
           v_name, app_hidden.fr_date(v_date)),
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
                                     when p_type_found is not true then 'Motif d''absence inconnu ou inactif.' end))));
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
           then 'L''heure de fin doit suivre l''heure de début.' end),
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
           then 'Une absence d''une seule journée ne peut pas commencer l''après-midi et finir le matin.'
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
         then format('Une déclaration ne peut pas remonter avant le 1er décembre de l''année précédente : la date de début doit être au plus tôt le %s.',
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
      'Le motif « %s » est réservé aux contrats %s ; aucun contrat n''est en vigueur le %s.',
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
        'Plafond annuel dépassé pour le motif « %s » sur l''année %s : demande de %s, total de %s avec cette demande, pour un plafond de %s.',
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
    'Le motif « %s » n''est pas fractionnable : %s, de la même année, est séparée de cette période.',
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
      'Motif « %s » : %s demandées, au-delà des %s (trajet compris) prévues par l''accord.',
      p_type.name, app_hidden.quantity_fr(p_quantity, 'hour'), app_hidden.hours_fr(p_type.warn_max_hours_per_absence)));
  end if;
  if p_type.warn_max_per_quarter is not null then
    select count(*) into v_count from app_public.absences a
    where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and date_trunc('quarter', a.date_start) = date_trunc('quarter', p_draft.date_start);
    if v_count + 1 > p_type.warn_max_per_quarter then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : l''accord en prévoit %s par trimestre civil ; %s autre(s) absence(s) de ce motif existe(nt) déjà au %se trimestre %s.',
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
        'Motif « %s » : %s sur l''année %s avec cette demande, au-delà des %s par an prévues par l''accord.',
        p_type.name, app_hidden.quantity_fr(v_total, p_type.unit), extract(year from p_draft.date_start),
        app_hidden.quantity_fr(p_type.warn_max_hours_per_year, p_type.unit)));
    end if;
  end if;
  if p_type.warn_min_duration is not null and p_type.warn_max_duration is not null then
    if p_draft.date_end + 1 < p_draft.date_start + p_type.warn_min_duration or p_draft.date_end + 1 > p_draft.date_start + p_type.warn_max_duration then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : l''accord prévoit une durée de %s à %s.', p_type.name,
        app_hidden.interval_fr(p_type.warn_min_duration), app_hidden.interval_fr(p_type.warn_max_duration)));
    end if;
  elsif p_type.warn_max_duration is not null and p_draft.date_end + 1 > p_draft.date_start + p_type.warn_max_duration then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : durée supérieure aux %s prévus par l''accord.', p_type.name,
      app_hidden.interval_fr(p_type.warn_max_duration)));
  elsif p_type.warn_min_duration is not null and p_draft.date_end + 1 < p_draft.date_start + p_type.warn_min_duration then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : durée inférieure aux %s prévus par l''accord.', p_type.name,
      app_hidden.interval_fr(p_type.warn_min_duration)));
  end if;
  if p_type.warn_min_seniority is not null
     and coalesce((select min(c.start_date) from app_public.contracts c where c.employee_id = p_draft.employee_id), p_draft.date_start)
         + p_type.warn_min_seniority > p_draft.date_start then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : moins de %s d''ancienneté au %s (condition de l''accord).', p_type.name,
      app_hidden.interval_fr(p_type.warn_min_seniority), app_hidden.fr_date(p_draft.date_start)));
  end if;
  if p_is_polyvalent then
    select c.trial_end_date into v_trial_end from app_public.contracts c
    where c.employee_id = p_draft.employee_id and c.trial_end_date is not null
      and c.start_date <= p_draft.date_end and c.trial_end_date >= p_draft.date_start
    order by c.start_date desc limit 1;
    if found then
      v_warnings := v_warnings || to_jsonb(format(
        'Absence pendant la période d''essai d''un agent polyvalent (fin de la période d''essai le %s).',
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
           select coalesce(jsonb_agg(format('Conflit avec l''événement « %s » %s.', x.e ->> 'title',
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

-- The one check of a request on a counter, with its one wording (SPEC Absences, declaration
-- rule 9): the declaration rules (app_private.absence_rule_counters) and the journal
-- (app_private.absence_sync_counters) both ask it. Null when the request passes.
create or replace function app_private.counter_request_error(p_code text, p_year int, p_counter_id int,
                                                             p_counter_unit text, p_type_unit text, p_type_name text,
                                                             p_requested numeric, p_held numeric)
returns text
language plpgsql stable as $$
declare
  v_available numeric;
begin
  if p_counter_unit <> p_type_unit then
    return format('Le compteur %s est tenu en %s alors que le motif « %s » se pose en %s : demande refusée.',
                  p_code, case when p_counter_unit = 'hour' then 'heures' else 'jours' end, p_type_name,
                  case when p_type_unit = 'hour' then 'heures' else 'jours' end);
  end if;
  if p_counter_id is null then
    return format('Aucun compteur %s ouvert pour %s : le motif « %s » ne peut pas être posé sur cette année.',
                  p_code, p_year, p_type_name);
  end if;
  if p_requested is null then
    return null;
  end if;
  v_available := app_private.counter_remaining(p_counter_id) + coalesce(p_held, 0);
  if p_requested > v_available then
    return format('Solde insuffisant sur le compteur %s %s : demande de %s, solde disponible de %s.',
                  p_code, p_year, app_hidden.quantity_fr(p_requested, p_counter_unit),
                  app_hidden.quantity_fr(v_available, p_counter_unit));
  end if;
  return null;
end;
$$;
comment on function app_private.counter_request_error(text, integer, integer, text, text, text, numeric, numeric) is
'SPEC Absences, declaration rule 9: the message refusing p_requested on counter p_code of p_year for the
type p_type_name (units that differ, no open counter, or more than its remaining plus p_held, what the
absence already holds on it), or null; p_requested null checks the unit and the opening only.';

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
  v_error text;
  v_moved numeric;
  r record;
begin
  select * into v_absence from app_public.absences a where a.id = p_absence_id;
  for r in select * from app_private.absence_counter_target(v_absence, v_today) loop
    if r.counter_unit <> r.type_unit or r.counter_id is null then
      perform app_hidden.invalid('counters', app_private.counter_request_error(
        r.code, r.year, r.counter_id, r.counter_unit, r.type_unit,
        (select t.name from app_public.absence_types t where t.id = v_absence.type_id), null, null), 'WV301');
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
      v_error := app_private.counter_request_error(r.code, r.year, r.counter_id, r.unit, r.unit, null,
                                                   r.tp + r.tt, r.cp + r.ct);
      if v_error is not null then
        perform app_hidden.invalid('counters', v_error, 'WV301');
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
  if v_year not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year() then
    perform app_hidden.invalid('year', format('Année invalide : entre %s et %s.', app_hidden.first_accepted_year(),
                                              app_hidden.last_accepted_year()), 'WV302');
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
create or replace function app_hidden.absence_check_version(p_absence app_public.absences, p_version int, p_required boolean)
returns void
language plpgsql stable as $$
begin
  if p_version is not null then
    if p_version <> p_absence.version then
      perform app_hidden.conflict(
        'Quelqu''un d''autre a déjà traité cette absence (version périmée) : rechargez la file et recommencez.', 'WC201');
    end if;
  elsif p_required then
    perform app_hidden.invalid('version', 'Ce champ est obligatoire.');
  end if;
end;
$$;

-- The same, for the writes that still take a body (PATCH, validation with corrections).
create or replace function app_hidden.absence_check_version(p_absence app_public.absences, p_body jsonb, p_required boolean)
returns void
language plpgsql stable as $$
begin
  perform app_hidden.absence_check_version(p_absence, (p_body ->> 'version')::int, p_required);
end;
$$;

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

-- The retroactive window of a decider (app_hidden.manager_retroactivity_limit), applied when a
-- decider grants a cancellation or cancels a granted absence.
create or replace function app_hidden.absence_check_decider_window(p_absence app_public.absences) returns void
language plpgsql stable as $$
declare
  v_limit date := app_hidden.manager_retroactivity_limit(app_hidden.today());
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
comment on function app_public.absence_create(integer, integer, date, date, text, text, time, time, text, jsonb, text) is
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
  perform app_hidden.absence_check_text_length('reason', v_reason);

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
    perform app_hidden.forbidden('Seul le salarié concerné peut demander l''annulation de son absence.', 'WF205');
  end if;
  perform app_hidden.absence_check_version(v, p_version, false);
  if v.status <> 'validated' then
    perform app_hidden.invalid('status', case v.status
      when 'cancellation_requested' then 'L''annulation de cette absence est déjà demandée.'
      when 'pending' then 'Seule une absence accordée peut faire l''objet d''une demande d''annulation : retirez plutôt votre demande en attente.'
      else 'Seule une absence accordée peut faire l''objet d''une demande d''annulation.' end, 'WV210');
  end if;
  if v.date_start < v_limit then
    perform app_hidden.invalid('date_start', format(
      'L''annulation ne peut plus être demandée : l''absence a commencé avant le %s (%s jours au plus).',
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
    format('%s demande l''annulation de son absence %s.', app_hidden.employee_name(v.employee_id),
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
  using ((select app_hidden.absence_readers() is null)
         or employee_id in (select unnest(app_hidden.absence_readers())));
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
    perform app_hidden.forbidden('Vous n''avez pas le droit de lire ni d''écrire le numéro de sécurité sociale : '
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
    perform app_hidden.forbidden('Vous n''avez pas le droit d''écrire le numéro de sécurité sociale de ce salarié : '
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
      perform app_hidden.forbidden('Vous n''avez pas le droit de créer ou de modifier une fiche salarié.', 'WF502');
    end if;
    -- A record outside every perimeter of the caller: not found before forbidden (SPEC Errors).
    perform app_hidden.refuse_outside_or_forbid(p_id,
      'Vous n''avez pas le droit de créer ou de modifier une fiche salarié.', 'WF502');
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
              when not p_main = any (p_scope) then 'Cet établissement n''est pas dans votre périmètre.' end
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
  select 'L''établissement principal ne peut pas être aussi un établissement secondaire.'
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
  select case when not p_creating then 'L''identifiant se choisit à la création de la fiche seulement.'
              when app_hidden.username_well_formed(p_username) is false
              then format('Identifiant invalide : de %s à %s caractères parmi lettres, chiffres et . _ @ + -.',
                          app_hidden.username_min_length(), app_hidden.username_max_length())
              when app_private.username_taken(p_username)
              then format('L''identifiant « %s » est déjà utilisé.', p_username) end;
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
                     case when p_trial_end < p_start then 'la fin de période d''essai précède la date de début.'
                          when p_trial_end > p_end then 'la fin de période d''essai dépasse la fin du contrat.' end],
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
    v_messages := v_messages || (v_label || 'ce contrat n''appartient pas à ce salarié.');
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
    v_messages := v_messages || (v_label || format('l''intitulé de poste fait au plus %s caractères.', app_hidden.job_title_max_length()));
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
      v_messages := v_messages || (v_label || 'cette affectation n''appartient pas à ce salarié.');
    end if;
  end if;
  v_team := app_hidden.in_int(p_item, 'team', 'teams');
  v_start := app_hidden.in_date(p_item, 'start_date', 'teams');
  v_end := app_hidden.in_date(p_item, 'end_date', 'teams');
  if v_team is null then
    v_messages := v_messages || (v_label || 'l''équipe est obligatoire.');
  elsif not exists (select 1 from app_public.teams t where t.id = v_team) then
    v_messages := v_messages || (v_label || format('équipe n° %s introuvable.', v_team));
  elsif p_scope is not null
        and (v_existing.id is null or v_existing.team_id <> v_team or v_existing.start_date is distinct from v_start
             or v_existing.end_date is distinct from v_end)
        and not exists (select 1 from app_public.team_establishments te
                        where te.team_id = v_team and te.establishment_id = any (p_scope)) then
    v_messages := v_messages || (v_label || 'cette équipe n''a aucun établissement dans votre périmètre.');
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
--! Included employees/tables.sql
-- Annexes of the employee record: emergency contacts and attachments (HR documents).

create table if not exists app_public.employee_emergency_contacts (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  name text not null check (btrim(name) <> '' and char_length(name) <= app_hidden.name_max_length()),
  relationship text check (char_length(relationship) <= app_hidden.relationship_max_length()),
  phone text not null check (phone ~ app_hidden.phone_pattern()),
  alternate_phone text check (alternate_phone ~ app_hidden.phone_pattern()),
  email text check (email ~ app_hidden.email_pattern() and char_length(email) <= app_hidden.email_max_length()),
  position smallint not null default 1 check (position between 1 and 10),
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now()
);
-- Their patterns and limits come from sql/core/input_contract.sql (a database created before: the CHECKs are replaced).
select app_private.ensure_check('app_public.employee_emergency_contacts', 'employee_emergency_contacts_name_check',
  '(((btrim(name) <> ''''::text) AND (char_length(name) <= app_hidden.name_max_length())))');
select app_private.ensure_check('app_public.employee_emergency_contacts', 'employee_emergency_contacts_relationship_check',
  '((char_length(relationship) <= app_hidden.relationship_max_length()))');
select app_private.ensure_check('app_public.employee_emergency_contacts', 'employee_emergency_contacts_phone_check',
  '((phone ~ app_hidden.phone_pattern()))');
select app_private.ensure_check('app_public.employee_emergency_contacts', 'employee_emergency_contacts_alternate_phone_check',
  '((alternate_phone ~ app_hidden.phone_pattern()))');
select app_private.ensure_check('app_public.employee_emergency_contacts', 'employee_emergency_contacts_email_check',
  '(((email ~ app_hidden.email_pattern()) AND (char_length(email) <= app_hidden.email_max_length())))');
create index if not exists employee_emergency_contacts_employee_idx on app_public.employee_emergency_contacts (employee_id, position);

create table if not exists app_public.employee_attachments (
  id int generated always as identity primary key,
  employee_id int not null references app_public.employees on delete cascade,
  title text not null check (btrim(title) <> '' and char_length(title) <= app_hidden.attachment_title_max_length()),
  filename text not null check (length(filename) between 1 and 255),
  content_type text not null check (content_type in ('application/pdf', 'image/jpeg', 'image/png')),
  size_bytes int not null check (size_bytes > 0 and size_bytes <= app_hidden.document_max_bytes()),
  -- Name of the file in the storage directory (random, never derived from user input).
  storage_key text not null unique check (storage_key ~ '^[0-9a-f]{32}$'),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  uploaded_at timestamptz not null default app_hidden.now(),
  uploaded_by int references app_public.accounts on delete set null,
  uploaded_by_name text not null,
  updated_at timestamptz not null default app_hidden.now()
);
-- Its limit comes from sql/core/input_contract.sql (a database created before: the CHECK is replaced).
select app_private.ensure_check('app_public.employee_attachments', 'employee_attachments_title_check',
  '(((btrim(title) <> ''''::text) AND (char_length(title) <= app_hidden.attachment_title_max_length())))');
create index if not exists employee_attachments_employee_idx on app_public.employee_attachments (employee_id, uploaded_at desc);
-- The size limit is app_hidden.document_max_bytes(); an older database's CHECK held the number.
alter table app_public.employee_attachments drop constraint if exists employee_attachments_size_bytes_check,
  add constraint employee_attachments_size_bytes_check check (size_bytes > 0 and size_bytes <= app_hidden.document_max_bytes());

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

-- Validation and write of the record, shared by creation (p_id null) and update: reads the
-- body field by field (a wrong type answers at once under its field), asks each rule of
-- sql/employees/rules.sql, answers every refusal together (400 WV501), then writes. Runs as
-- the API function's role (wfm_api): every write goes through the policies.
create or replace function app_hidden.employee_save(p_id int, p_body jsonb, p_partial boolean) returns int
language plpgsql volatile as $$
declare
  v_creating boolean := p_id is null;
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_employee_record');
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
  v_secondaries int[];
  v_old_secondaries int[];
  v_ssn text;
  v_contracts jsonb;
  v_teams jsonb;
begin
  if not v_creating then
    select * into v_old from app_public.employees e where e.id = p_id;
    if not found then
      perform app_hidden.not_found('Salarié introuvable.');
    end if;
  end if;
  -- The key itself is refused to whoever may not read the number (before anything else).
  if p_body ? 'social_security_number' then
    perform app_hidden.employee_refuse_ssn_key(p_id);
  end if;
  perform app_hidden.employee_refuse_record_write(p_id);

  -- A name is required when creating, replacing (PUT) or sent; else the record's stays (and is
  -- checked as it is).
  v_first_name := app_hidden.in_trimmed(p_body, 'first_name');
  v_name_required := v_creating or not p_partial or p_body ? 'first_name';
  if not v_name_required then
    v_first_name := v_old.first_name;
  end if;
  v_errors := app_hidden.add_refusals(v_errors, 'first_name',
    app_hidden.employee_name_refusal(v_first_name, v_name_required, 'Le prénom est obligatoire.'));
  v_last_name := app_hidden.in_trimmed(p_body, 'last_name');
  v_name_required := v_creating or not p_partial or p_body ? 'last_name';
  if not v_name_required then
    v_last_name := v_old.last_name;
  end if;
  v_errors := app_hidden.add_refusals(v_errors, 'last_name',
    app_hidden.employee_name_refusal(v_last_name, v_name_required, 'Le nom est obligatoire.'));

  v_email := case when p_body ? 'professional_email' then app_hidden.in_trimmed(p_body, 'professional_email')
                  else v_old.professional_email end;
  v_errors := app_hidden.add_refusals(v_errors, 'professional_email', coalesce(
    app_hidden.employee_email_refusal(case when p_body ? 'professional_email' then v_email end),
    app_hidden.employee_email_takeover_refusal(p_id, v_old.professional_email, v_email)));

  v_birth_date := case when p_body ? 'birth_date' then app_hidden.in_date(p_body, 'birth_date') else v_old.birth_date end;
  v_errors := app_hidden.add_refusals(v_errors, 'birth_date',
    app_hidden.employee_birth_date_refusal(case when p_body ? 'birth_date' then v_birth_date end));

  v_polyvalent := coalesce(app_hidden.in_bool(p_body, 'is_polyvalent'), v_old.is_polyvalent, false);

  v_main := case when p_body ? 'main_establishment' then app_hidden.in_int(p_body, 'main_establishment')
                 else v_old.main_establishment_id end;
  v_errors := app_hidden.add_refusals(v_errors, 'main_establishment', coalesce(
    app_hidden.establishment_unknown_refusal(case when p_body ? 'main_establishment' then v_main end),
    app_hidden.employee_main_workplace_perimeter_refusal(
      v_main, v_creating or v_main is distinct from v_old.main_establishment_id, v_scope)));

  v_old_secondaries := case when v_creating then '{}'::int[]
                            else array(select ses.establishment_id from app_public.employee_secondary_establishments ses
                                       where ses.employee_id = p_id) end;
  v_secondaries := app_hidden.in_ids(p_body, 'secondary_establishments');
  if v_secondaries is not null then
    v_errors := app_hidden.add_refusals(v_errors, 'secondary_establishments', coalesce(
      app_hidden.employee_secondary_workplaces_unknown_refusal(v_secondaries),
      app_hidden.employee_main_not_secondary_refusal(v_main, v_secondaries),
      app_hidden.employee_secondary_workplaces_perimeter_refusal(v_secondaries, v_old_secondaries, v_scope)));
  end if;

  if p_body ? 'social_security_number' then
    v_ssn := upper(replace(app_hidden.in_trimmed(p_body, 'social_security_number'), ' ', ''));
    v_errors := app_hidden.add_refusals(v_errors, 'social_security_number', app_hidden.employee_ssn_refusal(v_ssn));
  end if;

  if p_body ? 'username' then
    v_errors := app_hidden.add_refusals(v_errors, 'username', app_hidden.employee_username_refusal(
      v_creating, case when v_creating then app_hidden.in_trimmed(p_body, 'username') end));
  end if;

  v_contracts := app_hidden.in_array(p_body, 'contracts');
  if v_contracts is not null then
    v_errors := app_hidden.add_error_list(v_errors, 'contracts', app_hidden.employee_contracts_refusals(p_id, v_contracts));
  end if;

  v_teams := app_hidden.in_array(p_body, 'teams');
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
  if p_body ? 'social_security_number' then
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

-- Thresholds of the annexes, named once.
create or replace function app_hidden.emergency_contacts_max() returns int
language sql immutable as $$ select 10 $$;
comment on function app_hidden.emergency_contacts_max() is
'Emergency contacts: at most 10 per employee.';

-- Problems of one contact object, as (field, message) pairs.
create or replace function app_hidden.emergency_contact_problems(p_item jsonb) returns table (field text, message text)
language plpgsql immutable as $$
declare
  v_phone_pattern constant text := app_hidden.phone_pattern();
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
  elsif char_length(v) > app_hidden.name_max_length() then
    return query select 'name'::text, app_hidden.max_length_message(app_hidden.name_max_length());
  end if;
  if char_length(btrim(p_item ->> 'relationship')) > app_hidden.relationship_max_length() then
    return query select 'relationship'::text, app_hidden.max_length_message(app_hidden.relationship_max_length());
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
  if v is not null and app_hidden.email_acceptable(v) is not true then
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
  if jsonb_array_length(v_items) > app_hidden.emergency_contacts_max() then
    perform app_hidden.invalid('contacts', format('Au plus %s contacts d''urgence par salarié.', app_hidden.emergency_contacts_max()), 'WV560');
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
  if v_position > app_hidden.emergency_contacts_max() then
    perform app_hidden.invalid(null, format('Au plus %s contacts d''urgence par salarié : modifiez ou supprimez-en un.',
                                            app_hidden.emergency_contacts_max()), 'WV560');
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
  elsif char_length(v_name) > app_hidden.name_max_length() then
    perform app_hidden.invalid('name', app_hidden.max_length_message(app_hidden.name_max_length()), 'WV510');
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
  elsif char_length(v_name) > app_hidden.name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
  elsif app_hidden.establishment_name_taken(v_name, p_id) then
    v_errors := app_hidden.add_error(v_errors, 'name', format('Un établissement s''appelle déjà « %s ».', v_name));
  end if;
  v_base := coalesce(app_hidden.in_text(p_body, 'count_base'), v_old.count_base, 'ouvrables');
  if app_hidden.count_base_known(v_base) is not true then
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
  elsif char_length(v_name) > app_hidden.name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
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
      values (v_counter_id, 'acquired', v_amount, 'grant', 'Import de l''organisation');
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
  elsif char_length(v_name) > app_hidden.name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
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
    perform app_hidden.forbidden('Vous n''avez pas le droit de créer ou de modifier des événements.', 'WF530');
  end if;
  if p_id is not null then
    if not p_id in (select app_hidden.writable_event_ids()) then
      perform app_hidden.forbidden('Vous ne modifiez que les événements que vous avez créés ou ceux d''un établissement de votre périmètre.', 'WF531');
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
      v_errors := app_hidden.add_error(v_errors, 'establishment', 'Cet établissement n''est pas dans votre périmètre.');
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

-- PUT and PATCH bodies of an event (p_partial: only the keys sent change; a key sent as null
-- clears it): read into the values event_write checks.
create or replace function app_hidden.event_save(p_id int, p_body jsonb, p_partial boolean) returns int
language plpgsql volatile as $$
declare
  v_old app_public.events := app_hidden.event_lock_for_write(p_id);
  v_title text;
  v_description text;
  v_start timestamptz;
  v_end timestamptz;
  v_establishment int;
begin
  v_title := case when not p_partial or p_body ? 'title' then app_hidden.in_trimmed(p_body, 'title') else v_old.title end;
  v_description := case when p_body ? 'description' then app_hidden.in_trimmed(p_body, 'description') else v_old.description end;
  v_start := case when p_body ? 'start_at' then app_hidden.in_timestamptz(p_body, 'start_at') else v_old.start_at end;
  v_end := case when p_body ? 'end_at' then app_hidden.in_timestamptz(p_body, 'end_at') else v_old.end_at end;
  v_establishment := case when p_body ? 'establishment' then app_hidden.in_int(p_body, 'establishment') else v_old.establishment_id end;
  return app_hidden.event_write(v_old, v_title, v_description, v_establishment, p_body ? 'establishment',
                                v_start, v_end, app_hidden.in_ids(p_body, 'participants'));
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
  if array_position(p_participants, null) is not null then
    perform app_hidden.invalid('participants', 'Une liste d''identifiants (nombres entiers) est attendue.');
  end if;
  if cardinality(p_participants) <> (select count(distinct i) from unnest(p_participants) i) then
    perform app_hidden.invalid('participants', 'La liste contient des doublons.');
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
  if char_length(v_comment) > app_hidden.on_call_comment_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'comment', app_hidden.max_length_message(app_hidden.on_call_comment_max_length()));
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
  if p_year is null or p_year not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year() then
    perform app_hidden.invalid('year', format('Année invalide : entre %s et %s.', app_hidden.first_accepted_year(),
                                              app_hidden.last_accepted_year()), 'WV302');
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
--! EndIncluded graphql.sql
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
  elsif app_hidden.code_well_formed(v_code) is false then
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
