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
-- How the counter acquires (issue 27, sql/counters/rules.sql): set by the opening from the
-- counter rule ('opening' or 'monthly'); null for a counter opened by hand or by an import,
-- which the monthly acquisition leaves alone.
alter table app_public.counters add column if not exists acquisition text
  constraint counters_acquisition_check check (acquisition in ('opening', 'monthly'));
create index if not exists counters_year_idx on app_public.counters (year, code) where acquisition is not null;
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
-- Movements of the leave year (issue 27): acquisition (at the opening, or of one month),
-- carry_over (out of the old year, into the new one), expiry. period: the month acquired
-- (its first day), the first day of the year of an opening or a carry-over, the date of an
-- expiry. One such movement per counter, kind and period (the key that makes the jobs
-- exactly-once, even when late, twice or after a crash).
alter table app_private.counter_movements add column if not exists period date;
alter table app_private.counter_movements drop constraint if exists counter_movements_kind_check;
alter table app_private.counter_movements add constraint counter_movements_kind_check
  check (kind in ('grant', 'adjustment', 'reservation', 'release', 'consumption', 'restitution', 'start', 'compensation',
                  'acquisition', 'carry_over', 'expiry'));
create unique index if not exists counter_movements_period_key on app_private.counter_movements (counter_id, kind, period)
  where period is not null;
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
