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
