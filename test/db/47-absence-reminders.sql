-- Missing-document reminders: deadlines (48 h after the first day; caregiver: 2 working
-- days after the last day), only deadlines due in the last week, never twice, nothing when
-- a document of the same reason of the same employee was received, pending and validated
-- absences only; the employee gets "Justificatif à transmettre", each RH n1 / RH n2 whose
-- perimeter covers them one "Justificatifs manquants" with the list.
begin;
select plan(17);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.body(p_employee text, p_type text, p_start date, p_end date default null,
                             p_extra jsonb default '{}') returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', tests.id('employees', p_employee),
                            'type', (select t.id from app_public.absence_types t where t.code = p_type),
                            'date_start', p_start, 'date_end', coalesce(p_end, p_start)) || p_extra;
$$;
create function pg_temp.file(p_name text) returns jsonb language sql volatile as $$
  select tests.uploaded_file(p_name, 'application/pdf', 100);
$$;
create function pg_temp.notes(p_account text, p_title text) returns text[] language sql stable security definer as $$
  select coalesce(array_agg(n.body order by n.id), '{}') from app_public.notifications n
  where n.account_id = tests.id('accounts', p_account) and n.title = p_title;
$$;
grant execute on all functions in schema pg_temp to public;

-- Arrange.
select tests.authenticate_as('alice');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'MAL', '2026-11-12', '2026-11-13'));
                  select tests.absence_create(pg_temp.body('alice', 'PRA', '2026-11-10', null, '{"start_time": "14:00", "end_time": "17:00"}'))$$,
  'alice: a sick leave from 12 November (due 14 November 00:00) and a caregiver afternoon on 10 November (due after 2 working days: 11 November is a holiday, so 14 November 00:00)');
select tests.authenticate_as('mgr1');
select lives_ok($$select tests.absence_create(pg_temp.body('bruno', 'ENF', '2026-11-05'))$$,
  'bruno: a sick child on 5 November (due 7 November: more than a week ago)');
select lives_ok($$select tests.absence_create(pg_temp.body('chloe', 'ENF', '2026-11-12'))$$, 'chloe (E2): a sick child on 12 November');
select lives_ok($$select tests.absence_create(pg_temp.body('emma', 'MAL', '2026-11-15'))$$, 'emma: a sick leave on 15 November (due 17 November: not yet)');
select tests.authenticate_as('mgr3');
select lives_ok($$select tests.absence_create(pg_temp.body('david', 'MAL', '2026-11-12') ||
                    jsonb_build_object('add_documents', jsonb_build_array(pg_temp.file('arret-david.pdf'))))$$,
  'david: a sick leave with its certificate');
select tests.authenticate_as('mgr2');
select lives_ok($$select tests.absence_create(pg_temp.body('gaelle', 'MAL', '2026-11-03') ||
                    jsonb_build_object('add_documents', jsonb_build_array(pg_temp.file('arret-gaelle.pdf'))));
                  select tests.absence_create(pg_temp.body('gaelle', 'MAL', '2026-11-12'))$$,
  'gaelle: a first sick leave with a certificate, a second one without');
select tests.authenticate_as('farid');
select lives_ok($$select tests.absence_create(pg_temp.body('farid', 'MAL', '2026-11-12'))$$, 'farid: a sick leave');
select tests.authenticate_as('admin');
select lives_ok(format($$select app_public.absence_refuse(%s, 1, 'Doublon')$$,
  (select a.id from app_public.absences a where a.employee_id = tests.id('employees', 'farid'))), 'farid''s request is refused');

-- Run.
select tests.as_owner();
select is(app_private.send_missing_document_reminders('2026-11-16 05:37+01'), 5,
  'five notifications: alice (sick leave and caregiver) and chloe, one list for rh1 and one for rh2');
select is(pg_temp.notes('alice', 'Justificatif à transmettre'), array[
  'Le justificatif de votre absence « Maladie » du 12/11/2026 au 13/11/2026 était attendu au plus tard le 14/11/2026 à 00:00. Déposez-le sur l’absence ou transmettez-le au service RH.',
  'Le justificatif de votre absence « Congé de proche aidant » le 10/11/2026 de 14:00 à 17:00 était attendu au plus tard le 14/11/2026 à 00:00. Déposez-le sur l’absence ou transmettez-le au service RH.'],
  'the employee is told, per absence');
select is(cardinality(pg_temp.notes('bruno', 'Justificatif à transmettre')) + cardinality(pg_temp.notes('emma', 'Justificatif à transmettre'))
          + cardinality(pg_temp.notes('david', 'Justificatif à transmettre')) + cardinality(pg_temp.notes('gaelle', 'Justificatif à transmettre'))
          + cardinality(pg_temp.notes('farid', 'Justificatif à transmettre')), 0,
  'nothing for a deadline older than a week, a deadline to come, a received document, a document of the same reason, a refused request');
select is(pg_temp.notes('rh1', 'Justificatifs manquants'), array[
  E'3 justificatif(s) manquant(s) à la date limite :\n'
  '- Alice Martin : « Maladie » du 12/11/2026 au 13/11/2026, justificatif attendu au plus tard le 14/11/2026 à 00:00\n'
  '- Alice Martin : « Congé de proche aidant » le 10/11/2026 de 14:00 à 17:00, justificatif attendu au plus tard le 14/11/2026 à 00:00\n'
  '- Chloé Bernard : « Enfant malade » le 12/11/2026, justificatif attendu au plus tard le 14/11/2026 à 00:00'],
  'RH n1 of the whole association receives one list');
select is(pg_temp.notes('rh2', 'Justificatifs manquants'), array[
  E'1 justificatif(s) manquant(s) à la date limite :\n'
  '- Chloé Bernard : « Enfant malade » le 12/11/2026, justificatif attendu au plus tard le 14/11/2026 à 00:00'],
  'RH n2 of E2 receives the list of its perimeter');
select is(cardinality(pg_temp.notes('admin', 'Justificatifs manquants')) + cardinality(pg_temp.notes('mgr1', 'Justificatifs manquants')), 0,
  'only HR receives the list');

-- Never twice; later deadlines come later.
select is(app_private.send_missing_document_reminders('2026-11-16 05:37+01'), 0, 'a second run sends nothing');
select is(app_private.send_missing_document_reminders('2026-11-17 05:37+01'), 2,
  'the next day: emma''s deadline fell due (emma and rh1, who covers E1)');
select is(cardinality(pg_temp.notes('alice', 'Justificatif à transmettre')), 2, 'alice was not reminded again');

select * from finish();
rollback;
