-- Parallel decisions on one request: exactly one wins. Real concurrent sessions (dblink)
-- on this database: the first decision holds the row lock, the second waits for it, then
-- finds the version moved on (409). Same for two parallel filings on one date. The rows
-- the sessions commit are removed at the end.
begin;
select plan(16);
create extension if not exists dblink;

select format('dbname=%s user=%s', current_database(), current_user)
       || coalesce(format(' host=%s port=%s', host(inet_server_addr()), inet_server_port()), '') as conn \gset

-- Begins a transaction of a session acting as an account, with the frozen clock.
create function pg_temp.act(p_name text, p_username text) returns text language sql as $$
  select dblink_exec(p_name, 'begin')
         || dblink_exec(p_name, format('do $x$ begin perform tests.freeze(%L); perform tests.authenticate_as(%L); end $x$',
                                       '2026-11-16 10:00+01', p_username));
$$;

-- Opens a session acting as an account, in a transaction, with the frozen clock; try() runs
-- a call and returns 'ok' or the SQLSTATE it raised.
create function pg_temp.open_session(p_name text, p_conn text, p_username text) returns int language plpgsql as $$
declare
  v_pid int;
begin
  perform dblink_connect(p_name, p_conn);
  perform dblink_exec(p_name, $f$create function pg_temp.try(p_sql text) returns text language plpgsql as $b$
    begin execute p_sql; return 'ok'; exception when others then return sqlstate; end; $b$ $f$);
  perform dblink_exec(p_name, 'grant execute on function pg_temp.try(text) to wfm_visitor');
  perform pg_temp.act(p_name, p_username);
  select pid into v_pid from dblink(p_name, 'select pg_backend_pid()') as t(pid int);
  return v_pid;
end;
$$;

-- Waits until a session is blocked on a lock (pg_locks is read live, not from a snapshot).
create function pg_temp.wait_blocked(p_pid int) returns boolean language plpgsql as $$
begin
  for i in 1 .. 500 loop
    if exists (select 1 from pg_locks l where l.pid = p_pid and not l.granted) then
      return true;
    end if;
    perform pg_sleep(0.01);
  end loop;
  return false;
end;
$$;

-- Two committed pending requests of alice.
select pg_temp.open_session('setup', :'conn', 'alice');
select id as req_a from dblink('setup', $$select (app_public.shift_change_create(p_date => '2026-12-01', p_reason => 'urgence', p_slots => '[{"start_time": "10:00", "end_time": "18:00", "break_start_time": "12:00", "break_end_time": "12:30"}]') ->> 'id')::int$$) as t(id int) \gset
select id as req_b from dblink('setup', $$select (app_public.shift_change_create(p_date => '2026-12-02', p_reason => 'urgence', p_is_remote => true) ->> 'id')::int$$) as t(id int) \gset
select dblink_exec('setup', 'commit');

-- Two deciders validate the same version at the same time.
select pg_temp.open_session('mgr1', :'conn', 'mgr1') as pid_mgr1 \gset
select pg_temp.open_session('admin', :'conn', 'admin') as pid_admin \gset
select is((select r from dblink('mgr1', format('select pg_temp.try(%L)', format('select app_public.shift_change_validate(%s, 1)', :req_a))) as t(r text)),
          'ok', 'the first decider validates (and holds the row)');
select is(dblink_send_query('admin', format('select pg_temp.try(%L)', format('select app_public.shift_change_validate(%s, 1)', :req_a))), 1,
          'the second decider sends the same decision');
select ok(pg_temp.wait_blocked(:pid_admin), 'the second decision waits for the first');
select dblink_exec('mgr1', 'commit');
select is((select r from dblink_get_result('admin') as t(r text)), 'WC101', 'once the first commits, the second gets 409 (stale version)');
select is((select count(*)::int from dblink_get_result('admin') as t(r text)), 0, 'end of the second result');
select dblink_exec('admin', 'commit');
select is((select status || ' v' || version || ' ' || decided_by from app_public.shift_change_requests where id = :req_a),
          'validated v2 ' || tests.id('accounts', 'mgr1'), 'exactly one decision won');
select is((select count(*)::int from app_private.audit_log where model = 'shift_change_request' and target_id = :req_a and verb = 'Validation'),
          1, 'one transition line');
select is((select count(*)::int from app_public.day_modifications where source_request_id = :req_a), 1, 'one day modification');
select is((select count(*)::int from app_public.notifications where target_id = :req_a and title = 'Demande de modification validée'),
          1, 'one notification to the requester');

-- A refusal and a validation at the same time.
select pg_temp.act('mgr1', 'mgr1');
select pg_temp.act('admin', 'admin');
select is((select r from dblink('admin', format('select pg_temp.try(%L)', format('select app_public.shift_change_refuse(%s, 1, %L)', :req_b, 'Effectif insuffisant'))) as t(r text)),
          'ok', 'a refusal holds the row');
select dblink_send_query('mgr1', format('select pg_temp.try(%L)', format('select app_public.shift_change_validate(%s, 1)', :req_b)));
select ok(pg_temp.wait_blocked(:pid_mgr1), 'the validation waits');
select dblink_exec('admin', 'commit');
select is((select r from dblink_get_result('mgr1') as t(r text)), 'WC101', 'and loses with 409');
select count(*) from dblink_get_result('mgr1') as t(r text);
select dblink_exec('mgr1', 'commit');
select is((select status from app_public.shift_change_requests where id = :req_b), 'refused', 'the refusal won; the day is not modified');

-- Two filings for the same date at the same time: the unique pending index lets one through.
select pg_temp.act('mgr1', 'chloe');
select pg_temp.act('admin', 'chloe');
select is((select r from dblink('mgr1', format('select pg_temp.try(%L)', $$select app_public.shift_change_create(p_date => '2026-12-03', p_reason => 'urgence', p_is_remote => true)$$)) as t(r text)),
          'ok', 'a first filing');
select dblink_send_query('admin', format('select pg_temp.try(%L)', $$select app_public.shift_change_create(p_date => '2026-12-03', p_reason => 'urgence', p_is_offsite => true)$$));
select ok(pg_temp.wait_blocked(:pid_admin), 'a second filing on the same date waits');
select dblink_exec('mgr1', 'commit');
select is((select r from dblink_get_result('admin') as t(r text)), '23505', 'and is refused by the one-pending-per-date index (400 under date)');
select count(*) from dblink_get_result('admin') as t(r text);
select dblink_exec('admin', 'rollback');

-- Remove what the sessions committed.
select dblink_exec('setup', $$set session_replication_role = replica$$);
select dblink_exec('setup', format($$
  with requests as (select id from app_public.shift_change_requests
                    where id in (%s, %s) or (employee_id = %s and date = '2026-12-03')),
       days as (delete from app_public.day_modifications where source_request_id in (select id from requests) returning id),
       audit as (delete from app_private.audit_log
                 where (model = 'shift_change_request' and target_id in (select id from requests))
                    or (model = 'day_modification' and target_id in (select id from days)) returning id),
       notes as (delete from app_public.notifications where model = 'shift_change_request' and target_id in (select id from requests) returning id)
  delete from app_public.shift_change_requests where id in (select id from requests)$$, :req_a, :req_b, tests.id('employees', 'chloe')));
select dblink_disconnect('setup');
select dblink_disconnect('mgr1');
select dblink_disconnect('admin');

select * from finish();
rollback;
