/**
 * The cheap request path (issue 31 point 5, src/db/transaction.ts runRequestCall): a route's call
 * without parameters goes out as ONE simple-protocol message (prelude, call, the folded rate-limit
 * hit, commit). Its refusals (a closed account, a bucket over its limit) roll the transaction back
 * and leave the connection usable; the hit counts once either way.
 */
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv | null = null;
afterEach(async () => {
  vi.restoreAllMocks();
  await env?.close();
  env = null;
});

const LIMITS = { anonymousPerMinute: 100_000, authenticatedPerMinute: 3, passwordResetPerHour: 100_000,
  loginPerUsernamePerHour: 100_000, loginFailuresPerAddress: 100_000 };

/** The texts of the queries the server's connections send during `work` (the owner pool of the test excluded). */
async function queriesDuring(work: () => Promise<void>): Promise<string[]> {
  const texts: string[] = [];
  const query = pg.Client.prototype.query;
  vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    if ((this as unknown as { connectionParameters?: { user?: string } }).connectionParameters?.user === 'wfm_authenticator') {
      texts.push(typeof first === 'string' ? first : first?.text ?? '');
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as never);
  await work();
  vi.restoreAllMocks();
  return texts;
}

describe('GET /api/auth/me/ in one message', () => {
  it('sends the prelude, the call, the hit and the commit together, and answers the account', async () => {
    env = await startTestEnv({ rateLimits: LIMITS });
    const token = await env.login('alice');
    let body: Record<string, unknown> = {};
    const texts = await queriesDuring(async () => {
      const answer = await env!.get('/api/auth/me/', token);
      expect(answer.status).toBe(200);
      body = answer.body as Record<string, unknown>;
    });
    expect(body.username).toBe('alice');
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatch(/^begin; .*begin_request_or_fail\(.*app_public\.me\(\).*rate_limit_hit_or_fail\('account:\d+', 3, .*; commit;$/);
  });

  it('over the limit: 429, the refused transaction rolled back, the connection still serves', async () => {
    env = await startTestEnv({ rateLimits: LIMITS });
    const token = await env.login('alice');
    const account = env.ids.accounts!.alice!;
    for (let i = 0; i < 3; i++) expect((await env.get('/api/auth/me/', token)).status).toBe(200);
    const hits = async () => (await env!.db.query<{ hits: number }>(
      'select hits from app_private.rate_limit_windows where bucket = $1', [`account:${account}`])).rows[0]?.hits;
    expect(await hits()).toBe(3);
    // The fourth: refused by its hit inside the message; the transaction, hit included, rolled back.
    expect((await env.get('/api/auth/me/', token)).status).toBe(429);
    expect(await hits()).toBe(3);
    // Once refused, the account's next request is counted first, on its own (no call is run).
    expect((await env.get('/api/auth/me/', token)).status).toBe(429);
    expect(await hits()).toBe(4);
    // The pool's connections came back idle: another account is served on them.
    const other = await env.login('bruno');
    for (let i = 0; i < 3; i++) expect((await env.get('/api/auth/me/', other)).status).toBe(200);
    const { rows: open } = await env.db.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'");
    expect(open[0]!.n).toBe(0);
  });

  it('a closed account: 401 each time, the connection still serves', async () => {
    env = await startTestEnv();
    const token = await env.login('farid');
    await env.db.query('update app_public.accounts set is_active = false where id = $1', [env.ids.accounts!.farid]);
    for (let i = 0; i < 12; i++) expect((await env.get('/api/auth/me/', token)).status).toBe(401);
    const alice = await env.login('alice');
    expect((await env.get('/api/auth/me/', alice)).status).toBe(200);
    const { rows: open } = await env.db.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'");
    expect(open[0]!.n).toBe(0);
  });
});
