-- Absences, rules 3, 6, 7, 8 and SYN_ELU of rule 17: overlap, annual caps, non-splittable
-- types, contract types.
begin;
select plan(22);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.body(p_employee text, p_type text, p_start date, p_end date default null,
                             p_extra jsonb default '{}') returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', tests.id('employees', p_employee),
                            'type', (select t.id from app_public.absence_types t where t.code = p_type),
                            'date_start', p_start, 'date_end', coalesce(p_end, p_start)) || p_extra;
$$;
grant execute on function pg_temp.body(text, text, date, date, jsonb) to public;

-- Rule 3: overlap names the existing absence and its number.
select tests.authenticate_as('alice');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'CP', '2026-12-14', '2026-12-18'))$$, 'a CP request');
select is(tests.absence_preview(pg_temp.body('alice', 'FOR', '2026-12-18', '2026-12-21')) -> 'errors' -> 'date_start' ->> 0,
  format('Cette période chevauche l’absence n° %s (Congés payés, du 14/12/2026 au 18/12/2026).',
         (select a.id from app_public.absences a where a.date_start = '2026-12-14')),
  'overlap: message naming the absence, its number and its dates, under date_start');
select throws_ok($$select tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-18', '2026-12-21'))$$,
  'WV200', null, 'an overlapping creation is refused');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-19', '2026-12-21'))$$,
  'the next day is free');
-- A refused absence no longer blocks the period.
select tests.as_owner();
update app_public.absences set status = 'refused', version = version + 1 where date_start = '2026-12-19';
select tests.authenticate_as('alice');
select ok(tests.absence_preview(pg_temp.body('alice', 'FOR', '2026-12-19', '2026-12-19')) -> 'errors' = '{}'::jsonb,
  'a refused absence does not overlap');
-- The exclusion constraint refuses overlap even if a rule were bypassed.
select tests.as_owner();
select throws_ok($$insert into app_public.absences (employee_id, type_id, date_start, date_end)
  values (tests.id('employees', 'alice'), (select id from app_public.absence_types where code = 'MAL'), '2026-12-16', '2026-12-16')$$,
  '23P01', null, 'absences_no_overlap holds under any write');

-- Rule 6 with Refuser: SYN_ELU is capped at 10 days a year.
select tests.authenticate_as('mgr1');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'SYN_ELU', '2026-11-02', '2026-11-09'))$$,
  'a declaration of 7 days of SYN_ELU (2 to 9 November)');
select ok(not (tests.absence_preview(pg_temp.body('alice', 'SYN_ELU', '2026-11-23', '2026-11-25')) -> 'errors' ? 'date_end'),
  '3 more days reach the cap without passing it');
select is(tests.absence_preview(pg_temp.body('alice', 'SYN_ELU', '2026-11-23', '2026-11-26')) -> 'errors' -> 'date_end' ->> 0,
  'Plafond annuel dépassé pour le motif « Mandat électif syndical » sur l’année 2026 : demande de 4 jours, total de 11 jours avec cette demande, pour un plafond de 10 jours.',
  'above the cap: requested days, year total and cap');
select throws_ok($$select tests.absence_create(pg_temp.body('alice', 'SYN_ELU', '2026-11-23', '2026-11-26'))$$,
  'WV200', null, 'and the creation is refused');
select ok(not (tests.absence_preview(pg_temp.body('alice', 'SYN_ELU', '2027-01-04', '2027-01-08')) -> 'errors' ? 'date_end'),
  'the cap is counted on the civil year: January 2027 starts again');
select is(tests.absence_preview(pg_temp.body('alice', 'SYN_ELU', '2026-12-28', '2027-01-08')) -> 'errors' -> 'date_end',
  '["Plafond annuel dépassé pour le motif « Mandat électif syndical » sur l’année 2026 : demande de 4 jours, total de 11 jours avec cette demande, pour un plafond de 10 jours."]'::jsonb,
  'an absence across two years counts each year''s share (2026: 4 days; 2027: 5 days, under the cap)');

-- Rule 6 with Avertir: accepted with a warning.
select tests.as_owner();
update app_public.absence_types set annual_cap = 2, cap_overrun = 'warn' where code = 'FOR';
select tests.authenticate_as('alice');
select ok(tests.absence_preview(pg_temp.body('alice', 'FOR', '2026-11-30', '2026-12-02')) -> 'errors' = '{}'::jsonb,
  'a cap with Avertir does not refuse');
select ok(tests.absence_preview(pg_temp.body('alice', 'FOR', '2026-11-30', '2026-12-02')) -> 'warnings'
          @> '["Plafond annuel dépassé pour le motif « Formation » sur l’année 2026 : demande de 3 jours, total de 3 jours avec cette demande, pour un plafond de 2 jours."]',
  'it warns with the requested days, the year total and the cap (the refused training does not count)');

-- Rule 7: a non-splittable type warns on a second period of the year separated by a gap.
select tests.authenticate_as('mgr1');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'MAT', '2027-01-04', '2027-01-09'))$$, 'a maternity leave');
select ok(not exists (select 1 from jsonb_array_elements_text(
            tests.absence_preview(pg_temp.body('alice', 'MAT', '2027-01-11', '2027-01-16')) -> 'warnings') w
          where w like '%pas fractionnable%'),
  'contiguous periods (only a Sunday between) give no warning');
select ok(exists (select 1 from jsonb_array_elements_text(
            tests.absence_preview(pg_temp.body('alice', 'MAT', '2027-01-13', '2027-01-16')) -> 'warnings') w
          where w like 'Le motif « Congé de maternité » n’est pas fractionnable : l’absence n° % (Congé de maternité, du 04/01/2027 au 09/01/2027), de la même année, est séparée de cette période.'),
  'a gap warns, naming the other period');
select ok(tests.absence_preview(pg_temp.body('alice', 'MAT', '2027-01-13', '2027-01-16')) -> 'errors' = '{}'::jsonb,
  'a warning, not a refusal');

-- Rule 8: contract types concerned.
select tests.authenticate_as('mgr1');
select is(tests.absence_preview(pg_temp.body('bruno', 'CET', '2026-12-01')) -> 'errors' -> 'type' ->> 0,
  'Le motif « Congé épargne-temps » est réservé aux contrats CDI ; le contrat en vigueur le 01/12/2026 est : CDD.',
  'CET for a CDD: refused naming the contract held');
select is(tests.absence_preview(pg_temp.body('emma', 'ANC', '2026-12-01')) -> 'errors' -> 'type' ->> 0,
  'Le motif « Congés d’ancienneté » est réservé aux contrats CDD, CDI ; le contrat en vigueur le 01/12/2026 est : Intérim.',
  'ANC for a temporary worker: refused');
select ok(not (tests.absence_preview(pg_temp.body('alice', 'CET', '2026-12-01')) -> 'errors' ? 'type'),
  'CET for a CDI passes the contract rule');
select tests.authenticate_as('mgr2');
select is(tests.absence_preview(pg_temp.body('gaelle', 'ANC', '2026-09-15')) -> 'errors' -> 'type' ->> 0,
  'Le motif « Congés d’ancienneté » est réservé aux contrats CDD, CDI ; aucun contrat n’est en vigueur le 15/09/2026.',
  'no contract in force on the first day');

select * from finish();
rollback;
