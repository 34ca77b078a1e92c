-- Dated delegations of decisions (issue 30): a delegate decides within the delegator's rights
-- only, not outside the interval, not on their own request nor the delegator's, not after the
-- delegation ended, not through a chain; both names recorded (decided_by, on_behalf_of, audit
-- line and notification « X, par délégation de Y »); creation rules (own rights only, RH for an
-- absent decider of their perimeter); routing with the decider away, with and without a delegate;
-- never-NULL guards (no account, no employee record, no main workplace, closed accounts).
--
-- Fixture: mgr1 (Manager n1, E1), mgr2 (Manager n2, E2), rh2 (RH n2, E2), rh1 (RH n1, whole),
-- admin (Admin, whole), da (DA, E1); alice (E1, team T1 on E1), bruno (E1, secondary E2),
-- chloe (E2), david (E3), farid (no workplace); mgr1_noemp (Manager n1 E3, no employee record).
begin;
select plan(60);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.route(p_employee text, p_author text, p_permission text default 'absences.decide_absence')
returns text[] language sql as $$
  select coalesce(array_agg(a.username order by a.username), '{}')
  from app_private.route_deciders(tests.id('employees', p_employee), '2026-11-16', p_permission, tests.id('accounts', p_author)) r(id)
  join app_public.accounts a on a.id = r.id;
$$;
create function pg_temp.may(p_account text, p_permission text, p_employee text, p_at timestamptz default '2026-11-16 12:00+01')
returns boolean language sql stable as $$
  select app_hidden.may(tests.id('accounts', p_account), p_permission, tests.id('employees', p_employee), p_at);
$$;
create function pg_temp.type_id(p_code text) returns int language sql stable as $$
  select t.id from app_public.absence_types t where t.code = p_code;
$$;
create function pg_temp.body(p_employee text, p_type text, p_start date, p_end date default null) returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', tests.id('employees', p_employee), 'type', pg_temp.type_id(p_type),
                            'date_start', p_start, 'date_end', coalesce(p_end, p_start));
$$;
create function pg_temp.row_of(p_id int) returns app_public.absences language sql stable security definer as $$
  select * from app_public.absences a where a.id = p_id;
$$;
create function pg_temp.delegate(p_delegate text, p_start date, p_end date, p_kinds text,
                                 p_establishments text[] default null, p_delegator text default null) returns jsonb
language sql volatile as $$
  select app_public.delegation_create(
    p_delegate => tests.id('accounts', p_delegate), p_start_date => p_start, p_end_date => p_end, p_kinds => p_kinds,
    p_establishments => (select array_agg(tests.id('establishments', x)) from unnest(p_establishments) x),
    p_delegator => case when p_delegator is not null then tests.id('accounts', p_delegator) end);
$$;
-- The sqlstate and detail of a refused call.
create function pg_temp.error_of(p_sql text) returns text language plpgsql as $$
declare
  v_state text;
  v_detail text;
begin
  execute p_sql;
  return null;
exception when others then
  get stacked diagnostics v_state = returned_sqlstate, v_detail = pg_exception_detail;
  return v_state || ' ' || coalesce(v_detail, '');
end;
$$;
grant execute on all functions in schema pg_temp to public;

-- ------------------------------------------------------------ routing follows presence
select is(pg_temp.route('alice', 'alice'), array['mgr1'], 'alice''s filing goes to mgr1, the attached decider');
select tests.authenticate_as('admin');
select is(tests.absence_create(pg_temp.body('mgr1', 'FOR', '2026-11-16', '2026-11-18')) ->> 'status', 'validated',
  'the Admin declares mgr1 away (granted absence) from 16 to 18 November');
select tests.as_owner();
select is(pg_temp.route('alice', 'alice'), array['admin', 'rh1'],
  'mgr1 away without a delegate is skipped in favour of the unattached deciders');

-- ------------------------------------------------------------ creation rules
select tests.authenticate_as('mgr1');
select is(pg_temp.error_of($$select pg_temp.delegate('bruno', '2026-11-16', '2026-11-20', 'absences', array['E2'])$$),
  'WV802 {"establishments": ["Hors du périmètre de décision du délégant : IME Les Peupliers."]}',
  'never beyond the delegator''s perimeter: an establishment outside it is refused under establishments');
select is(pg_temp.error_of($$select pg_temp.delegate('mgr1', '2026-11-20', '2026-11-16', null)$$),
  'WV802 {"kinds": ["Choisissez : absences, modifications de journée, ou les deux."], "delegate": ["On ne se délègue pas ses propres décisions."], "end_date": ["La date de fin précède la date de début."]}',
  'bad input: each error under its field, nothing written');
select is((select count(*) from app_public.delegations)::int, 0, 'nothing written');
select lives_ok($$select pg_temp.delegate('bruno', '2026-11-16', '2026-11-20', 'absences')$$,
  'mgr1 delegates its absence decisions to bruno from 16 to 20 November over all its perimeter');
select (select d.id from app_public.delegations d where d.delegate_account_id = tests.id('accounts', 'bruno')) as d1 \gset
select tests.as_owner();
select is((select count(*) from app_private.audit_log l where l.model = 'delegation' and l.target_id = :d1)::int, 1,
  'the creation is audited');
select tests.authenticate_as('da');
select throws_ok($$select pg_temp.delegate('alice', '2026-11-16', '2026-11-20', 'absences')$$, 'WF801', null,
  'a DA (reads the queue, decides nothing) has nothing to delegate');
select tests.authenticate_as('alice');
select throws_ok($$select pg_temp.delegate('bruno', '2026-11-16', '2026-11-20', 'absences')$$, 'WF801', null,
  'a Salarié has nothing to delegate');
select tests.authenticate_as('mgr1');
select throws_ok($$select pg_temp.delegate('bruno', '2026-11-16', '2026-11-20', 'absences', null, 'mgr2')$$, 'WF801', null,
  'a manager does not create a delegation for another decider');

-- ------------------------------------------------------------ routing with a delegate
select tests.as_owner();
select is(pg_temp.route('alice', 'alice'), array['bruno', 'mgr1'],
  'mgr1 away with a delegate: mgr1 and the delegate are told, not the unattached');
select is(pg_temp.route('alice', 'alice', 'planning.decide_shift_change'), array['admin', 'rh1'],
  'the delegation covers absences only: a day change skips mgr1 away in favour of the unattached');
select is(pg_temp.route('alice', 'bruno'), array['admin', 'rh1'],
  'never the author: bruno''s filing is not routed to bruno, and mgr1 away is skipped');
select tests.authenticate_as('alice');
select is(tests.absence_create(pg_temp.body('alice', 'CP', '2026-11-30', '2026-12-01')) ->> 'has_recipient', 'true',
  'has_recipient reflects the routing');
select tests.as_owner();
select is((select array_agg(a.username order by a.username) from app_public.notifications n
           join app_public.accounts a on a.id = n.account_id where n.title = 'Nouvelle demande d''absence'),
  array['bruno', 'mgr1'], 'the filing''s notification goes to mgr1 and its delegate bruno');
select tests.as_owner();
select (select a.id from app_public.absences a where a.employee_id = tests.id('employees', 'alice')
        and a.date_start = '2026-11-30') as a1 \gset

-- ------------------------------------------------------------ the effective perimeter
select ok(pg_temp.may('bruno', 'absences.view_absence_queue', 'alice'), 'the delegate reads the queue of E1');
select ok(pg_temp.may('bruno', 'absences.decide_absence', 'alice'), 'and decides absences of E1');
select ok(not pg_temp.may('bruno', 'planning.decide_shift_change', 'alice'), 'not day changes (kinds: absences)');
select ok(not pg_temp.may('bruno', 'absences.decide_absence', 'david'), 'not outside the delegator''s perimeter (E3)');
select ok(not pg_temp.may('bruno', 'absences.view_absencedocument_file', 'alice'), 'not the documents of E1');
select ok(not pg_temp.may('bruno', 'employee.change_employee_record', 'alice'), 'not the records of E1');
select ok(not pg_temp.may('bruno', 'absences.decide_absence', 'alice', '2026-11-21 12:00+01'), 'not after the interval');
select ok(not pg_temp.may('bruno', 'absences.decide_absence', 'alice', '2026-11-15 12:00+01'), 'not before it');
select ok(app_hidden.permission_in(app_hidden.account_permission_codes(tests.id('accounts', 'bruno'), '2026-11-16 12:00+01'),
                                   'absences.decide_absence'), 'the delegate holds the decision during the interval');
select ok(not app_hidden.permission_in(app_hidden.account_permission_codes(tests.id('accounts', 'bruno'), '2026-11-21 12:00+01'),
                                       'absences.decide_absence'), 'and not after it');
select ok(not pg_temp.may('bruno', 'absences.decide_absence', 'farid'),
  'an employee without a main workplace is outside the delegated perimeter');

select is((select count(*) from app_public.employees e, unnest(array['absences.view_absence_queue', 'absences.decide_absence',
                                                                    'planning.decide_shift_change']) p
           where app_hidden.may(tests.id('accounts', 'bruno'), p, e.id, '2026-11-16 12:00+01')
                 <> (e.id in (select app_hidden.perimeter_employee_ids(p, tests.id('accounts', 'bruno'), '2026-11-16 12:00+01'))))::int,
  0, 'with a delegation, the shortcut may() equals the plain rule (membership of perimeter_employee_ids)');

-- ------------------------------------------------------------ the queue's mark
select tests.authenticate_as('bruno');
select is(app_hidden.absences_json(array[:a1], null, true) -> 0 ->> 'by_delegation_of', 'Julien Petit',
  'the delegate''s queue marks the request « par délégation de Julien Petit »');
select is(app_hidden.absences_list_json_text(array[:a1], null), (app_hidden.absences_json(array[:a1], null, true))::text,
  'the list text builder writes the same record, mark included');
select tests.authenticate_as('mgr1');
select is(app_hidden.absences_json(array[:a1], null, true) -> 0 ->> 'by_delegation_of', null,
  'the delegator''s own queue carries no mark');

-- ------------------------------------------------------------ decisions by delegation
select tests.authenticate_as('bruno');
select is((tests.absence_validate(:a1, '{"version": 1}')) ->> 'status', 'validated', 'the delegate validates alice''s request');
select tests.as_owner();
select is(row((pg_temp.row_of(:a1)).decided_by, (pg_temp.row_of(:a1)).on_behalf_of)::text,
  row(tests.id('accounts', 'bruno'), tests.id('accounts', 'mgr1'))::text, 'the decision records both names');
select is((select l.actor_display_name from app_private.audit_log l where l.model = 'absence' and l.target_id = :a1
           and l.verb = 'Validation' order by l.id desc limit 1),
  'Bruno Lambert, par délégation de Julien Petit', 'the audit line says « X, par délégation de Y »');
select ok((select n.body from app_public.notifications n where n.title = 'Demande d''absence validée'
           and n.target_id = :a1) like '%Décision de Bruno Lambert, par délégation de Julien Petit.',
  'the requester''s notification says « X, par délégation de Y »');
select tests.authenticate_as('bruno');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1}')$$, :a1), 'WC201', null,
  'never deciding twice: a stale version is 409');
select is(app_hidden.absence_filer_error(tests.id('employees', 'alice')),
  'Une délégation permet de décider des demandes, pas de déclarer une absence pour un autre salarié.',
  'a delegation hands over the decisions, not the declarations for others');
-- The delegate's own request and the delegator's.
select (tests.absence_create(pg_temp.body('bruno', 'CP', '2026-12-07')) ->> 'id')::int as a2 \gset
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1}')$$, :a2), 'WF202', null,
  'the delegate never decides their own request');
select tests.authenticate_as('mgr1');
select (tests.absence_create(pg_temp.body('mgr1', 'CP', '2026-12-14')) ->> 'id')::int as a3 \gset
select tests.authenticate_as('bruno');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1}')$$, :a3), 'WF803', null,
  'nor the delegator''s request');
select throws_ok(format($$select app_public.absence_refuse(%s, 1, 'Non')$$, :a3), 'WF803', null,
  'nor refuses it');

-- ------------------------------------------------------------ no chains
select throws_ok($$select pg_temp.delegate('chloe', '2026-11-16', '2026-11-20', 'absences')$$, 'WF802', null,
  'a delegate does not re-delegate what they received');
select tests.as_owner();
insert into app_public.delegations (delegator_account_id, delegate_account_id, start_date, end_date, kinds)
values (tests.id('accounts', 'bruno'), tests.id('accounts', 'chloe'), '2026-11-16', '2026-11-20', 'absences');
select ok(not pg_temp.may('chloe', 'absences.decide_absence', 'alice'),
  'and a delegation written by a delegate hands on nothing it received');

-- ------------------------------------------------------------ HR for an absent decider
select tests.authenticate_as('rh2');
select is(pg_temp.error_of($$select pg_temp.delegate('chloe', '2026-11-17', '2026-11-18', 'both', null, 'mgr2')$$),
  'WV801 delegator', 'RH n2 cannot delegate for a decider who is not away');
select is(tests.absence_create(pg_temp.body('mgr2', 'FOR', '2026-11-17', '2026-11-18')) ->> 'status', 'validated',
  'RH n2 declares mgr2 away');
select lives_ok($$select pg_temp.delegate('gaelle', '2026-11-17', '2026-11-18', 'both', null, 'mgr2')$$,
  'RH n2 names a delegate for mgr2, away, of its perimeter');
select ok(pg_temp.may('gaelle', 'planning.decide_shift_change', 'chloe', '2026-11-17 12:00+01'),
  'the delegate decides for mgr2 over E2');
select is(pg_temp.error_of($$select pg_temp.delegate('chloe', '2026-11-16', '2026-11-18', 'absences', null, 'mgr1')$$),
  'WV801 delegator', 'RH n2 cannot delegate for a decider outside its perimeter (mgr1, E1)');
select tests.freeze('2026-11-17 10:00+01');
select tests.authenticate_as('chloe');
select (app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'urgence', p_is_remote => true) ->> 'id')::int as s1 \gset
select tests.authenticate_as('gaelle');
select is(app_public.shift_change_validate(:s1, 1) ->> 'status', 'validated', 'the delegate validates a day change for mgr2');
select is(app_public.shift_change_get(:s1) ->> 'on_behalf_of_name', 'Nadia Roux',
  'the day-change record names on whose behalf it was decided');
select tests.as_owner();
select is((select r.on_behalf_of from app_public.shift_change_requests r where r.id = :s1), tests.id('accounts', 'mgr2'),
  'the day-change decision records on whose behalf');
select tests.freeze('2026-11-16 10:00+01');
select tests.authenticate_as('mgr2');
select is(jsonb_array_length(app_public.delegations_list(p_role => 'given') -> 'results'), 1,
  'the delegator lists the delegation given in its name');
select tests.authenticate_as('gaelle');
select is(jsonb_array_length(app_public.delegations_list(p_role => 'received') -> 'results'), 1,
  'the delegate lists the delegation received');
select tests.authenticate_as('alice');
select is((app_public.delegations_list() ->> 'count')::int, 0, 'others read none');

-- ------------------------------------------------------------ caller without employee record, closed accounts
select tests.authenticate_as('mgr1_noemp');
select lives_ok($$select pg_temp.delegate('bruno', '2026-11-16', '2026-11-16', 'absences')$$,
  'a decider without an employee record delegates over its perimeter (E3)');
select tests.as_owner();
select ok(pg_temp.may('bruno', 'absences.decide_absence', 'david'), 'the delegate decides over E3 too');
update app_public.accounts set is_active = false where username = 'mgr1_noemp';
select ok(not pg_temp.may('bruno', 'absences.decide_absence', 'david'), 'a closed delegator hands over nothing');
update app_public.accounts set is_active = false where username = 'bruno';
select ok(not pg_temp.may('bruno', 'absences.decide_absence', 'alice'), 'a closed delegate decides nothing');
update app_public.accounts set is_active = true where username = 'bruno';

-- ------------------------------------------------------------ ended early
select tests.authenticate_as('bruno');
select throws_ok(format('select app_public.delegation_end(%s)', :d1), 'WF804', null, 'the delegate does not end it');
select tests.authenticate_as('mgr1');
select is((app_public.delegation_end(:d1)) ->> 'is_active', 'false', 'the delegator ends it early');
select ok(not pg_temp.may('bruno', 'absences.decide_absence', 'alice', '2026-11-16 12:00+01'),
  'the delegate no longer decides after the end');

select * from finish();
rollback;
