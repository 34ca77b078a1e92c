-- iCalendar feeds (issue 16): the owner creates, rotates and revokes its feeds; only a hash of
-- the secret is stored; a reader of the secret acts as the owner (closed owner: not found);
-- the perimeter feed is for queue readers, and shows the reason only to the employee and to
-- those who may decide their absences.
begin;
select plan(38);
select tests.freeze('2026-11-16 10:00+01');

-- A reader without session: the visitor role, no acting account (GET /api/feeds/<secret>.ics).
create function pg_temp.anonymous() returns void language plpgsql as $$
begin
  perform tests.as_owner();
  perform set_config('role', 'wfm_visitor', true);
end;
$$;
-- The secret of a feed address.
create function pg_temp.token(p_answer jsonb) returns text language sql immutable as $$
  select substring(p_answer->>'url' from '/api/feeds/([0-9a-f]{64})\.ics$');
$$;
create function pg_temp.read(p_token text) returns jsonb language plpgsql as $$
begin
  perform pg_temp.anonymous();
  return app_public.calendar_feed_read(p_token);
end;
$$;
create function pg_temp.event(p_feed jsonb, p_uid text) returns jsonb language sql immutable as $$
  select e from jsonb_array_elements(p_feed->'events') e where e->>'uid' = p_uid;
$$;
create table pg_temp.t (name text primary key, value text);
grant all on pg_temp.t to public;
grant execute on all functions in schema pg_temp to public;

-- Absences: alice (E1) a granted whole-day absence, a granted afternoon, a pending request and
-- one beyond the window; david (E3) one, outside the E1 perimeters.
select tests.as_owner();
insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, status, version)
values (tests.id('employees', 'alice'), (select id from app_public.absence_types where code = 'FOR'), '2026-12-01', '2026-12-02', null, null, 'validated', 2),
       (tests.id('employees', 'alice'), (select id from app_public.absence_types where code = 'FOR'), '2026-12-10', '2026-12-10', 'afternoon', null, 'validated', 2),
       (tests.id('employees', 'alice'), (select id from app_public.absence_types where code = 'FOR'), '2026-12-15', '2026-12-15', null, null, 'pending', 1),
       (tests.id('employees', 'alice'), (select id from app_public.absence_types where code = 'FOR'), '2028-01-10', '2028-01-10', null, null, 'validated', 2),
       (tests.id('employees', 'david'), (select id from app_public.absence_types where code = 'FOR'), '2026-12-01', '2026-12-01', null, null, 'validated', 2);
insert into pg_temp.t
select 'abs' || row_number() over (order by a.employee_id, a.date_start), a.id::text
from app_public.absences a where a.employee_id in (tests.id('employees', 'alice'), tests.id('employees', 'david'));

select ok((select relrowsecurity from pg_class where oid = 'app_private.calendar_feeds'::regclass), 'calendar_feeds has RLS');
select ok(not has_table_privilege('wfm_visitor', 'app_private.calendar_feeds', 'select')
          and not has_table_privilege('wfm_api', 'app_private.calendar_feeds', 'select'), 'no request role reads the secrets table');
select is((select w.date_from::text || ' ' || w.date_to::text from app_hidden.calendar_feed_window() w),
          '2026-08-16 2027-11-16', 'the window: 3 months back, 12 months ahead of today');
select ok(obj_description('app_public.calendar_feed_read(text)'::regprocedure, 'pg_proc') like '%@behavior -*%',
          'the read, which changes the acting account, is not offered by GraphQL');

-- Owner rules.
select tests.authenticate_as('alice');
select is(app_public.calendar_feeds_list()->'feeds',
          '[{"kind":"planning","label":"Mon planning","allowed":true,"active":false,"created_at":null},
            {"kind":"perimeter","label":"Absences de mon périmètre","allowed":false,"active":false,"created_at":null}]'::jsonb,
          'an employee may hold the planning feed, not the perimeter one');
insert into pg_temp.t select 'alice1', pg_temp.token(app_public.calendar_feed_create(p_kind => 'planning', p_public_url => 'https://wfm.example/'));
select ok((select value from pg_temp.t where name = 'alice1') ~ '^[0-9a-f]{64}$', 'creation shows the address with its secret');
select is((app_public.calendar_feeds_list()->'feeds'->0->>'active')::boolean, true, 'the list shows the live feed');
select throws_ok($$select app_public.calendar_feed_create(p_kind => 'planning')$$, 'WV701', null,
                 'one live feed per kind: a second creation is refused under kind');
select throws_ok($$select app_public.calendar_feed_create(p_kind => 'perimeter')$$, 'WF701', null,
                 'a Salarié may not hold the perimeter feed');
select throws_ok($$select app_public.calendar_feed_create(p_kind => 'agenda')$$, 'WV701', null, 'unknown kind: 400');
select throws_ok($$select app_public.calendar_feed_create(p_kind => null)$$, 'WV701', null, 'missing kind: 400');

select tests.as_owner();
select is((select count(*)::int from app_private.calendar_feeds f
           where f.token_hash = public.digest((select value from pg_temp.t where name = 'alice1'), 'sha256')), 1,
          'the SHA-256 of the secret is stored');
select is((select count(*)::int from app_private.calendar_feeds f
           where position(convert_to((select value from pg_temp.t where name = 'alice1'), 'UTF8') in f.token_hash) > 0
              or f.token_hash = decode((select value from pg_temp.t where name = 'alice1'), 'hex')), 0,
          'the secret itself is not');

-- Reading with the secret, without a session.
select lives_ok($$select pg_temp.read((select value from pg_temp.t where name = 'alice1'))$$, 'the secret opens the feed');
select is(app_hidden.current_account_id(), tests.id('accounts', 'alice'), 'the reader acts as the owner');
select is(pg_temp.read((select value from pg_temp.t where name = 'alice1')),
          pg_temp.read((select value from pg_temp.t where name = 'alice1')), 'two reads give the same events');
select throws_ok($$select pg_temp.read(repeat('0', 64))$$, 'WN701', null, 'an unknown secret: not found');
select throws_ok($$select pg_temp.read(null)$$, 'WN701', null, 'no secret: not found');

-- Content of "my planning".
insert into pg_temp.t select 'feed', pg_temp.read((select value from pg_temp.t where name = 'alice1'))::text;
select is(pg_temp.event((select value::jsonb from pg_temp.t where name = 'feed'), 'absence-' || (select value from pg_temp.t where name = 'abs1'))
            - 'stamp' - 'last_modified',
          jsonb_build_object('uid', 'absence-' || (select value from pg_temp.t where name = 'abs1'), 'summary', (select name from app_public.absence_types where code = 'FOR'),
                             'description', 'Absence du 01/12/2026 au 02/12/2026', 'location', null, 'all_day', true,
                             'start', '2026-12-01', 'end', '2026-12-03', 'status', 'CONFIRMED', 'sequence', 1),
          'a whole-day absence is an all-day event, end exclusive, its sequence from its version');
select is((select e->>'start' || ' ' || (e->>'end') || ' ' || (e->>'all_day')
           from pg_temp.event((select value::jsonb from pg_temp.t where name = 'feed'), 'absence-' || (select value from pg_temp.t where name = 'abs2')) e),
          '2026-12-10T12:00:00 2026-12-11T00:00:00 false', 'an afternoon is a timed event from noon');
select is((select e->>'status' from pg_temp.event((select value::jsonb from pg_temp.t where name = 'feed'), 'absence-' || (select value from pg_temp.t where name = 'abs3')) e),
          'TENTATIVE', 'a pending request is tentative');
select is(pg_temp.event((select value::jsonb from pg_temp.t where name = 'feed'), 'absence-' || (select value from pg_temp.t where name = 'abs4')),
          null, 'an absence beyond the window is left out');
select ok((select count(*) > 100 from jsonb_array_elements((select value::jsonb from pg_temp.t where name = 'feed')->'events') e
           where e->>'uid' like 'work-%' and e->>'start' >= '2026-08-16' and e->>'end' <= '2027-11-18'),
          'the worked slots of the window are events');
select is((select count(*)::int from jsonb_array_elements((select value::jsonb from pg_temp.t where name = 'feed')->'events') e
           where e->>'uid' like 'work-%' and e->>'start' like '2026-12-01%'), 0, 'a day covered by a granted absence shows no worked slot');
select is((select count(distinct e->>'uid') = count(*) from jsonb_array_elements((select value::jsonb from pg_temp.t where name = 'feed')->'events') e),
          true, 'every UID is unique');

-- The on-call holder sees its period.
select tests.authenticate_as('mgr3');
insert into pg_temp.t select 'mgr3', pg_temp.token(app_public.calendar_feed_create(p_kind => 'planning'));
select is((select e->>'start' || ' ' || (e->>'end') from pg_temp.event(pg_temp.read((select value from pg_temp.t where name = 'mgr3')),
                                                                         'on-call-' || (select id from app_public.on_call_periods where account_id = tests.id('accounts', 'mgr3'))) e),
          '2026-11-20T18:00:00 2026-11-23T08:00:00', 'my planning shows my on-call periods in local time');

-- Perimeter feeds: the decider reads the reason, the DA « Absent(e) », nobody outside.
select tests.authenticate_as('mgr1');
insert into pg_temp.t select 'mgr1', pg_temp.token(app_public.calendar_feed_create(p_kind => 'perimeter'));
select tests.authenticate_as('da');
insert into pg_temp.t select 'da', pg_temp.token(app_public.calendar_feed_create(p_kind => 'perimeter'));
select is((select e->>'summary' from pg_temp.event(pg_temp.read((select value from pg_temp.t where name = 'mgr1')),
                                                   'absence-' || (select value from pg_temp.t where name = 'abs1')) e),
          'Alice Martin – ' || (select name from app_public.absence_types where code = 'FOR'), 'a decider reads the reason');
select is((select e->>'summary' from pg_temp.event(pg_temp.read((select value from pg_temp.t where name = 'da')),
                                                   'absence-' || (select value from pg_temp.t where name = 'abs1')) e),
          'Alice Martin – Absent(e)', 'a DA reads « Absent(e) »');
select is((select count(*)::int from jsonb_array_elements(pg_temp.read((select value from pg_temp.t where name = 'da'))->'events') e
           where e::text like '%' || (select name from app_public.absence_types where code = 'FOR') || '%'), 0,
          'the DA''s feed names no reason anywhere');
select is(pg_temp.event(pg_temp.read((select value from pg_temp.t where name = 'mgr1')), 'absence-' || (select value from pg_temp.t where name = 'abs5')),
          null, 'an employee outside the perimeter is not in it');
select is(pg_temp.event(pg_temp.read((select value from pg_temp.t where name = 'mgr1')), 'absence-' || (select value from pg_temp.t where name = 'abs3')),
          null, 'a pending request is not an absence of the perimeter feed');

-- Rotation and revocation.
select tests.authenticate_as('alice');
insert into pg_temp.t select 'alice2', pg_temp.token(app_public.calendar_feed_rotate('planning', null));
select throws_ok($$select pg_temp.read((select value from pg_temp.t where name = 'alice1'))$$, 'WN701', null, 'a rotated address: not found');
select lives_ok($$select pg_temp.read((select value from pg_temp.t where name = 'alice2'))$$, 'the new address opens it');
select tests.authenticate_as('bruno');
select throws_ok($$select app_public.calendar_feed_revoke('planning')$$, 'WN701', null, 'nobody revokes another account''s feed');
select throws_ok($$select app_public.calendar_feed_rotate('planning', null)$$, 'WN701', null, 'nor rotates one it does not hold');
select tests.authenticate_as('alice');
select lives_ok($$select app_public.calendar_feed_revoke('planning')$$, 'the owner revokes');
select throws_ok($$select pg_temp.read((select value from pg_temp.t where name = 'alice2'))$$, 'WN701', null, 'a revoked address: not found');

-- A closed owner: not found, like an unknown secret.
select tests.as_owner();
update app_public.accounts set is_active = false where username = 'mgr1';
select throws_ok($$select pg_temp.read((select value from pg_temp.t where name = 'mgr1'))$$, 'WN701', null, 'a closed owner''s feed: not found');

select * from finish();
rollback;
