-- The state table of a day-change request: validation (plain, adjusted, after a
-- back-office correction), refusal, withdrawal, read-only decided requests; versions,
-- rights, audit lines and notifications.
begin;
select plan(81);
select tests.freeze('2026-11-16 10:00+01');

-- The fields of a refused decision: sqlstate and detail (the keys of the 400 body).
create function pg_temp.error_of(p_sql text) returns jsonb language plpgsql as $$
declare
  v_state text;
  v_detail text;
begin
  execute p_sql;
  return null;
exception when others then
  get stacked diagnostics v_state = returned_sqlstate, v_detail = pg_exception_detail;
  return jsonb_build_object('code', v_state, 'detail', case when v_detail like '{%' then v_detail::jsonb else to_jsonb(v_detail) end);
end;
$$;
grant execute on function pg_temp.error_of(text) to wfm_visitor;

select tests.authenticate_as('alice');
select (app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'urgence', p_slots => '[{"start_time": "10:00", "end_time": "18:00", "break_start_time": "12:00", "break_end_time": "12:30"}]') ->> 'id')::int as r1 \gset
select (app_public.shift_change_create(p_date => '2026-11-23', p_reason => 'demande_personnelle', p_is_remote => true) ->> 'id')::int as r2 \gset
select (app_public.shift_change_create(p_date => '2026-11-24', p_reason => 'urgence', p_is_remote => true) ->> 'id')::int as r3 \gset
select (app_public.shift_change_create(p_date => '2026-11-25', p_reason => 'urgence', p_slots => '[{"start_time": "08:00", "end_time": "16:00", "break_start_time": "12:00", "break_end_time": "12:30"}]') ->> 'id')::int as r4 \gset
select (app_public.shift_change_create(p_date => '2026-11-26', p_reason => 'urgence', p_slots => '[{"start_time": "10:00", "end_time": "18:00", "break_start_time": "13:00", "break_end_time": "13:30"}]') ->> 'id')::int as r5 \gset
select (app_public.shift_change_create(p_date => '2026-11-27', p_reason => 'urgence', p_is_offsite => true) ->> 'id')::int as r6 \gset
select (app_public.shift_change_create(p_date => '2026-11-30', p_reason => 'urgence', p_slots => '[{"start_time": "08:00", "end_time": "16:00", "break_start_time": "12:00", "break_end_time": "12:30"}]') ->> 'id')::int as r7 \gset

-- Who may decide.
select tests.authenticate_as('da');
select lives_ok(format('select app_public.shift_change_get(%s)', :r1), 'the DA reads the request');
select throws_ok(format('select app_public.shift_change_validate(%s, 1)', :r1), 'WF101',
                 'Votre rôle ne permet pas de décider une demande de modification de journée.', 'the DA cannot validate (403)');
select throws_ok(format('select app_public.shift_change_refuse(%s, 1, %L)', :r1, 'Non'), 'WF101', null, 'the DA cannot refuse (403)');
select tests.authenticate_as('mgr2');
select throws_ok(format('select app_public.shift_change_validate(%s, 1)', :r1), 'WN101', null, 'outside the perimeter: 404');
select tests.authenticate_as('paie');
select throws_ok(format('select app_public.shift_change_validate(%s, 1)', :r1), 'WN101', null, 'Service Paie does not see the request: 404');
select tests.authenticate_as('alice');
select throws_ok(format('select app_public.shift_change_validate(%s, 1)', :r1), 'WF101', null, 'an employee cannot decide');
select tests.authenticate_as('mgr1');
select (app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'urgence', p_is_remote => true) ->> 'id')::int as own \gset
select throws_ok(format('select app_public.shift_change_validate(%s, 1)', :own), 'WF102',
                 'Vous ne pouvez pas décider votre propre demande : un autre valideur doit la traiter.', 'nobody validates their own request');
select throws_ok(format('select app_public.shift_change_refuse(%s, 1, %L)', :own, 'Non'), 'WF102', null, 'nor refuses it');
-- An on-call period extends the manager's perimeter during its interval.
select tests.authenticate_as('mgr3');
select throws_ok(format('select app_public.shift_change_get(%s)', :r1), 'WN101', null, 'mgr3 (E3) does not see an E1 request outside on-call');
select tests.freeze('2026-11-21 12:00+01');
select lives_ok(format('select app_public.shift_change_get(%s)', :r1), 'mgr3 on call for E1 reads it');
select tests.freeze('2026-11-16 10:00+01');

-- Plain validation.
select tests.authenticate_as('mgr1');
select throws_ok(format('select app_public.shift_change_validate(%s, 2)', :r1), 'WC101', null, 'a stale version gives 409');
select app_public.shift_change_validate(:r1, 1) as v1 \gset
select is((:'v1'::jsonb) ->> 'status', 'validated', 'validated');
select is(((:'v1'::jsonb) ->> 'version')::int, 2, 'version + 1');
select is(((:'v1'::jsonb) ->> 'decided_by')::int, tests.id('accounts', 'mgr1'), 'decided_by');
select is((:'v1'::jsonb) -> 'granted_slots', 'null'::jsonb, 'no adjustment: granted_slots null');
select tests.as_owner();
select is((select dm.slots from app_public.day_modifications dm
           where dm.employee_id = tests.id('employees', 'alice') and dm.date = '2026-11-20'),
          array[row('10:00', '18:00', '12:00', '12:30', false, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot],
          'the day modification is created with the requested slots (post, establishment, break)');
select is((select dm.source_request_id from app_public.day_modifications dm
           where dm.employee_id = tests.id('employees', 'alice') and dm.date = '2026-11-20'), :r1, 'linked to its request');
select results_eq(
  format($$select verb, model from app_private.audit_log
           where transaction_id = txid_current() and ((model = 'shift_change_request' and target_id = %s and verb <> 'Creation')
                 or model = 'day_modification') order by id$$, :r1),
  $$values ('Validation', 'shift_change_request'), ('Creation', 'day_modification')$$,
  'an accepted request writes two lines: the transition and the day modification');
select is((select jsonb_array_length(after -> 'slots') from app_private.audit_log
           where model = 'day_modification' and verb = 'Creation' order by id desc limit 1), 1, 'the day line carries its slots');
select results_eq(
  format($$select a.username, n.title, n.level, n.body from app_public.notifications n join app_public.accounts a on a.id = n.account_id
           where n.target_id = %s and n.title like 'Demande de modification %%'$$, :r1),
  $$values ('alice', 'Demande de modification validée', 'info', 'Votre demande de modification du 20/11/2026 a été validée.')$$,
  'the requester is told (information)');

-- A decided request is read-only.
select tests.authenticate_as('mgr1');
select throws_ok(format('select app_public.shift_change_validate(%s, 2)', :r1), 'WV106', 'Seule une demande en attente peut être décidée.',
                 'deciding a request no longer pending: 400 under status');
select throws_ok(format('select app_public.shift_change_refuse(%s, 2, %L)', :r1, 'Trop tard'), 'WV106', null, 'refusing it: 400 under status');
select throws_ok(format('select app_public.shift_change_validate(%s, 1)', :r1), 'WC101', null, 'with the old version: 409 first');
select tests.authenticate_as('alice');
select throws_ok(format('select app_public.shift_change_delete(%s)', :r1), 'WV106', null, 'a validated request cannot be withdrawn');
select tests.as_owner();
select throws_ok(format($$update app_public.shift_change_requests set comment = 'x', version = version + 1 where id = %s$$, :r1),
                 'WV106', null, 'the guard refuses any write of a decided request, even direct');
select throws_ok(format('delete from app_public.shift_change_requests where id = %s', :r1), 'WV106', null,
                 'and its deletion');
select throws_ok(format($$update app_public.shift_change_requests set date = '2026-11-21', version = version + 1 where id = %s$$, :r2),
                 'WF190', null, 'the guard keeps the date of a pending request');
select throws_ok(format($$update app_public.shift_change_requests set comment = 'x' where id = %s$$, :r2),
                 'WF190', null, 'and each write advances the version');

-- Refusal.
select tests.authenticate_as('mgr1');
select throws_ok(format('select app_public.shift_change_refuse(%s, 1, null)', :r2), 'WV105', 'Indiquez le motif du refus.', 'refuse without reason: 400 under reason');
select is(pg_temp.error_of(format('select app_public.shift_change_refuse(%s, 1, %L)', :r2, '   ')) -> 'detail', '"reason"'::jsonb,
          'a blank reason is no reason (under reason)');
select throws_ok(format('select app_public.shift_change_refuse(%s, 7, null)', :r2), 'WC101', null, 'a stale version answers 409 before the reason');
select app_public.shift_change_refuse(:r2, 1, 'Effectif insuffisant ce jour-là') as f2 \gset
select is((:'f2'::jsonb) ->> 'status', 'refused', 'refused');
select is(((:'f2'::jsonb) ->> 'version')::int, 2, 'version + 1');
select is((:'f2'::jsonb) ->> 'decision_reason', 'Effectif insuffisant ce jour-là', 'decision_reason');
select tests.as_owner();
select is((select count(*)::int from app_public.day_modifications where employee_id = tests.id('employees', 'alice') and date = '2026-11-23'), 0,
          'the planned day is unchanged');
select results_eq(
  format($$select a.username, n.title, n.level from app_public.notifications n join app_public.accounts a on a.id = n.account_id
           where n.target_id = %s and n.title like 'Demande de modification %%'$$, :r2),
  $$values ('alice', 'Demande de modification refusée', 'error')$$,
  'the requester is told (error level)');
select ok((select n.body from app_public.notifications n where n.target_id = :r2 and n.title = 'Demande de modification refusée')
          like '%Effectif insuffisant ce jour-là', 'the body ends with the reason');
select is((select verb from app_private.audit_log where model = 'shift_change_request' and target_id = :r2 order by id desc limit 1),
          'Refus', 'audit line Refus');
select is((select before ->> 'status' || '>' || (after ->> 'status') from app_private.audit_log
           where model = 'shift_change_request' and target_id = :r2 order by id desc limit 1), 'pending>refused', 'with the states before and after');

-- Withdrawal.
select count(*)::int as notifications_before from app_public.notifications \gset
select tests.authenticate_as('mgr1');
select throws_ok(format('select app_public.shift_change_delete(%s)', :r3), 'WF103', null, 'a manager cannot delete the request (403)');
select tests.authenticate_as('chloe');
select throws_ok(format('select app_public.shift_change_delete(%s)', :r3), 'WN101', null, 'a colleague gets 404');
select tests.authenticate_as('alice');
select lives_ok(format('select app_public.shift_change_delete(%s)', :r3), 'the requester withdraws a pending request');
select tests.as_owner();
select is((select count(*)::int from app_public.shift_change_requests where id = :r3), 0, 'removed');
select is((select verb from app_private.audit_log where model = 'shift_change_request' and target_id = :r3 order by id desc limit 1),
          'Suppression', 'audit line Suppression');
select is((select count(*)::int from app_public.notifications), :notifications_before, 'nobody is notified of a withdrawal');

-- Back-office correction by HR.
select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.shift_change_correct(%s, 1, '[{"start_time": "09:00", "end_time": "15:00"}]')$$, :r4), 'WF104',
                 'Seul un compte RH peut corriger une demande de modification.', 'a manager cannot correct (HR only)');
select tests.authenticate_as('rh1');
select (app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'urgence', p_is_remote => true) ->> 'id')::int as rh_own \gset
select throws_ok(format($$select app_public.shift_change_correct(%s, 1, '[{"start_time": "09:00", "end_time": "15:00"}]')$$, :rh_own), 'WF105',
                 null, 'HR does not correct its own request');
select throws_ok(format($$select app_public.shift_change_correct(%s, 3, '[{"start_time": "09:00", "end_time": "15:00"}]')$$, :r4), 'WC101',
                 null, 'a correction with a stale version: 409');
select throws_ok(format($$select app_public.shift_change_correct(%s, 1, '[{"start_time": "08:00", "end_time": "16:00", "break_start_time": "12:00", "break_end_time": "12:30"}]')$$, :r4),
                 'WV103', 'La correction ne change rien à la demande.', 'a correction that changes nothing');
select throws_ok(format($$select app_public.shift_change_correct(%s, 1, '[{"start_time": "09:00"}]')$$, :r4), 'WV104', null,
                 'a corrected slot follows the rules of a filing');
select app_public.shift_change_correct(:r4, 1, '[{"start_time": "09:00", "end_time": "15:00", "break_start_time": "12:00", "break_end_time": "12:30"}]') as c4 \gset
select is(((:'c4'::jsonb) ->> 'version')::int, 2, 'a correction advances the version');
select is(((:'c4'::jsonb) ->> 'corrected_by')::int, tests.id('accounts', 'rh1'), 'corrected_by');
select is((:'c4'::jsonb) ->> 'status', 'pending', 'still pending');
select is(((:'c4'::jsonb) ->> 'requested_minutes')::int, 330, 'requested_minutes follows the corrected slots');
select tests.as_owner();
select is((select (before -> 'slots' -> 0 ->> 'start_time') || '>' || (after -> 'slots' -> 0 ->> 'start_time')
           from app_private.audit_log where model = 'shift_change_request' and target_id = :r4 and verb = 'Correction'),
          '08:00:00>09:00:00', 'audit line Correction with the slots before and after');

-- A corrected request needs a reason to be validated; a missing reason writes nothing.
select tests.authenticate_as('mgr1');
select is(pg_temp.error_of(format('select app_public.shift_change_validate(%s, 2)', :r4)),
          '{"code": "WV105", "detail": {"reason": ["Cette demande a été corrigée au back-office : indiquez le motif de la validation."]}}'::jsonb,
          'validating a corrected request without reason: 400 under reason');
select is((select status || ' v' || version from app_public.shift_change_requests where id = :r4), 'pending v2', 'nothing written');
select app_public.shift_change_validate(:r4, 2, 'Horaires revus avec l''équipe') as v4 \gset
select is(((:'v4'::jsonb) ->> 'version')::int, 3, 'validated after correction: version 3');
select tests.as_owner();
select is((select n.body from app_public.notifications n where n.target_id = :r4 and n.title = 'Demande de modification validée'),
          'Votre demande de modification du 25/11/2026 a été validée avec modification. Journée accordée : J Journée 09:00-15:00 (pause 12:00-12:30). Motif : Horaires revus avec l''équipe',
          'after a correction the notification names the granted slots and the reason');

-- Adjusted grant.
insert into app_public.day_modifications (employee_id, date, slots, comment)
values (tests.id('employees', 'alice'), '2026-11-26',
        array[row('09:00', '17:00', '12:00', '12:30', false, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot],
        'Réunion de synthèse à 14 h');
select tests.authenticate_as('mgr1');
select is(pg_temp.error_of(format($$select app_public.shift_change_validate(%s, 1, null, '[{"start_time": "10:00", "end_time": "17:00", "break_start_time": "13:00", "break_end_time": "13:30"}]')$$, :r5)) -> 'detail',
          '{"reason": ["Vous accordez une journée différente de celle demandée : indiquez le motif de l’ajustement."]}'::jsonb,
          'an adjusted grant needs a reason');
select throws_ok(format($$select app_public.shift_change_validate(%s, 1, 'x', '[]')$$, :r5), 'WV104', null, 'an adjusted day without slot is refused');
select throws_ok(format($$select app_public.shift_change_validate(%s, 1, 'x', '[{"start_time": "10:00"}]')$$, :r5), 'WV104', null,
                 'an incomplete adjusted slot is refused (under adjusted_slots)');
select app_public.shift_change_validate(:r5, 1, 'Départ à 17 h pour la réunion',
         '[{"date": "2026-12-25", "start_time": "10:00", "end_time": "17:00", "break_start_time": "13:00", "break_end_time": "13:30"}]') as v5 \gset
select is(((:'v5'::jsonb) ->> 'requested_minutes')::int, 450, 'the request keeps what was asked');
select is((:'v5'::jsonb) -> 'slots' -> 0 ->> 'end_time', '18:00', 'its slots too');
select is((:'v5'::jsonb) -> 'granted_slots' -> 0 ->> 'end_time', '17:00', 'the granted day is stored next to it');
select is(((:'v5'::jsonb) ->> 'granted_minutes')::int, 390, 'with its total');
select is(((:'v5'::jsonb) ->> 'granted_gap_minutes')::int, -60, 'and its gap (granted - requested)');
select tests.as_owner();
select is((select (dm.slots[1]).end_time from app_public.day_modifications dm
           where dm.employee_id = tests.id('employees', 'alice') and dm.date = '2026-11-26'), '17:00'::time,
          'the day of the request gets the granted slots, whatever date the payload names');
select is((select count(*)::int from app_public.day_modifications dm where dm.date = '2026-12-25'), 0, 'nothing on the date of the payload');
select is((select dm.comment from app_public.day_modifications dm
           where dm.employee_id = tests.id('employees', 'alice') and dm.date = '2026-11-26'), 'Réunion de synthèse à 14 h',
          'the comment already carried by the modulated day is kept');
select is((select verb from app_private.audit_log where model = 'day_modification' order by id desc limit 1), 'Modification',
          'replacing a day modification writes its audit line');
select ok((select n.body from app_public.notifications n where n.target_id = :r5 and n.title = 'Demande de modification validée')
          = 'Votre demande de modification du 26/11/2026 a été validée avec modification. Journée accordée : J Journée 10:00-17:00 (pause 13:00-13:30). Motif : Départ à 17 h pour la réunion',
          'after an adjustment the notification names the granted slots and the reason');

-- A broken rule of the modulation answers under its own keys and writes nothing.
select tests.authenticate_as('mgr1');
select is(pg_temp.error_of(format($$select app_public.shift_change_validate(%s, 1, 'Renfort', '[{"start_time": "07:00", "end_time": "21:00"}]')$$, :r6)) -> 'code',
          '"WV107"'::jsonb, 'a broken rule of the modulation: WV107');
select is((select array_agg(k order by k) from jsonb_object_keys(
             pg_temp.error_of(format($$select app_public.shift_change_validate(%s, 1, 'Renfort', '[{"start_time": "07:00", "end_time": "21:00"}]')$$, :r6)) -> 'detail') k),
          array['break_required', 'daily_duration'], 'each broken rule under its own key');
select is((select array_agg(k order by k) from jsonb_object_keys(
             pg_temp.error_of(format($$select app_public.shift_change_validate(%s, 1, null, '[{"start_time": "03:00", "end_time": "09:00"}, {"start_time": "08:00", "end_time": "10:00"}]')$$, :r6)) -> 'detail') k),
          array['slots'], 'overlapping granted slots: under slots');
select is((select array_agg(k order by k) from jsonb_object_keys(
             pg_temp.error_of(format($$select app_public.shift_change_validate(%s, 1, null, '[{"start_time": "03:00", "end_time": "09:00"}]')$$, :r6)) -> 'detail') k),
          array['reason', 'rest_period'], 'rest period broken and reason missing, together');
select tests.as_owner();
select is((select status || ' v' || version from app_public.shift_change_requests where id = :r6), 'pending v1', 'nothing written on the request');
select is((select count(*)::int from app_public.day_modifications where employee_id = tests.id('employees', 'alice') and date = '2026-11-27'), 0,
          'nor on the day');

-- Options only: the planned slots stay, the options are written.
select tests.authenticate_as('mgr1');
select lives_ok(format('select app_public.shift_change_validate(%s, 1)', :r6), 'a request of options only is validated');
select tests.as_owner();
select is((select dm.is_offsite::text || ' ' || (dm.slots[1]).start_time::text from app_public.day_modifications dm
           where dm.employee_id = tests.id('employees', 'alice') and dm.date = '2026-11-27'), 'true 09:00:00',
          'the day modification keeps the planned slots and carries the option');

-- adjusted_slots equal to the requested day is no adjustment.
select tests.authenticate_as('mgr1');
select app_public.shift_change_validate(:r7, 1, null, '[{"start_time": "08:00", "end_time": "16:00", "break_start_time": "12:00", "break_end_time": "12:30"}]') as v7 \gset
select is((:'v7'::jsonb) -> 'granted_slots', 'null'::jsonb, 'the requested day sent back is no adjustment (no reason needed)');

select * from finish();
rollback;
