-- The rules of the employee record (sql/employees/rules.sql) and of the organisation import
-- (sql/org/import.sql), each called directly: refusal, acceptance, and NULL safety (callers
-- without employee record, a record without main workplace, absent values).
begin;
select plan(148);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.est(p_key text) returns int language sql stable as $$ select tests.id('establishments', p_key) $$;
create function pg_temp.emp(p_key text) returns int language sql stable as $$ select tests.id('employees', p_key) $$;
create function pg_temp.team(p_key text) returns int language sql stable as $$ select tests.id('teams', p_key) $$;
create function pg_temp.cdi() returns int language sql stable as $$ select id from app_public.contract_types where code = 'CDI' $$;
grant execute on function pg_temp.est(text), pg_temp.emp(text), pg_temp.team(text), pg_temp.cdi() to public;

-- Thresholds, named once.
select is(app_hidden.person_name_max_length(), 100, 'a name holds at most 100 characters');
select is(app_hidden.email_max_length(), 254, 'an address holds at most 254 characters');
select is(app_hidden.birth_date_min(), date '1900-01-01', 'the earliest birth date');
select is(app_hidden.job_title_max_length(), 200, 'a job title holds at most 200 characters');
select is(app_hidden.weekly_hours_max(), 48::numeric, 'at most 48 hours a week');

select is(app_hidden.username_min_length(), 2, 'a username holds at least 2 characters');
select is(app_hidden.username_max_length(), 150, 'and at most 150');
select is(app_hidden.emergency_contacts_max(), 10, 'at most 10 emergency contacts');
select is(app_hidden.name_max_length(), 150, 'a contact name holds at most 150 characters');
select is(app_hidden.relationship_max_length(), 100, 'a relationship at most 100');
select is(app_hidden.attachment_title_max_length(), 200, 'an attachment title at most 200');

-- Shared formats (API, import, emergency contacts, back-office).
select ok(app_hidden.email_well_formed('prenom.nom@etablissement.fr'), 'a well-formed address');
select ok(not app_hidden.email_well_formed('prenom.nom@etablissement'), 'a domain without a dot is refused');
select ok(app_hidden.email_well_formed(repeat('a', 250) || '@e.fr'), 'a long address is well formed (the import takes it)');
select ok(not app_hidden.email_acceptable(repeat('a', 250) || '@e.fr'), 'the API refuses an address over 254 characters');
select is(app_hidden.email_acceptable(null), null, 'no address, no answer: callers test a present value');
select ok(app_hidden.social_security_number_well_formed('2850175123456'), '13 characters');
select ok(app_hidden.social_security_number_well_formed('185022A12345678'), '15 characters, Corsica');
select ok(not app_hidden.social_security_number_well_formed('3850175123456'), 'a first digit other than 1 or 2 is refused');
select ok(app_hidden.username_well_formed('jean.dupont'), 'a username');
select ok(not app_hidden.username_well_formed('j'), 'one character is too short');
select ok(not app_hidden.username_well_formed('jean dupont'), 'a blank is refused');
select ok(app_hidden.username_well_formed(repeat('a', 150)) and not app_hidden.username_well_formed(repeat('a', 151)),
          '150 characters, not 151');
select ok(app_hidden.weekly_hours_in_range(48), '48 hours');
select ok(not app_hidden.weekly_hours_in_range(48.5), 'over 48 hours');
select ok(not app_hidden.weekly_hours_in_range(0), 'no hours');
select ok(not app_hidden.weekly_hours_in_range(0.004), 'a time that rounds to no hours');
select ok(app_hidden.code_well_formed('E1-J'), 'a code');
select ok(not app_hidden.code_well_formed('-J'), 'a code starts with a letter or a digit');
select ok(not app_hidden.code_well_formed(repeat('A', 17)), 'a code has at most 16 characters');
select ok(app_hidden.post_code_used_in_establishment(pg_temp.est('E1'), 'j'), 'J is a post code of E1, whatever the case');
select ok(not app_hidden.post_code_used_in_establishment(pg_temp.est('E1'), 'J', tests.id('posts', 'E1-J')),
          'the post being changed keeps its own code');
select ok(not app_hidden.post_code_used_in_establishment(pg_temp.est('E3'), 'J'), 'E3 has no post J');
select ok(app_hidden.establishment_name_taken('FOYER les tilleuls'), 'an establishment name is taken, whatever the case');
select ok(not app_hidden.establishment_name_taken('Foyer Les Tilleuls', pg_temp.est('E1')), 'an establishment keeps its own name');
select ok(app_hidden.count_base_known('ouvres') and app_hidden.count_base_known('ouvrables'), 'the two count bases');
select ok(not app_hidden.count_base_known('lundi'), 'no other count base');
select is(app_hidden.add_refusals('{}', 'f', null::text), '{}'::jsonb, 'an accepted value adds no error');
select is(app_hidden.add_refusals('{"f": ["a"]}', 'f', 'b', null, 'c'), '{"f": ["a", "b", "c"]}'::jsonb,
          'refusals are appended in order under their field');
select is(app_hidden.add_error_list('{"g": ["a"]}', 'f', '{}'), '{"g": ["a"]}'::jsonb, 'an empty list adds nothing');

-- Access to the record.
select tests.authenticate_as('mgr1');
select throws_ok('select app_hidden.employee_refuse_ssn_key(null)', 'WF501', null, 'a manager may not send the number of a new record');
select throws_ok(format('select app_hidden.employee_refuse_ssn_key(%s)', pg_temp.emp('alice')), 'WF501', null,
                 'nor of a record of its perimeter');
select throws_ok('select app_hidden.employee_refuse_record_write(null)', 'WF502', null, 'a manager does not create records');
select throws_ok(format('select app_hidden.employee_refuse_record_write(%s)', pg_temp.emp('alice')), 'WF502', null,
                 'nor change one it reads (403)');
select tests.authenticate_as('rh1');
select lives_ok(format('select app_hidden.employee_refuse_ssn_key(%s)', pg_temp.emp('alice')), 'RH n1 sends the number');
select lives_ok(format('select app_hidden.employee_refuse_record_write(%s)', pg_temp.emp('farid')),
                'RH n1 (whole association) writes a record without main workplace');
select tests.authenticate_as('rh2');
select throws_ok(format('select app_hidden.employee_refuse_ssn_key(%s)', pg_temp.emp('alice')), 'WF501', null,
                 'RH n2 of E2 may not send the number of an E1 employee');
select throws_ok(format('select app_hidden.employee_refuse_record_write(%s)', pg_temp.emp('alice')), 'WN001', null,
                 'a record outside the perimeter is not found');
select throws_ok(format('select app_hidden.employee_refuse_record_write(%s)', pg_temp.emp('farid')), 'WN001', null,
                 'a record without main workplace is outside a restricted perimeter');
select lives_ok(format('select app_hidden.employee_refuse_record_write(%s)', pg_temp.emp('chloe')), 'RH n2 writes an E2 record');
select throws_ok(format('select app_hidden.employee_refuse_ssn_on_created_record(%s)', pg_temp.emp('alice')), 'WF501', null,
                 'a record created outside the number perimeter takes no number');
select lives_ok(format('select app_hidden.employee_refuse_ssn_on_created_record(%s)', pg_temp.emp('chloe')),
                'a record created inside it does');
select tests.authenticate_as('rh2_noemp');
select lives_ok(format('select app_hidden.employee_refuse_record_write(%s)', pg_temp.emp('david')),
                'no employee record: RH n2 of E3 still writes the records of its perimeter');
select lives_ok('select app_hidden.employee_refuse_record_write(null)', 'no employee record: RH n2 creates records');
select tests.authenticate_as('salarie_noemp');
select throws_ok('select app_hidden.employee_refuse_record_write(null)', 'WF502', null, 'no employee record, no right: 403');
select throws_ok('select app_hidden.employee_refuse_ssn_key(null)', 'WF501', null, 'no employee record, no right: the number key is 403');
select tests.authenticate_as('mgr1_noemp');
select throws_ok(format('select app_hidden.employee_refuse_ssn_key(%s)', pg_temp.emp('david')), 'WF501', null,
                 'no employee record: a manager of E3 may not send the number of an E3 employee');

-- Field rules.
select is(app_hidden.employee_name_refusal(null, true, 'Le prénom est obligatoire.'), 'Le prénom est obligatoire.', 'a required name');
select is(app_hidden.employee_name_refusal(repeat('x', 101), true, 'm'), 'Au plus 100 caractères.', 'a name of 101 characters');
select is(app_hidden.employee_name_refusal(null, false, 'm'), null, 'a name not required may stay absent');
select is(app_hidden.employee_name_refusal('Alice', true, 'm'), null, 'a name');
select is(app_hidden.employee_email_refusal('alice'), 'Adresse e-mail invalide (exemple : prenom.nom@etablissement.fr).', 'an invalid address');
select is(app_hidden.employee_email_refusal(repeat('a', 250) || '@e.fr'), 'Adresse e-mail invalide (exemple : prenom.nom@etablissement.fr).',
          'an address over 254 characters');
select is(app_hidden.employee_email_refusal(null), null, 'no address');
select is(app_hidden.employee_email_refusal('alice@e1.fr'), null, 'an address');
select tests.authenticate_as('rh2');
set local role wfm_api; -- the role API functions run as (rules that ask app_private)
select ok(app_hidden.employee_email_takeover_refusal(pg_temp.emp('admin'), null, 'a@b.fr') is not null,
          'RH n2 may not change the address of an Admin''s account');
select is(app_hidden.employee_email_takeover_refusal(pg_temp.emp('chloe'), null, 'chloe@e2.fr'), null,
          'RH n2 changes the address of an E2 employee');
select is(app_hidden.employee_email_takeover_refusal(pg_temp.emp('admin'), 'a@b.fr', 'a@b.fr'), null, 'an unchanged address');
select is(app_hidden.employee_email_takeover_refusal(null, null, 'a@b.fr'), null, 'a new record has no account yet');
select tests.authenticate_as('rh2_noemp');
set local role wfm_api;
select ok(app_hidden.employee_email_takeover_refusal(pg_temp.emp('admin'), null, 'a@b.fr') is not null,
          'no employee record: the same refusal');
select is(app_hidden.employee_birth_date_refusal('2026-11-16'), 'Date de naissance invalide : elle doit être passée et postérieure au 01/01/1900.',
          'a birth date today');
select is(app_hidden.employee_birth_date_refusal('1899-12-31'), 'Date de naissance invalide : elle doit être passée et postérieure au 01/01/1900.',
          'a birth date before 1900');
select is(app_hidden.employee_birth_date_refusal('1985-01-01'), null, 'a birth date');
select is(app_hidden.employee_birth_date_refusal(null), null, 'no birth date');
select is(app_hidden.establishment_unknown_refusal(-1), 'Établissement n° -1 introuvable.', 'an unknown establishment');
select is(app_hidden.establishment_unknown_refusal(pg_temp.est('E1')), null, 'an establishment');
select is(app_hidden.establishment_unknown_refusal(null), null, 'no main workplace is no unknown establishment');
select is(app_hidden.employee_main_workplace_perimeter_refusal(null, true, array[pg_temp.est('E2')]),
          'Choisissez un établissement principal de votre périmètre : sans lui, la fiche sortirait de votre périmètre.',
          'a restricted writer does not leave the record without main workplace');
select is(app_hidden.employee_main_workplace_perimeter_refusal(pg_temp.est('E1'), true, array[pg_temp.est('E2')]),
          'Cet établissement n’est pas dans votre périmètre.', 'nor sets one outside its perimeter');
select is(app_hidden.employee_main_workplace_perimeter_refusal(null, true, null), null, 'the whole association sets none');
select is(app_hidden.employee_main_workplace_perimeter_refusal(pg_temp.est('E1'), false, array[pg_temp.est('E2')]), null,
          'an unchanged main workplace is not checked');
select is(app_hidden.employee_secondary_workplaces_unknown_refusal(array[pg_temp.est('E1'), -5, -6]), 'Établissement introuvable : -5, -6.',
          'unknown secondary workplaces are named');
select is(app_hidden.employee_secondary_workplaces_unknown_refusal('{}'), null, 'no secondary workplace');
select is(app_hidden.employee_main_not_secondary_refusal(pg_temp.est('E1'), array[pg_temp.est('E1')]),
          'L’établissement principal ne peut pas être aussi un établissement secondaire.', 'main and secondary at once');
select is(app_hidden.employee_main_not_secondary_refusal(null, array[pg_temp.est('E1')]), null,
          'without main workplace, any secondary one');
select is(app_hidden.employee_secondary_workplaces_perimeter_refusal(array[pg_temp.est('E1')], '{}', array[pg_temp.est('E2')]),
          'Vous ne pouvez ajouter ou retirer que des établissements de votre périmètre.', 'adding one outside the perimeter');
select is(app_hidden.employee_secondary_workplaces_perimeter_refusal('{}', array[pg_temp.est('E1')], array[pg_temp.est('E2')]),
          'Vous ne pouvez ajouter ou retirer que des établissements de votre périmètre.', 'removing one outside the perimeter');
select is(app_hidden.employee_secondary_workplaces_perimeter_refusal(array[pg_temp.est('E1'), pg_temp.est('E2')], array[pg_temp.est('E1')],
                                                                     array[pg_temp.est('E2')]), null, 'keeping one outside, adding one inside');
select is(app_hidden.employee_ssn_refusal('123'), 'Numéro de sécurité sociale invalide : 13 chiffres, ou 15 avec la clé (exemple : 2850175123456).',
          'an invalid number');
select is(app_hidden.employee_ssn_refusal(null), null, 'no number (removes it)');
select tests.authenticate_as('rh1');
set local role wfm_api;
select is(app_hidden.employee_username_refusal(false, null), 'L’identifiant se choisit à la création de la fiche seulement.',
          'the username is chosen at creation only');
select is(app_hidden.employee_username_refusal(true, 'x'), 'Identifiant invalide : de 2 à 150 caractères parmi lettres, chiffres et . _ @ + -.',
          'an invalid username');
select is(app_hidden.employee_username_refusal(true, 'ALICE'), 'L’identifiant « ALICE » est déjà utilisé.', 'a username taken, whatever the case');
select is(app_hidden.employee_username_refusal(true, 'nouvel.agent'), null, 'a free username');
select is(app_hidden.employee_username_refusal(true, null), null, 'no username: derived from the name');

-- Contracts.
select is(app_hidden.contract_period_refusals(null, null, null), array['la date de début est obligatoire.'], 'a start date');
select is(app_hidden.contract_period_refusals('2026-01-10', '2026-01-01', '2026-01-05'),
          array['la date de fin précède la date de début.', 'la fin de période d’essai précède la date de début.'],
          'an end and a trial end before the start');
select is(app_hidden.contract_period_refusals('2026-01-01', '2026-06-30', '2026-07-01'),
          array['la fin de période d’essai dépasse la fin du contrat.'], 'a trial end after the end');
select is(app_hidden.contract_period_refusals('2026-01-01', null, '2026-03-01'), '{}'::text[], 'an open-ended contract with a trial period');
select is(app_hidden.employee_contract_refusals(pg_temp.emp('alice'), 1, '"CDI"'), array['Contrat n° 1 : un objet est attendu.'], 'an object');
select is(app_hidden.employee_contract_refusals(pg_temp.emp('alice'), 2, jsonb_build_object(
            'id', (select c.id from app_public.contracts c where c.employee_id = pg_temp.emp('bruno') limit 1),
            'type', 999999, 'start_date', '2026-01-01', 'job_title', repeat('x', 201), 'weekly_hours', 49)),
          array['Contrat n° 2 : ce contrat n’appartient pas à ce salarié.', 'Contrat n° 2 : type de contrat n° 999999 introuvable.',
                'Contrat n° 2 : l’intitulé de poste fait au plus 200 caractères.',
                'Contrat n° 2 : la durée hebdomadaire doit être comprise entre 0 et 48 heures.'],
          'another employee''s contract, an unknown type, a long job title, too many hours');
select is(app_hidden.employee_contract_refusals(null, 1, jsonb_build_object('id', 1, 'type', pg_temp.cdi(), 'start_date', '2026-01-01')),
          array['Contrat n° 1 : ce contrat n’appartient pas à ce salarié.'], 'a new record owns no contract yet');
select is(app_hidden.employee_contract_refusals(pg_temp.emp('farid'), 1,
            jsonb_build_object('type', pg_temp.cdi(), 'start_date', '2026-01-01', 'weekly_hours', '35.00')),
          '{}'::text[], 'a contract for a record without main workplace');
select is(app_hidden.employee_contract_overlap_refusals('[{"start_date": "2026-01-01"}, {"start_date": "2026-06-01", "end_date": "2026-12-31"}]', 2),
          array['Les contrats n° 1 et n° 2 se chevauchent : un salarié a un seul contrat à la fois.'], 'two contracts at once');
select is(app_hidden.employee_contract_overlap_refusals('[{"start_date": "2026-01-01", "end_date": "2026-05-31"}, {"start_date": "2026-06-01"}]', 2),
          '{}'::text[], 'one contract after the other');
select is(app_hidden.employee_contract_overlap_refusals('[{"start_date": "2026-01-01"}, {"start_date": "2026-06-01", "end_date": "2026-05-01"}]', 2),
          '{}'::text[], 'an incoherent period is refused by its own rule, not as an overlap');
select is(app_hidden.employee_contracts_refusals(null, jsonb_build_array(
            jsonb_build_object('type', pg_temp.cdi(), 'start_date', '2026-01-01'),
            jsonb_build_object('type', 999999, 'start_date', '2026-03-01'))),
          array['Contrat n° 2 : type de contrat n° 999999 introuvable.',
                'Les contrats n° 1 et n° 2 se chevauchent : un salarié a un seul contrat à la fois.'],
          'the list: each contract''s rules, then its overlaps, contract after contract');
select is(app_hidden.employee_contracts_refusals(null, '[]'), '{}'::text[], 'no contract');

-- Team assignments.
select tests.authenticate_as('rh2');
set local role wfm_api;
select is(app_hidden.employee_team_assignment_refusals(pg_temp.emp('chloe'), 1,
            jsonb_build_object('team', pg_temp.team('T1'), 'start_date', '2026-12-01'), array[pg_temp.est('E2')]),
          array['Affectation n° 1 : cette équipe n’a aucun établissement dans votre périmètre.'], 'a team outside the perimeter');
select is(app_hidden.employee_team_assignment_refusals(pg_temp.emp('chloe'), 1, jsonb_build_object('team', pg_temp.team('T2')),
                                                       array[pg_temp.est('E2')]), '{}'::text[], 'a team with an establishment of the perimeter');
select is(app_hidden.employee_team_assignment_refusals(null, 3, jsonb_build_object('id', 1, 'team', pg_temp.team('T2')), null),
          array['Affectation n° 3 : cette affectation n’appartient pas à ce salarié.'], 'a new record owns no assignment yet');
select is(app_hidden.employee_team_assignment_refusals(pg_temp.emp('chloe'), 1, '{"team": 999999}', null),
          array['Affectation n° 1 : équipe n° 999999 introuvable.'], 'an unknown team');
select is(app_hidden.employee_team_assignment_refusals(pg_temp.emp('chloe'), 1, '{"start_date": "2026-12-01", "end_date": "2026-11-01"}', null),
          array['Affectation n° 1 : l’équipe est obligatoire.', 'Affectation n° 1 : la date de fin précède la date de début.'],
          'no team, an end before the start');
select is(app_hidden.employee_team_assignment_refusals(pg_temp.emp('chloe'), 2, '[]', null), array['Affectation n° 2 : un objet est attendu.'],
          'an object');
select is(app_hidden.employee_team_assignment_overlap_refusals(jsonb_build_array(jsonb_build_object('team', pg_temp.team('T2')),
            jsonb_build_object('team', pg_temp.team('T2'), 'start_date', '2026-12-01')), 2),
          array['Les affectations n° 1 et n° 2 à la même équipe se chevauchent.'], 'two assignments to one team at once');
select is(app_hidden.employee_team_assignment_overlap_refusals(jsonb_build_array(jsonb_build_object('team', pg_temp.team('T1')),
            jsonb_build_object('team', pg_temp.team('T2'))), 2), '{}'::text[], 'two teams at once');
select tests.as_owner();
select is(app_hidden.employee_team_removal_refusal(pg_temp.emp('alice'), '[]', array[pg_temp.est('E2')]),
          'Vous ne pouvez pas retirer une affectation à une équipe hors de votre périmètre.', 'removing an assignment outside the perimeter');
select is(app_hidden.employee_team_removal_refusal(pg_temp.emp('chloe'), '[]', array[pg_temp.est('E2')]), null,
          'removing an assignment to a team of the perimeter');
select is(app_hidden.employee_team_removal_refusal(pg_temp.emp('alice'), '[]', null), null, 'the whole association removes any');
select is(app_hidden.employee_team_removal_refusal(null, '[]', array[pg_temp.est('E2')]), null, 'a new record has nothing to remove');
select is(app_hidden.employee_team_assignments_refusals(pg_temp.emp('alice'), '[]', array[pg_temp.est('E2')]),
          array['Vous ne pouvez pas retirer une affectation à une équipe hors de votre périmètre.'], 'the list: the removal rule last');

-- Organisation import: file shape.
select throws_ok($$select app_private.import_check_keys('{"a": 1}', '$', array['b'])$$, 'WV020', '$.a: unknown field', 'an unknown field');
select throws_ok($$select app_private.import_check_keys('[]', 'teams[0]', array['b'])$$, 'WV020', 'teams[0]: expected an object', 'an object');
select throws_ok($$select app_private.import_section('{"teams": {}}', 'teams')$$, 'WV020', 'teams: expected an array', 'a section is an array');
select is(app_private.import_section('{}', 'teams'), '[]'::jsonb, 'a section is optional');
select throws_ok($$select app_private.import_register('{"k": 1}', 'k', 2, 'teams[1]')$$, 'WV020', 'teams[1].key: duplicate key "k"',
                 'keys are unique per section');
select throws_ok($$select app_private.import_lookup('{}', 'k', 'teams[0].establishments[0]', 'establishment')$$, 'WV020',
                 'teams[0].establishments[0]: unknown establishment "k"', 'a key names an item of its section');
select is(app_private.import_lookup('{"k": 5}', null, 'p', 'employee'), null, 'no key, no item');

-- Organisation import: sections.
select throws_ok($$select app_private.import_establishments('{"establishments": [{"key": "X", "name": "foyer les tilleuls"}]}')$$,
                 'WV020', 'establishments[0].name: an establishment named "foyer les tilleuls" already exists', 'an establishment name is free');
select throws_ok($$select app_private.import_establishments('{"establishments": [{"key": "X", "name": "Maison", "count_base": "lundi"}]}')$$,
                 'WV020', 'establishments[0].count_base: unknown count base "lundi" (ouvrables or ouvres)', 'a count base');
create temp table t77 as
select app_private.import_establishments('{"establishments": [{"key": "X9", "name": "Maison test 77", "count_base": "ouvres"}]}') as est;
select ok((select est ? 'X9' from t77), 'an establishment is imported and mapped');
select throws_ok($$select app_private.import_teams('{"teams": [{"key": "TX", "name": "Équipe X", "establishments": ["NOPE"]}]}', '{}')$$,
                 'WV020', 'teams[0].establishments[0]: unknown establishment "NOPE"', 'a team spans known establishments');
select throws_ok($$select app_private.import_posts(jsonb_build_object('posts', jsonb_build_array(jsonb_build_object(
                    'key', 'P', 'code', '-J', 'label', 'x', 'establishment', 'X9', 'start_time', '09:00', 'end_time', '17:00'))),
                  (select est from t77))$$, 'WV020', 'posts[0].code: invalid post code "-J"', 'a post code is well formed');
select throws_ok($$select app_private.import_posts(jsonb_build_object('posts', jsonb_build_array(jsonb_build_object(
                    'key', 'P', 'code', 'cp', 'label', 'x', 'establishment', 'X9', 'start_time', '09:00', 'end_time', '17:00'))),
                  (select est from t77))$$, 'WV020', 'posts[0].code: post code "cp" is already an absence type code',
                 'a post code is no absence type code');
select throws_ok($$select app_private.import_posts(jsonb_build_object('posts', jsonb_build_array(
                    jsonb_build_object('key', 'P1', 'code', 'J', 'label', 'x', 'establishment', 'X9', 'start_time', '09:00', 'end_time', '17:00'),
                    jsonb_build_object('key', 'P2', 'code', 'j', 'label', 'y', 'establishment', 'X9', 'start_time', '10:00', 'end_time', '18:00'))),
                  (select est from t77))$$, 'WV020', 'posts[1].code: post code "j" is already used in this establishment',
                 'a post code is unique in its establishment');
select throws_ok($$select app_private.import_employee_record('{"first_name": "A", "last_name": "B", "professional_email": "nope"}',
                                                             'employees[0]', '{}')$$,
                 'WV020', 'employees[0].professional_email: invalid e-mail "nope"', 'a professional e-mail is well formed');
create temp table e77 as
select app_private.import_employee_record('{"first_name": "Sans", "last_name": "Lieu"}', 'employees[0]', '{}') as id;
select is((select main_establishment_id from app_public.employees where id = (select id from e77)), null,
          'an employee without main workplace is imported');
select throws_ok($$select app_private.import_employee_ssn('{"social_security_number": "123"}', 'employees[0]', (select id from e77))$$,
                 'WV020', 'employees[0].social_security_number: invalid social security number (13 or 15 characters)', 'a number is well formed');
select throws_ok($$select app_private.import_employee_contracts(
                    '{"contracts": [{"type": "CDI", "start": "2026-01-01", "weekly_hours": 49}]}', 'employees[0]', (select id from e77))$$,
                 'WV020', 'employees[0].contracts[0].weekly_hours: expected a number of hours between 0 and 48', 'at most 48 hours');
select is(app_private.import_employee_contracts(
            '{"contracts": [{"type": "CDI", "start": "2026-04-01", "weekly_hours": 35}, {"type": "CDD", "start": "2026-03-01", "end": "2026-03-31"}]}',
            'employees[0]', (select id from e77)), date '2026-03-01', 'contracts are imported; the earliest start is the template''s');
select throws_ok($$select app_private.import_employee_week('{"week": {"mon": "NOPE"}}', 'employees[0]', (select id from e77), null, '{}')$$,
                 'WV020', 'employees[0].week.mon: unknown post code "NOPE"', 'a week names known posts');
select throws_ok($$select app_private.import_employee_counters('{"counters": [{"code": "CP", "year": 2026}, {"code": "CP", "year": 2026}]}',
                                                               'employees[0]', (select id from e77))$$,
                 'WV020', 'employees[0].counters[1]: counter CP 2026 is listed twice', 'a counter once a year');
select throws_ok($$select app_private.import_accounts('{"accounts": [{"key": "a", "username": "ALICE"}]}', '{}', '{}')$$,
                 'WV020', 'accounts[0].username: username "ALICE" is already taken', 'a username is free, whatever the case');
select throws_ok($$select app_private.import_accounts('{"accounts": [{"key": "a", "username": "a"}]}', '{}', '{}')$$,
                 'WV020', 'accounts[0].username: invalid username "a" (letters, digits and . _ @ + -)', 'a username is well formed');
select throws_ok($$select app_private.import_account_roles('{"roles": [{"role": "Chef"}]}', 'accounts[0]', 0, null, '{}')$$,
                 'WV020', 'accounts[0].roles[0].role: unknown role "Chef"', 'a known role');
select throws_ok(format($$select app_private.import_on_call('{"on_call": [{"account": "k", "start": "2026-11-21T18:00:00+01:00",
                          "end": "2026-11-22T08:00:00+01:00", "establishments": []}]}', '{}', '{"k": %s}')$$, tests.id('accounts', 'rh1')),
                 'WV020', 'on_call[0].establishments: at least one establishment', 'an on-call period covers an establishment');
select throws_ok($$select app_private.import_organisation('{"establishments": [{"key": "A1", "name": "Maison atomique"}],
                                                            "teams": [{"key": "T", "name": "T", "establishments": ["ZZ"]}]}')$$,
                 'WV020', 'teams[0].establishments[0]: unknown establishment "ZZ"', 'a bad path fails the whole file');
select ok(not exists (select 1 from app_public.establishments where name = 'Maison atomique'), 'all or nothing: no establishment stays');

select * from finish();
rollback;
