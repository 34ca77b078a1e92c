/**
 * The per-request transaction design through PgBouncer in transaction pooling mode (issue 15
 * part 2): the server's connections go through Debian's pgbouncer (test/helpers/pgbouncer.ts),
 * which lends a server connection per transaction. A representative set of requests: logins,
 * reads and writes under RLS with the session settings (time zone) each transaction sets
 * itself, a decision race, the back-office session, the shared rate limits. The whole suite
 * through PgBouncer: npm run test:pgbouncer (BENCHMARKS.md, "Past one process").
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackofficeVisitor, enrolAs, totp } from '../helpers/backoffice.js';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { DEFAULT_NOW } from '../helpers/settings.js';
import { typeIds } from './absence-helpers.js';

let bouncer: PgBouncer;
let env: TestEnv;
let T: Record<string, number>;
let E: Record<string, number>;

beforeAll(async () => {
  // A small pool (5 server connections) under the server's 10 clients: connections are shared.
  bouncer = await startPgBouncer({ poolSize: 5 });
  env = await startTestEnv({ pgbouncerPort: bouncer.port, configOverrides: { backofficeLoginAttempts: 1000 } });
  T = await typeIds(env);
  E = env.ids.employees!;
});
afterAll(async () => {
  await env?.close();
  await bouncer?.stop();
});

describe('through PgBouncer (transaction pooling)', () => {
  it('PgBouncer refuses startup options: why the server pool sets its session settings per transaction', async () => {
    const client = new pg.Client({ connectionString: env.config.authDatabaseUrl, options: '-c jit=off' });
    client.on('error', () => {});
    await expect(client.connect()).rejects.toThrow(/unsupported startup parameter/);
    await client.end().catch(() => undefined);
  });

  it('the server connects through PgBouncer: its connections reach PostgreSQL from PgBouncer', async () => {
    expect(env.config.authDatabaseUrl).toContain(`:${bouncer.port}/`);
    expect((await env.get('/api/health/')).status).toBe(200);
    const { rows } = await env.db.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and usename = 'wfm_authenticator'");
    expect(rows[0]!.n).toBeGreaterThanOrEqual(1);
    expect(rows[0]!.n).toBeLessThanOrEqual(5);
  });

  it('logins, reads and a creation, each transaction with its own session settings (Paris time, no JIT)', async () => {
    const alice = await env.login('alice');
    const me = await env.get('/api/auth/me/', alice);
    expect(me.status).toBe(200);
    expect(me.body.username).toBe('alice');
    const created = await env.post('/api/absences/', alice, { employee: E.alice, type: T.CP, date_start: '2026-12-14', date_end: '2026-12-15' });
    expect(created.status).toBe(201);
    // The business clock and the time zone of the transaction: 10:00 in Paris, +01:00.
    expect(created.body.created_at).toBe(DEFAULT_NOW);
    const list = await env.get('/api/absences/?page_size=50', alice);
    expect(list.status).toBe(200);
    expect(list.body.results.map((a: { id: number }) => a.id)).toContain(created.body.id);
    // 40 reads in parallel over 5 server connections: each one sees only its own transaction's settings.
    const reads = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      i % 2 ? env.get(`/api/absences/${created.body.id}/`, alice) : env.get('/api/auth/me/', alice)));
    expect(reads.map((r) => r.status).every((s) => s === 200)).toBe(true);
    for (const read of reads.filter((_, i) => i % 2)) expect(read.body.created_at).toBe(DEFAULT_NOW);
  });

  it('two decisions on the same absence at once: exactly one 200, one 409', async () => {
    const alice = await env.login('alice');
    const mgr1 = await env.login('mgr1');
    const created = await env.post('/api/absences/', alice, { employee: E.alice, type: T.CP, date_start: '2026-12-21', date_end: '2026-12-21' });
    expect(created.status).toBe(201);
    const [a, b] = await Promise.all([
      env.post(`/api/absences/${created.body.id}/validate/`, mgr1, { version: created.body.version }),
      env.post(`/api/absences/${created.body.id}/refuse/`, mgr1, { version: created.body.version, reason: 'Effectif insuffisant' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
  });

  it('the back-office: enrolment, a TOTP code accepted once, the session on the API', async () => {
    const { visitor, secret } = await enrolAs(env, 'rh1');
    expect((await visitor.get('/backoffice/')).status).toBe(200);
    const me = await visitor.get('/api/auth/me/');
    expect(me.status).toBe(200);
    // The enrolment used the current step: the same code is refused, the next one accepted.
    const t0 = Date.parse(DEFAULT_NOW) / 1000;
    const second = new BackofficeVisitor(env.url);
    expect((await second.login('rh1')).location).toBe('/backoffice/login/verify/');
    const replay = await second.submit('/backoffice/login/verify/', { code: await totp(secret, t0) });
    expect(replay.status).toBe(400);
    env.setNow(new Date((t0 + 30) * 1000).toISOString());
    const next = await second.submit('/backoffice/login/verify/', { code: await totp(secret, t0 + 30) });
    expect(next.status).toBe(303);
    expect((await second.get('/api/auth/me/')).status).toBe(200);
    env.setNow(DEFAULT_NOW);
  });

  it('rate limits hold through PgBouncer: the 61st anonymous request in a minute answers 429', async () => {
    const limited = await startTestEnv({
      pgbouncerPort: bouncer.port,
      rateLimits: { anonymousPerMinute: 60, authenticatedPerMinute: 1000, passwordResetPerHour: 5, loginPerUsernamePerHour: 20 },
    });
    try {
      const statuses = await Promise.all(Array.from({ length: 60 }, () => limited.get('/api/health/')));
      expect(statuses.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
      const refused = await limited.get('/api/health/');
      expect(refused.status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
