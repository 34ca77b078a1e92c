-- Row-level security of the writes on day modifications and day-change requests, as the
-- API functions' role (wfm_api) sees it: deciders and HR of the employee write the day;
-- the requester files and withdraws; the request roles themselves write nothing.
begin;
select plan(12);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.as_api(p_username text) returns void language plpgsql as $$
begin
  perform tests.authenticate_as(p_username);
  perform set_config('role', 'wfm_api', true);
end;
$$;
grant execute on function pg_temp.as_api(text) to wfm_visitor, wfm_api;

select tests.authenticate_as('mgr1');
select throws_ok(format($$insert into app_public.day_modifications (employee_id, date) values (%s, '2026-11-20')$$, tests.id('employees', 'alice')),
                 '42501', null, 'the visitor role writes no day modification');

select pg_temp.as_api('da');
select throws_ok(format($$insert into app_public.day_modifications (employee_id, date) values (%s, '2026-11-20')$$, tests.id('employees', 'alice')),
                 '42501', null, 'the DA (no decision right) writes no day modification');
select pg_temp.as_api('mgr1');
select throws_ok(format($$insert into app_public.day_modifications (employee_id, date) values (%s, '2026-11-20')$$, tests.id('employees', 'david')),
                 '42501', null, 'a decider writes no day outside the perimeter');
select lives_ok(format($$insert into app_public.day_modifications (employee_id, date) values (%s, '2026-11-20')$$, tests.id('employees', 'alice')),
                'a decider writes the day of an employee of the perimeter');
select pg_temp.as_api('rh2');
select lives_ok(format($$insert into app_public.day_modifications (employee_id, date) values (%s, '2026-11-20')$$, tests.id('employees', 'chloe')),
                'HR writes the day of its perimeter (back-office)');
select pg_temp.as_api('mgr1');
with d as (delete from app_public.day_modifications where employee_id = tests.id('employees', 'alice') returning 1)
select is((select count(*)::int from d), 0, 'a manager deletes no day modification');
select pg_temp.as_api('rh1');
with d as (delete from app_public.day_modifications where employee_id = tests.id('employees', 'alice') returning 1)
select is((select count(*)::int from d), 1, 'HR deletes a day modification (back-office)');
select tests.as_owner();
select is((select count(*)::int from app_private.audit_log where model = 'day_modification' and verb = 'Suppression'), 1,
          'and the deletion is audited');

select tests.authenticate_as('alice');
select (app_public.shift_change_create(p_date => '2026-11-20', p_reason => 'urgence', p_is_remote => true) ->> 'id')::int as req \gset
select pg_temp.as_api('da');
with u as (update app_public.shift_change_requests set version = version + 1 where id = :req returning 1)
select is((select count(*)::int from u), 0, 'the DA updates no request');
select pg_temp.as_api('chloe');
with d as (delete from app_public.shift_change_requests where id = :req returning 1)
select is((select count(*)::int from d), 0, 'a colleague deletes no request');
select pg_temp.as_api('mgr1');
with d as (delete from app_public.shift_change_requests where id = :req returning 1)
select is((select count(*)::int from d), 0, 'a manager deletes no request');
select tests.authenticate_as('alice');
select throws_ok(format('delete from app_public.shift_change_requests where id = %s', :req), '42501', null,
                 'the visitor role deletes nothing directly');

select * from finish();
rollback;
