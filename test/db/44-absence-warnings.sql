-- Absences, rule 16: agreement rules and notice periods only warn, never refuse; notice
-- periods apply only to an employee's own request.
begin;
select plan(26);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.body(p_employee text, p_type text, p_start date, p_end date default null,
                             p_extra jsonb default '{}') returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', tests.id('employees', p_employee),
                            'type', (select t.id from app_public.absence_types t where t.code = p_type),
                            'date_start', p_start, 'date_end', coalesce(p_end, p_start)) || p_extra;
$$;
-- Does a preview warn with a message matching the pattern, without any error?
create function pg_temp.warns(p_preview jsonb, p_pattern text) returns boolean language sql immutable as $$
  select p_preview -> 'errors' = '{}'::jsonb
     and exists (select 1 from jsonb_array_elements_text(p_preview -> 'warnings') w where w like p_pattern);
$$;
grant execute on all functions in schema pg_temp to public;

select tests.authenticate_as('alice');
-- Annual leave: notice of 1 month, for an employee's request only.
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-12-01')),
  'Délai de prévenance de 1 mois non respecté pour le motif « Congés payés » : demande du 16/11/2026 pour le 01/12/2026.'),
  'CP two weeks ahead: notice warning');
select ok(not pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-12-17')), 'Délai de prévenance%'),
  'a month ahead: none');
select tests.authenticate_as('mgr1');
select ok(not pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-12-01')), 'Délai de prévenance%'),
  'a manager''s declaration has no notice period');

-- Blood donation: 1 h 30 including travel, one per civil quarter, 10 working days of notice.
select tests.authenticate_as('alice');
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'DON', '2026-12-10', null,
  '{"start_time": "09:00", "end_time": "11:00"}')),
  'Motif « Don du sang » : 2 heures demandées, au-delà des 1 h 30 (trajet compris) prévues par l’accord.'),
  'blood donation above 1 h 30: warning');
select ok(not pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'DON', '2026-12-10', null,
  '{"start_time": "09:00", "end_time": "10:30"}')), '%trajet compris%'), '1 h 30 exactly: none');
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'DON', '2026-11-25', null,
  '{"start_time": "09:00", "end_time": "10:00"}')),
  'Délai de prévenance de 10 jours ouvrables non respecté pour le motif « Don du sang » : demande du 16/11/2026 pour le 25/11/2026.'),
  'blood donation: 10 working days of notice');
select ok(not pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'DON', '2026-11-28', null,
  '{"start_time": "09:00", "end_time": "10:00"}')), 'Délai de prévenance%'),
  'the 10th working day after (Saturday 28 November on ouvrables) respects it');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'DON', '2026-11-30', null,
  '{"start_time": "09:00", "end_time": "10:00"}'))$$, 'a first donation in the quarter');
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'DON', '2026-12-14', null,
  '{"start_time": "09:00", "end_time": "10:00"}')),
  'Motif « Don du sang » : l’accord en prévoit 1 par trimestre civil ; 1 autre(s) absence(s) de ce motif existe(nt) déjà au 4e trimestre 2026.'),
  'a second one in the same civil quarter: warning');
select ok(not pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'DON', '2027-01-11', null,
  '{"start_time": "09:00", "end_time": "10:00"}')), '%par trimestre civil%'), 'the next quarter: none');

-- Unpaid leave above 3 months; sabbatical from 6 to 11 months.
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'CSS', '2027-01-04', '2027-04-04')),
  'Motif « Congé sans solde » : durée supérieure aux 3 mois prévus par l’accord.'), 'unpaid leave of 3 months and a day: warning');
select ok(not pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'CSS', '2027-01-04', '2027-04-03')), '%prévus par l’accord%'),
  'exactly 3 months: none');
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'SAB', '2027-03-01', '2027-07-31')),
  'Motif « Congé sabbatique » : l’accord prévoit une durée de 6 mois à 11 mois.'), 'sabbatical of 5 months: warning');
select ok(not pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'SAB', '2027-03-01', '2027-10-31')), '%durée de 6 mois%'),
  '8 months: none');
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'SAB', '2027-03-01', '2028-02-29')), '%durée de 6 mois à 11 mois%'),
  '12 months: warning');

-- Parental leave: above 1 year, less than 1 year of seniority; notice 1 month after a
-- maternity leave, 2 months otherwise.
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'PAR', '2027-01-04', '2028-01-04')),
  'Motif « Congé parental d’éducation » : durée supérieure aux 1 an prévus par l’accord.'), 'parental leave above 1 year');
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'PAR', '2027-01-04', '2027-06-30')),
  'Délai de prévenance de 2 mois non respecté pour le motif « Congé parental d’éducation » : demande du 16/11/2026 pour le 04/01/2027.'),
  'not after a maternity leave: 2 months of notice');
select tests.authenticate_as('mgr1');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'MAT', '2026-12-14', '2027-01-03'))$$,
  'a maternity leave ending on 3 January');
select tests.authenticate_as('alice');
select ok(not pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'PAR', '2027-01-04', '2027-06-30')), 'Délai de prévenance%'),
  'right after it: 1 month of notice, respected');
select tests.authenticate_as('gaelle');
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('gaelle', 'PAR', '2027-02-01', '2027-06-30')),
  'Motif « Congé parental d’éducation » : moins de 1 an d’ancienneté au 01/02/2027 (condition de l’accord).'),
  'less than a year of seniority');

-- Family caregiver: above 21 hours a year; 72 hours of notice.
select tests.authenticate_as('alice');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'PRA', '2026-12-01', null, '{"start_time": "08:00", "end_time": "18:00"}'));
                  select tests.absence_create(pg_temp.body('alice', 'PRA', '2026-12-02', null, '{"start_time": "08:00", "end_time": "18:00"}'))$$,
  'two days of 10 hours of caregiver leave');
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'PRA', '2026-12-03', null, '{"start_time": "08:00", "end_time": "10:00"}')),
  'Motif « Congé de proche aidant » : 22 heures sur l’année 2026 avec cette demande, au-delà des 21 heures par an prévues par l’accord.'),
  'above 21 hours a year: warning');
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'PRA', '2026-11-18', null, '{"start_time": "08:00", "end_time": "09:00"}')),
  'Délai de prévenance de 72 heures non respecté pour le motif « Congé de proche aidant » : demande du 16/11/2026 pour le 18/11/2026.'),
  '72 hours of notice');

-- Training on the employee's initiative: 60 or 120 days.
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'CPF', '2027-01-05')), 'Délai de prévenance de 60 jours%'),
  'CPF: 60 days');
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('alice', 'PTP', '2027-02-01')), 'Délai de prévenance de 120 jours%'),
  'PTP: 120 days');

-- A polyvalent agent in trial period.
select tests.authenticate_as('gaelle');
select ok(pg_temp.warns(tests.absence_preview(pg_temp.body('gaelle', 'FOR', '2026-12-07')),
  'Absence pendant la période d’essai d’un agent polyvalent (fin de la période d’essai le 31/01/2027).'),
  'absence during the trial period of a polyvalent agent: warning');

select * from finish();
rollback;
