/**
 * Rate limits with the production values (SPEC Limits, CONTRACT section 7): 60 requests a
 * minute per anonymous client, 1000 a minute per account, 5 password-reset requests an
 * hour; every route counts, /api/health/ included. 429 answers {"detail"} and Retry-After.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import type { HttpResponse } from '../helpers/http.js';
import type { JobHelpers } from 'graphile-worker';
import purgeRateLimitWindows from '../../worker/tasks/purge_rate_limit_windows.js';
import { storedFiles } from '../helpers/raw-http.js';
import { fetchFrom } from '../helpers/client-address.js';
import { PDF, form, typeIds } from './absence-helpers.js';

const PRODUCTION = { anonymousPerMinute: 60, authenticatedPerMinute: 1000, passwordResetPerHour: 5, loginPerUsernamePerHour: 20 };

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

function expect429(res: HttpResponse, maxSeconds: number): void {
  expect(res.status).toBe(429);
  expect(Object.keys(res.body)).toEqual(['detail']);
  expect(res.body.detail).toMatch(/Trop de requêtes/);
  const retryAfter = res.headers.get('retry-after');
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(maxSeconds);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
}

/** Fires `count` requests in parallel batches and returns their statuses. */
async function fire(count: number, send: () => Promise<HttpResponse>, batch = 50): Promise<number[]> {
  const statuses: number[] = [];
  for (let done = 0; done < count; done += batch) {
    const responses = await Promise.all(Array.from({ length: Math.min(batch, count - done) }, send));
    statuses.push(...responses.map((res) => res.status));
  }
  return statuses;
}

describe('anonymous clients: 60 requests a minute', () => {
  it('the 61st anonymous request in a minute answers 429, /api/health/ counting', async () => {
    env = await startTestEnv({ rateLimits: PRODUCTION });
    const statuses = await fire(60, () => env!.get('/api/health/'), 20);
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect429(await env.get('/api/health/'), 60);
    // The limit is per client, across routes: anonymous calls elsewhere are refused too,
    // the login included.
    expect429(await env.get('/api/absence-types/'), 60);
    expect429(await env.post('/api/auth/token/', null, { username: 'alice', password: 'x' }), 60);
  });

  it('requests of any route, answered or refused, count together', async () => {
    env = await startTestEnv({ rateLimits: PRODUCTION });
    const paths = ['/api/health/', '/api/absence-types/', '/api/auth/me/', '/api/nowhere/', '/api/schema/'];
    let i = 0;
    const statuses = await fire(60, () => env!.get(paths[i++ % paths.length]!), 20);
    expect(statuses).not.toContain(429);
    expect429(await env.get('/api/health/'), 60);
  });

  it('an invalid token counts as anonymous traffic', async () => {
    env = await startTestEnv({ rateLimits: PRODUCTION });
    const statuses = await fire(60, () => env!.get('/api/auth/me/', 'not-a-token'), 20);
    expect(statuses.every((status) => status === 401)).toBe(true);
    expect429(await env.get('/api/auth/me/', 'not-a-token'), 60);
  });
});

describe('authenticated clients: 1000 requests a minute per account', () => {
  it('are limited independently of anonymous traffic, per account', async () => {
    env = await startTestEnv({ rateLimits: PRODUCTION });
    // Two logins: 2 anonymous requests.
    const alice = await env.login('alice');
    const mgr1 = await env.login('mgr1');
    // Exhaust the anonymous budget.
    const anonymous = await fire(58, () => env!.get('/api/health/'), 29);
    expect(anonymous.every((status) => status === 200)).toBe(true);
    expect429(await env.get('/api/health/'), 60);

    // The account still has its own 1000 on the routes that need an account.
    const first = await fire(1000, () => env!.get('/api/auth/me/', alice));
    expect(first.filter((status) => status !== 200)).toEqual([]);
    expect429(await env.get('/api/auth/me/', alice), 60);
    // A public route counts in the address's bucket, token or not (exhausted above).
    expect429(await env.get('/api/health/', alice), 60);

    // Another account is not affected, nor is the anonymous refusal lifted.
    const other = await env.get('/api/auth/me/', mgr1);
    expect(other.status).toBe(200);
    expect(other.body.username).toBe('mgr1');
    expect429(await env.get('/api/health/'), 60);
  });
});

describe('an account\'s hit counted inside its request\'s transaction (issue 15 point 3)', () => {
  const hits = async (accountId: number) => (await env!.db.query<{ hits: number }>(
    'select hits from app_private.rate_limit_windows where bucket = $1', [`account:${accountId}`])).rows[0]?.hits ?? 0;

  it('every request counts once, answered or refused; over the limit the call is undone and 429 is the answer', async () => {
    env = await startTestEnv({ rateLimits: { ...PRODUCTION, authenticatedPerMinute: 4 } });
    const alice = await env.login('alice');
    const account = env.ids.accounts!.alice!;
    const employee = env.ids.employees!.alice!;
    const T = await typeIds(env);
    const file = (day: string) => env!.post('/api/absences/', alice, { employee, type: T.FOR, date_start: day });

    expect((await file('2026-12-01')).status).toBe(201);
    expect(await hits(account)).toBe(1);
    // Refused by the route schema before any call, then by SQL (an absence that does not exist):
    // each counted on its own, once.
    expect((await env.post('/api/absences/', alice, { employee, date_start: '2026-12-02' })).status).toBe(400);
    expect(await hits(account)).toBe(2);
    expect((await env.get('/api/absences/999999/', alice)).status).toBe(404);
    expect(await hits(account)).toBe(3);
    expect((await file('2026-12-02')).status).toBe(201);
    expect(await hits(account)).toBe(4);

    // The fifth: the call ran, the hit refused it, the transaction rolled back.
    expect429(await file('2026-12-03'), 60);
    const { rows } = await env.db.query<{ day: string }>(
      "select date_start::text as day from app_public.absences where employee_id = $1 and date_start between '2026-12-01' and '2026-12-03' order by 1",
      [employee]);
    expect(rows.map((row) => row.day)).toEqual(['2026-12-01', '2026-12-02']);
    expect((await env.db.query("select count(*)::int as n from app_private.audit_log where model = 'absence' and verb = 'Creation' and (after ->> 'date_start') = '2026-12-03'")).rows[0].n).toBe(0);
    expect(await hits(account)).toBe(4);
    // Once refused, the account's next requests are counted first, on their own (no call is run).
    expect429(await env.get('/api/auth/me/', alice), 60);
    expect429(await file('2026-12-04'), 60);
    expect(await hits(account)).toBe(5);
    // Another account is not affected.
    expect((await env.get('/api/auth/me/', await env.login('bruno'))).status).toBe(200);
  });

  it('an upload over the limit is refused before its files reach the disk', async () => {
    env = await startTestEnv({ rateLimits: { ...PRODUCTION, authenticatedPerMinute: 1 } });
    const alice = await env.login('alice');
    const T = await typeIds(env);
    expect((await env.get('/api/auth/me/', alice)).status).toBe(200);
    const upload = await env.request('POST', '/api/absences/', {
      token: alice,
      form: form({ employee: env.ids.employees!.alice!, type: T.MAL!, date_start: '2026-11-16' }, [['add_documents', PDF, 'arrêt.pdf']]),
    });
    expect429(upload, 60);
    expect(await storedFiles(env.config.storageDir)).toEqual([]);
    expect(await hits(env.ids.accounts!.alice!)).toBe(2);
  });
});

describe('password reset: 5 requests an hour', () => {
  it('the 6th reset request within an hour answers 429 while other routes still answer', async () => {
    env = await startTestEnv({ rateLimits: PRODUCTION });
    for (let i = 0; i < 5; i += 1) {
      const res = await env.post('/api/auth/password/reset/', null, { login: i % 2 ? 'alice' : 'unknown-user' });
      expect(res.status).toBe(200);
    }
    const sixth = await env.post('/api/auth/password/reset/', null, { login: 'alice' });
    expect429(sixth, 3600);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(60);
    // The refused request queued nothing: only the two accepted requests for alice wrote an e-mail.
    const { rows } = await env.db.query("select count(*)::int as n from app_private.email_outbox where kind = 'password_reset'");
    expect(rows[0].n).toBe(2);

    // Other routes still answer, the confirmation route included.
    expect((await env.get('/api/health/')).status).toBe(200);
    const confirm = await env.post('/api/auth/password/reset/confirm/', null, { token: 'nope', new_password: 'Une-Phrase-Solide-42' });
    expect(confirm.status).toBe(400);
    const token = await env.login('alice');
    expect((await env.get('/api/auth/me/', token)).status).toBe(200);
    // An authenticated client does not escape the reset bucket.
    expect429(await env.post('/api/auth/password/reset/', token, { login: 'alice' }), 3600);
  });
});

describe('public routes count in the anonymous bucket, token or not (issue 11, finding 6)', () => {
  it('a signed token of a closed account does not lift logins to the 1000/minute bucket', async () => {
    env = await startTestEnv({ rateLimits: PRODUCTION });
    const closed = await env.login('farid');
    await env.db.query('update app_public.accounts set is_active = false where id = $1', [env.ids.accounts!.farid]);
    let i = 0;
    // 59 more (the login above counted): distinct usernames, so that only the address bucket fills.
    const statuses = await fire(59, () => env!.post('/api/auth/token/', closed, { username: `nobody-${i++}`, password: 'x' }), 20);
    expect(statuses.every((status) => status === 401)).toBe(true);
    expect429(await env.post('/api/auth/token/', closed, { username: 'nobody-else', password: 'x' }), 60);
    expect429(await env.get('/api/health/', closed), 60);
    // A public route with a path parameter too: a calendar feed's secret address.
    expect429(await env.get(`/api/feeds/${'0'.repeat(64)}.ics`, closed), 60);
  });
});

describe('logins: failures only, per username and address (issue 25; the rest in login-throttle.test.ts)', () => {
  it('with the production figures, the 11th failure of one username from one address answers 429; the right password from another address, 200', async () => {
    env = await startTestEnv({ rateLimits: PRODUCTION, host: '0.0.0.0' });
    const statuses = await fire(10, () => env!.post('/api/auth/token/', null, { username: 'alice', password: 'wrong' }), 5);
    expect(statuses.every((status) => status === 401)).toBe(true);
    const refused = await env.post('/api/auth/token/', null, { username: 'ALICE', password: 'Fixture-Passw0rd!' });
    expect429(refused, 900);
    const other = await fetchFrom('127.0.0.2')(`${env.url}/api/auth/token/`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'alice', password: 'Fixture-Passw0rd!' }),
    });
    expect(other.status).toBe(200);
  });
});

describe('the counters live in PostgreSQL (issue 15 part 2)', () => {
  it('a hit is a row of app_private.rate_limit_windows; the worker task purge_rate_limit_windows removes the ended windows', async () => {
    env = await startTestEnv({ rateLimits: PRODUCTION });
    expect((await env.get('/api/health/')).status).toBe(200);
    const { rows } = await env.db.query("select bucket, hits from app_private.rate_limit_windows where bucket like 'ip:%'");
    expect(rows).toEqual([{ bucket: expect.stringMatching(/^ip:/), hits: 1 }]);
    await env.db.query("update app_private.rate_limit_windows set window_end = clock_timestamp() - interval '1 second'");
    const logs: string[] = [];
    await purgeRateLimitWindows({}, {
      withPgClient: async <R>(work: (client: any) => Promise<R>) => {
        const client = await env!.db.connect();
        try {
          return await work(client);
        } finally {
          client.release();
        }
      },
      logger: { info: (message: string) => logs.push(message) },
    } as unknown as JobHelpers);
    expect(logs).toEqual(['purge_rate_limit_windows: 1 window(s) removed']);
    expect((await env.db.query('select count(*)::int as n from app_private.rate_limit_windows')).rows[0].n).toBe(0);
  });

  it('a database that cannot be reached lets the request through to its own 503 (fails open)', async () => {
    // The server's connections go to a port where no PostgreSQL listens.
    env = await startTestEnv({ rateLimits: PRODUCTION, configOverrides: { authDatabaseUrl: 'postgres://wfm_authenticator@127.0.0.1:1/nowhere' } });
    for (const path of ['/api/health/', '/api/health/']) {
      const res = await env.get(path);
      expect(res.status).toBe(503);
      expect(res.body.database).toBe('unavailable');
    }
    const login = await env.post('/api/auth/token/', null, { username: 'alice', password: 'x' });
    expect(login.status).toBe(503);
  });
});
