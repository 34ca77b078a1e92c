-- Absences in the back-office (sql/absences/corrections.sql, sql/absences/api.sql): the list's
-- establishment and type filters, what the reader may do on an absence, and the form's save
-- with its status field (only back to pending, from validated or refused; never from or to
-- cancellation requested / cancelled), counters, notification and audit of the reopening.
begin;
select plan(30);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.body(p_employee text, p_type text, p_start date, p_end date default null) returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', tests.id('employees', p_employee),
                            'type', (select t.id from app_public.absence_types t where t.code = p_type),
                            'date_start', p_start, 'date_end', coalesce(p_end, p_start));
$$;
create function pg_temp.row_of(p_id int) returns app_public.absences language sql stable security definer as $$
  select * from app_public.absences a where a.id = p_id;
$$;
create function pg_temp.bal(p_employee text, p_code text) returns text language sql stable security definer as $$
  select format('%s/%s/%s', b.acquired, b.taken, b.planned) from app_private.counter_balances b
  where b.employee_id = tests.id('employees', p_employee) and b.code = p_code and b.year = 2026;
$$;
create function pg_temp.ids(p_result jsonb) returns int[] language sql immutable as $$
  select coalesce(array_agg((x ->> 'id')::int order by (x ->> 'id')::int), '{}') from jsonb_array_elements(p_result -> 'results') x;
$$;
create function pg_temp.titles(p_username text) returns text[] language sql stable security definer as $$
  select coalesce(array_agg(n.title || ' | ' || n.body order by n.id), '{}') from app_public.notifications n
  join app_public.accounts a on a.id = n.account_id where a.username = p_username;
$$;
create function pg_temp.verbs(p_id int) returns text[] language sql stable security definer as $$
  select coalesce(array_agg(l.verb order by l.id), '{}') from app_private.audit_log l where l.model = 'absence' and l.target_id = p_id;
$$;
grant execute on all functions in schema pg_temp to public;

-- Arrangement: declarations by managers are born validated.
select tests.authenticate_as('mgr1');
select (tests.absence_create(pg_temp.body('alice', 'CP', '2026-11-16')) ->> 'id')::int as today_cp \gset
select (tests.absence_create(pg_temp.body('bruno', 'FOR', '2026-12-03')) ->> 'id')::int as bruno_for \gset
select tests.authenticate_as('mgr2');
select (tests.absence_create(pg_temp.body('chloe', 'FOR', '2026-12-03')) ->> 'id')::int as chloe_for \gset
select tests.authenticate_as('alice');
select (tests.absence_create(pg_temp.body('alice', 'CP', '2026-12-14', '2026-12-15')) ->> 'id')::int as refused_cp \gset
select (tests.absence_create(pg_temp.body('alice', 'CP', '2026-12-21')) ->> 'id')::int as overlapped \gset
select tests.authenticate_as('rh1');
select (tests.absence_create(pg_temp.body('rh1', 'FOR', '2026-12-03')) ->> 'id')::int as rh1_own \gset

-- List filters: establishment (main or secondary workplace) and type.
select tests.authenticate_as('rh1');
select is(pg_temp.ids(app_public.absences_list(p_from => '2026-12-03', p_to => '2026-12-03',
                                               p_establishment => tests.id('establishments', 'E2'))),
  array[:bruno_for, :chloe_for], 'establishment E2: chloe (main) and bruno (secondary workplace)');
select is(pg_temp.ids(app_public.absences_list(p_from => '2026-12-03', p_to => '2026-12-03',
                                               p_establishment => tests.id('establishments', 'E1'))),
  array[:bruno_for, :rh1_own], 'establishment E1: bruno (main) and rh1');
select is(pg_temp.ids(app_public.absences_list(p_employee => tests.id('employees', 'alice'),
                                               p_type => (select id from app_public.absence_types where code = 'CP'))),
  array[:today_cp, :refused_cp, :overlapped], 'type CP: alice''s three CP absences');
select is(pg_temp.ids(app_public.absences_list(p_employee => tests.id('employees', 'alice'),
                                               p_type => (select id from app_public.absence_types where code = 'FOR'))),
  '{}'::int[], 'type FOR: none for alice');
select tests.authenticate_as('mgr2');
select is(pg_temp.ids(app_public.absences_list(p_establishment => tests.id('establishments', 'E1'), p_from => '2026-12-03',
                                               p_to => '2026-12-03')),
  array[:bruno_for], 'the filter stays inside the perimeter (mgr2, E2: bruno only)');

-- Abilities.
select tests.authenticate_as('rh1');
select is(app_public.absence_abilities(:today_cp), '{"own": false, "decide": true, "correct": true}'::jsonb,
  'RH n1 decides and corrects an absence of its perimeter');
select is(app_public.absence_abilities(:rh1_own), '{"own": true, "decide": false, "correct": false}'::jsonb,
  'nor decides nor corrects its own absence');
select tests.authenticate_as('da');
select is(app_public.absence_abilities(:today_cp), '{"own": false, "decide": false, "correct": false}'::jsonb,
  'the DA reads, does not decide');
select tests.authenticate_as('rh2');
select is(app_public.absence_abilities(:today_cp), null, 'outside the perimeter: nothing');

-- Validated → pending through the status field: counters back to a reservation.
select is(pg_temp.bal('alice', 'CP'), '25.00/1.00/3.00', 'before: 1 taken (today), 3 planned (two requests)');
select tests.authenticate_as('rh1');
select is(app_public.absence_backoffice_save(:today_cp, p_version => 1, p_status => 'pending') ->> 'status', 'pending',
  'a validated absence is set back to pending');
select is(row((pg_temp.row_of(:today_cp)).decided_by, (pg_temp.row_of(:today_cp)).decided_at, (pg_temp.row_of(:today_cp)).version)::text,
  '(,,2)', 'the decision is cleared, version + 1');
select is(pg_temp.bal('alice', 'CP'), '25.00/0.00/4.00', 'the taken day goes back to Planifiés');
select is((pg_temp.titles('alice'))[1], 'Absence remise en attente | Votre absence « Congés payés » le 16/11/2026, validée, a été remise en attente par Claire Dubois : elle sera de nouveau décidée.',
  'the employee is told who set it back');
select is(pg_temp.verbs(:today_cp), array['Creation', 'Modification'], 'an audit line Modification');
select is(tests.absence_validate(:today_cp, '{"version": 2}') ->> 'status', 'validated', 'it is decided again');

-- Refused → pending: the request reserves again.
select tests.authenticate_as('rh1');
select lives_ok(format($$select app_public.absence_refuse(%s, 1, 'Effectif')$$, :refused_cp), 'refused');
select is(pg_temp.bal('alice', 'CP'), '25.00/1.00/1.00', 'the refusal released its reservation');
select is(app_public.absence_backoffice_save(:refused_cp, p_version => 2, p_status => 'pending', p_comment => 'Revu') ->> 'comment', 'Revu',
  'a refused request is set back to pending, with a correction in the same save');
select is(pg_temp.bal('alice', 'CP'), '25.00/1.00/3.00', 'and reserves again');
select is((pg_temp.row_of(:refused_cp)).version, 4, 'one version per write (reopening, correction)');

-- A refused request whose days were taken meanwhile: the declaration rules refuse it.
select lives_ok(format($$select app_public.absence_refuse(%s, 1, 'Non')$$, :overlapped), 'refused');
select tests.authenticate_as('mgr1');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-21'))$$, 'the day is declared meanwhile');
select tests.authenticate_as('rh1');
select throws_ok(format($$select app_public.absence_backoffice_save(%s, p_version => 2, p_status => 'pending')$$, :overlapped),
  'WV200', null, 'reopening it would overlap: refused');
select is((pg_temp.row_of(:overlapped)).status, 'refused', 'nothing written');

-- The status field: only pending, never from or to the cancellation states.
select throws_ok(format($$select app_public.absence_backoffice_save(%s, p_version => 1, p_status => 'cancelled')$$, :bruno_for),
  'WV215', null, 'status cancelled is not written through the field');
select tests.authenticate_as('rh1');
select lives_ok(format($$select app_public.absence_delete(%s)$$, :bruno_for), 'cancelled by the back-office action');
select throws_ok(format($$select app_public.absence_backoffice_save(%s, p_version => 2, p_status => 'pending')$$, :bruno_for),
  'WV215', null, 'a cancelled absence''s status is not editable');
select throws_ok(format($$select app_public.absence_backoffice_save(%s, p_version => 9, p_status => 'pending')$$, :chloe_for),
  'WC201', null, 'a stale version: 409');
select throws_ok(format($$select app_public.absence_backoffice_save(%s, p_version => 1, p_status => 'pending')$$, :rh1_own),
  'WF204', null, 'never on one''s own absence (a pending one: the correction refuses it)');

select * from finish();
rollback;
