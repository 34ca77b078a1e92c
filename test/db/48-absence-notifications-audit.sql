-- Absences: notifications of the SPEC's Events table, the event-versus-absence alert, the
-- audit lines of creations, decisions, corrections, cancellations and withdrawals.
begin;
select plan(35);
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
-- Notifications received, as "title | level | body".
create function pg_temp.notes(p_account text) returns text[] language sql stable security definer as $$
  select coalesce(array_agg(n.title || ' | ' || n.level || ' | ' || n.body order by n.id), '{}') from app_public.notifications n
  where n.account_id = tests.id('accounts', p_account);
$$;
create function pg_temp.note_count() returns int language sql stable security definer as $$
  select count(*)::int from app_public.notifications;
$$;
create function pg_temp.verbs(p_id int) returns text[] language sql stable security definer as $$
  select coalesce(array_agg(l.verb order by l.id), '{}') from app_private.audit_log l where l.model = 'absence' and l.target_id = p_id;
$$;
create function pg_temp.clear() returns void language sql volatile security definer as $$
  delete from app_public.notifications;
$$;
grant execute on all functions in schema pg_temp to public;

-- Filing: the deciders whose queue shows the employee, attached first.
select tests.authenticate_as('alice');
select is(tests.absence_create(pg_temp.body('alice', 'CP', '2026-12-21', '2026-12-23')) ->> 'has_recipient', 'true',
  'has_recipient in the creation answer');
select is(pg_temp.notes('mgr1'), array['Nouvelle demande d''absence | info | Alice Martin demande une absence « Congés payés » du 21/12/2026 au 23/12/2026 (3 jours).'],
  'the attached manager is notified with the employee and the dates');
select is(cardinality(pg_temp.notes('admin')) + cardinality(pg_temp.notes('rh1')) + cardinality(pg_temp.notes('alice')), 0,
  'unattached deciders are not, when an attached one exists; nor the author');

-- A manager's declaration notifies nobody.
select pg_temp.clear();
select tests.authenticate_as('mgr1');
select is(tests.absence_create(pg_temp.body('bruno', 'FOR', '2026-12-07')) ->> 'has_recipient', null, 'no filing for a declaration');
select is(pg_temp.note_count(), 0, 'a manager''s declaration notifies nobody');

-- A filing nobody can decide: the author and the fallback recipients.
select tests.as_owner();
update app_public.role_attributions set end_date = '2026-11-15'
where account_id in (tests.id('accounts', 'admin'), tests.id('accounts', 'admin_noemp'), tests.id('accounts', 'rh1'));
select tests.authenticate_as('farid');
select is(tests.absence_create(pg_temp.body('farid', 'FOR', '2026-12-07')) ->> 'has_recipient', 'false',
  'has_recipient false without decider');
select ok((pg_temp.notes('farid'))[1] like 'Demande d''absence sans valideur | warning | La demande d’absence « Formation » le 07/12/2026 de Farid Benali n’a aucun valideur%',
  'the author is told, with the cause');
select ok((pg_temp.notes('rh2'))[1] like 'Demande d''absence sans valideur | warning |%', 'and HR (no Admin left)');
select tests.as_owner();
select is((select array_agg(a.username order by a.username) from app_public.notifications n
           join app_public.accounts a on a.id = n.account_id where n.title = 'Demande d''absence sans valideur'),
          array['farid', 'rh1_noemp', 'rh2', 'rh2_noemp'], '... every active RH n1 and RH n2 account, named');
select tests.as_owner();
update app_public.role_attributions set end_date = null
where account_id in (tests.id('accounts', 'admin'), tests.id('accounts', 'admin_noemp'), tests.id('accounts', 'rh1'));

-- A filing whose notification fails does not exist.
select tests.as_owner();
alter table app_public.notifications add constraint test_refuse_filing check (title <> 'Nouvelle demande d''absence');
select tests.authenticate_as('alice');
select throws_ok($$select tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-09'))$$, '23514', null,
  'the notification fails');
select is(pg_temp.abs('alice', '2026-12-09'), null, 'the request does not exist without it');
select tests.as_owner();
alter table app_public.notifications drop constraint test_refuse_filing;

-- Decisions notify the employee.
select pg_temp.clear();
select tests.authenticate_as('mgr1');
select lives_ok(format($$select tests.absence_validate(%s, '{"version": 1}')$$, pg_temp.abs('alice', '2026-12-21')), 'validated');
select is(pg_temp.notes('alice'), array['Demande d''absence validée | info | Votre demande d’absence « Congés payés » du 21/12/2026 au 23/12/2026 a été validée.'],
  'validation: information level, with the dates');
select tests.authenticate_as('chloe');
select lives_ok($$select tests.absence_create(pg_temp.body('chloe', 'RTT', '2026-12-14', '2026-12-18'));
                  select tests.absence_create(pg_temp.body('chloe', 'RTT', '2026-12-21', '2026-12-22'))$$, 'two RTT requests');
select tests.authenticate_as('mgr2');
select lives_ok(format($$select tests.absence_validate(%s, '{"version": 1, "date_end": "2026-12-16", "reason": "Trois jours accordés"}')$$,
  pg_temp.abs('chloe', '2026-12-14')), 'granted adjusted');
select lives_ok(format($$select app_public.absence_refuse(%s, 1, 'Fermeture de fin d''année')$$,
  pg_temp.abs('chloe', '2026-12-21')), 'and refused');
select is(pg_temp.notes('chloe'), array[
  'Demande d''absence validée | info | Votre demande d’absence « Réduction du temps de travail » du 14/12/2026 au 18/12/2026 a été validée avec modification : « Réduction du temps de travail » du 14/12/2026 au 16/12/2026 accordé(e) (3 jours). Motif : Trois jours accordés',
  'Demande d''absence refusée | error | Votre demande d’absence « Réduction du temps de travail » du 21/12/2026 au 22/12/2026 a été refusée. Motif : Fermeture de fin d''année'],
  'an adjusted grant names what was granted; a refusal is an error ending with the reason');

-- Cancellation: requested (deciders), refused or accepted (employee), deletion (employee, naming who).
select pg_temp.clear();
select tests.authenticate_as('chloe');
select lives_ok(format($$select app_public.absence_request_cancellation(%s, p_comment => 'Plus besoin')$$, pg_temp.abs('chloe', '2026-12-14')),
  'chloe asks for a cancellation');
select is(pg_temp.notes('mgr2'), array['Demande d''annulation d''absence | info | Chloé Bernard demande l’annulation de son absence « Réduction du temps de travail » du 14/12/2026 au 16/12/2026. Commentaire : Plus besoin'],
  'the deciders are notified');
select tests.authenticate_as('mgr2');
select lives_ok(format($$select app_public.absence_refuse(%s, 3, 'Trop tard')$$, pg_temp.abs('chloe', '2026-12-14')), 'refused');
select tests.authenticate_as('chloe');
select lives_ok(format($$select app_public.absence_request_cancellation(%s)$$, pg_temp.abs('chloe', '2026-12-14')), 'asked again');
select tests.authenticate_as('mgr2');
select lives_ok(format($$select tests.absence_validate(%s, '{"version": 5}')$$, pg_temp.abs('chloe', '2026-12-14')), 'granted');
select is(pg_temp.notes('chloe'), array[
  'Annulation d''absence refusée | error | Votre demande d’annulation de l’absence « Réduction du temps de travail » du 14/12/2026 au 16/12/2026 a été refusée : l’absence est maintenue. Motif : Trop tard',
  'Annulation d''absence acceptée | info | Votre demande d’annulation de l’absence « Réduction du temps de travail » du 14/12/2026 au 16/12/2026 a été acceptée : l’absence est annulée.'],
  'refused and accepted cancellations are told to the employee');
select tests.authenticate_as('mgr1');
select lives_ok(format('select app_public.absence_delete(%s)', pg_temp.abs('bruno', '2026-12-07')), 'mgr1 deletes bruno''s granted training');
select is(pg_temp.notes('bruno'), array['Absence annulée | warning | Votre absence « Formation » le 07/12/2026 a été annulée par Julien Petit.'],
  'Absence annulée, naming who cancelled');

-- The event-versus-absence alert, inside the write.
select tests.as_owner();
insert into app_public.events (title, start_at, end_at) values ('Réunion d’équipe', '2026-12-02 14:00+01', '2026-12-02 16:00+01');
insert into app_public.event_participants (event_id, employee_id)
select e.id, tests.id('employees', 'david') from app_public.events e where e.title = 'Réunion d’équipe';
select pg_temp.clear();
select tests.authenticate_as('mgr3');
select ok(tests.absence_create(pg_temp.body('david', 'FOR', '2026-12-02')) -> 'warnings'
          @> '["Conflit avec l’événement « Réunion d’équipe » du 02/12/2026 14:00 au 02/12/2026 16:00."]',
  'the conflict is a warning of the write');
select is(pg_temp.notes('mgr3'), array['Conflit entre une absence et un événement | warning | L’absence « Formation » le 02/12/2026 de David Mercier chevauche l’événement « Réunion d’équipe » du 02/12/2026 14:00 au 02/12/2026 16:00.'],
  'the author is alerted');
select is(cardinality(pg_temp.notes('david')), 1, 'and the employee');

-- Audit lines.
select tests.authenticate_as('alice');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-10'))$$, 'a request');
select lives_ok(format('select app_public.absence_delete(%s)', pg_temp.abs('alice', '2026-12-10')), 'withdrawn');
select tests.as_owner();
select is((select array_agg(l.verb order by l.id) from app_private.audit_log l where l.model = 'absence'
           and l.target_id = (select max(target_id) from app_private.audit_log where model = 'absence' and verb = 'Suppression')),
  array['Creation', 'Suppression'], 'withdrawal: lines Creation and Suppression');
select is(pg_temp.verbs(pg_temp.abs('chloe', '2026-12-14')),
  array['Creation', 'Validation', 'Demande d''annulation', 'Refus', 'Demande d''annulation', 'Annulation'],
  'every decision and transition has its line');
select is((select l.before ->> 'status' || ' → ' || (l.after ->> 'status') || ' by ' || l.actor_username || ': ' || (l.after ->> 'decision_reason')
           from app_private.audit_log l where l.model = 'absence' and l.target_id = pg_temp.abs('chloe', '2026-12-14') and l.verb = 'Validation'),
  'pending → validated by mgr2: Trois jours accordés', 'a decision line carries the actor, the states before and after, the reason');
select tests.authenticate_as('mgr1');
select lives_ok(format($$select tests.absence_update(%s, '{"date_end": "2026-12-24"}')$$, pg_temp.abs('alice', '2026-12-21')), 'a correction');
select is((pg_temp.verbs(pg_temp.abs('alice', '2026-12-21')))[3], 'Correction', 'audited as a Correction');

select * from finish();
rollback;
