-- Authentication support (sql/auth/functions.sql): begin_request, password reset request
-- and confirmation, set-password invitations, account activation rules.
begin;
select plan(65);

select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.acc(p_username text) returns int language sql stable as $$
  select id from app_public.accounts where username = p_username;
$$;
create function pg_temp.outbox(p_username text) returns int language sql stable as $$
  select count(*)::int from app_private.email_outbox where account_id = pg_temp.acc(p_username);
$$;
create function pg_temp.tokens(p_username text) returns int language sql stable as $$
  select count(*)::int from app_private.password_tokens where account_id = pg_temp.acc(p_username);
$$;
create function pg_temp.totals() returns int[] language sql stable as $$
  select array[(select count(*)::int from app_private.email_outbox), (select count(*)::int from app_private.password_tokens)];
$$;
-- The clear token of the latest mail of an account (it only ever leaves by e-mail).
create function pg_temp.last_token(p_username text) returns text language sql stable as $$
  select substring(o.body_text from 'token=([0-9a-f]{64})') from app_private.email_outbox o
  where o.account_id = pg_temp.acc(p_username) order by o.id desc limit 1;
$$;
-- Remembers a value for the rest of the transaction (readable whatever the current role).
create function pg_temp.keep(p_name text, p_value text) returns void language sql as $$
  select null::void from (select set_config('tests.' || p_name, p_value, true)) x;
$$;
create temp table tok (name text primary key, token text not null);

------------------------------------------------------------------------------------------
-- begin_request
select ok(has_function_privilege('wfm_authenticator', 'app_private.begin_request(int, int, int)', 'execute')
          and not has_function_privilege('wfm_visitor', 'app_private.begin_request(int, int, int)', 'execute'),
  'begin_request is for the authenticator, not for the visitor');
select tests.as_owner();
select is(app_private.begin_request(9999999), null::jsonb, 'begin_request: unknown account gives null');
update app_public.accounts set is_active = false where username = 'farid';
select is(app_private.begin_request(pg_temp.acc('farid')), null::jsonb, 'begin_request: inactive account gives null');
select is(current_setting('app.account_id', true), '', 'begin_request: nothing set for a refused account');
select is(app_private.begin_request(pg_temp.acc('alice')),
  jsonb_build_object('id', pg_temp.acc('alice'), 'username', 'alice', 'employee_id', tests.id('employees', 'alice'),
                     'is_staff', false, 'is_superuser', false),
  'begin_request: an active account is reloaded');
select is(array[current_setting('app.account_id'), current_setting('app.employee_id')],
  array[pg_temp.acc('alice')::text, tests.id('employees', 'alice')::text],
  'begin_request: app.account_id and app.employee_id are set');
select ok(app_private.begin_request(pg_temp.acc('root')) is not null
          and current_setting('app.account_id') = pg_temp.acc('root')::text
          and current_setting('app.employee_id') = '',
  'begin_request: an account without record sets an empty app.employee_id');
select is(app_private.begin_request(pg_temp.acc('alice'), pg_temp.acc('mgr1')), null::jsonb,
  'begin_request: impersonation by a non-superuser is refused');
select ok(app_private.begin_request(pg_temp.acc('alice'), pg_temp.acc('root')) is not null
          and current_setting('app.impersonator_id') = pg_temp.acc('root')::text
          and current_setting('app.account_id') = pg_temp.acc('alice')::text,
  'begin_request: a superuser impersonates, and is recorded as impersonator');
select tests.as_owner();

------------------------------------------------------------------------------------------
-- password_reset_request: a mail and a token only for an active account with an e-mail
select lives_ok($$select app_private.password_reset_request('alice')$$, 'reset request by username');
select is(array[pg_temp.outbox('alice'), pg_temp.tokens('alice')], array[1, 1],
  'reset request: one mail and one token for alice');
select results_eq(
  $$select o.kind, o.to_address, t.purpose, t.expires_at
    from app_private.email_outbox o join app_private.password_tokens t on t.account_id = o.account_id
    where o.account_id = pg_temp.acc('alice')$$,
  $$values ('password_reset', 'alice.martin@tilleuls.example', 'reset', '2026-11-16 11:00+01'::timestamptz)$$,
  'reset request: the mail goes to the professional e-mail, the token lives 60 minutes');
insert into tok values ('alice-1', pg_temp.last_token('alice'));
select ok((select token from tok where name = 'alice-1') ~ '^[0-9a-f]{64}$', 'reset request: the mail carries the link with its token');
select ok(exists (select 1 from app_private.password_tokens t, tok
                 where tok.name = 'alice-1' and t.token_hash = public.digest(tok.token, 'sha256'))
          and not exists (select 1 from app_private.password_tokens t, tok
                          where t.token_hash = convert_to(tok.token, 'UTF8')),
  'reset request: only the SHA-256 of the token is stored');
select lives_ok($$select app_private.password_reset_request('  ALICE.Martin@Tilleuls.example ')$$, 'reset request by e-mail');
select is(pg_temp.tokens('alice'), 2, 'reset request: the e-mail, case-insensitively and trimmed, finds the account');
insert into tok values ('alice-2', pg_temp.last_token('alice'));

select pg_temp.keep('totals', pg_temp.totals()::text);
select lives_ok($$select app_private.password_reset_request('emma')$$, 'reset request for an account without e-mail: same outcome');
select lives_ok($$select app_private.password_reset_request('farid')$$, 'reset request for an inactive account: same outcome');
select lives_ok($$select app_private.password_reset_request('personne')$$, 'reset request for an unknown login: same outcome');
select lives_ok($$select app_private.password_reset_request('')$$, 'reset request with an empty login: same outcome');
select is(pg_temp.totals()::text, current_setting('tests.totals'),
  'no mail and no token for an account without e-mail, an inactive or an unknown one');

------------------------------------------------------------------------------------------
-- queue_invitation: only with an e-mail
select pg_temp.keep('totals', pg_temp.totals()::text);
select is(app_private.queue_invitation(pg_temp.acc('emma')), false, 'invitation: emma has no e-mail');
select is(app_private.queue_invitation(pg_temp.acc('root')), false, 'invitation: an account without record has no e-mail');
select is(pg_temp.totals()::text, current_setting('tests.totals'), 'invitation: nothing written without an e-mail');
select is(app_private.queue_invitation(pg_temp.acc('alice')), true, 'invitation: alice has an e-mail');
select results_eq(
  $$select o.kind, o.to_address, t.purpose, t.expires_at
    from app_private.email_outbox o
    join app_private.password_tokens t on t.account_id = o.account_id and t.purpose = 'invitation'
    where o.account_id = pg_temp.acc('alice') and o.kind = 'invitation'$$,
  $$values ('invitation', 'alice.martin@tilleuls.example', 'invitation', '2026-11-23 10:00+01'::timestamptz)$$,
  'invitation: a mail and a token living a week');
insert into tok values ('alice-inv', pg_temp.last_token('alice'));

------------------------------------------------------------------------------------------
-- password_reset_confirm: single use, kills the other open tokens
select is(app_private.password_token_check((select token from tok where name = 'alice-1')), 'alice',
  'token check: a fresh token names its account');
select lives_ok(format('select app_private.password_reset_confirm(%L, %L)', (select token from tok where name = 'alice-1'), 'hash-1'),
  'confirm: a fresh token sets the password');
select results_eq(
  $$select password_hash, password_changed_at from app_private.account_secrets where account_id = pg_temp.acc('alice')$$,
  $$values ('hash-1', '2026-11-16 10:00+01'::timestamptz)$$, 'confirm: the new hash is stored, with its date');
select throws_ok(format('select app_private.password_reset_confirm(%L, %L)', (select token from tok where name = 'alice-1'), 'hash-2'),
  'WV030', 'Ce lien n’est plus valide : il a expiré ou a déjà servi. Demandez un nouveau lien.',
  'confirm: a token serves once');
select throws_ok(format('select app_private.password_reset_confirm(%L, %L)', (select token from tok where name = 'alice-2'), 'hash-2'),
  'WV030', null, 'confirm: the other open reset token of the account died');
select throws_ok(format('select app_private.password_reset_confirm(%L, %L)', (select token from tok where name = 'alice-inv'), 'hash-2'),
  'WV030', null, 'confirm: the open invitation of the account died too');
select is((select password_hash from app_private.account_secrets where account_id = pg_temp.acc('alice')), 'hash-1',
  'confirm: refused tokens changed nothing');
select is_empty($$select 1 from app_private.password_tokens where account_id = pg_temp.acc('alice') and used_at is null$$,
  'confirm: no open token is left for the account');
select throws_ok($$select app_private.password_reset_confirm(repeat('ab', 32), 'x')$$, 'WV030', null, 'confirm: unknown token');
select throws_ok($$select app_private.password_reset_confirm(null, 'x')$$, 'WV030', null, 'confirm: no token');

-- Expiry after 60 minutes.
select app_private.password_reset_request('bruno');
insert into tok values ('bruno', pg_temp.last_token('bruno'));
select tests.freeze('2026-11-16 10:59:59+01');
select is(app_private.password_token_check((select token from tok where name = 'bruno')), 'bruno',
  'expiry: still valid after 59 minutes 59 seconds');
select tests.freeze('2026-11-16 11:00:00+01');
select throws_ok(format('select app_private.password_token_check(%L)', (select token from tok where name = 'bruno')),
  'WV030', null, 'expiry: the check refuses it at 60 minutes');
select throws_ok(format('select app_private.password_reset_confirm(%L, %L)', (select token from tok where name = 'bruno'), 'late'),
  'WV030', null, 'expiry: the confirmation refuses it at 60 minutes');
select isnt((select password_hash from app_private.account_secrets where account_id = pg_temp.acc('bruno')), 'late',
  'expiry: the password is unchanged');
select tests.freeze('2026-11-16 10:00+01');

-- A token of an account closed after the request is refused.
select app_private.password_reset_request('chloe');
insert into tok values ('chloe', pg_temp.last_token('chloe'));
update app_public.accounts set is_active = false where username = 'chloe';
select throws_ok(format('select app_private.password_reset_confirm(%L, %L)', (select token from tok where name = 'chloe'), 'x'),
  'WV030', null, 'confirm: refused for an account closed since the request');
update app_public.accounts set is_active = true where username = 'chloe';

------------------------------------------------------------------------------------------
-- account_activation_set, as the request role
insert into app_public.employees (first_name, last_name, main_establishment_id)
values ('Sans', 'Compte', tests.id('establishments', 'E1'));
create function pg_temp.activation(p_as text, p_employee int, p_active boolean) returns jsonb language plpgsql as $$
declare
  v jsonb;
begin
  perform tests.authenticate_as(p_as);
  v := app_public.account_activation_set(p_employee, p_active);
  perform tests.as_owner();
  return v;
end;
$$;
create function pg_temp.active(p_username text) returns boolean language sql stable as $$
  select is_active from app_public.accounts where username = p_username;
$$;

select is(pg_temp.activation('rh1', tests.id('employees', 'alice'), false),
  jsonb_build_object('id', tests.id('employees', 'alice'), 'account_id', pg_temp.acc('alice'), 'is_active', false),
  'RH n1 closes an account of its perimeter');
select ok(not pg_temp.active('alice') and app_private.begin_request(pg_temp.acc('alice')) is null,
  'the closed account is refused by begin_request');
select tests.as_owner();
select is(pg_temp.activation('rh1', tests.id('employees', 'alice'), true) -> 'is_active', 'true'::jsonb, 'RH n1 reopens it');
select ok(pg_temp.active('alice'), 'the account is open again');
select is(pg_temp.activation('admin', tests.id('employees', 'rh1'), false) -> 'is_active', 'false'::jsonb,
  'Admin closes any account, an HR one included');
update app_public.accounts set is_active = true where username = 'rh1';
select is(pg_temp.activation('rh2', tests.id('employees', 'chloe'), false) -> 'is_active', 'false'::jsonb,
  'RH n2 of E2 closes an E2 account');
update app_public.accounts set is_active = true where username = 'chloe';

select pg_temp.keep('closed', (select count(*) from app_public.accounts where not is_active)::text);
select throws_ok(format('select pg_temp.activation(%L, %s, false)', 'rh2', tests.id('employees', 'alice')),
  'WN001', 'Salarié introuvable dans votre périmètre.', 'RH n2 of E2 cannot touch an E1 account: outside its perimeter, 404');
select throws_ok(format('select pg_temp.activation(%L, %s, false)', 'da', tests.id('employees', 'alice')),
  'WF012', 'Vous ne pouvez ouvrir ou fermer que les comptes des intérimaires.', 'DA: only Intérimaire accounts');
select throws_ok(format('select pg_temp.activation(%L, %s, false)', 'mgr1', tests.id('employees', 'bruno')),
  'WF012', null, 'Manager n1: only Intérimaire accounts');
select throws_ok(format('select pg_temp.activation(%L, %s, false)', 'mgr2', tests.id('employees', 'emma')),
  'WN001', null, 'Manager n2 of E2: an E1 Intérimaire is outside its perimeter');
select throws_ok(format('select pg_temp.activation(%L, %s, false)', 'mgr1', tests.id('employees', 'mgr1')),
  'WF010', 'Vous ne pouvez pas ouvrir ou fermer votre propre compte.', 'a manager cannot close their own account');
select throws_ok(format('select pg_temp.activation(%L, %s, false)', 'rh1', tests.id('employees', 'rh1')),
  'WF010', null, 'RH n1 cannot close their own account');
select throws_ok(format('select pg_temp.activation(%L, %s, true)', 'alice', tests.id('employees', 'alice')),
  'WF011', null, 'a Salarié, without any activation right, is refused before anything else (own account included)');
select throws_ok(format('select pg_temp.activation(%L, %s, false)', 'paie', tests.id('employees', 'alice')),
  'WF011', null, 'Service Paie has no activation right');
select throws_ok(format('select pg_temp.activation(%L, %s, false)', 'alice', tests.id('employees', 'emma')),
  'WN001', null, 'a Salarié on a colleague''s record: not found (SPEC Errors: a colleague''s row is 404)');
select throws_ok(format('select pg_temp.activation(%L, %s, false)', 'rh1',
                        (select id from app_public.employees where last_name = 'Compte')),
  'WN001', 'Ce salarié n’a pas de compte.', 'an employee without account: not found');
select throws_ok($$select pg_temp.activation('rh1', 9999999, false)$$, 'WN001', null, 'an unknown employee: not found');
select is((select count(*) from app_public.accounts where not is_active)::text, current_setting('tests.closed'),
  'refused calls changed no account');

select is(pg_temp.activation('da', tests.id('employees', 'emma'), false) -> 'is_active', 'false'::jsonb,
  'DA of E1 closes an E1 Intérimaire account');
select is(pg_temp.activation('mgr1', tests.id('employees', 'emma'), true) -> 'is_active', 'true'::jsonb,
  'Manager n1 of E1 reopens an E1 Intérimaire account');
select throws_ok(format('select pg_temp.activation(%L, %s, false)', 'mgr3', tests.id('employees', 'emma')),
  'WN001', null, 'Manager n1 of E3 cannot close an E1 Intérimaire outside its on-call');
select tests.freeze('2026-11-21 12:00+01');
select throws_ok(format('select pg_temp.activation(%L, %s, false)', 'mgr3', tests.id('employees', 'emma')),
  'WN001', null,
  'during its on-call for E1, the E3 manager still may not close the E1 Intérimaire account (an on-call period extends the queue and the decisions only)');
select tests.freeze('2026-11-16 10:00+01');
update app_public.accounts set is_active = true where username = 'emma';
update app_public.role_attributions set end_date = '2026-11-15'
 where account_id = pg_temp.acc('emma') and role_id = 8;
select throws_ok(format('select pg_temp.activation(%L, %s, false)', 'da', tests.id('employees', 'emma')),
  'WF012', null, 'an Intérimaire attribution that ended no longer opens the account to DA');
select ok(pg_temp.active('emma'), 'emma stays open');

select * from finish();
rollback;
