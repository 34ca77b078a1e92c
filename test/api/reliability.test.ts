/**
 * Reliability under races and faults, over HTTP against a real PostgreSQL (small sizes,
 * deterministic outcomes; no timing assertions):
 * - 50 parallel decisions on one request: exactly one wins, the others 409 (or 400 under
 *   status), one audit transition;
 * - 20 parallel creations against one counter: never overdrawn, refusals under `counters`,
 *   the journal sums equal the balance;
 * - the PostgreSQL connection killed mid-request: a clean 503, no partial write, the server
 *   keeps serving;
 * - the connection lost during an upload's transaction: the files stay (the COMMIT may have
 *   reached the server), and the orphan sweep removes them when no row names them;
 * - start-up while the database is unreachable: the server and the worker wait for it;
 * - an unhandled rejection of the worker on a lost connection does not end the process;
 * - a failing notification insert: nothing of the filing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { INJECTED } from '../helpers/response-contract.js';
import { FileStorage } from '../../src/storage/storage.js';
import { sweepOrphanFiles } from '../../src/storage/garbage.js';
import { waitForDatabase } from '../../src/db/reachable.js';
import net from 'node:net';
import { connectionLossRejectionHandler } from '../../worker/runner.js';
import { PDF, form, typeIds } from './absence-helpers.js';

let env: TestEnv;
let T: Record<string, number>;
const E = () => env.ids.employees!;

beforeAll(async () => {
  env = await startTestEnv();
  T = await typeIds(env);
});
afterAll(async () => {
  await env?.close();
});

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await env.db.query<{ n: number }>(sql, params);
  return Number(rows[0]!.n);
}

describe('50 parallel decisions on one request', () => {
  it('absence: exactly one validation or refusal wins; the others 409 or 400; one audit transition', async () => {
    const filed = await env.post('/api/absences/', await env.login('alice'), {
      employee: E().alice, type: T.FOR, date_start: '2026-12-07', date_end: '2026-12-08',
    });
    expect(filed.status).toBe(201);
    const deciders = await Promise.all(['mgr1', 'rh1', 'admin'].map((username) => env.login(username)));
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        env.post(`/api/absences/${filed.body.id}/${i % 2 ? 'refuse' : 'validate'}/`, deciders[i % 3], {
          version: filed.body.version,
          reason: 'Décision concurrente',
        })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.every((s) => [200, 400, 409].includes(s)), statuses.join(',')).toBe(true);
    for (const loser of responses.filter((r) => r.status === 400)) expect(Object.keys(loser.body)).toEqual(['status']);
    const { rows } = await env.db.query('select status, version from app_public.absences where id = $1', [filed.body.id]);
    expect(rows[0].version).toBe(filed.body.version + 1);
    expect(await count(
      "select count(*) as n from app_private.audit_log where model = 'absence' and target_id = $1 and verb in ('Validation', 'Refus')",
      [filed.body.id],
    )).toBe(1);
  });

  it('day-change request: exactly one decision wins; the others 409 or 400; one audit transition', async () => {
    const filed = await env.post('/api/shift-change-requests/', await env.login('alice'), {
      date: '2026-12-09', reason: 'demande_personnelle', is_remote: true,
    });
    expect(filed.status).toBe(201);
    const deciders = await Promise.all(['mgr1', 'rh1', 'admin'].map((username) => env.login(username)));
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        env.post(`/api/shift-change-requests/${filed.body.id}/${i % 2 ? 'refuse' : 'validate'}/`, deciders[i % 3], {
          version: filed.body.version,
          reason: 'Décision concurrente',
        })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.every((s) => [200, 400, 409].includes(s)), statuses.join(',')).toBe(true);
    expect(await count(
      "select count(*) as n from app_private.audit_log where model = 'shift_change_request' and target_id = $1 and verb in ('Validation', 'Refus')",
      [filed.body.id],
    )).toBe(1);
  });
});

describe('20 parallel creations against one counter', () => {
  it('never overdraws; refusals are under counters; the journal sums equal the balance', async () => {
    // David (E3, ouvrables) gets 6 days of RTT for 2027.
    const { rows } = await env.db.query<{ id: number }>(
      "insert into app_public.counters (employee_id, code, year) values ($1, 'RTT', 2027) returning id", [E().david]);
    await env.db.query(
      "insert into app_private.counter_movements (counter_id, bucket, quantity, kind) values ($1, 'acquired', 6, 'grant')", [rows[0]!.id]);
    const token = await env.login('david');
    // 20 distinct working days of January 2027 (Monday to Friday), one day each.
    const days: string[] = [];
    for (let d = new Date('2027-01-04T12:00:00Z'); days.length < 20; d.setUTCDate(d.getUTCDate() + 1)) {
      if (d.getUTCDay() !== 0 && d.getUTCDay() !== 6) days.push(d.toISOString().slice(0, 10));
    }
    const responses = await Promise.all(days.map((day) =>
      env.post('/api/absences/', token, { employee: E().david, type: T.RTT, date_start: day, date_end: day })));
    const accepted = responses.filter((r) => r.status === 201);
    const refused = responses.filter((r) => r.status !== 201);
    expect(accepted).toHaveLength(6);
    for (const res of refused) {
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toContain('counters');
    }
    const counters = await env.get('/api/counters/?year=2027', token);
    expect(counters.body.RTT).toMatchObject({ acquired: '6.00', taken: '0.00', planned: '6.00', remaining: '0.00' });
    const journal = await env.db.query<{ bucket: string; total: string }>(
      'select bucket, sum(quantity)::text as total from app_private.counter_movements where counter_id = $1 group by bucket order by bucket',
      [rows[0]!.id]);
    expect(journal.rows).toEqual([{ bucket: 'acquired', total: '6.00' }, { bucket: 'planned', total: '6.00' }]);
  });
});

describe('the PostgreSQL connection killed mid-request', () => {
  it('answers a clean 503, writes nothing, and the server keeps serving', async () => {
    const token = await env.login('alice');
    const before = await count('select count(*) as n from app_public.absences where employee_id = $1', [E().alice]);
    const movementsBefore = await count('select count(*) as n from app_private.counter_movements');
    // Hold alice's CP counter: the creation waits on it inside its transaction.
    const blocker: pg.PoolClient = await env.db.connect();
    try {
      await blocker.query('begin');
      await blocker.query(
        "select 1 from app_public.counters where employee_id = $1 and code = 'CP' and year = 2026 for update", [E().alice]);
      const pending = env.post('/api/absences/', token, {
        employee: E().alice, type: T.CP, date_start: '2026-12-14', date_end: '2026-12-15',
      });
      // Find the server's backend waiting on the lock, and kill it.
      let pid: number | null = null;
      for (let attempt = 0; attempt < 200 && pid === null; attempt++) {
        const { rows } = await env.db.query<{ pid: number }>(
          `select pid from pg_stat_activity
           where datname = current_database() and usename = 'wfm_authenticator' and wait_event_type = 'Lock'`);
        pid = rows[0]?.pid ?? null;
        if (pid === null) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(pid, 'the request reached its lock').not.toBeNull();
      await env.db.query('select pg_terminate_backend($1)', [pid]);
      const response = await pending;
      expect(response.status).toBe(503);
      expect(Object.keys(response.body)).toEqual(['detail']);
    } finally {
      await blocker.query('rollback');
      blocker.release();
    }
    expect(await count('select count(*) as n from app_public.absences where employee_id = $1', [E().alice])).toBe(before);
    expect(await count('select count(*) as n from app_private.counter_movements')).toBe(movementsBefore);
    // The pool replaced the dead connection: the same request now succeeds, others too.
    const retried = await env.post('/api/absences/', token, {
      employee: E().alice, type: T.CP, date_start: '2026-12-14', date_end: '2026-12-15',
    });
    expect(retried.status).toBe(201);
    for (let i = 0; i < 12; i++) expect((await env.get('/api/auth/me/', token)).status).toBe(200);
  });
});

describe('the connection lost during an upload', () => {
  it('keeps the stored file (the outcome is unknown), and the orphan sweep removes it when no row names it', async () => {
    const token = await env.login('alice');
    const storage = new FileStorage(env.config.storageDir);
    const before = (await storage.listOlderThan(Date.now() + 60_000)).keys;
    const blocker: pg.PoolClient = await env.db.connect();
    let response;
    try {
      await blocker.query('begin');
      await blocker.query(
        "select 1 from app_public.counters where employee_id = $1 and code = 'CP' and year = 2026 for update", [E().alice]);
      const pending = env.request('POST', '/api/absences/', {
        token,
        form: form({ employee: E().alice!, type: T.CP!, date_start: '2026-12-21', date_end: '2026-12-22' }, [['add_documents', PDF, 'billet.pdf']]),
      });
      let pid: number | null = null;
      for (let attempt = 0; attempt < 200 && pid === null; attempt++) {
        const { rows } = await env.db.query<{ pid: number }>(
          `select pid from pg_stat_activity
           where datname = current_database() and usename = 'wfm_authenticator' and wait_event_type = 'Lock'`);
        pid = rows[0]?.pid ?? null;
        if (pid === null) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(pid, 'the request reached its lock').not.toBeNull();
      await env.db.query('select pg_terminate_backend($1)', [pid]);
      response = await pending;
    } finally {
      await blocker.query('rollback');
      blocker.release();
    }
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    const kept = (await storage.listOlderThan(Date.now() + 60_000)).keys.filter((key) => !before.includes(key));
    expect(kept).toHaveLength(1);
    expect(await count('select count(*) as n from app_public.absence_documents where storage_key = $1', [kept[0]])).toBe(0);

    // The sweep leaves files younger than its minimum age (an upload may be in flight), then removes the orphan.
    const client = await env.db.connect();
    try {
      expect(await sweepOrphanFiles(client, storage)).toBe(0);
      expect(await storage.exists(kept[0]!)).toBe(true);
      expect(await sweepOrphanFiles(client, storage, { olderThanMs: 0 })).toBeGreaterThanOrEqual(1);
    } finally {
      client.release();
    }
    expect(await storage.exists(kept[0]!)).toBe(false);
    // Files that rows name stay.
    const { rows } = await env.db.query<{ storage_key: string }>('select storage_key from app_public.absence_documents');
    for (const row of rows) expect(await storage.exists(row.storage_key)).toBe(true);
  });
});

describe('start-up while the database is unreachable (waitForDatabase, called by the server and the worker start)', () => {
  it('waits for a database that comes up later; a refusal waiting cannot cure stops at once', async () => {
    const target = new URL(env.config.databaseUrl);
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    // Nothing listens on `port` yet: a proxy to the test database opens there after a while.
    const proxy = net.createServer((socket) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    const late = new URL(env.config.databaseUrl);
    late.port = String(port);
    const lines: string[] = [];
    const opened = new Promise<void>((resolve) => setTimeout(() => proxy.listen(port, '127.0.0.1', () => resolve()), 800));
    try {
      await waitForDatabase(late.toString(), { intervalMs: 100, timeoutMs: 20_000, log: (line) => lines.push(line) });
      await opened;
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/unreachable/);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
    const unknown = new URL(env.config.databaseUrl);
    unknown.pathname = '/no_such_database_here';
    await expect(waitForDatabase(unknown.toString(), { timeoutMs: 20_000 })).rejects.toMatchObject({ code: '3D000' });
    const closed = new URL(env.config.databaseUrl);
    closed.port = String(port);
    await expect(waitForDatabase(closed.toString(), { intervalMs: 100, timeoutMs: 500 })).rejects.toThrow(/still unreachable after/);
  });
});

describe('an unhandled rejection of the worker (graphile-worker recording a failure while the database is away)', () => {
  it('is survived when the connection is lost; any other still ends the process', () => {
    const warnings: unknown[] = [];
    const handler = connectionLossRejectionHandler({ warn: ((...args: unknown[]) => warnings.push(args)) as never });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(() => handler(refused)).not.toThrow();
    expect(() => handler(Object.assign(new Error('terminating connection'), { code: '57P01' }))).not.toThrow();
    expect(warnings).toHaveLength(2);
    const bug = new TypeError('undefined is not a function');
    expect(() => handler(bug)).toThrow(bug);
  });
});

describe('a notification that cannot be written', () => {
  it('cancels the filing: no request, no audit line, no notification; without the fault it succeeds', async () => {
    const token = await env.login('chloe');
    await env.db.query(`
      create function public.fail_notification() returns trigger language plpgsql as $$
      begin raise exception 'notification refused (injected)'; end $$;
      create trigger zz_fail before insert on app_public.notifications
        for each row execute function public.fail_notification();`);
    const audit = await count('select count(*) as n from app_private.audit_log');
    try {
      const shift = await env.post('/api/shift-change-requests/', token, { date: '2026-12-10', reason: 'urgence', is_remote: true }, { uncheckedBecause: INJECTED });
      expect(shift.status).toBe(500);
      const absence = await env.post('/api/absences/', token, { employee: E().chloe, type: T.FOR, date_start: '2026-12-10', date_end: '2026-12-10' }, { uncheckedBecause: INJECTED });
      expect(absence.status).toBe(500);
      expect(await count('select count(*) as n from app_public.shift_change_requests where employee_id = $1', [E().chloe])).toBe(0);
      expect(await count('select count(*) as n from app_public.absences where employee_id = $1', [E().chloe])).toBe(0);
      expect(await count('select count(*) as n from app_private.audit_log')).toBe(audit);
    } finally {
      await env.db.query('drop trigger zz_fail on app_public.notifications; drop function public.fail_notification();');
    }
    const shift = await env.post('/api/shift-change-requests/', token, { date: '2026-12-10', reason: 'urgence', is_remote: true });
    expect(shift.status).toBe(201);
    expect(await count("select count(*) as n from app_public.notifications where title = 'Nouvelle demande de modification'")).toBeGreaterThan(0);
  });
});
