-- The benchmark organisation, generated straight in SQL (bench/run.ts runs each step in
-- order, timed). Parameters arrive as settings, never as SQL text:
--   bench.employees, bench.establishments, bench.absences, bench.shift_changes (integers),
--   bench.today (the business date the history is built around), bench.password_hash (ONE
--   argon2id hash, computed once in Node, shared by every bench account).
--
-- Bulk load runs with session_replication_role = replica: row triggers (audit, guards,
-- timestamps, the Salarié grant) and foreign-key triggers are off, so this script writes
-- what they would have written itself: every audit line (creations and each transition of
-- the generated history), the counter journal (grants, reservations, starts, consumptions,
-- releases), the Salarié attributions. Check constraints, unique indexes and the exclusion
-- constraint of absences stay enforced. Notifications of the history are the employees'
-- decision notices. Everything is deterministic: bench.rnd(seed) hashes its seed.

-- step: setup
create schema bench;
create table bench.params as
select current_setting('bench.employees')::int as employees,
       current_setting('bench.establishments')::int as establishments,
       current_setting('bench.absences')::int as absences,
       current_setting('bench.shift_changes')::int as shift_changes,
       current_setting('bench.today')::date as today;

-- A deterministic number in [0, 1) from a seed.
create function bench.rnd(p_seed bigint) returns double precision
language sql immutable parallel safe as $$
  select (hashint8(p_seed)::bigint + 2147483648) / 4294967296.0;
$$;
create function bench.seed(a bigint, b bigint, c bigint default 0) returns bigint
language sql immutable parallel safe as $$
  select a * 1000003 + b * 7919 + c;
$$;

do $$
declare
  p bench.params;
begin
  select * into p from bench.params;
  if p.employees < 100 or p.establishments < 2 or p.employees % p.establishments <> 0
     or (p.employees / p.establishments) % 5 <> 0 or p.employees / p.establishments < 20 then
    raise exception 'bench: employees must be a multiple of establishments, at least 20 and a multiple of 5 per establishment (got % / %)',
      p.employees, p.establishments;
  end if;
  if p.absences % p.employees <> 0 or p.shift_changes % p.employees <> 0 then
    raise exception 'bench: absences and shift_changes must be multiples of employees';
  end if;
  if nullif(current_setting('bench.password_hash', true), '') is null then
    raise exception 'bench: bench.password_hash is required';
  end if;
end;
$$;

-- Windows (all derived from today):
--   absences: one 7-day cell per absence and employee, ending at today + 182 (so a larger
--             history reaches further back);
--   planning (day-change requests, day modifications): today - 182 .. today + 182;
--   writes of the benchmark (new absences, new day-change requests): weekdays from
--             today + 192 on, never touched by the history.
create table bench.windows as
select p.today,
       p.employees / p.establishments as per_establishment,
       p.absences / p.employees as absences_per_employee,
       p.shift_changes / p.employees as shift_changes_per_employee,
       (p.today + 182) - 7 * (p.absences / p.employees) + 1 as absences_from,
       p.today + 182 as absences_to,
       p.today - 182 as planning_from,
       p.today + 182 as planning_to,
       p.today + 192 as writes_from,
       p.today + 192 + 240 as writes_to
from bench.params p;

-- step: organisation
set session_replication_role = replica;

insert into app_public.divisions (name)
select format('Pôle %s', d + 1)
from bench.params p, generate_series(0, (p.establishments - 1) / 5) d
order by d;

create table bench.establishments (idx int primary key, id int not null unique, division_idx int not null);
with ins as (
  insert into app_public.establishments (name, count_base, division_id)
  select format('Établissement %s', lpad((e + 1)::text, 3, '0')),
         case when e % 3 = 0 then 'ouvres' else 'ouvrables' end,
         (select d.id from app_public.divisions d where d.name = format('Pôle %s', e / 5 + 1))
  from bench.params p, generate_series(0, p.establishments - 1) e
  order by e
  returning id, name
)
insert into bench.establishments (idx, id, division_idx)
select substring(name from '\d+$')::int - 1, id, (substring(name from '\d+$')::int - 1) / 5 from ins;

-- Posts of each establishment: day, morning, evening, night, weekend.
insert into app_public.posts (code, label, establishment_id, start_time, end_time, break_start_time, break_end_time, break_paid)
select x.code, x.label, e.id, x.s, x.e, x.bs, x.be, x.bp
from bench.establishments e
cross join (values
  ('J', 'Journée', time '09:00', time '17:00', time '12:00', time '12:30', false),
  ('M', 'Matin', time '07:00', time '14:00', time '10:00', time '10:15', true),
  ('S', 'Soir', time '14:00', time '21:00', time '17:30', time '17:45', true),
  ('N', 'Nuit', time '21:00', time '07:00', time '02:00', time '02:30', false),
  ('W', 'Week-end', time '08:00', time '20:00', time '12:00', time '13:00', false)
) as x(code, label, s, e, bs, be, bp)
order by e.idx, x.code;

-- Five teams per establishment; the fifth team of an even establishment also works in the
-- next one (teams across establishments).
create table bench.teams (establishment_idx int, team_idx int, id int, primary key (establishment_idx, team_idx));
with ins as (
  insert into app_public.teams (name)
  select format('Équipe %s-%s', lpad((e.idx + 1)::text, 3, '0'), t + 1)
  from bench.establishments e, generate_series(0, 4) t
  order by e.idx, t
  returning id, name
)
insert into bench.teams
select substring(name from 'Équipe (\d+)-')::int - 1, substring(name from '-(\d+)$')::int - 1, id from ins;
insert into app_public.team_establishments (team_id, establishment_id)
select t.id, e.id from bench.teams t join bench.establishments e on e.idx = t.establishment_idx
union all
select t.id, e2.id
from bench.teams t
join bench.establishments e2 on e2.idx = t.establishment_idx + 1
where t.team_idx = 4 and t.establishment_idx % 2 = 0;

-- Employees: per_establishment per establishment, in five teams.
create table bench.employees (
  idx int primary key,
  id int not null unique,
  establishment_idx int not null,
  local_idx int not null,
  team_idx int not null,
  contract text not null,
  account_id int,
  username text
);
with names as (
  select array['Alice', 'Bruno', 'Chloé', 'David', 'Emma', 'Farid', 'Gaëlle', 'Hugo', 'Inès', 'Julien', 'Karima', 'Louis',
               'Manon', 'Nicolas', 'Océane', 'Paul', 'Quentin', 'Rose', 'Samir', 'Thomas', 'Ursula', 'Victor', 'Wassila',
               'Xavier', 'Yasmine', 'Zoé', 'Amandine', 'Baptiste', 'Camille', 'Damien', 'Élodie', 'Fabien', 'Grégoire',
               'Hélène', 'Ibrahim', 'Jeanne', 'Kevin', 'Laura', 'Mathieu', 'Nadia'] as firsts,
         array['Martin', 'Bernard', 'Thomas', 'Petit', 'Robert', 'Richard', 'Durand', 'Dubois', 'Moreau', 'Laurent',
               'Simon', 'Michel', 'Lefebvre', 'Leroy', 'Roux', 'David', 'Bertrand', 'Morel', 'Fournier', 'Girard',
               'Bonnet', 'Dupont', 'Lambert', 'Fontaine', 'Rousseau', 'Vincent', 'Muller', 'Lefèvre', 'Faure', 'André',
               'Mercier', 'Blanc', 'Guérin', 'Boyer', 'Garnier', 'Chevalier', 'François', 'Legrand', 'Gauthier', 'Garcia',
               'Perrin', 'Robin', 'Clément', 'Morin', 'Nicolas', 'Henry', 'Roussel', 'Mathieu', 'Gautier', 'Masson',
               'Marchand', 'Duval', 'Denis', 'Dumont', 'Marie', 'Lemaire', 'Noël', 'Meyer', 'Dufour', 'Meunier'] as lasts
),
src as (
  select i as idx, i / w.per_establishment as est, i % w.per_establishment as loc,
         (i % w.per_establishment) / (w.per_establishment / 5) as team,
         case when bench.rnd(bench.seed(i, 1)) < 0.04 then 'Intérim'
              when bench.rnd(bench.seed(i, 1)) < 0.12 then 'CDD'
              when bench.rnd(bench.seed(i, 1)) < 0.14 then 'Apprentissage'
              else 'CDI' end as contract
  from bench.windows w, bench.params p, generate_series(0, p.employees - 1) i
),
ins as (
  insert into app_public.employees (first_name, last_name, professional_email, main_establishment_id, birth_date, is_polyvalent)
  select n.firsts[1 + s.idx % 40], n.lasts[1 + (s.idx / 40) % 60] || case when s.idx >= 2400 then ' ' || (s.idx / 2400 + 1)::text else '' end,
         format('salarie%s@bench.example', s.idx), e.id,
         date '1965-01-01' + (bench.rnd(bench.seed(s.idx, 2)) * 13000)::int,
         s.loc % 17 = 3
  from src s
  cross join names n
  join bench.establishments e on e.idx = s.est
  order by s.idx
  returning id, professional_email
)
insert into bench.employees (idx, id, establishment_idx, local_idx, team_idx, contract)
select s.idx, ins.id, s.est, s.loc, s.team, s.contract
from ins join src s on format('salarie%s@bench.example', s.idx) = ins.professional_email;

-- A few employees also work in the partner establishment (same pair as the shared team).
insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
select b.id, e2.id
from bench.employees b
join bench.establishments e2 on e2.idx = case when b.establishment_idx % 2 = 0 then b.establishment_idx + 1
                                              else b.establishment_idx - 1 end
where b.local_idx % 50 = 7;

insert into app_public.team_assignments (employee_id, team_id)
select b.id, t.id
from bench.employees b join bench.teams t on t.establishment_idx = b.establishment_idx and t.team_idx = b.team_idx
order by b.idx;

-- Contracts: CDI since 2012-2021, CDD and interim missions around the window, apprentices.
insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, trial_end_date, job_title, weekly_hours)
select b.id, ct.id,
       case when b.contract in ('CDD', 'Intérim') then w.planning_from - 30
            when b.contract = 'Apprentissage' then make_date(extract(year from w.today)::int - 1, 9, 1)
            else make_date(2012 + b.idx % 10, 1 + b.idx % 12, 1) end,
       case when b.contract in ('CDD', 'Intérim') then w.writes_to + 60
            when b.contract = 'Apprentissage' then make_date(extract(year from w.today)::int + 2, 8, 31) end,
       case when b.local_idx % 17 = 3 then w.today + 40 end,
       (array['Éducateur spécialisé', 'Moniteur éducateur', 'Aide-soignant', 'Accompagnant éducatif et social',
              'Maître de maison', 'Infirmier', 'Surveillant de nuit', 'Agent de service'])[1 + b.idx % 8],
       case when b.idx % 9 = 0 then 28 else 35 end
from bench.employees b
cross join bench.windows w
join app_public.contract_types ct on ct.code = b.contract
order by b.idx;
-- Polyvalent agents in trial period: their contract starts a few months before.
update app_public.contracts c set start_date = w.today - 60
from bench.employees b, bench.windows w
where c.employee_id = b.id and b.local_idx % 17 = 3 and b.contract = 'CDI';

-- Weekly templates from the first contract start: six patterns (day, morning/evening,
-- evening + weekend, nights, part time).
create table bench.template_patterns (pattern int, weekday int, post_code text);
insert into bench.template_patterns
select 0, d, 'J' from generate_series(1, 5) d
union all select 1, d, case when d <= 3 then 'M' else 'S' end from generate_series(1, 5) d
union all select 2, d, 'S' from generate_series(1, 4) d union all select 2, 6, 'W'
union all select 3, d, 'N' from unnest(array[1, 2, 4, 5]) d
union all select 4, d, 'J' from generate_series(1, 4) d
union all select 5, d, case when d in (2, 4) then 'S' else 'M' end from generate_series(1, 5) d union all select 5, 7, 'W';

insert into app_public.planning_templates (employee_id, valid_from)
select b.id, (select min(c.start_date) from app_public.contracts c where c.employee_id = b.id)
from bench.employees b order by b.idx;
insert into app_public.planning_template_slots (template_id, weekday, position, post_id)
select t.id, tp.weekday, 1, po.id
from bench.employees b
join app_public.planning_templates t on t.employee_id = b.id
join bench.template_patterns tp on tp.pattern = b.idx % 6
join bench.establishments e on e.idx = b.establishment_idx
join app_public.posts po on po.establishment_id = e.id and po.code = tp.post_code
order by b.idx, tp.weekday;

-- step: accounts
-- One account per employee ("u00042"), all with the same password hash.
with ins as (
  insert into app_public.accounts (username, employee_id, is_active, is_staff)
  select format('u%s', lpad(b.idx::text, 5, '0')), b.id, true,
         b.establishment_idx = 0 and b.local_idx = 5
  from bench.employees b order by b.idx
  returning id, employee_id, username
)
update bench.employees b set account_id = ins.id, username = ins.username from ins where ins.employee_id = b.id;
insert into app_private.account_secrets (account_id, password_hash, password_changed_at)
select b.account_id, current_setting('bench.password_hash'), now() from bench.employees b;

-- Roles (what the Salarié trigger would grant, then the manager workspace):
--   every account: Salarié; interim contracts: Intérimaire;
--   each establishment: two Manager n1 (local 0 and 1), one DA (local 2);
--   each even establishment: a Manager n2 on the pair (the 200-employee perimeter);
--   the first establishment of each group of five: an RH n2 on the group;
--   establishment 0: Admin (staff, local 5), RH n1 (local 6), Service Paie (local 7);
--   establishment 1: a second RH n1 (local 6).
create table bench.roles (account_id int, role text, establishment_idxs int[]);
insert into bench.roles
select b.account_id, 'Salarié', null::int[] from bench.employees b
union all select b.account_id, 'Intérimaire', null from bench.employees b where b.contract = 'Intérim'
union all select b.account_id, 'Manager n1', array[b.establishment_idx] from bench.employees b where b.local_idx in (0, 1)
union all select b.account_id, 'DA', array[b.establishment_idx] from bench.employees b where b.local_idx = 2
union all select b.account_id, 'Manager n2', array[b.establishment_idx, b.establishment_idx + 1]
  from bench.employees b, bench.params p
  where b.local_idx = 3 and b.establishment_idx % 2 = 0 and b.establishment_idx + 1 < p.establishments
union all select b.account_id, 'RH n2', array(select e.idx from bench.establishments e where e.division_idx = b.establishment_idx / 5)
  from bench.employees b where b.local_idx = 4 and b.establishment_idx % 5 = 0
union all select b.account_id, 'Admin', null from bench.employees b where b.establishment_idx = 0 and b.local_idx = 5
union all select b.account_id, 'RH n1', null from bench.employees b where b.establishment_idx in (0, 1) and b.local_idx = 6
union all select b.account_id, 'Service Paie', null from bench.employees b where b.establishment_idx = 0 and b.local_idx = 7;

insert into app_public.role_attributions (account_id, role_id)
select r.account_id, ro.id from bench.roles r join app_public.roles ro on ro.name = r.role
order by r.account_id, ro.id;
insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
select ra.id, e.id
from bench.roles r
join app_public.roles ro on ro.name = r.role
join app_public.role_attributions ra on ra.account_id = r.account_id and ra.role_id = ro.id
cross join lateral unnest(r.establishment_idxs) x(idx)
join bench.establishments e on e.idx = x.idx;

-- step: counters
-- Counters of every civil year the history and the benchmark's writes touch; Acquis
-- granted in the journal. Delegation hours for one employee in ten.
create table bench.years as
select y from bench.windows w,
       generate_series(extract(year from least(w.absences_from, w.planning_from))::int, extract(year from w.writes_to)::int) y;
insert into app_public.counters (employee_id, code, year)
select b.id, k.code, y.y
from bench.employees b
cross join bench.years y
cross join (values ('CP'), ('RTT'), ('RC'), ('DLG_CSE')) k(code)
where k.code <> 'DLG_CSE' or b.local_idx % 10 = 9
order by b.idx, y.y, k.code;
insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment, created_at)
select c.id, 'acquired',
       case c.code when 'CP' then 30 when 'RTT' then 12 when 'RC' then 35 else 20 end,
       'grant', 'Droits de l''année', make_date(c.year, 1, 1)::timestamptz
from app_public.counters c order by c.id;

-- step: absences
-- One absence per 7-day cell and employee: a day type (1 to 3 days, half-days where the
-- type allows them) or an hourly type, at an offset of 0 to 2 days in the cell, so active
-- absences never overlap. The state follows the date (history decided, future requested).
create unlogged table bench.absence_draft as
with cells as (
  select b.idx, b.id as employee_id, b.account_id, b.establishment_idx, b.local_idx, c,
         w.absences_from + 7 * c + (bench.rnd(bench.seed(b.idx, c, 1)) * 3)::int as day0,
         bench.rnd(bench.seed(b.idx, c, 2)) as r_type,
         bench.rnd(bench.seed(b.idx, c, 3)) as r_len,
         bench.rnd(bench.seed(b.idx, c, 4)) as r_state,
         bench.rnd(bench.seed(b.idx, c, 5)) as r_author,
         w.today
  from bench.employees b
  cross join bench.windows w
  cross join generate_series(0, w.absences_per_employee - 1) c
),
typed as (
  select cells.*,
         case when r_type < 0.22 then 'CP'
              when r_type < 0.30 then 'RTT'
              when r_type < 0.35 then 'RC'
              when r_type < 0.37 then case when local_idx % 10 = 9 then 'DLG_CSE' else 'FOR' end
              when r_type < 0.55 then 'MAL'
              when r_type < 0.70 then 'FOR'
              when r_type < 0.78 then 'ENF'
              when r_type < 0.80 then 'DON'
              when r_type < 0.83 then 'PRA'
              when r_type < 0.86 then 'SYN_PAR'
              when r_type < 0.92 then 'R+'
              when r_type < 0.96 then 'CPF'
              else 'MAR' end as type_code
  from cells
)
select t.idx, t.c, t.employee_id, t.account_id, t.establishment_idx, t.local_idx, t.type_code, at.id as type_id,
       at.unit, at.half_day_allowed, t.r_state, t.r_author, t.today,
       t.day0 as date_start,
       case when at.unit = 'hour' then t.day0
            when t.type_code in ('ENF', 'MAR') then t.day0
            else t.day0 + (t.r_len * 3)::int % 3 end as date_end,
       case when at.unit = 'day' and at.half_day_allowed and t.r_len > 0.85 then 'afternoon' end as start_half,
       case when at.unit = 'day' and at.half_day_allowed and t.r_len between 0.70 and 0.85 then 'morning' end as end_half,
       case t.type_code when 'RC' then time '14:00' when 'DLG_CSE' then time '09:00' when 'DON' then time '10:00'
                        when 'PRA' then time '13:30' end as start_time,
       case t.type_code when 'RC' then time '16:00' when 'DLG_CSE' then time '12:00' when 'DON' then time '11:30'
                        when 'PRA' then time '16:30' end as end_time
from typed t
join app_public.absence_types at on at.code = t.type_code;

-- One morning: a single day whose end half is the morning; keep the bounds coherent.
update bench.absence_draft set start_half = null where start_half = 'afternoon' and end_half = 'morning' and date_start = date_end;

-- States by date: the past is decided, the recent past mostly, the future is requested.
alter table bench.absence_draft add column status text, add column declared boolean;
update bench.absence_draft d set
  status = case
    when d.date_start > d.today then
      case when r_state < 0.30 then 'pending' when r_state < 0.75 then 'validated'
           when r_state < 0.82 then 'cancellation_requested' when r_state < 0.90 then 'refused' else 'cancelled' end
    when d.date_start >= d.today - 14 then
      case when r_state < 0.10 then 'pending' when r_state < 0.75 then 'validated'
           when r_state < 0.80 then 'cancellation_requested' when r_state < 0.90 then 'refused' else 'cancelled' end
    else
      case when r_state < 0.02 then 'pending' when r_state < 0.72 then 'validated'
           when r_state < 0.87 then 'refused' else 'cancelled' end
  end;
-- One validated absence in ten was declared by a manager (born validated, no decision).
update bench.absence_draft set declared = status = 'validated' and r_author < 0.10;

-- Counted quantity of each absence (the same functions as the API: base of the
-- establishment, public holidays, half-days, hours).
alter table bench.absence_draft add column quantity numeric(8,2);
update bench.absence_draft d set quantity = coalesce((
  select sum(s.quantity) from app_hidden.absence_shares(d.employee_id, d.unit, d.date_start, d.date_end, d.start_half,
                                                       d.end_half, d.start_time, d.end_time) s), 0);

-- No counter goes below zero: the active absences of a counter type beyond what a year
-- leaves (keeping a margin for the benchmark's writes) become training (days) or caregiver
-- leave (hours), which consume no counter.
with active as (
  select d.idx, d.c, d.type_code,
         sum(d.quantity) over (partition by d.employee_id, d.type_code, extract(year from d.date_start)
                               order by d.date_start, d.c) as running
  from bench.absence_draft d
  where d.type_code in ('CP', 'RTT', 'RC', 'DLG_CSE') and d.status in ('pending', 'validated', 'cancellation_requested')
)
update bench.absence_draft d set
  type_code = case when d.unit = 'hour' then 'PRA' else 'FOR' end,
  type_id = (select t.id from app_public.absence_types t where t.code = case when d.unit = 'hour' then 'PRA' else 'FOR' end),
  start_time = case when d.unit = 'hour' then time '13:30' end,
  end_time = case when d.unit = 'hour' then time '16:30' end
from active a
where a.idx = d.idx and a.c = d.c
  and a.running > case a.type_code when 'CP' then 22 when 'RTT' then 9 when 'RC' then 27 else 14 end;
update bench.absence_draft d set quantity = coalesce((
  select sum(s.quantity) from app_hidden.absence_shares(d.employee_id, d.unit, d.date_start, d.date_end, d.start_half,
                                                       d.end_half, d.start_time, d.end_time) s), 0)
where d.type_code in ('FOR', 'PRA');

-- The deciders of an establishment: its first Manager n1, or the second one for the first's
-- own requests.
create table bench.deciders as
select b.establishment_idx, b.local_idx, b.account_id, b.id as employee_id
from bench.employees b where b.local_idx in (0, 1);

insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, start_time, end_time,
                                 comment, status, version, counted_quantity, counted_unit, author_account_id,
                                 submitted_at, created_at, updated_at, decided_by, decided_at, decision_reason,
                                 cancellation_comment, cancellation_requested_at, cancellation_decided_at,
                                 cancellation_decided_by, cancelled_by, cancelled_at, warnings)
select d.employee_id, d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time,
       case when d.c % 9 = 0 then 'Rendez-vous pris de longue date.' end,
       d.status,
       case d.status when 'pending' then 1 when 'validated' then case when d.declared then 1 else 2 end
                     when 'refused' then 2 else 3 end,
       d.quantity, d.unit,
       case when d.declared then dec.account_id else d.account_id end,
       case when not d.declared then x.created end,
       x.created,
       case when d.status = 'pending' or d.declared then x.created else x.decided + interval '2 hours' end,
       case when d.status <> 'pending' and not d.declared then dec.account_id end,
       case when d.status <> 'pending' and not d.declared then x.decided end,
       case when d.status = 'refused' then 'Effectif insuffisant sur la période.' end,
       case when d.status in ('cancellation_requested', 'cancelled') then 'Je n''en ai plus besoin.' end,
       case when d.status in ('cancellation_requested', 'cancelled') then x.decided + interval '1 hour' end,
       case when d.status = 'cancelled' then x.decided + interval '2 hours' end,
       case when d.status = 'cancelled' then dec.account_id end,
       case when d.status = 'cancelled' then dec.account_id end,
       case when d.status = 'cancelled' then x.decided + interval '2 hours' end,
       '[]'::jsonb
from bench.absence_draft d
join bench.deciders dec on dec.establishment_idx = d.establishment_idx and dec.local_idx = case when d.local_idx = 0 then 1 else 0 end
cross join lateral (
  select least((d.date_start - 3 - (d.c % 30))::timestamp + time '09:30', d.today - 1 + time '09:30')
           at time zone 'Europe/Paris' as created,
         least((d.date_start - 1 - (d.c % 3))::timestamp + time '15:00', d.today - 1 + time '15:00')
           at time zone 'Europe/Paris' as decided
) x0
cross join lateral (select x0.created, greatest(x0.decided, x0.created + interval '1 hour') as decided) x
order by d.employee_id, d.date_start;

-- step: absence journal
-- The journal an absence leaves through the API: a reservation in Planifiés at filing;
-- granted and started: start (Planifiés → Pris); refused or cancelled: the release.
create unlogged table bench.absence_plan as
select a.id as absence_id, a.status, a.date_start, a.author_account_id, a.decided_by, a.created_at, a.decided_at,
       a.cancelled_at, p.counter_id, p.quantity, (select w.today from bench.windows w) as today
from app_public.absences a
join app_public.counter_associations ca on ca.absence_type_id = a.type_id and ca.is_active
cross join lateral app_private.absence_counter_plan(row(a.employee_id, a.type_id, a.date_start, a.date_end, a.start_half,
                                                        a.end_half, a.start_time, a.end_time)::app_hidden.absence_draft) p;
insert into app_private.counter_movements (counter_id, bucket, quantity, kind, absence_id, transition, actor_account_id, created_at)
select counter_id, 'planned', quantity, 'reservation', absence_id, 'create', author_account_id, created_at
from bench.absence_plan
union all
select counter_id, 'planned', -quantity, 'release', absence_id, case when status = 'refused' then 'refuse' else 'cancel' end,
       decided_by, coalesce(cancelled_at, decided_at)
from bench.absence_plan where status in ('refused', 'cancelled')
union all
select counter_id, 'planned', -quantity, 'start', absence_id, 'start', null, date_start::timestamptz
from bench.absence_plan where status in ('validated', 'cancellation_requested') and date_start <= today
union all
select counter_id, 'taken', quantity, 'consumption', absence_id, 'start', null, date_start::timestamptz
from bench.absence_plan where status in ('validated', 'cancellation_requested') and date_start <= today
order by 6, 8;

-- step: day-change requests
-- shift_changes / employees requests per employee on distinct dates of the planning window:
-- one slot moved by half an hour to an hour and a half from the planned post. Decided in
-- the past, pending or decided in the future; at most one pending per employee and date.
create unlogged table bench.scr_draft as
select b.idx, b.id as employee_id, b.account_id, b.establishment_idx, b.local_idx, k,
       w.planning_from + k * ((w.planning_to - w.planning_from) / w.shift_changes_per_employee)
         + (bench.rnd(bench.seed(b.idx, k, 11)) * 20)::int as date,
       bench.rnd(bench.seed(b.idx, k, 12)) as r_state,
       w.today,
       po.id as post_id, po.establishment_id
from bench.employees b
cross join bench.windows w
cross join generate_series(0, w.shift_changes_per_employee - 1) k
join bench.establishments e on e.idx = b.establishment_idx
join app_public.posts po on po.establishment_id = e.id and po.code = 'J';
alter table bench.scr_draft add column status text, add column planned app_public.slot[], add column slots app_public.slot[];
update bench.scr_draft d set
  status = case when d.date >= d.today then case when r_state < 0.45 then 'pending' when r_state < 0.80 then 'validated' else 'refused' end
                when d.date >= d.today - 14 then case when r_state < 0.20 then 'pending' when r_state < 0.80 then 'validated' else 'refused' end
                else case when r_state < 0.70 then 'validated' else 'refused' end end,
  planned = app_hidden.template_slots(d.employee_id, d.date),
  slots = array[row(time '08:00' + (d.k % 3) * interval '30 minutes', time '16:30' + (d.k % 3) * interval '30 minutes',
                    time '12:00', time '12:30', false, d.post_id, d.establishment_id, d.k % 4 = 0)::app_public.slot];

insert into app_public.shift_change_requests (employee_id, date, reason, comment, is_remote, is_offsite, slots, status, version,
                                              planned_description, planned_minutes, requested_minutes, author_account_id,
                                              created_at, updated_at, decided_by, decided_at, decision_reason)
select d.employee_id, d.date, case when d.k % 5 = 0 then 'urgence' else 'demande_personnelle' end,
       case when d.k % 4 = 1 then 'Rendez-vous médical en fin de journée.' end,
       false, false, d.slots, d.status, case when d.status = 'pending' then 1 else 2 end,
       app_hidden.day_label(d.planned), app_hidden.slots_minutes(d.planned), app_hidden.slots_minutes(d.slots),
       d.account_id, x.created, case when d.status = 'pending' then x.created else x.created + interval '1 day' end,
       case when d.status <> 'pending' then dec.account_id end,
       case when d.status <> 'pending' then x.created + interval '1 day' end,
       case when d.status = 'refused' then 'Remplacement impossible ce jour-là.' end
from bench.scr_draft d
join bench.deciders dec on dec.establishment_idx = d.establishment_idx and dec.local_idx = case when d.local_idx = 0 then 1 else 0 end
cross join lateral (
  select least((d.date - 10)::timestamp + time '11:00', d.today - 1 + time '11:00') at time zone 'Europe/Paris' as created
) x
order by d.employee_id, d.date;

-- A validated request is the modification of its day.
insert into app_public.day_modifications (employee_id, date, slots, is_remote, is_offsite, source_request_id, created_by,
                                          updated_by, created_at, updated_at)
select r.employee_id, r.date, r.slots, r.is_remote, r.is_offsite, r.id, r.decided_by, r.decided_by, r.decided_at, r.decided_at
from app_public.shift_change_requests r
where r.status = 'validated'
order by r.employee_id, r.date;

-- step: audit and notifications
-- The lines the audit triggers write: a Creation per row; per transition of the history a
-- line with the row before and after (Validation, Refus, Demande d'annulation, Annulation),
-- the acting account's identity frozen as the trigger does.
create unlogged table bench.audit_lines (verb text, model text, target_id bigint, actor int, at timestamptz,
                                         before jsonb, after jsonb);
with absence_steps as (
  select a.id, a.status, a.author_account_id, a.decided_by, a.created_at, a.decided_at, a.cancellation_requested_at,
         a.cancelled_at, to_jsonb(a) as final,
         a.decided_by is null and a.status = 'validated' as declared
  from app_public.absences a
),
filed as (
  -- the request as filed (version 1, pending), or the declaration as written
  select s.*, s.final || case when s.declared then '{}'::jsonb
                              else jsonb_build_object('status', 'pending', 'version', 1, 'decided_by', null, 'decided_at', null,
                                                      'decision_reason', null, 'cancellation_comment', null,
                                                      'cancellation_requested_at', null, 'cancellation_decided_at', null,
                                                      'cancellation_decided_by', null, 'cancelled_by', null,
                                                      'cancelled_at', null, 'updated_at', s.created_at) end as v1
  from absence_steps s
),
decided as (
  select f.*, f.final || jsonb_build_object('status', case when f.status = 'refused' then 'refused' else 'validated' end,
                                            'version', 2, 'cancellation_comment', null, 'cancellation_requested_at', null,
                                            'cancellation_decided_at', null, 'cancellation_decided_by', null,
                                            'cancelled_by', null, 'cancelled_at', null,
                                            'updated_at', f.decided_at + interval '2 hours') as v2
  from filed f
),
cancel_asked as (
  select d.*, d.final || jsonb_build_object('status', 'cancellation_requested', 'version', 3, 'cancellation_decided_at', null,
                                            'cancellation_decided_by', null, 'cancelled_by', null, 'cancelled_at', null,
                                            'updated_at', d.cancellation_requested_at) as v3
  from decided d
)
insert into bench.audit_lines
select 'Creation', 'absence', c.id, c.author_account_id, c.created_at, null, c.v1 from cancel_asked c
union all
select case when c.status = 'refused' then 'Refus' else 'Validation' end, 'absence', c.id, c.decided_by, c.decided_at, c.v1, c.v2
from cancel_asked c where c.status <> 'pending' and not c.declared
union all
select 'Demande d''annulation', 'absence', c.id, c.author_account_id, c.cancellation_requested_at, c.v2, c.v3
from cancel_asked c where c.status in ('cancellation_requested', 'cancelled')
union all
select 'Annulation', 'absence', c.id, c.decided_by, c.cancelled_at, c.v3, c.final || jsonb_build_object('version', 4)
from cancel_asked c where c.status = 'cancelled';
-- Cancelled absences went through four versions.
update app_public.absences set version = 4 where status = 'cancelled';

insert into bench.audit_lines
select 'Creation', 'shift_change_request', r.id, r.author_account_id, r.created_at, null,
       to_jsonb(r) || jsonb_build_object('status', 'pending', 'version', 1, 'decided_by', null, 'decided_at', null,
                                         'decision_reason', null, 'updated_at', r.created_at)
from app_public.shift_change_requests r
union all
select case when r.status = 'refused' then 'Refus' else 'Validation' end, 'shift_change_request', r.id, r.decided_by,
       r.decided_at,
       to_jsonb(r) || jsonb_build_object('status', 'pending', 'version', 1, 'decided_by', null, 'decided_at', null,
                                         'decision_reason', null, 'updated_at', r.created_at),
       to_jsonb(r)
from app_public.shift_change_requests r where r.status <> 'pending'
union all
select 'Creation', 'day_modification', m.id, m.created_by, m.created_at, null, to_jsonb(m)
from app_public.day_modifications m;

insert into app_private.audit_log (at, actor_account_id, actor_username, actor_display_name, db_user, verb, model,
                                   target_id, before, after, transaction_id)
select l.at, l.actor, a.username, coalesce(e.first_name || ' ' || e.last_name, a.username), 'wfm_authenticator',
       l.verb, l.model, l.target_id, l.before, l.after, 0
from bench.audit_lines l
left join app_public.accounts a on a.id = l.actor
left join app_public.employees e on e.id = a.employee_id
order by l.at;

-- The decision notices the history sent to the employees.
insert into app_public.notifications (account_id, title, body, level, model, target_id, created_at, read_at)
select b.account_id,
       case when a.status = 'refused' then 'Demande d''absence refusée' else 'Demande d''absence validée' end,
       format('Votre demande d''absence %s a été %s.', app_hidden.absence_subject(a),
              case when a.status = 'refused' then 'refusée. Motif : ' || a.decision_reason else 'validée' end),
       case when a.status = 'refused' then 'error' else 'info' end,
       'absence', a.id, a.decided_at,
       case when a.date_start < (select w.today from bench.windows w) then a.decided_at + interval '1 day' end
from app_public.absences a
join bench.employees b on b.id = a.employee_id
where a.decided_at is not null
order by a.decided_at;

set session_replication_role = origin;
-- The per-state counts of the queues, which the triggers (off above) would have kept.
select app_private.absence_status_counts_rebuild();

-- step: checks
-- The journal is what the service would have written: no counter overdrawn, and for a sample
-- of absences of counter reasons, the net movements equal what app_private.absence_counter_target
-- (the service's own rule) says the absence must hold; a refused or cancelled one holds nothing.
do $$
declare
  v_bad int;
begin
  select count(*) into v_bad from app_private.counter_balances b where b.remaining < 0;
  if v_bad > 0 then
    raise exception 'bench dataset: % counters overdrawn', v_bad;
  end if;
  select count(*) into v_bad
  from (select a.* from app_public.absences a
        join app_public.counter_associations ca on ca.absence_type_id = a.type_id
        order by bench.rnd(a.id) limit 5000) a
  where exists (
    select 1
    from (select t.counter_id, t.bucket, t.quantity
          from app_private.absence_counter_target(a, (select w.today from bench.windows w)) t) target
    full join (select m.counter_id, m.bucket, sum(m.quantity) as quantity
               from app_private.counter_movements m where m.absence_id = a.id
               group by m.counter_id, m.bucket having sum(m.quantity) <> 0) held
      on held.counter_id = target.counter_id and held.bucket = target.bucket
    where target.quantity is distinct from held.quantity);
  if v_bad > 0 then
    raise exception 'bench dataset: the journal of % sampled absences differs from what they must hold', v_bad;
  end if;
end;
$$;

-- step: metadata
-- What bench/run.ts reads: who plays which role, and the first weekdays of the writes
-- window (never touched by the history).
create table bench.actors as
select r.role, r.account_id, b.username, b.id as employee_id, b.establishment_idx, r.establishment_idxs
from bench.roles r join bench.employees b on b.account_id = r.account_id
where r.role not in ('Salarié', 'Intérimaire');
create table bench.write_days as
select row_number() over (order by d) - 1 as n, d::date as day
from bench.windows w, generate_series(w.writes_from, w.writes_to, interval '1 day') d
where extract(isodow from d) between 1 and 5 and not app_hidden.is_public_holiday(d::date);
drop table bench.absence_draft, bench.absence_plan, bench.scr_draft, bench.audit_lines;
