-- Events are no absence oracle (issue 11, finding 7): the participants an author adds are
-- employees of its events.change_event perimeter (404 outside), and the conflict warnings and
-- alerts never name an absence the author cannot read.
begin;
select plan(9);
select tests.freeze('2026-11-16 10:00+01');

-- david (E3) and alice (E1) are absent on 20 November (declared by their managers).
select tests.authenticate_as('mgr3');
select lives_ok(format($$select tests.absence_create(jsonb_build_object('employee', %s, 'type', %s,
  'date_start', '2026-11-20', 'date_end', '2026-11-20'))$$, tests.id('employees', 'david'),
  (select t.id from app_public.absence_types t where t.code = 'FOR')), 'david is absent on 20/11');
select tests.authenticate_as('mgr1');
select lives_ok(format($$select tests.absence_create(jsonb_build_object('employee', %s, 'type', %s,
  'date_start', '2026-11-20', 'date_end', '2026-11-20'))$$, tests.id('employees', 'alice'),
  (select t.id from app_public.absence_types t where t.code = 'FOR')), 'alice is absent on 20/11');
select tests.as_owner();

create function pg_temp.conflicts_of(p_account text) returns int language sql stable security definer as $$
  select count(*)::int from app_public.notifications n
  where n.account_id = tests.id('accounts', p_account) and n.title = 'Conflit entre un événement et une absence';
$$;
create function pg_temp.event(p_title text) returns int language sql stable security definer as $$
  select ev.id from app_public.events ev where ev.title = p_title;
$$;
grant execute on all functions in schema pg_temp to public;

-- The manager of E1 may not invite david (E3).
select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.event_create(p_title => 'Réunion piège',
  p_start_at => '2026-11-20 09:00+01', p_end_at => '2026-11-20 10:00+01', p_participants => array[%s, %s])$$,
  tests.id('employees', 'alice'), tests.id('employees', 'david')), 'WN530', null,
  'a participant outside the perimeter: 404');
select is(pg_temp.conflicts_of('mgr3'), 0, 'and david''s decider received nothing');
select is(pg_temp.event('Réunion piège'), null, 'nothing was written');

-- An Admin creates an event of E1 with alice and david; the manager of E1 then edits it.
select tests.authenticate_as('admin');
select ok(jsonb_array_length(app_public.event_create(p_title => 'Réunion commune', p_establishment =>
  tests.id('establishments', 'E1'), p_start_at => '2026-11-20 09:00+01', p_end_at => '2026-11-20 10:00+01',
  p_participants => array[tests.id('employees', 'alice'), tests.id('employees', 'david')]) -> 'warnings') = 2,
  'the Admin (whole association) is warned of both absences');
select tests.as_owner();
select tests.authenticate_as('mgr1');
select is(app_public.event_update(pg_temp.event('Réunion commune'),
  p_start_at => '2026-11-19 09:00+01', p_end_at => '2026-11-20 11:00+01', p_sent => '{start_at,end_at}') -> 'warnings',
  jsonb_build_array('Alice Martin a une absence validée le 20/11/2026 qui chevauche cet événement.'),
  'the manager of E1 is warned of alice''s absence only: david''s is not named');
select is(pg_temp.conflicts_of('mgr3'), 1, 'david''s decider was alerted once, by the Admin''s event, not by the manager''s edit');
-- A participant already on the event stays when the event is edited.
select lives_ok(format($$select app_public.event_update(%s, p_participants => array[%s, %s], p_sent => '{participants}')$$,
  pg_temp.event('Réunion commune'), tests.id('employees', 'alice'), tests.id('employees', 'david')),
  'participants already invited by someone who could are kept');

select * from finish();
rollback;
