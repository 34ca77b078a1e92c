--! Previous: sha1:6385769b1cd6720a340e10fb661b426a4cc29e8f
--! Hash: sha1:59455e0ad02fe286c856c267a41060d737d0e9dc
--! Message: Issue 29: reasons an employee can use (employee_requestable, absence_types_for_request)

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

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
--! Included reference/data.sql
-- Reference data every database holds after migration (CONTRACT section 5).

insert into app_public.contract_types (code, name, is_temporary_work) values
  ('CDI', 'Contrat à durée indéterminée', false),
  ('CDD', 'Contrat à durée déterminée', false),
  ('Intérim', 'Mission d''intérim', true),
  ('Apprentissage', 'Contrat d''apprentissage', false),
  ('Stage', 'Convention de stage', false)
on conflict do nothing;

insert into app_public.counter_kinds (code, name, unit, is_consumable, position) values
  ('CP', 'Congés payés', 'day', true, 1),
  ('CT', 'Congés trimestriels', 'day', true, 2),
  ('ANC', 'Congés d''ancienneté', 'day', true, 3),
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
  ('FORMATION_SALARIE', 'Formation à l''initiative du salarié', 'FORMATION', 2),
  ('SANS_SOLDE', 'Congés non rémunérés', 'AUTRES', 1),
  ('AUTORISATIONS', 'Autorisations d''absence', 'AUTRES', 2),
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
  ('ANC', 'Congés d''ancienneté', 'CONGES_ANNUELS', 'day', true, true, false, null, 'refuse', false, true, 'none',
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
  ('PAT', 'Congé de paternité et d''accueil de l''enfant', 'PARENTALITE', 'day', true, true, false, null, 'refuse', true, true, 'neutralise',
   null, null, '1 month', null, null, null, null, null, null, null, null, 19),
  ('NAI', 'Congé de naissance', 'PARENTALITE', 'day', true, true, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 20),
  ('ADO', 'Congé d''adoption', 'PARENTALITE', 'day', true, false, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 21),
  ('PAR', 'Congé parental d''éducation', 'PARENTALITE', 'day', false, true, false, null, 'refuse', false, true, 'neutralise',
   null, null, '1 month', null, '2 months', null, null, null, null, '1 year', '1 year', 22),
  ('MAR', 'Mariage ou PACS du salarié', 'EVENEMENTS', 'day', true, false, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 23),
  ('MAE', 'Mariage d''un enfant', 'EVENEMENTS', 'day', true, false, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 24),
  ('DEC', 'Décès d''un proche', 'EVENEMENTS', 'day', true, false, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 25),
  ('DEE', 'Décès d''un enfant', 'EVENEMENTS', 'day', true, true, false, null, 'refuse', true, true, 'neutralise',
   null, null, null, null, null, null, null, null, null, null, null, 26),
  ('HAN', 'Annonce du handicap d''un enfant', 'EVENEMENTS', 'day', true, false, false, null, 'refuse', true, true, 'neutralise',
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
  ('VAE', 'Validation des acquis de l''expérience', 'FORMATION_SALARIE', 'day', true, true, true, null, 'refuse', true, true, 'neutralise',
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
  ('JUR', 'Juré d''assises ou convocation judiciaire', 'CIVIQUE', 'day', true, true, true, null, 'refuse', true, true, 'neutralise',
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
             format('Réservé aux contrats %s ; aucun contrat n''est en vigueur le %s.', j.reserved_to, app_hidden.fr_date(p_date))
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
    perform app_hidden.invalid('employee', 'Votre compte n''a pas de fiche salarié : nommez le salarié pour qui l''absence est déclarée.');
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
                                          half_day_allowed, documents_expected, validation_required, annualisation_effect, position,
                                          employee_requestable)
    values (v_code, v_name, v_category, v_unit, coalesce(app_hidden.in_bool(p_body, 'paid'), false),
            coalesce(app_hidden.in_bool(p_body, 'splittable'), true), v_cap, v_overrun,
            coalesce(app_hidden.in_bool(p_body, 'is_active'), true), v_half_day,
            coalesce(app_hidden.in_bool(p_body, 'documents_expected'), false),
            coalesce(app_hidden.in_bool(p_body, 'validation_required'), true), v_effect,
            coalesce(app_hidden.in_int(p_body, 'position'), 0),
            coalesce(app_hidden.in_bool(p_body, 'employee_requestable'), app_hidden.absence_type_requestable_default(v_code)))
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
      position = coalesce(app_hidden.in_int(p_body, 'position'), t.position),
      employee_requestable = coalesce(app_hidden.in_bool(p_body, 'employee_requestable'), t.employee_requestable)
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
an absence type (with « demandable par le salarié », issue 29: employee_requestable); all field errors at once, a code equal to a post code refused under code, and a
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
    if coalesce(app_hidden.in_text(p_body, v_field), '') !~ app_hidden.time_pattern()
       and (v_field in ('start_time', 'end_time') or app_hidden.in_text(p_body, v_field) is not null) then
      v_errors := app_hidden.add_error(v_errors, v_field, app_hidden.time_format_message());
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
