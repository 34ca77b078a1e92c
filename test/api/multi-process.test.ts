/**
 * Past one process (issue 15 part 2): two real server processes (src/cli/server-process.ts,
 * as `npm start` forks them with WEB_CONCURRENCY) on one database. The rate limits, the
 * back-office sessions and the second factor's replay guard live in PostgreSQL, so they hold
 * whichever process answers; concurrent decisions through the two processes have exactly one
 * winner. The processes run on the wall clock (no frozen business clock).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate } from 'otplib';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { ROLES } from '../../src/db/roles.js';
import { processCount } from '../../src/cli/server-processes.js';
import { BackofficeVisitor } from '../helpers/backoffice.js';
import { makeClient, type HttpClient } from '../helpers/http.js';
import { startServerProcess, type ServerProcessHandle } from '../helpers/server-process.js';
import { FIXTURE_PASSWORD, databaseUrl } from '../helpers/settings.js';
import { cloneTemplate } from '../helpers/template.js';

let database: Awaited<ReturnType<typeof cloneTemplate>>;
let storageDir: string;
let db: pg.Pool;
let processes: ServerProcessHandle[] = [];
let a: HttpClient;
let b: HttpClient;
let ids: Record<string, Record<string, number>>;

beforeAll(async () => {
  database = await cloneTemplate(inject('templateDatabase'));
  storageDir = await mkdtemp(path.join(tmpdir(), 'wfm-storage-'));
  db = new pg.Pool({ connectionString: databaseUrl(database.name), max: 2 });
  db.on('error', () => {});
  // The production limits (60 anonymous requests a minute, 20 logins per username an hour).
  const env = {
    DATABASE_URL: databaseUrl(database.name),
    AUTH_DATABASE_URL: databaseUrl(database.name, ROLES.authenticator),
    JWT_SECRET: randomBytes(32).toString('hex'),
    STORAGE_DIR: storageDir,
    PUBLIC_URL: 'http://wfm.test',
  };
  processes = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  a = makeClient(processes[0]!.url);
  b = makeClient(processes[1]!.url);
  ids = {};
  for (const row of (await db.query('select section, key, id from public.fixture_ids')).rows) (ids[row.section] ??= {})[row.key] = row.id;
}, 120_000);
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await db?.end();
  await database?.drop();
  if (storageDir) await rm(storageDir, { recursive: true, force: true });
});
// Each test starts with fresh counters.
beforeEach(async () => {
  await db.query('delete from app_private.rate_limit_windows');
});

describe('two server processes on one database', () => {
  it('are two processes', () => {
    expect(processes[0]!.pid).not.toBe(processes[1]!.pid);
    expect(processes[0]!.url).not.toBe(processes[1]!.url);
  });

  it('share the anonymous limit: 30 requests on each, then the 61st is refused by both', async () => {
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).get('/api/health/')));
    expect(statuses.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    for (const client of [a, b]) {
      const refused = await client.get('/api/health/');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('share an account\'s limit, counted inside the requests\' transactions: 500 on each, then the 1001st is refused by both', async () => {
    const login = await a.post('/api/auth/token/', null, { username: 'bruno', password: FIXTURE_PASSWORD });
    const token = login.body.access as string;
    const statuses: number[] = [];
    for (let batch = 0; batch < 10; batch += 1) {
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).get('/api/auth/me/', token)));
      statuses.push(...answers.map((r) => r.status));
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const { rows } = await db.query("select hits from app_private.rate_limit_windows where bucket like 'account:%'");
    expect(rows).toEqual([{ hits: 1000 }]);
    for (const client of [a, b]) {
      const refused = await client.get('/api/auth/me/', token);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('share the per-username login limit: 10 attempts on each, the 21st is refused', async () => {
    const attempts = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      (i % 2 ? a : b).post('/api/auth/token/', null, { username: 'alice', password: 'wrong' })));
    expect(attempts.map((r) => r.status).filter((s) => s !== 401)).toEqual([]);
    const refused = await a.post('/api/auth/token/', null, { username: 'alice', password: FIXTURE_PASSWORD });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(60);
    expect((await b.post('/api/auth/token/', null, { username: 'bruno', password: FIXTURE_PASSWORD })).status).toBe(200);
  });

  it('a back-office session opened on one is valid on the other; a TOTP code used on one is refused on the other', async () => {
    await db.query('delete from app_private.backoffice_factors where account_id = $1', [ids.accounts!.rh1]);
    const onA = new BackofficeVisitor(processes[0]!.url);
    expect((await onA.login('rh1')).location).toBe('/backoffice/login/enrol/');
    const now = Math.floor(Date.now() / 1000);
    const { secret, page } = await onA.enrol(now);
    expect(page.status).toBe(200);
    // The same cookies on the other process: the session is in PostgreSQL.
    const onB = new BackofficeVisitor(processes[1]!.url);
    for (const [name, value] of onA.cookies) onB.cookies.set(name, value);
    expect((await onB.get('/backoffice/')).text).toContain('Bienvenue');
    const me = await onB.get('/api/auth/me/');
    expect(me.status).toBe(200);
    // The enrolment's code, replayed on the other process, does not open a session.
    const replay = new BackofficeVisitor(processes[1]!.url);
    expect((await replay.login('rh1')).location).toBe('/backoffice/login/verify/');
    const refused = await replay.submit('/backoffice/login/verify/', { code: await generate({ secret, epoch: now }) });
    expect(refused.status).toBe(400);
  });

  it('two decisions on the same absence, one through each process: exactly one 200 and one 409', async () => {
    const login = async (client: HttpClient, username: string) =>
      (await client.post('/api/auth/token/', null, { username, password: FIXTURE_PASSWORD })).body.access as string;
    const alice = await login(a, 'alice');
    const mgr1 = await login(b, 'mgr1');
    const cp = (await db.query("select id from app_public.absence_types where code = 'CP'")).rows[0].id;
    for (let round = 0; round < 3; round++) {
      const day = `2027-01-${String(11 + round).padStart(2, '0')}`;
      const created = await a.post('/api/absences/', alice, { employee: ids.employees!.alice, type: cp, date_start: day, date_end: day });
      expect(created.status).toBe(201);
      const { id, version } = created.body;
      const [first, second] = await Promise.all([
        a.post(`/api/absences/${id}/validate/`, mgr1, { version }),
        b.post(`/api/absences/${id}/refuse/`, mgr1, { version, reason: 'Effectif insuffisant' }),
      ]);
      expect([first.status, second.status].sort()).toEqual([200, 409]);
      const { rows } = await db.query('select status, version from app_public.absences where id = $1', [id]);
      expect(rows[0].version).toBe(version + 1);
    }
  });
});

describe('WEB_CONCURRENCY', () => {
  it('is the number of server processes: 1 when unset, a whole number from 1 to 64, else a message saying so', () => {
    expect(processCount({})).toBe(1);
    expect(processCount({ WEB_CONCURRENCY: '' })).toBe(1);
    expect(processCount({ WEB_CONCURRENCY: '4' })).toBe(4);
    for (const bad of ['0', '65', '2.5', 'deux', '-1']) {
      expect(() => processCount({ WEB_CONCURRENCY: bad })).toThrow(`WEB_CONCURRENCY must be a whole number of server processes between 1 and 64 (got "${bad}").`);
    }
  });
});

