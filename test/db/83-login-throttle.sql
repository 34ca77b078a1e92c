-- Login throttling (issue 25, finding 2; SECURITY.md « Login throttling »): only failures count;
-- per (username, address) strictly; per username a ceiling beyond which logins are slowed
-- (1 s doubling, at most the cap), never refused; a success counts nothing and forgives its own
-- address's failures. Figures of the test: 3 per pair, ceiling 4, cap 10 s.
begin;
select plan(20);

create function pg_temp.check(p_username text, p_address text, p_scope text default 'api')
returns record language sql as $$
  select (retry_after, delay_ms) from app_private.login_throttle(p_scope, p_username, p_address, 3, 4, '10 seconds');
$$;
create function pg_temp.fail(p_username text, p_address text, p_scope text default 'api')
returns void language sql as $$
  select app_private.login_failed(p_scope, p_username, p_address, '15 minutes', '1 hour');
$$;

select is(pg_temp.check('alice', '192.0.2.1')::text, '(0,0)', 'no failure: neither refused nor slowed');
select app_private.login_succeeded('api', 'alice', '192.0.2.1');
select app_private.login_succeeded('api', 'alice', '192.0.2.1');
select is((select count(*)::int from app_private.rate_limit_windows where bucket like 'login-fail:%'), 0, 'successes are never counted');

select pg_temp.fail('alice', '192.0.2.1');
select pg_temp.fail('Alice', '192.0.2.1');
select is(pg_temp.check('alice', '192.0.2.1')::text, '(0,0)', 'two failures of the pair: still allowed');
select pg_temp.fail('ALICE', '192.0.2.1');
select ok((select retry_after between 800 and 900 from app_private.login_throttle('api', 'alice', '192.0.2.1', 3, 4, '10 seconds')),
          'the third failure of the pair refuses that address for that username (whatever the case) until its 15-minute window ends');
select is(pg_temp.check('alice', '192.0.2.2')::text, '(0,0)', 'another address that has not failed: neither refused nor slowed');
select is(pg_temp.check('bruno', '192.0.2.1')::text, '(0,0)', 'another username from the refused address: its own pair');
select is(pg_temp.check('alice', '192.0.2.1', 'bo')::text, '(0,0)', 'the back-office counts apart from the API');

select pg_temp.fail('alice', '192.0.2.2');
select is(pg_temp.check('alice', '192.0.2.3')::text, '(0,0)', 'four failures of the username: at the ceiling, not slowed');
select pg_temp.fail('alice', '192.0.2.2');
select is(pg_temp.check('alice', '192.0.2.3')::text, '(0,1000)', 'one over the ceiling: 1 s, never a refusal');
select pg_temp.fail('alice', '192.0.2.4');
select is(pg_temp.check('alice', '192.0.2.3')::text, '(0,2000)', 'two over: 2 s');
select pg_temp.fail('alice', '192.0.2.4');
select pg_temp.fail('alice', '192.0.2.5');
select is(pg_temp.check('alice', '192.0.2.3')::text, '(0,8000)', 'four over: 8 s');
select pg_temp.fail('alice', '192.0.2.5');
select pg_temp.fail('alice', '192.0.2.6');
select pg_temp.fail('alice', '192.0.2.6');
select is(pg_temp.check('alice', '192.0.2.3')::text, '(0,10000)', 'the delay stops at its cap (10 s): a flood of failures never locks the owner out');

select app_private.login_succeeded('api', 'alice', '192.0.2.1');
select is(pg_temp.check('alice', '192.0.2.1')::text, '(0,10000)',
          'a success forgives its own address''s failures (no longer refused); the username''s failures still slow it');
select is((select hits from app_private.rate_limit_windows where bucket = 'login-fail:api:alice'), 11,
          'the username''s failures are all counted, from every address');

update app_private.rate_limit_windows set window_end = clock_timestamp() - interval '1 second' where bucket = 'login-fail:api:alice';
select is(pg_temp.check('alice', '192.0.2.3')::text, '(0,0)', 'once the username''s hour ended, nothing slows it');

-- Beyond the ceiling, an address that failed keeps 3 failures at most (10 below it).
create function pg_temp.check10(p_username text, p_address text)
returns record language sql as $$
  select (retry_after, delay_ms) from app_private.login_throttle('api', p_username, p_address, 10, 4, '10 seconds');
$$;
select pg_temp.fail('chloe', '198.51.100.1');
select pg_temp.fail('chloe', '198.51.100.1');
select pg_temp.fail('chloe', '198.51.100.1');
select is(pg_temp.check10('chloe', '198.51.100.1')::text, '(0,0)', 'below the ceiling, 3 failures of an address leave it 7 more');
select pg_temp.fail('chloe', '198.51.100.2');
select pg_temp.fail('chloe', '198.51.100.2');
select ok((select retry_after > 0 from app_private.login_throttle('api', 'chloe', '198.51.100.1', 10, 4, '10 seconds')),
          'over the ceiling, an address with 3 failures of its own is refused (parallel guessing from many addresses gets few guesses each)');
select is(pg_temp.check10('chloe', '198.51.100.2')::text, '(0,1000)', 'an address with 2 failures is only slowed');

select is(has_function_privilege('wfm_authenticator', 'app_private.login_throttle(text, text, text, int, int, interval)', 'execute')
          and has_function_privilege('wfm_authenticator', 'app_private.login_failed(text, text, text, interval, interval)', 'execute')
          and has_function_privilege('wfm_authenticator', 'app_private.login_succeeded(text, text, text)', 'execute'), true,
          'the authenticator (the server''s logins) runs the three functions');
select is(has_function_privilege('wfm_visitor', 'app_private.login_succeeded(text, text, text)', 'execute'), false,
          'the visitor may not forgive failures');

select * from finish();
rollback;
