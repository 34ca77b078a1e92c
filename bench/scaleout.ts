/**
 * `npm run bench:scaleout`: throughput past one process (issue 15 part 2), on the test
 * fixture organisation (15 accounts; a copy of the test template database per run):
 * 1 vs 2 server processes (src/cli/server-processes.ts, node:cluster on one port, as
 * `npm start` with WEB_CONCURRENCY runs them) × direct vs through PgBouncer in transaction
 * pooling mode (Debian's pgbouncer, test/helpers/pgbouncer.ts), on a simple read
 * (GET /api/auth/me/) and a creation (POST /api/absences/, 1 day of sick leave on distinct
 * employee-days). Rate limits are raised (one client hammers the API; every request still
 * counts its hit in PostgreSQL).
 *   options: --duration <s> (10), --warmup <s> (2), --connections <n> (20)
 * Prints a Markdown table for BENCHMARKS.md ("Past one process").
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ROLES } from '../src/db/roles.js';
import { startServerProcesses } from '../src/cli/server-processes.js';
import { startPgBouncer } from '../test/helpers/pgbouncer.js';
import { databaseUrl, FIXTURE_PASSWORD } from '../test/helpers/settings.js';
import { cloneTemplate, ensureTemplate } from '../test/helpers/template.js';
import { runLoad, type LoadResult, type RequestSpec } from './lib/load.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '20' },
  },
});
const duration = Number(args.duration);
const warmup = Number(args.warmup);
const connections = Number(args.connections);

interface Row {
  processes: number;
  via: 'direct' | 'PgBouncer';
  scenario: string;
  result: LoadResult;
}

/** Weekdays from 2027-01-04 on: the creation's distinct days. */
function weekdays(count: number): string[] {
  const days: string[] = [];
  for (let t = Date.parse('2027-01-04T12:00:00Z'); days.length < count; t += 86_400_000) {
    const day = new Date(t);
    if (day.getUTCDay() !== 0 && day.getUTCDay() !== 6) days.push(day.toISOString().slice(0, 10));
  }
  return days;
}

async function measure(processes: number, via: Row['via'], template: string): Promise<Row[]> {
  const database = await cloneTemplate(template, 'wfm_bench_scaleout');
  const storageDir = await mkdtemp(path.join(tmpdir(), 'wfm-bench-storage-'));
  const bouncer = via === 'PgBouncer' ? await startPgBouncer({ poolSize: 20 }) : null;
  const db = new pg.Pool({ connectionString: databaseUrl(database.name), max: 2 });
  const authUrl = databaseUrl(database.name, ROLES.authenticator);
  const group = await startServerProcesses(processes, {
    ...process.env,
    DATABASE_URL: databaseUrl(database.name),
    AUTH_DATABASE_URL: bouncer ? bouncer.route(authUrl) : authUrl,
    JWT_SECRET: randomBytes(32).toString('hex'),
    STORAGE_DIR: storageDir,
    PORT: '18473',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000000',
    RATE_LIMIT_AUTHENTICATED_PER_MINUTE: '100000000',
    RATE_LIMIT_LOGIN_PER_USERNAME_PER_HOUR: '100000000',
    RATE_LIMIT_LOGIN_FAILURES_PER_ADDRESS: '100000000',
  }, (line) => console.error(line));
  const rows: Row[] = [];
  try {
    const { rows: employees } = await db.query<{ username: string; employee_id: number }>(
      'select username, employee_id from app_public.accounts where employee_id is not null and is_active order by id');
    const tokens = new Map<string, string>();
    for (const { username } of employees) {
      const response = await fetch(`${group.url}/api/auth/token/`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password: FIXTURE_PASSWORD }),
      });
      tokens.set(username, ((await response.json()) as { access: string }).access);
    }
    const mal = (await db.query<{ id: number }>("select id from app_public.absence_types where code = 'MAL'")).rows[0]!.id;
    let i = 0;
    const read = (): RequestSpec => ({ method: 'GET', path: '/api/auth/me/', token: tokens.get(employees[i++ % employees.length]!.username) });
    const slots = weekdays(400).flatMap((day) => employees.map((e) => ({ day, e })));
    let s = 0;
    const create = (): RequestSpec | null => {
      const slot = slots[s++];
      if (!slot) return null;
      return { method: 'POST', path: '/api/absences/', token: tokens.get(slot.e.username),
        body: { employee: slot.e.employee_id, type: mal, date_start: slot.day, date_end: slot.day } };
    };
    for (const [scenario, next, supply] of [['GET /api/auth/me/', read, undefined], ['POST /api/absences/', create, slots.length]] as const) {
      await runLoad({ url: group.url, connections, duration: warmup, next });
      const result = await runLoad({ url: group.url, connections, duration, next, ...(supply ? { supply: supply - s } : {}) });
      rows.push({ processes, via, scenario, result });
      console.error(`${processes} process(es), ${via}, ${scenario}: ${result.rps} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ` +
        `errors ${result.errors} ${JSON.stringify(result.statusCodes)}`);
    }
  } finally {
    await group.stop();
    await db.end();
    await bouncer?.stop();
    await database.drop();
    await rm(storageDir, { recursive: true, force: true });
  }
  return rows;
}

const template = await ensureTemplate();
const rows: Row[] = [];
const load = loadavg()[0]!.toFixed(1);
for (const [processes, via] of [[1, 'direct'], [2, 'direct'], [1, 'PgBouncer'], [2, 'PgBouncer']] as const) {
  rows.push(...(await measure(processes, via, template)));
}
console.log(`\n${cpus().length} CPU(s), load average ${load} at the start; ${connections} connections, ${duration} s per scenario after ${warmup} s of warm-up.\n`);
console.log('| Processes | Database | Scenario | req/s | p50 ms | p99 ms | non-2xx |');
console.log('|---|---|---|---|---|---|---|');
for (const { processes, via, scenario, result } of rows) {
  console.log(`| ${processes} | ${via} | ${scenario} | ${result.rps} | ${result.p50} | ${result.p99} | ${result.errors} |`);
}
process.exit(0);
