-- Issue 25: the security-relevant events of accounts, listed. Each one writes exactly one audit
-- line (who acted, whose account, when, from which address), never a secret; the events that
-- put credentials in doubt end every session of the account (back-office sessions deleted,
-- credential generation raised, so that earlier tokens are refused by the request prelude).
begin;
select plan(61);
select tests.freeze('2026-11-16 10:00+01');

-- Secrets handed to the functions below: none may appear in any audit line.
create temp table secrets (value text);
insert into secrets values ('enc:secret-TOTP-ABCDEF'), ('$argon2id$new-hash-changed'), ('$argon2id$new-hash-reset'),
                           ('code-hash-'), ('token-of-the-session');
grant select on secrets to public;
create function pg_temp.hashes(p_prefix text) returns bytea[] language sql as $$
  select array_agg(convert_to('code-hash-' || p_prefix || i, 'UTF8')) from generate_series(1, 10) i;
$$;
-- The lines of one event on one account.
create function pg_temp.lines(p_event text, p_account text) returns int language sql as $$
  select count(*)::int from app_private.audit_log
  where model = 'account_security' and after ->> 'event' = p_event and target_id = tests.id('accounts', p_account);
$$;
create function pg_temp.line(p_event text, p_account text) returns app_private.audit_log language sql as $$
  select l.* from app_private.audit_log l
  where l.model = 'account_security' and l.after ->> 'event' = p_event and l.target_id = tests.id('accounts', p_account)
  order by l.id desc limit 1;
$$;
create function pg_temp.generation(p_account text) returns int language sql as $$
  select token_generation from app_public.accounts where id = tests.id('accounts', p_account);
$$;
create function pg_temp.sessions(p_account text) returns int language sql as $$
  select count(*)::int from app_private.backoffice_sessions where account_id = tests.id('accounts', p_account);
$$;
create function pg_temp.open_session(p_account text, p_token text, p_method text) returns void language sql as $$
  insert into app_private.backoffice_sessions (token_hash, account_id, stage, method, expires_at)
  values (public.digest(p_token, 'sha256'), tests.id('accounts', p_account), 'full', p_method, app_hidden.now() + interval '1 hour');
$$;

-- ------------------------------------------------------------------ the list
-- A new event must be added here, with its proof below.
select is(app_private.security_event_names(),
  array['login_refused', 'factor_enrolled', 'factor_removed', 'backup_code_used', 'backup_codes_regenerated',
        'password_changed', 'password_reset', 'sessions_ended', 'impersonation_ended'],
  'the security events of accounts, all proven below (impersonation started: verb Impersonation)');
select throws_ok($$select app_private.audit_security_event(1, 'made_up')$$, null, null, 'an event outside the list is refused');
select throws_ok($$select app_private.end_account_sessions(1, 'made_up')$$, null, null, 'a cause outside the list is refused');

-- The client address comes from the request (app.client_address); a malformed one is none.
select app_private.set_client_address('not an address; drop table x');
select is(current_setting('app.client_address'), '', 'a malformed client address is not recorded');
select app_private.set_client_address('192.0.2.7');

-- ------------------------------------------------------------------ login refused (locked state)
update app_public.accounts set is_active = false where id = tests.id('accounts', 'farid');
select app_private.login_refused(tests.id('accounts', 'farid'), 'api');
select is(pg_temp.lines('login_refused', 'farid'), 1, 'login_refused: one line');
select is((select row(actor_username, client_address, after ->> 'reason', after ->> 'surface')::text from pg_temp.line('login_refused', 'farid')),
          row('farid', '192.0.2.7', 'account_closed', 'api')::text, 'login_refused: by the account, from its address, why and where');

-- ------------------------------------------------------------------ closing an account: sessions end
select is(pg_temp.lines('sessions_ended', 'farid'), 1, 'account closed: one sessions_ended line');
select is((pg_temp.line('sessions_ended', 'farid')).after ->> 'cause', 'account_closed', 'account closed: its cause');
select is(pg_temp.generation('farid'), 1, 'account closed: the generation is raised');
update app_public.accounts set is_active = true where id = tests.id('accounts', 'farid');
select is(app_private.begin_request(tests.id('accounts', 'farid'), null, 0), null, 'reopened: a token of generation 0 stays refused');
select ok(app_private.begin_request(tests.id('accounts', 'farid'), null, 1) is not null, 'reopened: a token of the new generation passes');
select tests.as_owner();
select is(pg_temp.lines('sessions_ended', 'farid'), 1, 'reopening ends nothing');

-- ------------------------------------------------------------------ factor enrolled
select app_private.backoffice_enrol_start(tests.id('accounts', 'rh2'), 'enc:secret-TOTP-ABCDEF');
select is(pg_temp.lines('factor_enrolled', 'rh2'), 0, 'an enrolment started is not yet an event');
select ok(app_private.backoffice_enrol_confirm(tests.id('accounts', 'rh2'), 100, pg_temp.hashes('a')), 'rh2 confirms its enrolment');
select is(pg_temp.lines('factor_enrolled', 'rh2'), 1, 'factor_enrolled: one line');
select is((select row(actor_username, client_address, after ->> 'backup_codes')::text from pg_temp.line('factor_enrolled', 'rh2')),
          row('rh2', '192.0.2.7', '10')::text, 'factor_enrolled: by the account, from its address, with the number of codes');
select is((select count(*)::int from app_public.notifications where account_id = tests.id('accounts', 'rh2')
           and title = 'Nouvel authentificateur enregistré'), 1, 'factor_enrolled: the account is told in the application');
select is((select count(*)::int from app_private.email_outbox where account_id = tests.id('accounts', 'rh2')
           and kind = 'security_notice'), 1, 'factor_enrolled: and by e-mail (rh2 has a professional address)');
select ok(not app_private.backoffice_enrol_confirm(tests.id('accounts', 'rh2'), 101, pg_temp.hashes('b')), 'a second confirmation does nothing');
select is(pg_temp.lines('factor_enrolled', 'rh2'), 1, 'factor_enrolled: still one line');

-- ------------------------------------------------------------------ backup code used
select ok(app_private.backoffice_backup_code_use(tests.id('accounts', 'rh2'),
  (select min(id) from app_private.backoffice_backup_codes where account_id = tests.id('accounts', 'rh2'))), 'rh2 uses a backup code');
select ok(not app_private.backoffice_backup_code_use(tests.id('accounts', 'rh2'),
  (select min(id) from app_private.backoffice_backup_codes where account_id = tests.id('accounts', 'rh2'))), 'the same code twice: refused');
select is(pg_temp.lines('backup_code_used', 'rh2'), 1, 'backup_code_used: one line (the refused reuse writes none)');
select is((pg_temp.line('backup_code_used', 'rh2')).after ->> 'backup_codes_left', '9', 'backup_code_used: the codes left');

-- ------------------------------------------------------------------ backup codes regenerated
select pg_temp.open_session('rh2', 'token-of-the-session', 'totp');
select pg_temp.open_session('rh2', 'bypass-session', 'password');
select ok(not app_private.backoffice_backup_codes_regenerate(public.digest('bypass-session', 'sha256'), pg_temp.hashes('c')),
          'a session of the password-only bypass renews no code');
select is(pg_temp.lines('backup_codes_regenerated', 'rh2'), 0, 'and writes no line');
select ok(app_private.backoffice_backup_codes_regenerate(public.digest('token-of-the-session', 'sha256'), pg_temp.hashes('d')),
          'a session past its second factor renews the codes');
select is(pg_temp.lines('backup_codes_regenerated', 'rh2'), 1, 'backup_codes_regenerated: one line');
select is((select row(actor_username, after ->> 'unused_codes_replaced')::text from pg_temp.line('backup_codes_regenerated', 'rh2')),
          row('rh2', '9')::text, 'backup_codes_regenerated: by the account, with the unused codes replaced');
select is((select count(*)::int from app_private.backoffice_backup_codes where account_id = tests.id('accounts', 'rh2') and used_at is null),
          10, 'ten new unused codes');

-- ------------------------------------------------------------------ factor removed (by a verified superuser)
select tests.authenticate_as('root');
select set_config('app.second_factor_verified', 'on', true);
select lives_ok(format('select app_public.backoffice_factors_delete(%s)', tests.id('accounts', 'rh2')), 'root removes rh2''s factor');
select tests.as_owner();
select is(pg_temp.lines('factor_removed', 'rh2'), 1, 'factor_removed: one line');
select is((select row(actor_username, client_address)::text from pg_temp.line('factor_removed', 'rh2')),
          row('root', '192.0.2.7')::text, 'factor_removed: by the superuser, from its address');
select is(pg_temp.lines('sessions_ended', 'rh2'), 1, 'factor_removed: one sessions_ended line');
select is((pg_temp.line('sessions_ended', 'rh2')).after - 'address', jsonb_build_object('event', 'sessions_ended',
          'account', tests.id('accounts', 'rh2'), 'username', 'rh2', 'cause', 'factor_removed', 'backoffice_sessions', 2),
          'factor_removed: both back-office sessions ended, cause named');
select is(array[pg_temp.sessions('rh2'), pg_temp.generation('rh2')], array[0, 1], 'factor_removed: no session left, generation raised');
select is((select count(*)::int from app_public.notifications where account_id = tests.id('accounts', 'rh2')
           and title = 'Second facteur supprimé'), 1, 'factor_removed: the account is told');
select tests.authenticate_as('root');
select lives_ok(format('select app_public.backoffice_factors_delete(%s)', tests.id('accounts', 'rh2')), 'removing again (nothing left)');
select tests.as_owner();
select is(pg_temp.lines('factor_removed', 'rh2'), 1, 'nothing removed: no second line');

-- ------------------------------------------------------------------ password changed (any writer)
select pg_temp.open_session('alice', 'alice-session', 'totp');
update app_private.account_secrets set password_hash = '$argon2id$new-hash-changed' where account_id = tests.id('accounts', 'alice');
select is(pg_temp.lines('password_changed', 'alice'), 1, 'password_changed: one line');
select is(pg_temp.lines('sessions_ended', 'alice'), 1, 'password_changed: one sessions_ended line');
select is(array[pg_temp.sessions('alice'), pg_temp.generation('alice')], array[0, 1], 'password_changed: sessions deleted, generation raised');
select is(app_private.begin_request(tests.id('accounts', 'alice'), null, 0), null, 'password_changed: an earlier token is refused');
select tests.as_owner();
update app_private.account_secrets set password_changed_at = app_hidden.now() where account_id = tests.id('accounts', 'alice');
select is(pg_temp.lines('password_changed', 'alice'), 1, 'another column of the secrets: no line');

-- A password removed (an unusable password) ends the sessions too.
update app_private.account_secrets set password_hash = null where account_id = tests.id('accounts', 'chloe');
select is(pg_temp.lines('password_changed', 'chloe'), 1, 'a password removed: one password_changed line');
select is(pg_temp.generation('chloe'), 1, 'a password removed: the generation is raised');

-- ------------------------------------------------------------------ password reset (by its link)
select lives_ok(format($$select app_private.password_reset_confirm(app_private.create_password_token(%s, 'reset', 60), '$argon2id$new-hash-reset')$$,
                       tests.id('accounts', 'bruno')), 'bruno resets his password by the link');
select is(pg_temp.lines('password_reset', 'bruno'), 1, 'password_reset: one line');
select is((select row(actor_username, after ->> 'via')::text from pg_temp.line('password_reset', 'bruno')),
          row('bruno', 'reset')::text, 'password_reset: by the holder of the link, for the account');
select is((pg_temp.line('sessions_ended', 'bruno')).after ->> 'cause', 'password_reset', 'password_reset: sessions ended, cause named');
select is(pg_temp.lines('password_changed', 'bruno'), 0, 'a reset is not also a change');

-- ------------------------------------------------------------------ impersonation started and ended
select tests.authenticate_as('root');
select set_config('app.allow_impersonation', 'on', true);
select lives_ok(format('select app_public.impersonation_start(%s)', tests.id('accounts', 'david')), 'root impersonates david');
select tests.as_owner();
select is((select count(*)::int from app_private.audit_log where verb = 'Impersonation' and target_id = tests.id('accounts', 'david')),
          1, 'impersonation started: one line');
select ok(app_private.begin_request(tests.id('accounts', 'david'), tests.id('accounts', 'root'), pg_temp.generation('root')) is not null,
          'a request with the impersonation token');
select lives_ok('select app_public.impersonation_end()', 'root ends it');
select tests.as_owner();
select is(pg_temp.lines('impersonation_ended', 'david'), 1, 'impersonation ended: one line');
select is((pg_temp.line('impersonation_ended', 'david')).actor_username, 'root', 'impersonation ended: by the superuser');

-- ------------------------------------------------------------------ a session opened with a stale password check
-- The password was checked, then the account's sessions ended, then the session opened: refused.
update app_public.accounts set token_generation = 5 where id = tests.id('accounts', 'admin');
select app_private.backoffice_session_open(public.digest('stale', 'sha256'), tests.id('accounts', 'admin'), 'full', 'totp', 4);
select is((select count(*)::int from app_private.backoffice_session_get(public.digest('stale', 'sha256'), false)), 0,
          'a session of an earlier generation gives no row');
select is((select count(*)::int from app_private.backoffice_sessions where token_hash = public.digest('stale', 'sha256')), 0,
          'and is deleted');
select app_private.backoffice_session_open(public.digest('fresh', 'sha256'), tests.id('accounts', 'admin'), 'full', 'totp', 5);
select is((select token_generation from app_private.backoffice_session_get(public.digest('fresh', 'sha256'), false)), 5,
          'a session of the current generation is loaded, with its generation for the request prelude');

-- ------------------------------------------------------------------ no secret anywhere
select is((select count(*)::int from app_private.audit_log l, secrets s
           where l.model = 'account_security' and position(s.value in coalesce(l.after::text, '')) > 0), 0,
          'no security line holds a secret (TOTP secret, password hash, backup code hash, session token)');

select * from finish();
rollback;
