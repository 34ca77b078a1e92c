-- Each declaration rule of absences called alone (docs/architecture.md, "Where each rule lives"):
-- a refusal (or a warning) and an acceptance per rule, and what a rule answers when what it
-- needs is missing. The composition (app_private.absence_evaluate) is covered by 40-49.
begin;
select plan(62);
select tests.freeze('2026-11-16 10:00+01');

-- A draft of a fixture employee and a type code.
create function pg_temp.draft(p_employee text, p_type text, p_start date, p_end date default null,
                              p_start_half text default null, p_end_half text default null,
                              p_start_time time default null, p_end_time time default null)
returns app_hidden.absence_draft
language sql stable as $$
  select row(tests.id('employees', p_employee), (select t.id from app_public.absence_types t where t.code = p_type),
             p_start, coalesce(p_end, p_start), p_start_half, p_end_half, p_start_time, p_end_time)::app_hidden.absence_draft;
$$;
create function pg_temp.type_row(p_code text) returns app_public.absence_types
language sql stable as $$ select t from app_public.absence_types t where t.code = p_code $$;
create function pg_temp.period(p_draft app_hidden.absence_draft) returns tsrange
language sql immutable as $$
  select app_hidden.absence_period(p_draft.date_start, p_draft.date_end, p_draft.start_half, p_draft.end_half,
                                   p_draft.start_time, p_draft.end_time);
$$;
-- A draft with nothing in it, and a type row that was not found.
create function pg_temp.empty_draft() returns app_hidden.absence_draft
language sql immutable as $$ select row(null, null, null, null, null, null, null, null)::app_hidden.absence_draft $$;
create function pg_temp.no_type() returns app_public.absence_types
language sql immutable as $$ select null::app_public.absence_types $$;

-- Thresholds (sql/core/limits.sql).
select is(app_hidden.employee_retroactivity_limit('2026-11-16'), date '2026-11-02',
  'an employee reaches back app_hidden.retroactivity_days() days');
select is(app_hidden.manager_retroactivity_limit('2026-11-16'), date '2025-12-01', 'a manager reaches back to 1 December of the previous year');

-- Identity and type.
select is(app_private.absence_rule_identity(pg_temp.empty_draft(), false, false),
  '{"errors": {"type": ["Ce champ est obligatoire."], "employee": ["Ce champ est obligatoire."]}, "warnings": []}'::jsonb,
  'identity: employee and type are required');
select is(app_private.absence_rule_identity(row(999999, 999999, null, null, null, null, null, null)::app_hidden.absence_draft, false, null) -> 'errors',
  '{"type": ["Motif d’absence inconnu ou inactif."], "employee": ["Salarié introuvable."]}'::jsonb,
  'identity: an unknown employee and a type not found (a NULL flag counts as not found)');
select is(app_private.absence_rule_identity(pg_temp.draft('alice', 'CP', '2026-12-07'), true, true),
  app_hidden.rule_outcome(), 'identity: both found, nothing to say');

-- Period.
select is(app_private.absence_rule_period(pg_temp.empty_draft()) -> 'errors',
  '{"date_start": ["Ce champ est obligatoire."]}'::jsonb, 'period: the start is required');
select is(app_private.absence_rule_period(pg_temp.draft('alice', 'CP', '2026-12-07', '2026-12-04')) -> 'errors',
  '{"date_end": ["La date de fin ne peut pas précéder la date de début."]}'::jsonb, 'period: the end does not precede the start');
select is(app_private.absence_rule_period(pg_temp.draft('alice', 'PAR', '2026-12-07', date '2026-12-07' + app_hidden.absence_max_days() + 1)) -> 'errors',
  '{"date_end": ["Une absence ne peut pas dépasser trois ans : déposez des périodes successives."]}'::jsonb,
  'period: longer than app_hidden.absence_max_days() is refused');
select is(app_private.absence_rule_period(pg_temp.draft('alice', 'PAR', '2026-12-07', date '2026-12-07' + app_hidden.absence_max_days())),
  app_hidden.rule_outcome(), 'period: exactly app_hidden.absence_max_days() is accepted');
select is(app_private.absence_rule_period(pg_temp.draft('alice', 'CP', '1999-12-31', '2000-01-03')) -> 'errors',
  '{"date_start": ["Date hors de la plage acceptée (années 2000 à 2100)."]}'::jsonb, 'period: a date outside the accepted years');
select is(app_private.absence_rule_period(pg_temp.draft('alice', 'CP', '2026-12-07', null, 'evening')) -> 'errors',
  '{"start_half": ["Valeurs possibles : morning, afternoon ou null."]}'::jsonb, 'period: a half-day bound is morning, afternoon or null');

-- Hourly types (rule 5).
select is(app_private.absence_rule_hourly(pg_temp.draft('alice', 'DON', '2026-12-07'), pg_temp.type_row('DON')) -> 'errors',
  '{"start_time": ["Un motif en heures demande une heure de début et une heure de fin."]}'::jsonb, 'hourly: hours are required');
select is(app_private.absence_rule_hourly(pg_temp.draft('alice', 'DON', '2026-12-07', null, null, null, '11:00', '10:00'),
                                          pg_temp.type_row('DON')) -> 'errors',
  '{"end_time": ["L’heure de fin doit suivre l’heure de début."]}'::jsonb, 'hourly: the end follows the start');
select is(app_private.absence_rule_hourly(pg_temp.draft('alice', 'DON', '2026-12-07', '2026-12-08', null, null, '09:00', '10:00'),
                                          pg_temp.type_row('DON')) -> 'errors',
  '{"date_end": ["Une absence en heures porte sur une seule date : la date de fin doit être celle du début."]}'::jsonb,
  'hourly: a single date');
select is(app_private.absence_rule_hourly(pg_temp.draft('alice', 'CP', '2026-12-07', null, null, null, '09:00', '10:00'),
                                          pg_temp.type_row('CP')) -> 'errors',
  '{"start_time": ["Le motif « Congés payés » se pose en jours : retirez les heures de début et de fin."]}'::jsonb,
  'hourly: a type in days takes no hours');
select is(app_private.absence_rule_hourly(pg_temp.draft('alice', 'DON', '2026-12-07', null, null, null, '09:00', '10:00'),
                                          pg_temp.type_row('DON')),
  app_hidden.rule_outcome(), 'hourly: one date, start and end hours: accepted');
select is(app_private.absence_rule_hourly(pg_temp.draft('alice', 'DON', '2026-12-07'), pg_temp.no_type()),
  app_hidden.rule_outcome(), 'hourly: without a type the rule has nothing to say');

-- Half-days (rules 2 and 4).
select is(app_private.absence_rule_half_days(pg_temp.draft('alice', 'CP', '2026-12-07', '2026-12-08', 'afternoon'),
                                             pg_temp.type_row('CP')) -> 'errors',
  '{"start_half": ["Le motif « Congés payés » se pose par journées entières : pas de demi-journée."]}'::jsonb,
  'half-days: a whole-day type refuses a half-day bound');
select is(app_private.absence_rule_half_days(pg_temp.draft('alice', 'SYN_ELU', '2026-12-07', null, 'afternoon', 'morning'),
                                             pg_temp.type_row('SYN_ELU')) -> 'errors',
  '{"start_half": ["Une absence d’une seule journée ne peut pas commencer l’après-midi et finir le matin."]}'::jsonb,
  'half-days: one day cannot start in the afternoon and end in the morning');
select is(app_private.absence_rule_half_days(pg_temp.draft('alice', 'SYN_ELU', '2026-12-07', '2026-12-08', 'afternoon', 'morning'),
                                             pg_temp.type_row('SYN_ELU')),
  app_hidden.rule_outcome(), 'half-days: a type allowing them takes an afternoon start and a morning end');

-- Count (rule 1).
select is(app_private.absence_rule_count(0, 'ouvres') -> 'warnings',
  '["Cette période ne compte aucun jour décompté (base jours ouvrés : dimanches et jours fériés exclus, samedis exclus)."]'::jsonb,
  'count: a period counting no day warns');
select is(app_private.absence_rule_count(3, 'ouvrables'), app_hidden.rule_outcome(), 'count: a counted period says nothing');

-- Retroactivity (rule 13).
select is(app_private.absence_rule_retroactivity(pg_temp.draft('alice', 'CP', '2026-11-01'), 'employee', '2026-11-16') -> 'errors',
  '{"date_start": ["Une demande ne peut pas remonter au-delà de 14 jours : la date de début doit être au plus tôt le 02/11/2026."]}'::jsonb,
  'retroactivity: an employee one day beyond the bound');
select is(app_private.absence_rule_retroactivity(pg_temp.draft('alice', 'CP', '2026-11-02'), 'employee', '2026-11-16'),
  app_hidden.rule_outcome(), 'retroactivity: an employee on the bound');
select is(app_private.absence_rule_retroactivity(pg_temp.draft('alice', 'CP', '2025-11-30'), 'manager', '2026-11-16') -> 'errors',
  '{"date_start": ["Une déclaration ne peut pas remonter avant le 1er décembre de l’année précédente : la date de début doit être au plus tôt le 01/12/2025."]}'::jsonb,
  'retroactivity: a manager before 1 December of the previous year');
select is(app_private.absence_rule_retroactivity(pg_temp.draft('alice', 'CP', '2025-12-01'), 'manager', '2026-11-16'),
  app_hidden.rule_outcome(), 'retroactivity: a manager on 1 December of the previous year');
select is(app_private.absence_rule_retroactivity(pg_temp.draft('alice', 'CP', '2020-01-06'), null, '2026-11-16'),
  app_hidden.rule_outcome(), 'retroactivity: no bound when none applies');

-- Contract types (rule 8).
select is(app_private.absence_rule_contract_types(pg_temp.draft('emma', 'CT', '2026-12-07'), pg_temp.type_row('CT')) -> 'errors',
  '{"type": ["Le motif « Congés trimestriels » est réservé aux contrats CDD, CDI ; le contrat en vigueur le 07/12/2026 est : Intérim."]}'::jsonb,
  'contract types: the contract held is not listed');
select is(app_private.absence_rule_contract_types(pg_temp.draft('alice', 'CT', '2019-12-16'), pg_temp.type_row('CT')) -> 'errors',
  '{"type": ["Le motif « Congés trimestriels » est réservé aux contrats CDD, CDI ; aucun contrat n’est en vigueur le 16/12/2019."]}'::jsonb,
  'contract types: an employee with no contract in force');
select is(app_private.absence_rule_contract_types(pg_temp.draft('alice', 'CT', '2026-12-07'), pg_temp.type_row('CT')),
  app_hidden.rule_outcome(), 'contract types: a listed contract');
select is(app_private.absence_rule_contract_types(pg_temp.draft('emma', 'CP', '2026-12-07'), pg_temp.type_row('CP')),
  app_hidden.rule_outcome(), 'contract types: a type without a list concerns every contract');

select is(app_private.absence_rule_contract_types(row(null, (select id from app_public.absence_types where code = 'CT'),
                                                      '2026-12-07', '2026-12-07', null, null, null, null)::app_hidden.absence_draft,
                                                  pg_temp.type_row('CT')),
  app_hidden.rule_outcome(), 'contract types: a type with no employee says nothing (the identity rule does)');

-- Arrange: alice's CP request 14-18 December, a DEC period 1-2 December, an event on 9 December.
select tests.authenticate_as('alice');
select ok(app_public.absence_create(p_employee => tests.id('employees', 'alice'),
  p_type => (select id from app_public.absence_types where code = 'CP'), p_date_start => '2026-12-14', p_date_end => '2026-12-18') is not null,
  'arrange: alice files a CP request');
select tests.as_owner();
select id as cp_request from app_public.absences where employee_id = tests.id('employees', 'alice') and date_start = '2026-12-14' \gset
insert into app_public.absences (employee_id, type_id, date_start, date_end)
values (tests.id('employees', 'alice'), (select id from app_public.absence_types where code = 'DEC'), '2026-12-01', '2026-12-02');
insert into app_public.events (title, start_at, end_at) values ('Formation incendie', '2026-12-09 14:00+01', '2026-12-09 16:00+01');
insert into app_public.event_participants (event_id, employee_id)
select e.id, tests.id('employees', 'alice') from app_public.events e where e.title = 'Formation incendie';

-- Overlap (rules 2 and 3).
select is(app_private.absence_rule_overlap(pg_temp.draft('alice', 'FOR', '2026-12-18', '2026-12-21'),
                                           pg_temp.period(pg_temp.draft('alice', 'FOR', '2026-12-18', '2026-12-21')), null) -> 'errors',
  jsonb_build_object('date_start', jsonb_build_array(format(
    'Cette période chevauche l’absence n° %s (Congés payés, du 14/12/2026 au 18/12/2026).', :cp_request))),
  'overlap: names the absence met and its number');
select is(app_private.absence_rule_overlap(pg_temp.draft('alice', 'FOR', '2026-12-18', '2026-12-21'),
                                           pg_temp.period(pg_temp.draft('alice', 'FOR', '2026-12-18', '2026-12-21')), :cp_request),
  app_hidden.rule_outcome(), 'overlap: the absence itself is excluded');
select is(app_private.absence_rule_overlap(pg_temp.draft('alice', 'FOR', '2026-12-19', '2026-12-21'),
                                           pg_temp.period(pg_temp.draft('alice', 'FOR', '2026-12-19', '2026-12-21')), null),
  app_hidden.rule_outcome(), 'overlap: the next day is free');

-- Annual cap (rules 6 and 17): SYN_ELU is capped at 10 days a year, overrun Refuser.
select ok(app_private.absence_rule_annual_cap(pg_temp.draft('alice', 'SYN_ELU', '2026-11-23', '2026-12-12'), pg_temp.type_row('SYN_ELU'), null)
            -> 'errors' -> 'date_end' ->> 0 like 'Plafond annuel dépassé pour le motif « Mandat électif syndical » sur l’année 2026 : demande de %',
  'annual cap: above the cap with Refuser is refused under date_end');
select is(app_private.absence_rule_annual_cap(pg_temp.draft('alice', 'SYN_ELU', '2026-11-23', '2026-11-24'), pg_temp.type_row('SYN_ELU'), null),
  app_hidden.rule_outcome(), 'annual cap: within the cap');
update app_public.absence_types set cap_overrun = 'warn' where code = 'SYN_ELU';
select is(jsonb_array_length(app_private.absence_rule_annual_cap(pg_temp.draft('alice', 'SYN_ELU', '2026-11-23', '2026-12-12'),
                                                                 pg_temp.type_row('SYN_ELU'), null) -> 'warnings'), 1,
  'annual cap: with Avertir, the same message is a warning');
select is(app_private.absence_rule_annual_cap(pg_temp.draft('alice', 'CP', '2026-11-23', '2026-12-12'), pg_temp.type_row('CP'), null),
  app_hidden.rule_outcome(), 'annual cap: a type without cap says nothing');

-- Non-splittable (rule 7): DEC.
select is(app_private.absence_rule_non_splittable(pg_temp.draft('alice', 'DEC', '2026-12-07', '2026-12-08'), pg_temp.type_row('DEC'),
                                                  'ouvrables', pg_temp.period(pg_temp.draft('alice', 'DEC', '2026-12-07', '2026-12-08')), null) -> 'warnings',
  jsonb_build_array(format('Le motif « Décès d’un proche » n’est pas fractionnable : l’absence n° %s (Décès d’un proche, du 01/12/2026 au 02/12/2026), de la même année, est séparée de cette période.',
                           (select id from app_public.absences where date_start = '2026-12-01'))),
  'non-splittable: a period of the same year separated by a gap warns');
select is(app_private.absence_rule_non_splittable(pg_temp.draft('alice', 'DEC', '2026-12-03', '2026-12-04'), pg_temp.type_row('DEC'),
                                                  'ouvrables', pg_temp.period(pg_temp.draft('alice', 'DEC', '2026-12-03', '2026-12-04')), null),
  app_hidden.rule_outcome(), 'non-splittable: a contiguous period says nothing');
select is(app_private.absence_rule_non_splittable(pg_temp.draft('alice', 'DEC', '2026-12-07', '2026-12-08'), pg_temp.no_type(),
                                                  'ouvrables', null, null),
  app_hidden.rule_outcome(), 'non-splittable: without a type the rule has nothing to say');

-- Counters (rule 9) and the one counter check.
select is(app_private.absence_rule_counters(pg_temp.draft('alice', 'CT', '2026-12-07', '2026-12-14'), pg_temp.type_row('CT'), null) -> 'errors',
  '{"counters": ["Solde insuffisant sur le compteur CT 2026 : demande de 7 jours, solde disponible de 6 jours."]}'::jsonb,
  'counters: more than the remaining is refused under counters');
select is(app_private.absence_rule_counters(pg_temp.draft('alice', 'RTT', '2026-12-07'), pg_temp.type_row('RTT'), null) -> 'errors',
  '{"counters": ["Aucun compteur RTT ouvert pour 2026 : le motif « Réduction du temps de travail » ne peut pas être posé sur cette année."]}'::jsonb,
  'counters: no open counter for the year');
select is(app_private.absence_rule_counters(pg_temp.draft('alice', 'CT', '2026-12-07', '2026-12-08'), pg_temp.type_row('CT'), null),
  jsonb_build_object('errors', '{}'::jsonb, 'warnings', '[]'::jsonb, 'plan', jsonb_build_array(jsonb_build_object(
    'counter_id', (select id from app_public.counters where employee_id = tests.id('employees', 'alice') and code = 'CT'),
    'code', 'CT', 'year', 2026, 'quantity', 2))),
  'counters: within the remaining, the plan names the movement');
select is(app_private.absence_rule_counters(pg_temp.draft('alice', 'CP', '2026-12-14', '2026-12-18'), pg_temp.type_row('CP'), :cp_request) -> 'errors',
  '{}'::jsonb, 'counters: what the absence itself holds is available to it');
select is(app_private.absence_rule_counters(row(null, (select id from app_public.absence_types where code = 'CP'),
                                               '2026-12-07', '2026-12-07', null, null, null, null)::app_hidden.absence_draft,
                                           pg_temp.type_row('CP'), null),
  '{"errors": {}, "warnings": [], "plan": []}'::jsonb, 'counters: a type with no employee says nothing and plans nothing');
select is(app_private.counter_request_error('RC', 2026, 1, 'hour', 'day', 'Formation', 1, 0),
  'Le compteur RC est tenu en heures alors que le motif « Formation » se pose en jours : demande refusée.',
  'counter check: units that differ');
select is(app_private.counter_request_error('CT', 2026, (select id from app_public.counters where employee_id = tests.id('employees', 'alice') and code = 'CT'),
                                            'day', 'day', 'Congés trimestriels', 7, 1), null::text,
  'counter check: the remaining plus what is held covers the request');
select is(app_private.counter_request_error('CT', 2026, (select id from app_public.counters where employee_id = tests.id('employees', 'alice') and code = 'CT'),
                                            'day', 'day', 'Congés trimestriels', null, null), null::text,
  'counter check: without a quantity, only the unit and the opening are checked');

-- Agreement warnings (rule 16).
select is(app_private.absence_rule_agreement_warnings(pg_temp.draft('alice', 'DON', '2026-12-07', null, null, null, '09:00', '12:00'),
                                                      pg_temp.type_row('DON'), false, 3, null) -> 'warnings',
  '["Motif « Don du sang » : 3 heures demandées, au-delà des 1 h 30 (trajet compris) prévues par l’accord."]'::jsonb,
  'agreement: blood donation above 1 h 30');
select is(app_private.absence_rule_agreement_warnings(pg_temp.draft('gaelle', 'CP', '2026-12-07'), pg_temp.type_row('CP'), true, 1, null) -> 'warnings',
  '["Absence pendant la période d’essai d’un agent polyvalent (fin de la période d’essai le 31/01/2027)."]'::jsonb,
  'agreement: a polyvalent agent in the trial period');
select is(app_private.absence_rule_agreement_warnings(pg_temp.draft('alice', 'CP', '2026-12-07'), pg_temp.type_row('CP'), false, 1, null),
  app_hidden.rule_outcome(), 'agreement: nothing to say');
select is(app_private.absence_rule_agreement_warnings(pg_temp.draft('gaelle', 'CP', '2026-12-07'), pg_temp.no_type(), null, null, null),
  app_hidden.rule_outcome(), 'agreement: without a type the rule has nothing to say');

-- Notice periods (rule 16).
select is(app_private.absence_rule_notice_periods(pg_temp.draft('alice', 'CP', '2026-12-07'), pg_temp.type_row('CP'), 'ouvrables',
                                                  '2026-11-16 10:00+01') -> 'warnings',
  '["Délai de prévenance de 1 mois non respecté pour le motif « Congés payés » : demande du 16/11/2026 pour le 07/12/2026."]'::jsonb,
  'notice: annual leave filed less than a month ahead');
select is(app_private.absence_rule_notice_periods(pg_temp.draft('alice', 'DON', '2026-11-20', null, null, null, '09:00', '10:00'),
                                                  pg_temp.type_row('DON'), 'ouvrables', '2026-11-16 10:00+01') -> 'warnings',
  '["Délai de prévenance de 10 jours ouvrables non respecté pour le motif « Don du sang » : demande du 16/11/2026 pour le 20/11/2026."]'::jsonb,
  'notice: blood donation in working days');
select is(app_private.absence_rule_notice_periods(pg_temp.draft('alice', 'CP', '2027-01-04'), pg_temp.type_row('CP'), 'ouvrables',
                                                  '2026-11-16 10:00+01'),
  app_hidden.rule_outcome(), 'notice: filed early enough');
select is(app_private.absence_rule_notice_periods(pg_temp.draft('alice', 'CP', '2026-12-07'), pg_temp.type_row('CP'), 'ouvrables', null),
  app_hidden.rule_outcome(), 'notice: a declaration by a manager has none');

-- Event conflicts.
select is(app_private.absence_rule_event_conflicts(pg_temp.draft('alice', 'CP', '2026-12-09'), pg_temp.period(pg_temp.draft('alice', 'CP', '2026-12-09'))) -> 'warnings',
  '["Conflit avec l’événement « Formation incendie » du 09/12/2026 14:00 au 09/12/2026 16:00."]'::jsonb,
  'events: an event of the employee during the absence warns');
select is(app_private.absence_rule_event_conflicts(pg_temp.draft('alice', 'CP', '2026-12-10'), pg_temp.period(pg_temp.draft('alice', 'CP', '2026-12-10'))),
  app_hidden.rule_outcome() || '{"events": []}'::jsonb, 'events: none met');

-- The composition: what cannot be read stops the other rules.
select is(app_private.absence_evaluate(pg_temp.empty_draft(), null, 'employee', null, '2026-11-16'),
  '{"quantity": null, "unit": null, "errors": {"type": ["Ce champ est obligatoire."], "employee": ["Ce champ est obligatoire."], "date_start": ["Ce champ est obligatoire."]}, "warnings": [], "plan": [], "events": []}'::jsonb,
  'absence_evaluate: an empty draft gets the required fields only');

select * from finish();
rollback;
