--! Previous: sha1:7a192d7f31a338286c3fb38f5da19fae8109f48d
--! Hash: sha1:4ef66c3b80c1f7f83ab542d805de2aad8a550df5
--! Message: Issue 25 findings 1, 2: login throttling on failures only, per username and address, a ceiling that slows

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included auth/rate_limits.sql
-- Rate limits shared by every server process (SPEC Limits, CONTRACT section 7): one row per
-- bucket ('ip:…', 'account:…', 'login:…', 'reset:…', 'bo-login-…') holding its current fixed
-- window. UNLOGGED: counters are abuse protection, not data; they are not worth a WAL write
-- per request, and a crash that empties them only forgives the current window. Not
-- replicated to a standby either (docs/running.md).
create unlogged table if not exists app_private.rate_limit_windows (
  bucket text primary key check (length(bucket) <= 400),
  window_start timestamptz not null,
  window_end timestamptz not null,
  hits int not null check (hits >= 1)
);
-- No policy: the request roles never read it; only the security-definer functions below do.
alter table app_private.rate_limit_windows enable row level security;
create index if not exists rate_limit_windows_end_idx on app_private.rate_limit_windows (window_end);

comment on table app_private.rate_limit_windows is
  'Fixed-window request counters of the rate limits, shared by all server processes; purged by purge_rate_limit_windows.';

-- Counts one hit on `p_bucket` and says whether it is allowed. The window opens at the first
-- hit of a bucket (or the first after the previous window ended) and lasts `p_window`. One
-- statement (an upsert) so that concurrent hits from several processes count exactly once each.
-- retry_after: whole seconds until the window ends (at least 1) when refused, else 0.
-- The wall clock (clock_timestamp), never the business clock the tests freeze.
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never inlined, and
-- was parsed and planned at each of its calls: each request of the service makes one).
create or replace function app_private.rate_limit_hit(p_bucket text, p_limit int, p_window interval)
returns table (allowed boolean, remaining int, retry_after int)
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
begin
  return query
  with hit as (
    insert into app_private.rate_limit_windows as w (bucket, window_start, window_end, hits)
    values (p_bucket, clock_timestamp(), clock_timestamp() + p_window, 1)
    on conflict (bucket) do update set
      window_start = case when w.window_end <= excluded.window_start then excluded.window_start else w.window_start end,
      window_end = case when w.window_end <= excluded.window_start then excluded.window_end else w.window_end end,
      -- Capped: a flood keeps the bucket refused without counting towards an overflow.
      hits = case when w.window_end <= excluded.window_start then 1 else least(w.hits, p_limit) + 1 end
    returning w.hits, w.window_end
  )
  select hit.hits <= p_limit,
         greatest(p_limit - hit.hits, 0),
         case when hit.hits <= p_limit then 0
              else greatest(1, ceil(extract(epoch from hit.window_end - clock_timestamp())))::int end
  from hit;
end;
$$;
comment on function app_private.rate_limit_hit(text, int, interval) is
  'Counts one request in a rate-limit bucket: allowed, remaining, retry_after (seconds, 0 when allowed).';

-- The same hit counted inside a request's own transaction (src/db/transaction.ts, runRequestCall),
-- after its call and before its commit, as the authenticator: one round trip per request instead of
-- two. Over the limit it raises WL429 (DETAIL: the seconds to wait), so the whole transaction rolls
-- back and the request is answered 429, its call undone. Placed last, the bucket's row is locked only
-- for the commit, not for the call. A request whose transaction fails for another reason is counted
-- again on its own by the service (rate_limit_hit): every request counts once, answered or refused.
create or replace function app_private.rate_limit_hit_or_fail(p_bucket text, p_limit int, p_window interval)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_retry_after int;
begin
  select h.retry_after into v_retry_after from app_private.rate_limit_hit(p_bucket, p_limit, p_window) h;
  -- rate_limit_hit answers one row; without one the request passes, as the limiter fails open.
  if coalesce(v_retry_after, 0) > 0 then
    raise exception using errcode = 'WL429', message = 'Trop de requêtes.', detail = v_retry_after::text;
  end if;
end;
$$;
comment on function app_private.rate_limit_hit_or_fail(text, int, interval) is
  'Counts one request in a rate-limit bucket inside its transaction; over the limit, raises WL429 with the seconds to wait as DETAIL.';

-- Removes the windows that ended (job purge_rate_limit_windows, every 10 minutes). Returns the count.
create or replace function app_private.purge_rate_limit_windows() returns int
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  with gone as (delete from app_private.rate_limit_windows where window_end <= clock_timestamp() returning 1)
  select count(*)::int from gone;
$$;
comment on function app_private.purge_rate_limit_windows() is
  'Deletes the rate-limit windows that ended; returns how many.';

-- Login throttling (SECURITY.md, « Login throttling »; issue 25 finding 2). Only FAILED attempts
-- count (a wrong password, an unknown or closed account, a wrong second-factor code), in two
-- buckets of app_private.rate_limit_windows:
--   'login-fail:<scope>:<username>@<address>'  per (username, address): strict. At p_pair_limit
--      failures within p_pair_window (a fixed window opened by the first failure), that address is
--      refused (429) for that username until the window ends, even with the right password.
--   'login-fail:<scope>:<username>'            per username, whatever the address: a higher
--      ceiling that SLOWS and never refuses. Beyond p_ceiling failures within p_ceiling_window,
--      every attempt on that username waits 2^(n-1) seconds before its password is checked (n the
--      failures over the ceiling), at most p_max_delay seconds; and an address's own failures on it
--      are limited to 3 (instead of p_pair_limit) in their window.
-- A success clears the pair bucket of its address and counts nothing. So a third party who does not
-- know the password can slow an account's logins by at most p_max_delay seconds, and never refuse a
-- correct password (with its second factor) from an address that has not itself failed.
-- <scope>: 'api' (POST /api/auth/token/), 'bo' (back-office password step), 'bo-2fa' (back-office
-- second factor, the account id as username). The username is compared without case.
create or replace function app_private.login_throttle_buckets(p_scope text, p_username text, p_address text)
returns table (pair_bucket text, user_bucket text)
language sql immutable parallel safe set search_path = pg_catalog, public, pg_temp as $$
  -- Usernames are at most 150 characters, addresses 45: the keys stay under the table's 400.
  select format('login-fail:%s:%s@%s', p_scope, lower(left(p_username, 150)), left(coalesce(p_address, ''), 64)),
         format('login-fail:%s:%s', p_scope, lower(left(p_username, 150)));
$$;
comment on function app_private.login_throttle_buckets(text, text, text) is
  'The two failure buckets of login throttling: per (username, address) and per username.';

-- Read before the password is checked (counts nothing): retry_after > 0 refuses this address for this
-- username (429); delay_ms > 0 is how long the attempt waits before its password is checked.
create or replace function app_private.login_throttle(
  p_scope text, p_username text, p_address text,
  p_pair_limit int, p_ceiling int, p_max_delay interval)
returns table (retry_after int, delay_ms int)
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  -- Beyond the username's ceiling (it is being guessed from several addresses), an address that
  -- failed keeps at most this many failures: many addresses in parallel get few guesses each. An
  -- address that has not failed is still never refused.
  c_pair_limit_over_ceiling constant int := 3;
  v_pair_limit int;
  v_pair_hits int;
  v_pair_end timestamptz;
  v_user_hits int;
  v_over int;
  b record;
begin
  select * into b from app_private.login_throttle_buckets(p_scope, p_username, p_address);
  select w.hits into v_user_hits
  from app_private.rate_limit_windows w where w.bucket = b.user_bucket and w.window_end > clock_timestamp();
  v_over := coalesce(v_user_hits, 0) - p_ceiling;
  select w.hits, w.window_end into v_pair_hits, v_pair_end
  from app_private.rate_limit_windows w where w.bucket = b.pair_bucket and w.window_end > clock_timestamp();
  v_pair_limit := p_pair_limit;
  if v_over > 0 then
    v_pair_limit := least(p_pair_limit, c_pair_limit_over_ceiling);
  end if;
  if coalesce(v_pair_hits, 0) >= v_pair_limit then
    return query select greatest(1, ceil(extract(epoch from v_pair_end - clock_timestamp())))::int, 0;
    return;
  end if;
  return query select 0,
    case when v_over <= 0 then 0
         else least(extract(epoch from p_max_delay) * 1000, 1000 * power(2, least(v_over, 30) - 1))::int end;
end;
$$;
comment on function app_private.login_throttle(text, text, text, int, int, interval) is
  'Login throttling, before the password check: retry_after (seconds) when this address used up its failures on this username, else the delay (ms) the attempt waits once the username passed its ceiling of failures.';

-- A failed attempt: one more failure in both buckets (their windows open at the first failure).
create or replace function app_private.login_failed(
  p_scope text, p_username text, p_address text, p_pair_window interval, p_ceiling_window interval)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  b record;
begin
  select * into b from app_private.login_throttle_buckets(p_scope, p_username, p_address);
  -- Counted without a cap of their own (the limits are read by login_throttle).
  perform app_private.rate_limit_hit(b.pair_bucket, 2147483646, p_pair_window);
  perform app_private.rate_limit_hit(b.user_bucket, 2147483646, p_ceiling_window);
end;
$$;
comment on function app_private.login_failed(text, text, text, interval, interval) is
  'Login throttling: counts one failed attempt of a username from an address (per pair and per username).';

-- A successful attempt counts nothing, and forgives the failures of its own address for that username.
create or replace function app_private.login_succeeded(p_scope text, p_username text, p_address text)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  delete from app_private.rate_limit_windows w
  where w.bucket = (select pair_bucket from app_private.login_throttle_buckets(p_scope, p_username, p_address));
end;
$$;
comment on function app_private.login_succeeded(text, text, text) is
  'Login throttling: a success clears the failures of its (username, address) pair; it is never counted.';
--! EndIncluded auth/rate_limits.sql
--! Included finalize.sql
-- Last file of sql/ORDER, included by every migration that changes sql/ (npm run db:current):
-- grants, ownership of API functions, RLS check.

grant select on all tables in schema app_public to wfm_visitor;
grant select, insert, update, delete on all tables in schema app_public to wfm_api;
grant usage on all sequences in schema app_public to wfm_api;
grant usage on schema app_private to wfm_api;
grant execute on all functions in schema app_public to wfm_visitor, wfm_api;
grant execute on all functions in schema app_hidden to wfm_visitor, wfm_api;
grant execute on all functions in schema app_private to wfm_api;
grant execute on function app_private.begin_request(int, int, int), app_private.begin_request_or_fail(int, int, boolean, int, text),
  app_private.login_lookup(text), app_private.set_client_address(text),
  app_private.record_login(int), app_private.password_reset_request(text),
  app_private.password_token_check(text), app_private.password_reset_confirm(text, text),
  app_private.rate_limit_hit(text, int, interval), app_private.rate_limit_hit_or_fail(text, int, interval)
  to wfm_authenticator;
-- Login throttling (sql/auth/rate_limits.sql): the API and back-office logins, as the authenticator.
grant execute on function app_private.login_throttle(text, text, text, int, int, interval),
  app_private.login_failed(text, text, text, interval, interval), app_private.login_succeeded(text, text, text)
  to wfm_authenticator;

-- API functions that are security definer run as wfm_api, which does not own the tables:
-- row-level security applies to them exactly as to the visitor.
do $$
declare
  f record;
begin
  for f in
    select p.oid::regprocedure as signature
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'app_public' and p.prosecdef and p.proowner <> 'wfm_api'::regrole
  loop
    execute format('alter function %s owner to wfm_api', f.signature);
  end loop;
end;
$$;

-- Every table has row-level security enabled; a migration that forgets it fails here.
do $$
declare
  t record;
begin
  for t in
    select c.oid::regclass as rel
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname in ('app_public', 'app_private', 'app_hidden') and c.relkind in ('r', 'p')
      and not c.relrowsecurity
  loop
    raise exception 'Table % has no row-level security enabled', t.rel;
  end loop;
end;
$$;
--! EndIncluded finalize.sql
