-- The request prelude (sql/auth/functions.sql app_private.begin_request_or_fail): the reload of
-- the acting account, and the one staff refusal of the routes the manifest reserves to staff
-- (the decision: app_hidden.current_account_is_staff()).
begin;
select plan(25);

select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.acc(p_username text) returns int language sql stable as $$
  select id from app_public.accounts where username = p_username;
$$;
-- The prelude of a staff route for an account, then the decision as the visitor sees it.
create function pg_temp.staff_prelude(p_username text) returns boolean language plpgsql as $$
begin
  perform tests.as_owner();
  perform app_private.begin_request_or_fail(pg_temp.acc(p_username), null, true, 0, null);
  perform set_config('role', 'wfm_visitor', true);
  return app_hidden.current_account_is_staff();
end;
$$;

select ok(has_function_privilege('wfm_authenticator', 'app_private.begin_request_or_fail(int, int, boolean, int, text)', 'execute')
          and not has_function_privilege('wfm_visitor', 'app_private.begin_request_or_fail(int, int, boolean, int, text)', 'execute'),
  'the prelude is for the authenticator, not for the visitor');

select tests.as_owner();
-- A superuser that is not staff, a staff account that is closed.
update app_public.accounts set is_staff = false where username = 'root';
select is(app_private.begin_request_or_fail(pg_temp.acc('mgr1'), null, false, 0, null) ->> 'username', 'mgr1',
  'without the staff need, any active account passes');
select tests.as_owner();

-- Closed accounts: 401 (WA001) before any staff question.
update app_public.accounts set is_active = false where username = 'farid';
select throws_ok(format('select app_private.begin_request_or_fail(%s, null, true, 0, null)', pg_temp.acc('farid')),
  'WA001', 'Compte inactif ou inconnu.', 'a closed account is refused as inactive (401), not as non-staff');
select throws_ok(format('select app_private.begin_request_or_fail(%s, null, false, 0, null)', pg_temp.acc('farid')),
  'WA001', 'Compte inactif ou inconnu.', 'a closed account is refused by every prelude');
select throws_ok('select app_private.begin_request_or_fail(9999999, null, true, 0, null)',
  'WA001', 'Compte inactif ou inconnu.', 'an unknown account is refused as inactive');
update app_public.accounts set is_active = false, is_staff = true where username = 'rh2_noemp';
select throws_ok(format('select app_private.begin_request_or_fail(%s, null, true, 0, null)', pg_temp.acc('rh2_noemp')),
  'WA001', 'Compte inactif ou inconnu.', 'a closed staff account is refused as inactive');

-- Issue 25: the credential generation of the token or session. An earlier one (the account's
-- sessions ended since) is refused as a closed account; none at all is refused too.
update app_public.accounts set token_generation = 3 where username = 'mgr2';
select throws_ok(format('select app_private.begin_request_or_fail(%s, null, false, 2, null)', pg_temp.acc('mgr2')),
  'WA001', 'Compte inactif ou inconnu.', 'a token of an earlier generation is refused (401)');
select throws_ok(format('select app_private.begin_request_or_fail(%s, null, false, null, null)', pg_temp.acc('mgr2')),
  'WA001', null, 'a token without generation is refused (401)');
select is(app_private.begin_request_or_fail(pg_temp.acc('mgr2'), null, false, 3, '203.0.113.9') ->> 'username', 'mgr2',
  'the current generation passes');
select is(current_setting('app.client_address'), '203.0.113.9', 'the client address is kept for the audit lines');
select tests.as_owner();
select throws_ok(format('select app_private.begin_request_or_fail(%s, %s, false, 3, null)', pg_temp.acc('alice'), pg_temp.acc('root')),
  'WA001', null, 'an impersonation token carries its superuser''s generation, not the borrowed account''s');
select tests.as_owner();

-- Active accounts that are neither staff nor superuser: 403 (WF002), with or without an employee record.
select throws_ok(format('select app_private.begin_request_or_fail(%s, null, true, 0, null)', pg_temp.acc('mgr1')),
  'WF002', 'Réservé aux comptes du personnel d’administration.', 'a non-staff account is refused (403)');
select throws_ok(format('select app_private.begin_request_or_fail(%s, null, true, 0, null)', pg_temp.acc('rh1')),
  'WF002', 'Réservé aux comptes du personnel d’administration.', 'RH without staff status is refused');
select throws_ok(format('select app_private.begin_request_or_fail(%s, null, true, 0, null)', pg_temp.acc('rh1_noemp')),
  'WF002', 'Réservé aux comptes du personnel d’administration.', 'an account without employee record is refused');
select throws_ok(format('select app_private.begin_request_or_fail(%s, null, true, 0, null)', pg_temp.acc('salarie_noemp')),
  'WF002', 'Réservé aux comptes du personnel d’administration.', 'an employee account without employee record is refused');
select is(current_setting('app.account_id', true), '', 'a refused prelude leaves no acting account');

-- Staff and superusers pass, and the decision answers true as the visitor.
select ok(pg_temp.staff_prelude('staff'), 'a staff account without employee record passes');
select is(current_setting('app.account_id'), tests.id('accounts', 'staff')::text, 'the staff account acts');
select tests.as_owner();
select ok(pg_temp.staff_prelude('admin'), 'a staff account with an employee record passes');
select tests.as_owner();
select ok(pg_temp.staff_prelude('root'), 'a superuser without staff status passes');

-- The decision itself, never NULL: false for no account, a non-staff, a closed account.
select tests.as_owner();
select is(app_hidden.current_account_is_staff(), false, 'no acting account: not staff');
select tests.authenticate_as('mgr1');
select is(app_hidden.current_account_is_staff(), false, 'a non-staff account: not staff');
select tests.authenticate_as('rh1_noemp');
select is(app_hidden.current_account_is_staff(), false, 'an account without employee record: not staff');
select tests.authenticate_as('rh2_noemp');
select is(app_hidden.current_account_is_staff(), false, 'a closed staff account: not staff');
select tests.authenticate_as('staff');
select is(app_hidden.current_account_is_staff(), true, 'an active staff account: staff');

select * from finish();
rollback;
