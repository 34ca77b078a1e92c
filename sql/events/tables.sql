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
