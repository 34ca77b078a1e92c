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
