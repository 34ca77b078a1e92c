-- Filing a day-change request: creation rules 1-7, computed durations, audit line,
-- notifications of the deciders (or of nobody able to decide), row-level security.
begin;
select plan(47);
select tests.freeze('2026-11-16 10:00+01');

-- A usual filing.
select tests.authenticate_as('alice');
select app_public.shift_change_create(
  p_date => '2026-11-20', p_reason => 'urgence', p_comment => '  Rendez-vous médical  ',
  p_slots => jsonb_build_array(jsonb_build_object('start_time', '10:00', 'end_time', '18:00',
                                                  'break_start_time', '12:00', 'break_end_time', '12:15', 'break_paid', true))
) as created \gset
select is((:'created'::jsonb) ->> 'status', 'pending', 'born pending');
select is(((:'created'::jsonb) ->> 'version')::int, 1, 'version 1 at creation');
select is(((:'created'::jsonb) ->> 'employee')::int, tests.id('employees', 'alice'), 'no employee is named (the route ignores one sent by the client): the requester''s record');
select is((:'created'::jsonb) ->> 'comment', 'Rendez-vous médical', 'comment trimmed');
select is((:'created'::jsonb) ->> 'planned_description', 'J Journée 09:00-17:00', 'planned day at filing time');
select is(((:'created'::jsonb) ->> 'planned_minutes')::int, 450, 'planned_minutes: net duration of the planned post');
select is(((:'created'::jsonb) ->> 'requested_minutes')::int, 480, 'requested_minutes: a paid break is not deducted');
select is((:'created'::jsonb) -> 'has_recipient', 'true'::jsonb, 'has_recipient in the creation answer');
select is((:'created'::jsonb) -> 'slots' -> 0 ->> 'post_code', 'J', 'the slot carries its (default) post');
select is(((:'created'::jsonb) -> 'slots' -> 0 ->> 'establishment')::int, tests.id('establishments', 'E1'), 'and its establishment');

select tests.as_owner();
select results_eq(
  $$select a.username from app_public.notifications n join app_public.accounts a on a.id = n.account_id
    where n.model = 'shift_change_request' and n.title = 'Nouvelle demande de modification' order by a.username$$,
  $$values ('mgr1')$$,
  'the attached decider is notified (not the DA, not the unattached admins, not the author)');
select is((select n.body from app_public.notifications n where n.title = 'Nouvelle demande de modification' limit 1),
          'Alice Martin demande une modification de sa journée du 20/11/2026.', 'body names the employee and the date');
select is((select count(*)::int from app_private.audit_log l
           where l.model = 'shift_change_request' and l.verb = 'Creation' and l.target_id = ((:'created'::jsonb) ->> 'id')::int
             and jsonb_array_length(l.after -> 'slots') = 1), 1, 'audit line Creation with the slots');

-- Rule 1: at most 14 days back.
select tests.authenticate_as('alice');
select throws_ok($$select app_public.shift_change_create(p_date => '2026-11-01', p_reason => 'urgence', p_is_remote => true)$$,
                 'WV101', 'Une demande de modification ne peut pas porter sur un jour antérieur de plus de 14 jours : au plus tôt le 02/11/2026.',
                 'a date more than 14 days back is refused under date');
select lives_ok($$select app_public.shift_change_create(p_date => '2026-11-02', p_reason => 'urgence', p_is_remote => true)$$,
                'today minus 14 days is accepted');

-- Rule 2: one pending request per date.
select throws_ok($$select app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'demande_personnelle', p_is_remote => true)$$,
                 'WV102', null, 'a second pending request on the same date is refused under date');

-- Rule 3: a request that changes nothing.
select throws_ok($$select app_public.shift_change_create(p_date => '2026-11-23', p_reason => 'urgence')$$,
                 'WV103', null, 'no slot and no option: the request changes nothing');
select throws_ok($$select app_public.shift_change_create(p_date => '2026-11-23', p_reason => 'urgence', p_slots => '[]')$$,
                 'WV103', null, 'an empty slot list and no option changes nothing');
select throws_ok($$select app_public.shift_change_create(p_date => '2026-11-23', p_reason => 'urgence',
                   p_slots => jsonb_build_array(jsonb_build_object('start_time', '09:00', 'end_time', '17:00', 'break_start_time', '12:00', 'break_end_time', '12:30')))$$,
                 'WV103', 'La journée demandée est identique à la journée prévue : la demande ne change rien.',
                 'slots equal to the planned day with unchanged options change nothing');
select app_public.shift_change_create(p_date => '2026-11-23', p_reason => 'demande_personnelle', p_is_remote => true) as remote \gset
select is(((:'remote'::jsonb) ->> 'requested_minutes')::int, ((:'remote'::jsonb) ->> 'planned_minutes')::int,
          'only is_remote: accepted, requested_minutes equals planned_minutes');
select is((:'remote'::jsonb) -> 'slots', '[]'::jsonb, 'only is_remote: no slot');

-- Rule 5: not all slots removed; on a rest day an option alone changes nothing.
select throws_ok($$select app_public.shift_change_create(p_date => '2026-11-24', p_reason => 'urgence', p_slots => '[{"start_time": null, "end_time": null}]')$$,
                 'WV104', null, 'a request may not remove all slots of the day');
select throws_ok($$select app_public.shift_change_create(p_date => '2026-11-21', p_reason => 'urgence', p_is_remote => true)$$,
                 'WV103', 'Ce jour est un jour de repos : une option seule ne change rien, ajoutez un créneau.',
                 'on a rest day an option alone changes nothing');
select app_public.shift_change_create(p_date => '2026-11-21', p_reason => 'remplacement', p_slots => '[{"start_time": "08:00", "end_time": "12:00"}]') as rest_day \gset
select is((:'rest_day'::jsonb) ->> 'planned_description', 'Repos', 'a rest day is described as such');
select is(((:'rest_day'::jsonb) ->> 'planned_minutes')::int, 0, 'a rest day plans 0 minutes');
select is(((:'rest_day'::jsonb) ->> 'requested_minutes')::int, 240, 'a slot added on a rest day');

-- Rule 6: a break dropped when the slot is shortened below it.
select app_public.shift_change_create(p_date => '2026-11-25', p_reason => 'urgence', p_slots => '[{"start_time": "09:00", "end_time": "12:00", "break_start_time": "12:00", "break_end_time": "12:30"}]') as short \gset
select is((:'short'::jsonb) -> 'slots' -> 0 -> 'break_start_time', 'null'::jsonb, 'the break of a shortened slot is dropped');
select is(((:'short'::jsonb) ->> 'requested_minutes')::int, 180, 'requested_minutes of the shortened slot');

-- Options: is_offsite changes the day.
select lives_ok($$select app_public.shift_change_create(p_date => '2026-11-26', p_reason => 'urgence', p_is_offsite => true)$$,
                'the outside-the-establishment option alone is a change');

-- Shapes.
select throws_ok($$select app_public.shift_change_create(p_date => '2026-11-27', p_reason => 'caprice', p_is_remote => true)$$,
                 'WV002', 'Motif inconnu. Valeurs possibles : demande_personnelle, urgence, remplacement.', 'unknown reason under reason');
select throws_ok($$select app_public.shift_change_create(p_date => null, p_reason => 'urgence', p_is_remote => true)$$,
                 'WV002', 'Ce champ est obligatoire.', 'date is required');
-- An impossible date or a non-boolean option cannot reach the function: its typed arguments
-- refuse them (REST: the route schema answers 400 first).
select throws_ok($$select app_public.shift_change_create(p_date => '2026-02-30', p_reason => 'urgence', p_is_remote => true)$$,
                 '22008', null, 'an impossible date is refused');
select throws_ok($$select app_public.shift_change_create(p_date => '2026-11-27', p_reason => 'urgence', p_is_remote => 'oui')$$,
                 '22P02', null, 'is_remote must be a boolean');
select throws_ok($$select app_public.shift_change_create(p_date => '2026-11-27', p_reason => 'urgence', p_is_remote => true, p_comment => repeat('x', 2001))$$,
                 'WV002', 'Au plus 2000 caractères.', 'comment of at most 2000 characters');

-- An account without employee record cannot file.
select tests.authenticate_as('staff');
select throws_ok($$select app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'urgence', p_is_remote => true)$$,
                 'WF106', null, 'an account without employee record gets 403');

-- A manager's own request: no attached decider other than themselves, the unattached decide.
select tests.authenticate_as('mgr1');
select app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'urgence', p_is_remote => true) as mgr_own \gset
select tests.as_owner();
select results_eq(
  format($$select a.username from app_public.notifications n join app_public.accounts a on a.id = n.account_id
           where n.target_id = %s order by a.username$$, (:'mgr_own'::jsonb) ->> 'id'),
  $$values ('admin'), ('rh1')$$,
  'never the author: the unattached deciders are notified when nobody attached qualifies');

-- Nobody able to decide: the author and the fallback recipients (no active Admin: RH n1 and n2).
update app_public.accounts set is_active = false where username in ('admin', 'admin_noemp', 'rh1');
select tests.authenticate_as('farid');
select app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'urgence', p_is_remote => true) as orphan \gset
select is((:'orphan'::jsonb) -> 'has_recipient', 'false'::jsonb, 'has_recipient false when nobody can decide');
select tests.as_owner();
select results_eq(
  format($$select a.username, n.title, n.level from app_public.notifications n join app_public.accounts a on a.id = n.account_id
           where n.target_id = %s order by a.username$$, (:'orphan'::jsonb) ->> 'id'),
  $$values ('farid', 'Demande de modification sans valideur', 'warning'), ('rh1_noemp', 'Demande de modification sans valideur', 'warning'),
           ('rh2', 'Demande de modification sans valideur', 'warning'), ('rh2_noemp', 'Demande de modification sans valideur', 'warning')$$,
  'the author and the fallback recipients are told');
select matches((select n.body from app_public.notifications n where n.target_id = ((:'orphan'::jsonb) ->> 'id')::int limit 1),
               'aucun compte actif ne peut la décider', 'the body gives the cause');
update app_public.accounts set is_active = true where username in ('admin', 'admin_noemp', 'rh1');

-- A filing whose notification fails does not exist.
create function pg_temp.refuse_notifications() returns trigger language plpgsql as $$
begin raise exception 'notification service down'; end; $$;
create trigger zz_refuse before insert on app_public.notifications for each row execute function pg_temp.refuse_notifications();
select tests.authenticate_as('chloe');
select throws_ok($$select app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'urgence', p_is_remote => true)$$,
                 'P0001', 'notification service down', 'a failing notification fails the filing');
select tests.as_owner();
drop trigger zz_refuse on app_public.notifications;
select is((select count(*)::int from app_public.shift_change_requests where employee_id = tests.id('employees', 'chloe')), 0,
          'nothing is created without its notification');

-- Row-level security of the table.
select tests.authenticate_as('alice');
select throws_ok(format($$insert into app_public.shift_change_requests (employee_id, date, reason) values (%s, '2026-11-20', 'urgence')$$,
                        tests.id('employees', 'chloe')),
                 '42501', null, 'the request role cannot insert directly');
set local role wfm_api;
select throws_ok(format($$insert into app_public.shift_change_requests (employee_id, date, reason) values (%s, '2026-11-20', 'urgence')$$,
                        tests.id('employees', 'chloe')),
                 '42501', null, 'API functions insert only for the requester''s own record');
select throws_ok(format($$insert into app_public.shift_change_requests (employee_id, date, reason, status) values (%s, '2026-11-30', 'urgence', 'validated')$$,
                        tests.id('employees', 'alice')),
                 '42501', null, 'a request is born pending');
select tests.authenticate_as('chloe');
select is((select count(*)::int from app_public.shift_change_requests), 0, 'a colleague''s requests are invisible');
select tests.authenticate_as('mgr2');
select is((select count(*)::int from app_public.shift_change_requests where employee_id = tests.id('employees', 'alice')), 0,
          'a manager of another establishment does not read them');
select tests.authenticate_as('da');
select ok((select count(*)::int from app_public.shift_change_requests where employee_id = tests.id('employees', 'alice')) > 0,
          'the DA reads the requests of the perimeter (view_absence_queue)');

select * from finish();
rollback;
