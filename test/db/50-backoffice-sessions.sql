-- Back-office sessions and second factor (sql/backoffice/sessions.sql): who enters, the
-- 10-minute pre-authentication, idle expiry, TOTP steps accepted once, backup codes used
-- once, factor deletion by a verified superuser only.
begin;
select plan(29);

select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.acc(p_username text) returns int language sql stable as $$
  select id from app_public.accounts where username = p_username;
$$;
create function pg_temp.h(p_token text) returns bytea language sql immutable as $$
  select public.digest(p_token, 'sha256');
$$;

------------------------------------------------------------------------------------------
-- Who enters
select ok(has_function_privilege('wfm_authenticator', 'app_private.backoffice_session_get(bytea, boolean)', 'execute')
          and not has_function_privilege('wfm_visitor', 'app_private.backoffice_session_get(bytea, boolean)', 'execute'),
  'session functions are for the authenticator, not for the visitor');
select is(app_private.backoffice_login_state(pg_temp.acc('rh1')) -> 'may_enter', 'true'::jsonb, 'RH n1 enters the back-office');
select is(app_private.backoffice_login_state(pg_temp.acc('rh2')) -> 'may_enter', 'true'::jsonb, 'RH n2 enters the back-office');
select is(app_private.backoffice_login_state(pg_temp.acc('staff')) -> 'may_enter', 'true'::jsonb, 'a staff account enters');
select is(app_private.backoffice_login_state(pg_temp.acc('mgr1')) -> 'may_enter', 'false'::jsonb, 'a manager does not enter');
select is(app_private.backoffice_login_state(pg_temp.acc('alice')) -> 'may_enter', 'false'::jsonb, 'an employee does not enter');
update app_public.role_attributions set end_date = '2026-11-15' where account_id = pg_temp.acc('rh2');
select is(app_private.backoffice_login_state(pg_temp.acc('rh2')) -> 'may_enter', 'false'::jsonb,
  'an RH n2 attribution ended yesterday no longer opens the back-office');
select throws_ok($$select app_private.backoffice_session_open(pg_temp.h('m'), pg_temp.acc('mgr1'), 'full', 'totp', 0)$$,
  'WF070', 'Ce compte n’a pas accès au back-office.', 'no session, even pre, for an account without access');
select is(app_private.backoffice_login_state(pg_temp.acc('rh1')) -> 'enrolled', 'false'::jsonb, 'rh1 has not enrolled yet');

------------------------------------------------------------------------------------------
-- Pre-authentication: 10 minutes
select lives_ok($$select app_private.backoffice_session_open(pg_temp.h('pre'), pg_temp.acc('rh1'), 'pre', 'enrol', 0)$$,
  'a pre-authentication opens');
select is((select array[stage, method] from app_private.backoffice_session_get(pg_temp.h('pre'), false)), array['pre', 'enrol'],
  'it holds the stage and the method');
select tests.freeze('2026-11-16 10:09:59+01');
select is((select count(*)::int from app_private.backoffice_session_get(pg_temp.h('pre'), false)), 1, 'alive at 9 min 59 s');
select tests.freeze('2026-11-16 10:10:00+01');
select is((select count(*)::int from app_private.backoffice_session_get(pg_temp.h('pre'), false)), 0,
  'expired at 10 minutes, even though it was used meanwhile');
select is((select count(*)::int from app_private.backoffice_sessions where token_hash = pg_temp.h('pre')), 0,
  'the expired pre-authentication is deleted');

------------------------------------------------------------------------------------------
-- Full session: idle expiry (30 minutes from the last request)
select app_private.backoffice_session_open(pg_temp.h('full'), pg_temp.acc('rh1'), 'full', 'totp', 0);
select tests.freeze('2026-11-16 10:39:00+01');
select is((select username from app_private.backoffice_session_get(pg_temp.h('full'), false)), 'rh1', 'alive after 29 idle minutes');
select tests.freeze('2026-11-16 11:08:59+01');
select is((select count(*)::int from app_private.backoffice_session_get(pg_temp.h('full'), false)), 1,
  'each request pushes the idle expiry');
select tests.freeze('2026-11-16 11:39:00+01');
select is((select count(*)::int from app_private.backoffice_session_get(pg_temp.h('full'), false)), 0, 'gone after 30 idle minutes');

------------------------------------------------------------------------------------------
-- Enrolment, TOTP steps, backup codes
select app_private.backoffice_enrol_start(pg_temp.acc('rh1'), 'enc-1');
select app_private.backoffice_enrol_start(pg_temp.acc('rh1'), 'enc-2');
select is((select secret_encrypted from app_private.backoffice_factor(pg_temp.acc('rh1'))), 'enc-2',
  'a new enrolment replaces an unconfirmed secret');
select is(app_private.backoffice_totp_accept(pg_temp.acc('rh1'), 100), false, 'an unconfirmed factor accepts no code');
select is(app_private.backoffice_enrol_confirm(pg_temp.acc('rh1'), 100, array[pg_temp.h('c1'), pg_temp.h('c2')]), true,
  'the enrolment is confirmed with its backup codes');
select throws_ok($$select app_private.backoffice_enrol_start(pg_temp.acc('rh1'), 'enc-3')$$, 'WF071', null,
  'a confirmed authenticator is not replaced by a new enrolment');
select is(array[app_private.backoffice_totp_accept(pg_temp.acc('rh1'), 100), app_private.backoffice_totp_accept(pg_temp.acc('rh1'), 99),
                app_private.backoffice_totp_accept(pg_temp.acc('rh1'), 101), app_private.backoffice_totp_accept(pg_temp.acc('rh1'), 101)],
  array[false, false, true, false], 'a time step is accepted once, and never an earlier one');
select is(array[app_private.backoffice_backup_code_use(pg_temp.acc('rh1'), (select min(id) from app_private.backoffice_backup_codes(pg_temp.acc('rh1')))),
                app_private.backoffice_backup_code_use(pg_temp.acc('rh1'), (select min(id) from app_private.backoffice_backup_codes where account_id = pg_temp.acc('rh1')))],
  array[true, false], 'a backup code is used once');
select is((select count(*)::int from app_private.backoffice_backup_codes(pg_temp.acc('rh1'))), 1, 'one unused backup code is left');

------------------------------------------------------------------------------------------
-- Deleting factors: a superuser verified by a second factor only
select tests.authenticate_as('root');
select throws_ok($$select app_public.backoffice_factors_delete(tests.id('accounts', 'rh1'))$$, 'WF072', null,
  'a superuser without a verified second factor deletes nothing');
select null::void from (select set_config('app.second_factor_verified', 'on', true)) x;
select tests.authenticate_as('staff');
select throws_ok($$select app_public.backoffice_factors_delete(tests.id('accounts', 'rh1'))$$, 'WF072', null,
  'a staff account that is not a superuser deletes nothing');
select tests.authenticate_as('root');
select ok((select bool_and((x ->> 'enrolled')::boolean = (x ->> 'username' = 'rh1'))
           from jsonb_array_elements(app_public.backoffice_factor_accounts()) x),
  'the verified superuser lists the back-office accounts; only rh1 has enrolled');
select is(app_public.backoffice_factors_delete(tests.id('accounts', 'rh1')) -> 'enrolled', 'false'::jsonb, 'the verified superuser deletes them');
select tests.as_owner();
select is(array[(select count(*)::int from app_private.backoffice_factors where account_id = tests.id('accounts', 'rh1')),
                (select count(*)::int from app_private.backoffice_backup_codes where account_id = tests.id('accounts', 'rh1'))],
  array[0, 0], 'authenticator and backup codes are gone: the next login enrols again');

select * from finish();
rollback;
