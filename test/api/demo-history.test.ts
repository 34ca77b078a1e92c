/**
 * The demo's year of history (issue 27 point 6, src/org/demo-history.ts): loaded with the
 * demo organisation in one transaction, through the API's SQL functions as the right
 * accounts, at the right moments. Checked over HTTP as every demo login: queues to decide,
 * a cancellation to decide, notifications read and unread, past absences granted and
 * refused, documents that download, counters with their journal, on-call weekends, and
 * audit lines written by the functions. Also: the plan is deterministic and chronological,
 * a load that fails midway leaves nothing behind (the next start loads again), and the
 * plan holds on another date (the last days of a year, whose requests ahead fall in a
 * year without counters yet).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planDemoHistory, type DemoLoadOutcome } from '../../src/org/demo-history.js';
import { FileStorage } from '../../src/storage/storage.js';
import { DEMO_TEST_PASSWORD, loadDemoInto, migratedDatabase, recordIds, type TestDatabase } from '../helpers/demo.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { databaseUrl } from '../helpers/settings.js';

const NOW = '2026-11-16T10:00:00+01:00'; // a Monday
const TODAY = '2026-11-16';
const LATE_DECEMBER = '2026-12-29T09:30:00+01:00';

const cleanups: Array<() => Promise<unknown>> = [];
let env: TestEnv;
let loaded: DemoLoadOutcome;
let storageDir: string;
let empty: TestDatabase;
let lateDecember: TestDatabase;

const count = async (database: string, sql: string) => {
  const client = new pg.Client({ connectionString: databaseUrl(database) });
  await client.connect();
  try {
    return (await client.query<{ n: number }>(`select (${sql})::int as n`)).rows[0]!.n;
  } finally {
    await client.end();
  }
};

beforeAll(async () => {
  storageDir = await mkdtemp(path.join(tmpdir(), 'wfm-demo-history-'));
  cleanups.push(() => rm(storageDir, { recursive: true, force: true }));
  // One migrated empty database, copied for the second date before anything is loaded.
  empty = await migratedDatabase();
  cleanups.push(empty.drop);
  lateDecember = await migratedDatabase(empty.name);
  cleanups.push(lateDecember.drop);

  // A load whose storage fails at the first document: nothing of the demo stays.
  const blocker = path.join(storageDir, 'not-a-directory');
  await writeFile(blocker, 'x');
  await expect(loadDemoInto(empty.name, NOW, new FileStorage(path.join(blocker, 'storage')))).rejects.toThrow(/demo history, step \d+ \(absence by /);
  expect(await count(empty.name, 'select count(*) from app_public.establishments')).toBe(0);
  expect(await count(empty.name, 'select count(*) from app_public.accounts')).toBe(0);

  loaded = await loadDemoInto(empty.name, NOW, new FileStorage(path.join(storageDir, 'storage')));
  await recordIds(empty.name, loaded.ids);
  env = await startTestEnv({ template: empty.name, now: NOW, configOverrides: { storageDir: path.join(storageDir, 'storage') } });
  cleanups.push(() => env.close());
}, 300_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

const PASSWORD = DEMO_TEST_PASSWORD;
const token = (username: string) => env.login(username, PASSWORD);
const list = async (username: string, route: string) => {
  const response = await env.get(route, await token(username));
  expect(response.status, `${username} ${route}: ${response.text}`).toBe(200);
  return response.body as { count: number; results: Array<Record<string, any>> };
};
const employeeOf = (key: string) => loaded.ids.employees![key]!;

describe('the demo history plan', () => {
  const options = { today: TODAY, timeZone: 'Europe/Paris', holidays: new Set(['2026-12-25', '2027-01-01']), openYears: new Set([2025, 2026]) };

  it('is deterministic, chronological, and makes every kind of step', () => {
    const plan = planDemoHistory(options);
    expect(planDemoHistory(options)).toEqual(plan);
    const instants = plan.map((step) => Date.parse(step.at));
    expect(instants).toEqual([...instants].sort((a, b) => a - b));
    const kinds = new Set(plan.map((step) => step.step.kind));
    expect([...kinds].sort()).toEqual([
      'absence', 'absence-refuse', 'absence-request-cancellation', 'absence-validate', 'counter-adjust', 'on-call',
      'read-notifications', 'shift-change', 'shift-change-refuse', 'shift-change-validate', 'worker-job',
    ]);
    // About a year: from some eleven months back to a few weeks ahead of today.
    const first = plan[0]!.at.slice(0, 10);
    expect(first < '2026-01-01' && first >= '2025-11-01', first).toBe(true);
    // A different date moves the plan.
    expect(planDemoHistory({ ...options, today: '2026-11-17' })).not.toEqual(plan);
  });

  it('opens next year where the database can: by the job from 1 October, on demand before', () => {
    const nextYear = new Map([['salarie', new Set(['CP'])]]);
    const autumn = planDemoHistory({ ...options, today: '2026-12-29', nextYear });
    expect(autumn.filter((s) => s.step.kind === 'worker-job' && s.step.job === 'open_next_year_counters').map((s) => s.at.slice(0, 10)))
      .toEqual(['2026-10-01', '2026-12-29']);
    // salarie files CP in next year; the others, whose counters it does not open, no counter reason there.
    const next = autumn.filter((s) => s.step.kind === 'absence' && s.step.end >= '2027-01-01').map((s) => s.step as { employee: string; type: string });
    expect(next.some((step) => step.employee === 'salarie' && step.type === 'CP')).toBe(true);
    expect(next.filter((step) => step.employee !== 'salarie').every((step) => step.type === 'FOR' || step.type === 'MAL')).toBe(true);
    const summer = planDemoHistory({ ...options, today: '2026-07-14', nextYear });
    expect(summer.filter((s) => s.step.kind === 'open-next-year').map((s) => [s.actor, s.at.slice(0, 10)])).toEqual([['admin', '2026-07-08']]);
    expect(planDemoHistory(options).some((s) => s.step.kind === 'open-next-year'
      || (s.step.kind === 'worker-job' && s.step.job === 'open_next_year_counters'))).toBe(false);
  });

  it('never files a counter reason in a year whose counters are not open', () => {
    const plan = planDemoHistory({ ...options, today: '2026-12-29', openYears: new Set([2025, 2026]) });
    for (const { step } of plan) {
      if (step.kind !== 'absence' || step.end < '2027-01-01') continue;
      expect(['CP', 'CT', 'RTT', 'ANC'], `${step.employee} ${step.start}`).not.toContain(step.type);
    }
  });
});

describe('the demo loaded with its history', () => {
  it('a load that fails midway left nothing: the loaded demo is the only one', async () => {
    expect(await count(empty.name, 'select count(*) from app_public.establishments')).toBe(3);
    expect(await count(empty.name, "select count(*) from app_public.accounts where username = 'salarie'")).toBe(1);
  });

  it('replayed its steps: absences, day-change requests, documents, read notifications', () => {
    expect(loaded.history).not.toBeNull();
    const history = loaded.history!;
    expect(history.absences).toBeGreaterThan(100);
    expect(history.shiftChanges).toBeGreaterThan(20);
    expect(history.documents).toBeGreaterThan(3);
    expect(history.notificationsRead).toBeGreaterThan(50);
  });

  it('gives every manager and HR level requests to decide, and DA requests to read', async () => {
    // Each decider sees pending absences of somebody else that it may decide.
    for (const username of ['manager1', 'manager2', 'rh1', 'rh2', 'admin']) {
      const me = (await env.get('/api/auth/me/', await token(username))).body;
      expect(me.can_decide_absences, username).toBe(true);
      const pending = await list(username, '/api/absences/?status=pending&page_size=200');
      const others = pending.results.filter((absence) => absence.employee !== me.employee_id);
      expect(others.length, username).toBeGreaterThan(0);
    }
    const da = await list('da', '/api/absences/?status=pending');
    expect(da.count).toBeGreaterThan(0);
    // manager2's own request waits for HR: rh2 (the IME) sees it.
    const rh2 = await list('rh2', '/api/absences/?status=pending&page_size=200');
    expect(rh2.results.map((absence) => absence.employee)).toContain(employeeOf('manager2'));
    // manager1's own request waits for HR n1 or the admin.
    const rh1 = await list('rh1', '/api/absences/?status=pending&page_size=200');
    expect(rh1.results.map((absence) => absence.employee)).toContain(employeeOf('manager1'));
    // Day-change requests pending in the foyer, the IME and the ESAT.
    for (const username of ['manager1', 'manager2', 'rh1']) {
      const requests = await list(username, '/api/shift-change-requests/?status=pending');
      expect(requests.count, username).toBeGreaterThan(0);
    }
  });

  it('has a cancellation requested in the foyer and one in the IME, to decide', async () => {
    const foyer = await list('manager1', '/api/absences/?status=cancellation_requested');
    expect(foyer.results.map((absence) => absence.employee)).toContain(employeeOf('salarie'));
    const ime = await list('rh2', '/api/absences/?status=cancellation_requested');
    expect(ime.count).toBeGreaterThan(0);
    // And past cancellations: one granted.
    const cancelled = await list('rh1', '/api/absences/?status=cancelled');
    expect(cancelled.count).toBeGreaterThan(0);
  });

  it('shows the employee a past year: granted and refused absences, a day-change, counters drawn on', async () => {
    const mine = await list('salarie', '/api/absences/?page_size=200');
    const past = mine.results.filter((absence) => absence.date_end < TODAY);
    expect(past.filter((absence) => absence.status === 'validated').length).toBeGreaterThan(2);
    expect(mine.results.some((absence) => absence.status === 'refused')).toBe(true);
    expect(mine.results.some((absence) => absence.status === 'pending')).toBe(true);
    expect(past.some((absence) => absence.date_start < '2026-01-01')).toBe(true);
    const requests = await list('salarie', '/api/shift-change-requests/');
    expect(new Set(requests.results.map((request) => request.status))).toEqual(new Set(['validated', 'pending']));
    const counters = (await env.get(`/api/counters/?year=2026`, await token('salarie'))).body;
    expect(Number(counters.CP.taken)).toBeGreaterThan(0);
    expect(Number(counters.CP.planned)).toBeGreaterThan(0);
    const lastYear = (await env.get(`/api/counters/?year=2025`, await token('salarie'))).body;
    expect(Number(lastYear.CP.taken)).toBeGreaterThan(0);
    // The journal: HR's adjustment, last year's balance carried over on 1 January by the worker's
    // year end, the carried days not taken expired after their deadline (issue 27 point 4).
    const journal = async (year: number) => (await env.db.query<{ kind: string; quantity: string; day: string }>(
      `select m.kind, m.quantity::text, to_char(m.created_at at time zone 'Europe/Paris', 'YYYY-MM-DD') as day
       from app_private.counter_movements m join app_public.counters c on c.id = m.counter_id
       where c.employee_id = $1 and c.code = 'CP' and c.year = $2 order by m.id`, [employeeOf('salarie'), year])).rows;
    const thisYear = await journal(2026);
    expect(thisYear).toContainEqual({ kind: 'adjustment', quantity: '2.00', day: '2026-09-17' });
    expect(thisYear.find((m) => m.kind === 'carry_over')?.day).toBe('2026-01-01');
    expect(thisYear.some((m) => m.kind === 'expiry')).toBe(true);
    // Next year's counters, opened by the worker from 1 October, acquired month by month since.
    const nextYear = await journal(2027);
    expect(nextYear.length).toBeGreaterThan(3);
    expect(nextYear.every((m) => m.kind === 'acquisition' && m.day >= '2026-10-01')).toBe(true);
    const next = (await env.get(`/api/counters/?year=2027`, await token('salarie'))).body;
    expect(Number(next.CP.acquired)).toBeGreaterThan(0);
  });

  it('has notifications read and unread for the demo logins', async () => {
    for (const username of ['salarie', 'manager1', 'manager2', 'rh2', 'da', 'paie', 'interimaire']) {
      const unread = await list(username, '/api/notifications/?unread=true');
      const read = await list(username, '/api/notifications/?unread=false');
      expect(unread.count, `${username} unread`).toBeGreaterThan(0);
      if (username !== 'interimaire') expect(read.count, `${username} read`).toBeGreaterThan(0);
    }
    const titles = (await list('salarie', '/api/notifications/')).results.map((n) => n.title);
    expect(titles).toContain('Demande d\'absence validée');
    expect(titles).toContain('Demande d\'absence refusée');
  });

  it('sent the e-mails of its notifications at their time: nothing is left for the worker at start', async () => {
    expect(await count(empty.name, "select count(*) from app_public.notifications where email = 'immediate' and emailed_at is null")).toBe(0);
    expect(await count(empty.name, "select count(*) from app_private.email_outbox where kind = 'notification'")).toBeGreaterThan(100);
    expect(await count(empty.name, "select count(*) from app_private.email_outbox where kind = 'notification' and sent_at is null")).toBe(0);
    // Each one composed and delivered seconds after its notification.
    expect(await count(empty.name, `select count(*) from app_public.notifications n
      where n.emailed_at is not null and n.emailed_at not between n.created_at and n.created_at + interval '1 minute'`)).toBe(0);
  });

  it('keeps documents that their readers download', async () => {
    const sick = await list('rh1', '/api/absences/?page_size=200&status=validated');
    const withDocuments = sick.results.filter((absence) => absence.documents.length > 0);
    expect(withDocuments.length).toBeGreaterThan(2);
    const kinds = new Set<string>();
    for (const absence of withDocuments) {
      for (const document of absence.documents) {
        const file = await env.get(`/api/absence-documents/${document.id}/file/`, await token('rh1'));
        expect(file.status, document.filename).toBe(200);
        kinds.add(file.headers.get('content-type') ?? '');
        const head = file.bytes.subarray(0, 5).toString('latin1');
        expect(['%PDF-', '\x89PNG\r']).toContain(head);
      }
    }
    expect(kinds).toEqual(new Set(['application/pdf', 'image/png']));
  });

  it('lists on-call weekends past and ahead', async () => {
    const periods = await list('rh1', '/api/on-call-periods/?page_size=200');
    expect(periods.count).toBeGreaterThanOrEqual(10);
    const ends = periods.results.map((period) => String(period.end_at));
    expect(ends.some((end) => end.slice(0, 10) < TODAY)).toBe(true);
    expect(ends.some((end) => end.slice(0, 10) > TODAY)).toBe(true);
  });

  it('wrote the audit log through the functions, as the accounts that acted, at the time they acted', async () => {
    const validations = await list('rh1', '/api/audit-log/?actor=manager1&verb=Validation&model=absence');
    expect(validations.count).toBeGreaterThan(5);
    const refusals = await list('rh1', '/api/audit-log/?verb=Refus&model=absence');
    expect(refusals.count).toBeGreaterThan(3);
    const filings = await list('rh1', '/api/audit-log/?actor=salarie&verb=Creation&model=absence');
    expect(filings.count).toBeGreaterThan(3);
    const times = filings.results.map((line) => String(line.at));
    expect(times.some((at) => at < '2026-06-01')).toBe(true);
    // Every absence has its creation line; the counter journal holds the movements of the absences.
    expect(await count(empty.name, `select count(*) from app_public.absences a where not exists (
      select 1 from app_private.audit_log l where l.model = 'absence' and l.target_id = a.id and l.verb = 'Creation')`)).toBe(0);
    expect(await count(empty.name, "select count(distinct counter_id) from app_private.counter_movements where kind <> 'grant'")).toBeGreaterThan(40);
  });

  it('holds on another date: the last days of a year', async () => {
    const other = await loadDemoInto(lateDecember.name, LATE_DECEMBER, new FileStorage(path.join(storageDir, 'storage-december')));
    expect(other.history!.absences).toBeGreaterThan(100);
    expect(await count(lateDecember.name, "select count(*) from app_public.absences where status = 'pending'")).toBeGreaterThan(5);
  }, 120_000);
});
