-- Events: read by participants, authors and the directory; written by events.change_event
-- holders on their events and those of their perimeter; conflicts with absences alert.
begin;
select plan(11);
select tests.freeze('2026-11-16 10:00+01');

select set_eq(
  $$select r.name from app_public.role_permissions rp join app_public.roles r on r.id = rp.role_id
    where rp.permission_code = 'events.change_event'$$,
  array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2'], 'encadrement writes events');

-- A validated absence of alice from 23 to 27 November.
insert into app_public.absences (employee_id, type_id, date_start, date_end, status, counted_quantity, counted_unit)
select tests.id('employees', 'alice'), t.id, '2026-11-23', '2026-11-27', 'validated', 5, 'day'
from app_public.absence_types t where t.code = 'CP';

select tests.authenticate_as('mgr1');
create temporary table created on commit drop as
select app_public.event_create(
  p_title => 'Réunion', p_establishment => tests.id('establishments', 'E1'),
  p_start_at => '2026-11-24T09:00:00+01:00', p_end_at => '2026-11-24T11:00:00+01:00',
  p_participants => array[tests.id('employees', 'alice')]) as doc;
select is(jsonb_array_length((select doc -> 'warnings' from created)), 1, 'the conflict with the absence is answered as a warning');
select tests.as_owner();
select set_eq($$select account_id from app_public.notifications where title = 'Conflit entre un événement et une absence'$$,
              array[tests.id('accounts', 'mgr1'), tests.id('accounts', 'admin'), tests.id('accounts', 'rh1')],
              'the author and the deciders of the participant are alerted in the same transaction');

select tests.authenticate_as('alice');
select is((select count(*)::int from app_public.events), 1, 'a participant reads the event');
select tests.authenticate_as('bruno');
select is((select count(*)::int from app_public.events), 0, 'an employee not taking part does not read it');
select is((select count(*)::int from app_public.event_participants), 0, 'nor its participants');
select tests.authenticate_as('mgr2');
select is((select count(*)::int from app_public.events), 1, 'the directory reads every event');
select throws_ok($$select app_public.event_update((select (doc ->> 'id')::int from created), p_title => 'X', p_sent => '{title}')$$,
                 'WF531', null, 'a manager of another establishment does not write it');
do $$ begin perform set_config('role', 'wfm_api', true); end $$;
select throws_ok($$insert into app_public.events (title, start_at, end_at, created_by, establishment_id)
                   values ('X', now(), now() + interval '1 hour', tests.id('accounts', 'mgr2'), tests.id('establishments', 'E1'))$$,
                 '42501', null, 'the policy refuses an event in an establishment outside the perimeter');
select tests.authenticate_as('da');
select lives_ok($$select app_public.event_update((select (doc ->> 'id')::int from created), p_title => 'Réunion DA', p_sent => '{title}')$$,
                'the DA of E1 writes an E1 event');
select tests.authenticate_as('alice');
select throws_ok($$select app_public.event_participant_options()$$, 'WF530', null, 'an employee may not invite anyone');

select * from finish();
rollback;
