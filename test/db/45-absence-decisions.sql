-- Absences: the state table of the SPEC (every row), versions and stale decisions, rules
-- 10, 11, 15 and 20 (requalification, cancellation requests, reasons of corrected decisions).
begin;
select plan(70);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.body(p_employee text, p_type text, p_start date, p_end date default null,
                             p_extra jsonb default '{}') returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', tests.id('employees', p_employee),
                            'type', (select t.id from app_public.absence_types t where t.code = p_type),
                            'date_start', p_start, 'date_end', coalesce(p_end, p_start)) || p_extra;
$$;
create function pg_temp.abs(p_employee text, p_start date) returns int language sql stable security definer as $$
  select a.id from app_public.absences a where a.employee_id = tests.id('employees', p_employee) and a.date_start = p_start
  order by a.id desc limit 1;
$$;
create function pg_temp.row_of(p_id int) returns app_public.absences language sql stable security definer as $$
  select * from app_public.absences a where a.id = p_id;
$$;
create function pg_temp.bal(p_employee text, p_code text, p_year int default 2026) returns text
language sql stable security definer as $$
  select format('%s/%s/%s', b.acquired, b.taken, b.planned) from app_private.counter_balances b
  where b.employee_id = tests.id('employees', p_employee) and b.code = p_code and b.year = p_year;
$$;
create function pg_temp.type_id(p_code text) returns int language sql stable as $$
  select t.id from app_public.absence_types t where t.code = p_code;
$$;
grant execute on all functions in schema pg_temp to public;

-- (none) → pending (employee for self, counters reserved) / validated (manager for another)
-- / pending (manager for self).
select tests.authenticate_as('alice');
select is(tests.absence_create(pg_temp.body('alice', 'CP', '2026-11-30', '2026-12-02')) ->> 'status', 'pending',
  'employee for own record: pending');
select is(pg_temp.bal('alice', 'CP'), '25.00/0.00/3.00', 'days in Planifiés');
select is((pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).version, 1, 'version 1 at creation');
select tests.authenticate_as('mgr1');
select is(tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-10')) ->> 'status', 'validated',
  'manager for an employee of the perimeter: validated');
select is(tests.absence_create(pg_temp.body('mgr1', 'CP', '2026-12-21', '2026-12-22')) ->> 'status', 'pending',
  'manager for own record: pending');

-- pending → validated: version current, not the author, a role that decides.
select tests.authenticate_as('mgr1');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1}')$$, pg_temp.abs('mgr1', '2026-12-21')),
  'WF202', 'Vous ne pouvez pas décider de votre propre demande d’absence.', 'nobody decides their own request: 403');
select tests.authenticate_as('da');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1}')$$, pg_temp.abs('alice', '2026-11-30')),
  'WF201', 'Votre rôle ne permet pas de décider des demandes d’absence.', 'the DA reads but does not decide: 403');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 7}')$$, pg_temp.abs('alice', '2026-11-30')),
  'WC201', null, 'a stale version answers 409 before any other check');
select tests.authenticate_as('mgr2');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1}')$$, pg_temp.abs('alice', '2026-11-30')),
  'WN201', null, 'outside the perimeter: 404');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1, "date_end": "2026-12-01"}')$$,
  pg_temp.abs('alice', '2026-11-30')), 'WV211', null, 'rule 20: correcting the end date needs a reason');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1, "type": %s}')$$,
  pg_temp.abs('alice', '2026-11-30'), pg_temp.type_id('CT')), 'WV211', null, 'and so does a requalification');
select is((pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).status, 'pending', 'nothing written');
select lives_ok(format($$select tests.absence_validate(%s, '{"version": 1, "date_end": "2026-12-02"}')$$,
  pg_temp.abs('alice', '2026-11-30')), 'the same end date again is no correction: no reason needed');
select is((pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).status, 'validated', 'validated');
select is((pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).version, 2, 'version + 1');
select is((pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).decided_by, tests.id('accounts', 'mgr1'), 'decided_by');
select is((pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).decided_at, '2026-11-16 10:00+01'::timestamptz, 'decided_at');
select is(pg_temp.bal('alice', 'CP'), '25.00/0.00/3.00', 'a future absence stays in Planifiés once granted');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 2}')$$, pg_temp.abs('alice', '2026-11-30')),
  'WV210', 'Seule une demande en attente peut être décidée.', 'current version but not pending: 400 under status');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1}')$$, pg_temp.abs('alice', '2026-11-30')),
  'WC201', 'Quelqu’un d’autre a déjà traité cette absence (version périmée) : rechargez la file et recommencez.',
  'the version read before the decision is stale: 409');

-- Validation with a correction and a requalification, in the same call (rules 11, 20).
select tests.authenticate_as('bruno');
select lives_ok($$select tests.absence_create(pg_temp.body('bruno', 'CP', '2026-11-23', '2026-11-27'))$$, 'bruno asks 5 days of CP');
select tests.authenticate_as('mgr1');
select lives_ok(format($$select tests.absence_validate(%s, '{"version": 1, "date_end": "2026-11-24", "reason": "Deux jours seulement"}')$$,
  pg_temp.abs('bruno', '2026-11-23')), 'granted shortened, with a reason');
select is(row((pg_temp.row_of(pg_temp.abs('bruno', '2026-11-23'))).date_end, (pg_temp.row_of(pg_temp.abs('bruno', '2026-11-23'))).counted_quantity,
              (pg_temp.row_of(pg_temp.abs('bruno', '2026-11-23'))).decision_reason)::text,
  '(2026-11-24,2.00,"Deux jours seulement")', 'end date, count and reason written');
select is(pg_temp.bal('bruno', 'CP'), '25.00/0.00/2.00', 'the counter effect is written once, for the granted period');

-- Requalification reruns every rule: a type whose counter is missing is refused.
select tests.authenticate_as('alice');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-07', '2026-12-08'))$$, 'a 2-day training request');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1, "type": %s, "reason": "Requalifié en RTT"}')$$,
  pg_temp.abs('alice', '2026-12-07'), pg_temp.type_id('RTT')), 'WV200', null, 'requalified to RTT without an RTT counter: refused');
-- Rule 10: DLG_CSE requalified to hours without hours: two messages, the request stays pending.
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1, "type": %s, "reason": "Délégation"}')$$,
  pg_temp.abs('alice', '2026-12-07'), pg_temp.type_id('DLG_CSE')), 'WV200',
  'Une absence en heures porte sur une seule date : la date de fin doit être celle du début. Un motif en heures demande une heure de début et une heure de fin.',
  'DLG_CSE without hours: the two messages');
select is((pg_temp.row_of(pg_temp.abs('alice', '2026-12-07'))).status, 'pending', 'the request stays pending');
select lives_ok(format($$select tests.absence_validate(%s, '{"version": 1, "type": %s, "date_end": "2026-12-07", "start_time": "09:00", "end_time": "12:00", "reason": "Délégation CSE"}')$$,
  pg_temp.abs('alice', '2026-12-07'), pg_temp.type_id('DLG_CSE')), 'with one date and hours it is granted');
select is(row((pg_temp.row_of(pg_temp.abs('alice', '2026-12-07'))).counted_quantity, (pg_temp.row_of(pg_temp.abs('alice', '2026-12-07'))).counted_unit)::text,
  '(3.00,hour)', 'counted in hours');
select is(pg_temp.bal('alice', 'DLG_CSE'), '20.00/0.00/3.00', 'and reserved on DLG_CSE');

-- pending → refused: reason mandatory; counters back; the request stays on file.
select tests.authenticate_as('alice');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'CT', '2026-12-14', '2026-12-15'))$$, 'a CT request');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.absence_refuse(%s, 1)$$, pg_temp.abs('alice', '2026-12-14')),
  'WV211', 'Un refus doit être motivé : indiquez la raison.', 'refuse without reason: 400 under reason');
select throws_ok(format($$select app_public.absence_refuse(%s, 1, '   ')$$, pg_temp.abs('alice', '2026-12-14')),
  'WV211', null, 'a blank reason is no reason');
select throws_ok(format($$select app_public.absence_refuse(%s, 3, 'Non')$$, pg_temp.abs('alice', '2026-12-14')),
  'WC201', null, 'stale version on refuse: 409');
select lives_ok(format($$select app_public.absence_refuse(%s, 1, 'Service minimum')$$, pg_temp.abs('alice', '2026-12-14')),
  'refused with a reason');
select is(row((pg_temp.row_of(pg_temp.abs('alice', '2026-12-14'))).status, (pg_temp.row_of(pg_temp.abs('alice', '2026-12-14'))).decision_reason,
              (pg_temp.row_of(pg_temp.abs('alice', '2026-12-14'))).version)::text, '(refused,"Service minimum",2)', 'refused, reason, version + 1');
select is(pg_temp.bal('alice', 'CT'), '6.00/0.00/0.00', 'the reservation is released, nothing taken');
select throws_ok(format($$select app_public.absence_refuse(%s, 2, 'Encore')$$, pg_temp.abs('alice', '2026-12-14')),
  'WV210', null, 'a refused request cannot be decided again');

-- validated → cancellation requested (owner, not older than 14 days); still counted.
select tests.authenticate_as('bruno');
select throws_ok(format($$select app_public.absence_request_cancellation(%s)$$, pg_temp.abs('alice', '2026-11-30')), 'WN201', null,
  'a colleague''s absence: 404');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.absence_request_cancellation(%s)$$, pg_temp.abs('alice', '2026-11-30')), 'WF205', null,
  'a reader who is not the owner: 403');
select tests.authenticate_as('alice');
select throws_ok(format($$select app_public.absence_request_cancellation(%s)$$, pg_temp.abs('alice', '2026-12-14')), 'WV210', null,
  'a refused absence: 400 under status');
select lives_ok(format($$select app_public.absence_request_cancellation(%s, p_comment => 'Finalement je travaille')$$,
  pg_temp.abs('alice', '2026-11-30')), 'the owner asks for the cancellation');
select is(row((pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).status, (pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).cancellation_comment,
              (pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).cancellation_requested_at, (pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).version)::text,
  '(cancellation_requested,"Finalement je travaille","2026-11-16 09:00:00+00",3)', 'cancellation requested, comment and date kept');
select is(pg_temp.bal('alice', 'CP'), '25.00/0.00/3.00', 'still counted: counters unchanged');
select throws_ok(format($$select app_public.absence_delete(%s)$$, pg_temp.abs('alice', '2026-11-30')), 'WV210', null,
  'the owner cannot delete it either');

-- cancellation requested → validated (refused with a reason) → cancellation requested → cancelled.
select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.absence_refuse(%s, 3)$$, pg_temp.abs('alice', '2026-11-30')), 'WV211', null,
  'refusing a cancellation needs a reason');
select lives_ok(format($$select app_public.absence_refuse(%s, 3, 'Période chargée')$$, pg_temp.abs('alice', '2026-11-30')),
  'cancellation refused');
select is(row((pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).status, (pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).cancellation_decision_reason)::text,
  '(validated,"Période chargée")', 'back to validated with the reason');
select tests.authenticate_as('alice');
select lives_ok(format($$select app_public.absence_request_cancellation(%s)$$, pg_temp.abs('alice', '2026-11-30')), 'asked again');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 5, "date_end": "2026-12-01", "reason": "x"}')$$,
  pg_temp.abs('alice', '2026-11-30')), 'WV212', null, 'a cancellation cannot be corrected');
select lives_ok(format($$select tests.absence_validate(%s, '{"version": 5}')$$, pg_temp.abs('alice', '2026-11-30')),
  'the cancellation is granted');
select is(row((pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).status, (pg_temp.row_of(pg_temp.abs('alice', '2026-11-30'))).cancelled_by)::text,
  format('(cancelled,%s)', tests.id('accounts', 'mgr1')), 'cancelled and kept on file');
select is(pg_temp.bal('alice', 'CP'), '25.00/0.00/0.00', 'counters recredited');

-- validated → cancelled by a manager's "Supprimer l'absence".
select lives_ok(format($$select app_public.absence_delete(%s)$$, pg_temp.abs('alice', '2026-12-10')), 'the manager deletes a granted absence');
select is((pg_temp.row_of(pg_temp.abs('alice', '2026-12-10'))).status, 'cancelled', 'the row stays, cancelled');
select tests.authenticate_as('da');
select throws_ok(format($$select app_public.absence_delete(%s)$$, pg_temp.abs('bruno', '2026-11-23')), 'WF201', null,
  'the DA cannot cancel a granted absence');

-- refused and cancelled: DELETE answers 400 under status.
select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.absence_delete(%s)$$, pg_temp.abs('alice', '2026-12-14')), 'WV210',
  'Une demande refusée n’est jamais effacée.', 'refused: 400');
select throws_ok(format($$select app_public.absence_delete(%s)$$, pg_temp.abs('alice', '2026-12-10')), 'WV210',
  'Cette absence est déjà annulée.', 'cancelled: 400');
select tests.authenticate_as('alice');
select throws_ok(format($$select app_public.absence_delete(%s)$$, pg_temp.abs('alice', '2026-12-10')), 'WV210', null,
  'cancelled, by the owner: 400');

-- Rule 15: the cancellation request window, and the decider's window at the grant.
select tests.authenticate_as('mgr1');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'FOR', '2026-10-01'))$$, 'a declaration in October');
select tests.authenticate_as('alice');
select throws_ok(format($$select app_public.absence_request_cancellation(%s)$$, pg_temp.abs('alice', '2026-10-01')), 'WV214',
  'L’annulation ne peut plus être demandée : l’absence a commencé avant le 02/11/2026 (14 jours au plus).',
  'older than 14 days: 400 under date_start');

-- Rule 4: a half-day stored before the whole-day rule is granted as it is; an adjustment
-- takes it whole.
select tests.as_owner();
insert into app_public.absences (employee_id, type_id, date_start, date_end, end_half, status, counted_quantity, counted_unit,
                                 author_account_id, submitted_at)
values (tests.id('employees', 'bruno'), pg_temp.type_id('FOR'), '2027-02-01', '2027-02-02', 'morning', 'pending', 1.5, 'day',
        tests.id('accounts', 'bruno'), '2026-11-01'),
       (tests.id('employees', 'bruno'), pg_temp.type_id('FOR'), '2027-02-08', '2027-02-09', 'morning', 'pending', 1.5, 'day',
        tests.id('accounts', 'bruno'), '2026-11-01');
update app_public.absence_types set half_day_allowed = false where code = 'FOR';
select tests.authenticate_as('mgr1');
select lives_ok(format($$select tests.absence_validate(%s, '{"version": 1}')$$, pg_temp.abs('bruno', '2027-02-01')),
  'a legacy half-day of a type now whole-day is granted unchanged');
select is(row((pg_temp.row_of(pg_temp.abs('bruno', '2027-02-01'))).end_half, (pg_temp.row_of(pg_temp.abs('bruno', '2027-02-01'))).counted_quantity)::text,
  '(morning,1.50)', 'as it is, half-day kept');
select lives_ok(format($$select tests.absence_validate(%s, '{"version": 1, "date_end": "2027-02-10", "reason": "Trois jours"}')$$,
  pg_temp.abs('bruno', '2027-02-08')), 'an adjusted one is granted');
select is(row((pg_temp.row_of(pg_temp.abs('bruno', '2027-02-08'))).end_half, (pg_temp.row_of(pg_temp.abs('bruno', '2027-02-08'))).counted_quantity)::text,
  '(,3.00)', 'taken whole');
select throws_ok(format($$select tests.absence_update(%s, '{"date_end": "2027-02-03", "end_half": "morning"}')$$,
  pg_temp.abs('bruno', '2027-02-01')), 'WV200', null, 'a correction cannot keep a half-day of a whole-day type');

-- The back-office state guard: illegal direct writes.
select tests.as_owner();
select throws_ok(format($$update app_public.absences set comment = 'x', version = version + 1 where id = %s$$, pg_temp.abs('alice', '2026-12-10')),
  'WV910', null, 'a cancelled absence is read-only');
select throws_ok(format($$update app_public.absences set status = 'cancelled', version = version + 1 where id = %s$$, pg_temp.abs('mgr1', '2026-12-21')),
  'WV910', null, 'pending → cancelled is not a transition');
select throws_ok(format($$update app_public.absences set comment = 'x' where id = %s$$, pg_temp.abs('mgr1', '2026-12-21')),
  'WV910', null, 'every write advances the version');

select * from finish();
rollback;
