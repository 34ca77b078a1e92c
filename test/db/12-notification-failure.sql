-- Failure injection: a filing whose notification fails does not exist (SPEC Events rule 2).
-- The business write and its notifications share one transaction and nothing in the
-- notification service catches an error, so a failing notification insert (here a
-- temporary trigger on app_public.notifications that raises) rolls the write back.
begin;
select plan(14);

select tests.freeze('2026-11-16 10:00+01');

-- A business write shaped like the filing of a day-change request: insert the request
-- (audited by its _500_audit trigger), notify its deciders through the service, in the same
-- transaction.
create function pg_temp.file_request(p_employee text, p_date date) returns boolean language plpgsql as $$
declare
  v_id int;
begin
  insert into app_public.shift_change_requests (employee_id, date, reason, author_account_id, is_remote)
  values (tests.id('employees', p_employee), p_date, 'demande_personnelle', tests.id('accounts', p_employee), true)
  returning id into v_id;
  return app_private.notify_filing(tests.id('employees', p_employee), p_date, 'planning.decide_shift_change',
                                   tests.id('accounts', p_employee), 'Nouvelle demande de modification',
                                   app_hidden.employee_name(tests.id('employees', p_employee)) || ', ' || app_hidden.fr_date(p_date),
                                   'Demande de modification sans valideur', 'Demande du ' || app_hidden.fr_date(p_date),
                                   'shift_change_request', v_id);
end;
$$;
create function pg_temp.requests(p_employee text) returns int language sql as $$
  select count(*)::int from app_public.shift_change_requests where employee_id = tests.id('employees', p_employee);
$$;
create function pg_temp.audit_lines() returns int language sql as $$
  select count(*)::int from app_private.audit_log where model = 'shift_change_request';
$$;

-- The injected failure.
create function pg_temp.tg_fail_notification() returns trigger language plpgsql as $$
begin
  raise exception using errcode = 'XX500', message = 'injected failure: notification refused';
end;
$$;
create trigger _000_injected_failure before insert on app_public.notifications
  for each row execute function pg_temp.tg_fail_notification();

select throws_ok($$select pg_temp.file_request('alice', '2026-11-20')$$, 'XX500', 'injected failure: notification refused',
                 'the filing fails when its notification fails');
select is(pg_temp.requests('alice'), 0, 'the request was not written');
select is(pg_temp.audit_lines(), 0, 'its audit line was not written');
select is((select count(*)::int from app_public.notifications), 0, 'no notification was written');

-- Same for the "sans valideur" path (nobody can decide).
delete from app_public.role_permissions where permission_code = 'planning.decide_shift_change';
select throws_ok($$select pg_temp.file_request('alice', '2026-11-20')$$, 'XX500', null,
                 'a filing whose "sans valideur" notification fails');
select is(pg_temp.requests('alice'), 0, '... is not written either');

-- Same when only the second recipient's notification fails: nothing half-written.
drop trigger _000_injected_failure on app_public.notifications;
-- Recipients are notified in account order: admin first, then alice (the author).
create function pg_temp.tg_fail_for_alice() returns trigger language plpgsql as $$
begin
  if new.account_id = tests.id('accounts', 'alice') then
    raise exception using errcode = 'XX500', message = 'injected failure for alice';
  end if;
  return new;
end;
$$;
create trigger _000_injected_failure before insert on app_public.notifications
  for each row execute function pg_temp.tg_fail_for_alice();
select throws_ok($$select pg_temp.file_request('alice', '2026-11-20')$$, 'XX500', null,
                 'a filing whose second notification fails');
select is(pg_temp.requests('alice'), 0, '... writes no request');
select is((select count(*)::int from app_public.notifications), 0, '... and keeps no notification of the first recipient (admin)');

-- Without the failure, the same write succeeds with its notifications.
drop trigger _000_injected_failure on app_public.notifications;
select is(pg_temp.file_request('alice', '2026-11-20'), false, 'without failure the filing succeeds (sans valideur)');
select is(pg_temp.requests('alice'), 1, 'the request exists');
select is(pg_temp.audit_lines(), 1, 'with its audit line');
select is((select array_agg(a.username order by a.username) from app_public.notifications n
           join app_public.accounts a on a.id = n.account_id), array['admin', 'admin_noemp', 'alice'],
          'and its notifications (the author and every Admin)');

select throws_ok(format($$select app_private.notify(%s, 'Titre', 'Corps')$$, 2147483000), '23503', null,
                 'a notification to an unknown account fails (and would fail the write)');

select * from finish();
rollback;
