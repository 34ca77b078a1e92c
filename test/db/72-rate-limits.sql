-- Rate limits kept in PostgreSQL (issue 15 part 2): app_private.rate_limit_hit counts fixed
-- windows shared by every server process; the table is unreachable to the request roles;
-- purge_rate_limit_windows removes the windows that ended.
begin;
select plan(29);

create function pg_temp.hit(p_bucket text, p_limit int, p_window interval default '1 minute')
returns record language sql as $$
  select (allowed, remaining, retry_after) from app_private.rate_limit_hit(p_bucket, p_limit, p_window);
$$;

-- Counting within a window.
select is(pg_temp.hit('t:a', 3)::text, '(t,2,0)', 'the first hit is allowed, 2 left');
select is(pg_temp.hit('t:a', 3)::text, '(t,1,0)', 'the second hit: 1 left');
select is(pg_temp.hit('t:a', 3)::text, '(t,0,0)', 'the third hit: the last one allowed');
select is((select allowed from app_private.rate_limit_hit('t:a', 3, '1 minute')), false, 'the fourth hit is refused');
select ok((select retry_after between 1 and 60 from app_private.rate_limit_hit('t:a', 3, '1 minute')),
          'a refusal says when to retry, within the window (1 to 60 s)');
select is((select hits from app_private.rate_limit_windows where bucket = 't:a'), 4,
          'refused hits stop counting at limit + 1 (a flood cannot overflow the counter)');
select is(pg_temp.hit('t:b', 3)::text, '(t,2,0)', 'another bucket counts on its own');
select ok((select retry_after > 60 from app_private.rate_limit_hit('t:hour', 0, '1 hour')),
          'the retry delay follows the window length (an hour: more than 60 s)');
select is((select allowed from app_private.rate_limit_hit('t:zero', 0, '1 minute')), false, 'a limit of 0 refuses the first hit');

-- A window that ended: the next hit opens a new one.
update app_private.rate_limit_windows set window_start = window_start - interval '2 minutes',
  window_end = window_end - interval '2 minutes' where bucket = 't:a';
select is(pg_temp.hit('t:a', 3)::text, '(t,2,0)', 'after the window ends, the count starts again');
select ok((select window_end > clock_timestamp() + interval '50 seconds' from app_private.rate_limit_windows where bucket = 't:a'),
          'the new window lasts from this hit');

-- Guards are never NULL.
select is((select allowed is not null and remaining is not null and retry_after is not null
           from app_private.rate_limit_hit('t:c', 1, '1 minute')), true, 'allowed, remaining and retry_after are never NULL');
select is((select count(*)::int from app_private.rate_limit_hit('t:c', 1, '1 minute')), 1, 'exactly one row per hit');

-- The hit counted inside a request's transaction (app_private.rate_limit_hit_or_fail).
select lives_ok($$select app_private.rate_limit_hit_or_fail('t:tx', 2, '1 minute')$$, 'within the limit: nothing raised');
select is((select hits from app_private.rate_limit_windows where bucket = 't:tx'), 1, 'and the hit is counted');
select lives_ok($$select app_private.rate_limit_hit_or_fail('t:tx', 2, '1 minute')$$, 'the last one allowed');
select throws_ok($$select app_private.rate_limit_hit_or_fail('t:tx', 2, '1 minute')$$, 'WL429', 'Trop de requêtes.',
                 'over the limit: WL429, so the request''s transaction rolls back');
create function pg_temp.refusal_detail() returns text language plpgsql as $$
begin
  perform app_private.rate_limit_hit_or_fail('t:tx', 2, '1 minute');
  return null;
exception when sqlstate 'WL429' then
  declare v_detail text;
  begin
    get stacked diagnostics v_detail = pg_exception_detail;
    return v_detail;
  end;
end;
$$;
select ok(pg_temp.refusal_detail()::int between 1 and 60, 'its DETAIL is the seconds to wait, within the window');
select is((select hits from app_private.rate_limit_windows where bucket = 't:tx'), 2,
          'a refused hit rolls back with its transaction: the bucket stays full, not beyond');
select is(has_function_privilege('wfm_visitor', 'app_private.rate_limit_hit_or_fail(text, int, interval)', 'execute'), false,
          'the visitor may not count hits (the service resets the role first)');

-- Purge: only the windows that ended.
update app_private.rate_limit_windows set window_end = clock_timestamp() - interval '1 second' where bucket in ('t:b', 't:c');
select is(app_private.purge_rate_limit_windows(), 2, 'the purge removes the two windows that ended');
select is((select string_agg(bucket, ',' order by bucket) from app_private.rate_limit_windows where bucket like 't:%'),
          't:a,t:hour,t:tx,t:zero', 'the live windows stay');
select is(app_private.purge_rate_limit_windows(), 0, 'a second purge finds nothing');

-- The table: unlogged, row-level security, unreachable to the request roles.
select is((select relpersistence::text from pg_class where oid = 'app_private.rate_limit_windows'::regclass), 'u', 'the table is UNLOGGED');
select is((select relrowsecurity from pg_class where oid = 'app_private.rate_limit_windows'::regclass), true, 'row-level security is enabled');
select is(has_table_privilege('wfm_visitor', 'app_private.rate_limit_windows', 'select'), false, 'the visitor cannot read the counters');
select is(has_table_privilege('wfm_authenticator', 'app_private.rate_limit_windows', 'insert, update, delete'), false,
          'the authenticator cannot write the counters directly');
select is(has_function_privilege('wfm_authenticator', 'app_private.rate_limit_hit(text, int, interval)', 'execute'), true,
          'the authenticator (the server''s connections) may count a hit');
select is(has_function_privilege('wfm_visitor', 'app_private.purge_rate_limit_windows()', 'execute'), false,
          'the visitor may not purge');

select * from finish();
rollback;
