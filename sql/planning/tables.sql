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
