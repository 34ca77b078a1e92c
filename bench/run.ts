/**
 * `npm run bench`: measured speed of the service on a large generated organisation.
 *
 *   npm run bench                      default size: 2 000 employees in 20 establishments,
 *                                      100 000 absences, 20 000 day-change requests
 *   npm run bench -- --scale           10 000 employees in 100 establishments, 1 000 000 absences,
 *                                      100 000 day-change requests
 *   npm run bench -- --small           200 employees (a quick check of the harness itself)
 *   options: --reuse (keep the dataset database when it matches the schema and parameters: its name is
 *            a hash of migrations/, sql/, bench/dataset/ and the parameters, today's date included,
 *            so any change of sql/ generates a new one),
 *            --template <name> (use this existing wfm_bench_* database as the dataset, as it is: no
 *            generation, no check of its schema; e.g. a copy of the dataset, `createdb -T`, to which
 *            the changed sql/ files were applied, to measure a SQL change without generating again;
 *            the size options still say which parameters it was generated with),
 *            --duration <s> (10), --warmup <s> (2), --connections <n> (10),
 *            --only <key,key> (scenarios), --label <name> (results file; default or scale),
 *            --no-md (leave BENCHMARKS.md alone), --keep (keep the run database),
 *            --pool-size <n> (the service's DB_POOL_SIZE, 10),
 *            --node-options=<flags> (NODE_OPTIONS of the service; default below),
 *            --node-defaults (run the service with Node's and glibc's defaults: no runtime settings),
 *            --compiled (the service as `npm start` runs it: the build in dist/, made first when stale, in
 *            plain Node; by default it runs from the sources through tsx, as the bare server does),
 *            --transaction-paths (instead of the scenarios: absence creation and validation, or the
 *            --only ones, on the pipelined transaction path and on the round-trip one, two services
 *            on the same run database, back to back, three alternations; bench/results/transaction-paths.json).
 *   env: BENCH_DATABASE_URL (superuser URL of the cluster, default postgres://postgres@127.0.0.1:5432/postgres),
 *        BENCH_AUTH_DATABASE_URL (the wfm_authenticator login when trust auth is not available).
 *
 * Steps: the dataset (generated straight in SQL, kept as a template database), a copy of it
 * for this run, the service and a bare node:http server as child processes, each scenario
 * driven by autocannon from this process (warm-up, then measured), pgbench on the same SQL
 * functions, then bench/results/<label>.json and .md and the section of BENCHMARKS.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ROOT_DIR } from '../src/db/migrate.js';
import { ensureBuilt } from '../scripts/freshness.mjs';
import { cpuMs, memoryOf, startChild, rssMb, type Child } from './lib/children.js';
import { datasetParams, generateTemplate, type DatasetBuild, type DatasetParams } from './lib/dataset.js';
import {
  authDatabaseUrl, createDatabase, databaseExists, databaseSize, databaseUrl, dropDatabase, dropOrphanRuns,
  templateName, withClient,
} from './lib/db.js';
import { runExport } from './lib/export.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { absenceCreateVariables, pgbenchVersion, runPgbench } from './lib/pgbench.js';
import { checkedLabel, describeMachine, writeReport, type BenchReport, type ScenarioResult } from './lib/report.js';
import { SCENARIOS, slotsAfterWrites, type BenchContext, type Scenario } from './lib/scenarios.js';

const { values: args } = parseArgs({
  options: {
    scale: { type: 'boolean', default: false },
    small: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' },
    only: { type: 'string' },
    label: { type: 'string' },
    'no-md': { type: 'boolean', default: false },
    'node-options': { type: 'string' },
    'node-defaults': { type: 'boolean', default: false },
    compiled: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'transaction-paths': { type: 'boolean', default: false },
    template: { type: 'string' },
    'pool-size': { type: 'string', default: '10' },
  },
});
if (args.template !== undefined && !/^wfm_bench_[a-z0-9_]+$/.test(args.template)) throw new Error('--template: a wfm_bench_* database name is expected');

const duration = Number(args.duration);
const warmup = Number(args.warmup);
const connections = Number(args.connections);
for (const [name, value] of Object.entries({ duration, warmup, connections })) {
  if (!Number.isFinite(value) || value < 0 || (name !== 'warmup' && value <= 0)) throw new Error(`--${name}: a positive number is expected`);
}
const size = args.scale ? 'scale' : args.small ? 'small' : 'default';
const label = checkedLabel(args.label ?? size);
const only = args.only ? new Set(args.only.split(',').map((key) => key.trim())) : null;
if (only) {
  const unknown = [...only].filter((key) => !SCENARIOS.some((s) => s.key === key));
  if (unknown.length) throw new Error(`--only: unknown scenario ${unknown.join(', ')} (known: ${SCENARIOS.map((s) => s.key).join(', ')})`);
}

const params: DatasetParams = datasetParams(size);

const log = (line: string) => console.log(line);

/*
 * The runtime settings the service is measured with (BENCHMARKS.md, "Memory"): V8 keeps its
 * heap near what the service holds instead of letting garbage grow it to 300 MB and more, and
 * glibc returns the 19 MiB of each argon2 hash instead of keeping it in per-thread arenas.
 * --node-options= (empty) and MALLOC_* variables of the environment override them.
 */
const SERVICE_RUNTIME: Record<string, string> = {
  NODE_OPTIONS: '--max-old-space-size=160 --max-semi-space-size=8',
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
};
// The service's connection pool (DB_POOL_SIZE): how many PostgreSQL backends its requests share.
const POOL_SIZE = Number(args['pool-size']);
if (!Number.isInteger(POOL_SIZE) || POOL_SIZE < 1 || POOL_SIZE > 100) throw new Error('--pool-size: a whole number from 1 to 100 is expected');

async function main(): Promise<void> {
  const machinePg = await withClient(databaseUrl('postgres'), async (c) => (await c.query<{ v: string }>('select version() as v')).rows[0]!.v);
  const postgresVersion = /^PostgreSQL [\d.]+/.exec(machinePg)?.[0] ?? machinePg;
  const pgbench = await pgbenchVersion();
  log(`wfm bench (${label}): ${params.employees} employees, ${params.absences} absences, ${params.shiftChanges} day-change requests`);

  // 1. The dataset (template database).
  await dropOrphanRuns();
  // The comparison of transaction paths keeps a template of its own name: another run's clean-up
  // of stale templates of its size never drops it under this one.
  const template = args.template ?? (await templateName(args['transaction-paths'] ? `paths_${size}` : size, params));
  let build: DatasetBuild | null = null;
  if (args.template && !(await databaseExists(args.template))) throw new Error(`--template: no database ${args.template}`);
  const reused = Boolean(args.template) || (args.reuse && (await databaseExists(template)));
  if (args.template) {
    log(`dataset: the named database ${template} (--template: its schema is not checked)`);
  } else if (reused) {
    log(`dataset: reusing ${template}`);
  } else {
    build = await generateTemplate(template, params, args['transaction-paths'] ? `paths_${size}` : size, log);
  }
  const datasetSize = await databaseSize(template);

  // 2. This run's copy.
  const runDb = `wfm_bench_run_${process.pid}`;
  await dropDatabase(runDb);
  await createDatabase(runDb, template);
  const storageDir = await mkdtemp(path.join(tmpdir(), 'wfm-bench-storage-'));
  const db = new pg.Pool({ connectionString: databaseUrl(runDb), max: 2, application_name: 'wfm-bench' });
  db.on('error', () => {});
  const children: Child[] = [];
  try {
    const ctx = await loadContext(db);
    const jwtSecret = ctx.jwtSecret;
    const serviceEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl(runDb),
      AUTH_DATABASE_URL: authDatabaseUrl(runDb),
      JWT_SECRET: jwtSecret,
      LOG_LEVEL: 'warn',
      GRAPHQL: 'on',
      STORAGE_DIR: storageDir,
      PUBLIC_URL: 'http://localhost:8000',
      DB_POOL_SIZE: String(POOL_SIZE),
      ...(args['node-defaults'] ? {} : SERVICE_RUNTIME),
      ...(args['node-options'] !== undefined ? { NODE_OPTIONS: args['node-options'] } : {}),
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('MALLOC_'))),
      // One client hammers the API: the per-address and per-account limits would answer 429.
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000000',
      RATE_LIMIT_AUTHENTICATED_PER_MINUTE: '100000000',
    };
    if (args.compiled) await ensureBuilt('server', { log });
    const service = args.compiled
      ? await startChild('service', 'bench/server-compiled.mjs', serviceEnv, { loader: false })
      : await startChild('service', 'bench/server.ts', serviceEnv);
    children.push(service);
    const bare = await startChild('bare', 'bench/bare-server.ts', {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      AUTH_DATABASE_URL: authDatabaseUrl(runDb),
      DB_POOL_SIZE: String(POOL_SIZE),
    });
    children.push(bare);
    // The service may still be working after it is ready (PostGraphile builds its schema in the
    // background): the first phase's CPU per request counts only requests once it is idle.
    await untilIdle(service.pid);
    const rssStart = rssMb(service.pid);
    log(`service: ${service.url} (pid ${service.pid}, ${rssStart} MB); bare: ${bare.url}`);

    if (args['transaction-paths']) {
      const roundTrips = await startChild('service-round-trips', 'bench/server.ts', { ...serviceEnv, BENCH_TRANSACTION_PATH: 'round-trips' });
      children.push(roundTrips);
      await compareTransactionPaths(ctx, { pipelined: service, 'round-trips': roundTrips });
      return;
    }

    // 3. Scenarios, in order.
    const results: ScenarioResult[] = [];
    for (const scenario of SCENARIOS) {
      if (only && !only.has(scenario.key)) continue;
      const result = scenario.target === 'pgbench'
        ? await pgbenchPhase(scenario, ctx, runDb)
        : scenario.target === 'export'
        ? await exportPhase(scenario, ctx, service)
        : await httpPhase(scenario, ctx, scenario.target === 'bare' ? bare : service, service.pid);
      if (scenario.target !== 'bare' && scenario.target !== 'pgbench') result.memoryMb = (await memoryOf(service)) ?? undefined;
      results.push(result);
      const codes = Object.entries(result.statusCodes).map(([c, n]) => `${c}:${n}`).join(' ');
      log(`  ${scenario.key.padEnd(24)} ${String(result.rps).padStart(8)} req/s  p50 ${String(result.p50).padStart(7)} ms  ` +
        `p99 ${String(result.p99).padStart(7)} ms  errors ${result.errors}  ${codes}${result.rssPeakMb ? `  rss ${result.rssPeakMb} MB` : ''}` +
        `${result.memoryMb ? ` (heap ${result.memoryMb.heapUsed}/${result.memoryMb.heapTotal}, external ${result.memoryMb.external})` : ''}`);
    }
    const rssAfter = rssMb(service.pid);

    const report: BenchReport = {
      label,
      date: new Date().toISOString(),
      machine: describeMachine(postgresVersion, pgbench),
      params: { ...params },
      dataset: { database: template, reused, seconds: build?.seconds ?? null, steps: build?.steps ?? [], size: datasetSize },
      settings: { duration, warmup, connections, poolSize: POOL_SIZE,
        serviceRuntime: Object.fromEntries(Object.entries(serviceEnv).filter(([name]) => name === 'NODE_OPTIONS' || name.startsWith('MALLOC_'))) as Record<string, string> },
      scenarios: results,
      rss: {
        startMb: rssStart,
        peakMb: Math.max(...results.map((r) => r.rssPeakMb ?? 0), rssStart ?? 0, rssAfter ?? 0) || null,
        afterMb: rssAfter,
      },
      ratios: [],
      targets: [],
    };
    computeRatiosAndTargets(report);
    const written = await writeReport(report, !args['no-md']);
    log(`written: ${written.map((file) => path.relative(ROOT_DIR, file)).join(', ')}`);
    for (const r of report.ratios) log(`  ratio ${r.name}: ${r.value}`);
    for (const t of report.targets) log(`  target ${t.name}: ${t.value} (${t.limit}) ${t.ok === null ? '' : t.ok ? 'met' : 'NOT MET'}`);
  } finally {
    // Requests autocannon gave up on at the end of the last phase may still be running in the
    // service (a login hashing its password): let them finish before it stops.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const child of children) await child.stop();
    await db.end();
    await rm(storageDir, { recursive: true, force: true });
    if (!args.keep) await dropDatabase(runDb);
  }
}

/**
 * The pipelined transaction path (prelude, call and commit in one write, src/db/transaction.ts
 * runRequestCall) against the round-trip path (a service whose connections are not pipelined:
 * runRequestCall falls back to withRequestTransaction, three round trips), on the same run
 * database and with the same clients: per scenario, three rounds, the first path alternating.
 */
async function compareTransactionPaths(ctx: BenchContext, services: Record<'pipelined' | 'round-trips', Child>): Promise<void> {
  const keys = only ? [...only] : ['absence_create', 'absence_validate'];
  const rows: Array<{ scenario: string; path: string; round: number; rps: number; p50: number | null; p99: number | null;
    errors: number; statusCodes: Record<string, number>; load: string }> = [];
  const load = async () => (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
  for (const key of keys) {
    const scenario = SCENARIOS.find((s) => s.key === key && s.target === 'api');
    if (!scenario) throw new Error(`--transaction-paths: ${key} is not an API scenario`);
    for (let round = 1; round <= 3; round++) {
      const order = round % 2 === 1 ? (['pipelined', 'round-trips'] as const) : (['round-trips', 'pipelined'] as const);
      for (const name of order) {
        const result = await httpPhase(scenario, ctx, services[name], services[name].pid);
        const row = { scenario: key, path: name, round, rps: result.rps, p50: result.p50, p99: result.p99, errors: result.errors,
          statusCodes: result.statusCodes, load: await load() };
        rows.push(row);
        log(`  ${key.padEnd(18)} round ${round} ${name.padEnd(11)} ${String(row.rps).padStart(8)} req/s  p50 ${String(row.p50).padStart(6)} ms  ` +
          `p99 ${String(row.p99).padStart(6)} ms  errors ${row.errors}  ${Object.entries(row.statusCodes).map(([c, n]) => `${c}:${n}`).join(' ')}  load ${row.load}`);
      }
    }
    const mean = (name: string) => {
      const mine = rows.filter((r) => r.scenario === key && r.path === name);
      return mine.reduce((sum, r) => sum + r.rps, 0) / mine.length;
    };
    log(`  ${key}: pipelined / round trips = ${(mean('pipelined') / mean('round-trips')).toFixed(3)} (mean req/s of three rounds)`);
  }
  const file = path.join(ROOT_DIR, 'bench/results/transaction-paths.json');
  await writeFile(file, `${JSON.stringify({ date: new Date().toISOString(), params, duration, warmup, connections, rows }, null, 2)}\n`);
  log(`written: ${path.relative(ROOT_DIR, file)}`);
}

/**
 * Waits (90 s at most) until a process uses at most 2 % of a core in each of four half-seconds in
 * a row (on a loaded machine a busy process still gets 10 % or more).
 */
async function untilIdle(pid: number): Promise<void> {
  let quiet = 0;
  for (let i = 0; i < 180 && quiet < 4; i++) {
    const before = cpuMs(pid);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = cpuMs(pid);
    if (before === null || after === null) return;
    quiet = after - before <= 10 ? quiet + 1 : 0;
  }
}

async function loadContext(db: pg.Pool): Promise<BenchContext> {
  const one = async <T extends pg.QueryResultRow>(sql: string) => (await db.query<T>(sql)).rows[0]!;
  const windows = await one<{ today: string; writes_from: string; planning_from: string; planning_to: string }>(
    'select today::text, writes_from::text, planning_from::text, planning_to::text from bench.windows',
  );
  const { rows: employees } = await db.query<BenchContext['employees'][number]>(
    'select idx, id, account_id, username, establishment_idx from bench.employees order by idx',
  );
  const admin = await one<{ account_id: number; employee_id: number }>("select account_id, employee_id from bench.actors where role = 'Admin'");
  const rh1 = await one<{ account_id: number }>("select account_id from bench.actors where role = 'RH n1' order by account_id limit 1");
  const managerN2 = await one<{ account_id: number; perimeter: number }>(
    `select a.account_id, (select count(*)::int from app_hidden.perimeter_employee_ids('absences.view_absence_queue', a.account_id)) as perimeter
     from bench.actors a where a.role = 'Manager n2' order by a.establishment_idx limit 1`,
  );
  const { rows: managers } = await db.query<{ establishment_idx: number; account_id: number }>(
    'select establishment_idx, account_id from bench.deciders where local_idx = 0',
  );
  const cp = await one<{ id: number }>("select id from app_public.absence_types where code = 'CP'");
  const { rows: days } = await db.query<{ day: string }>('select day::text from bench.write_days order by n');
  return {
    db,
    jwtSecret: randomBytes(32).toString('hex'),
    today: windows.today,
    windows,
    employees,
    admin,
    rh1,
    managerN2,
    managersN1: new Map(managers.map((m) => [m.establishment_idx, m.account_id])),
    cpTypeId: cp.id,
    writeDays: days.map((d) => d.day),
    absenceSlot: 0,
    shiftSlot: 0,
  };
}

/**
 * Requests still in flight when autocannon stops keep running in the service: wait until
 * its connections are idle, so that the next phase reads the database as they left it.
 */
async function waitIdle(ctx: BenchContext): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const { rows } = await ctx.db.query<{ busy: number }>(
      `select count(*)::int as busy from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle'
         and application_name in ('wfm-service', 'wfm-bench-bare', 'wfm-bench-pgbench')`,
    );
    if (rows[0]!.busy === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** After writers: the next slot starts a fresh weekday of the writes window. */
async function advanceSlots(ctx: BenchContext): Promise<void> {
  await waitIdle(ctx);
  const next = await slotsAfterWrites(ctx.db, ctx.employees.length);
  ctx.absenceSlot = Math.max(ctx.absenceSlot, next.absences);
  ctx.shiftSlot = Math.max(ctx.shiftSlot, next.shifts);
}

async function httpPhase(scenario: Scenario, ctx: BenchContext, server: Child, servicePid: number): Promise<ScenarioResult> {
  const conns = scenario.connections ?? connections;
  const url = server.url;
  if (warmup > 0) {
    const w = await scenario.prepare!(ctx);
    await runLoad({ url, connections: conns, duration: warmup, next: w.next, ...(w.supply !== undefined ? { supply: w.supply } : {}) });
    await advanceSlots(ctx);
  }
  const phase = await scenario.prepare!(ctx);
  const result = await runLoad({
    url,
    connections: conns,
    duration,
    next: phase.next,
    pid: servicePid,
    cpuPid: server.pid,
    ...(phase.supply !== undefined ? { supply: phase.supply } : {}),
  });
  await advanceSlots(ctx);
  return { key: scenario.key, label: scenario.label, target: scenario.target, goal: scenario.goal, connections: conns,
    ...(phase.note ? { note: phase.note } : {}), ...result };
}

/** Whole exports, one download at a time (3 measured after one unmeasured). */
async function exportPhase(scenario: Scenario, ctx: BenchContext, service: Child): Promise<ScenarioResult> {
  const phase = await scenario.prepare!(ctx);
  const result = await runExport({ url: service.url, request: phase.next()!, runs: 3, pid: service.pid });
  return { key: scenario.key, label: scenario.label, target: scenario.target, goal: scenario.goal, connections: 1,
    ...result, note: `${phase.note}; ${result.note}` };
}

async function pgbenchPhase(scenario: Scenario, ctx: BenchContext, runDb: string): Promise<ScenarioResult> {
  const conns = scenario.connections ?? connections;
  const url = authDatabaseUrl(runDb);
  const run = async (seconds: number): Promise<LoadResult> => {
    if (scenario.key === 'pgbench_me') {
      return runPgbench({ url, script: 'me.sql', connections: conns, duration: seconds, variables: { acc: ctx.admin.account_id } });
    }
    const first = ctx.employees[0]!;
    const floor = scenario.key === 'pgbench_absence_floor';
    const result = await runPgbench({
      // The floor writes as the owner (no role switch, no row-level security).
      url: floor ? databaseUrl(runDb) : url,
      script: floor ? 'absence_create_floor.sql' : 'absence_create.sql',
      connections: conns,
      duration: seconds,
      variables: absenceCreateVariables({ employees: ctx.employees.length, firstAccount: first.account_id, firstEmployee: first.id,
        cpTypeId: ctx.cpTypeId, writeDays: ctx.writeDays }, ctx.absenceSlot, conns),
    });
    await advanceSlots(ctx);
    if (result.errors) log(result.output.split('\n').filter((line) => /error|abort/i.test(line)).slice(0, 5).join('\n'));
    return result;
  };
  if (warmup > 0) await run(Math.max(1, Math.round(warmup)));
  const result = await run(duration);
  return { key: scenario.key, label: scenario.label, target: scenario.target, goal: scenario.goal, connections: conns, ...result };
}

function computeRatiosAndTargets(report: BenchReport): void {
  const by = (key: string) => report.scenarios.find((s) => s.key === key);
  const ratio = (a?: ScenarioResult, b?: ScenarioResult) => (a && b && b.rps > 0 ? Math.round((a.rps / b.rps) * 100) / 100 : null);
  report.ratios.push(
    { name: 'authenticated read (GET /api/auth/me/) / bare node:http + pg', value: ratio(by('me'), by('bare_me')), target: 0.5 },
    { name: 'absence creation (POST /api/absences/) / pgbench of app_public.absence_create', value: ratio(by('absence_create'), by('pgbench_absence_create')), target: 0.35 },
    { name: 'pgbench of app_public.absence_create / floor (the same rows without rules)', value: ratio(by('pgbench_absence_create'), by('pgbench_absence_floor')) },
    { name: 'absence creation (POST /api/absences/) / floor', value: ratio(by('absence_create'), by('pgbench_absence_floor')) },
    { name: 'GraphQL { me } / REST GET /api/auth/me/', value: ratio(by('graphql_me'), by('me')) },
    { name: 'bare node:http + pg / pgbench of app_public.me()', value: ratio(by('bare_me'), by('pgbench_me')) },
    // What the rules cost against what Express and the rate-limit write cost by themselves: the
    // ceiling of the first ratio for a service under Express that counts each request.
    { name: 'bare + the rate-limit hit / bare node:http + pg', value: ratio(by('bare_me_hit'), by('bare_me')) },
    { name: 'Express with one route + the rate-limit hit / bare node:http + pg', value: ratio(by('bare_express_me_hit'), by('bare_me')) },
    { name: 'authenticated read (GET /api/auth/me/) / Express with one route + the rate-limit hit',
      value: ratio(by('me'), by('bare_express_me_hit')) },
    { name: 'team month: compact grid (GET /api/planning/grid/) / full read (GET /api/planning/), 10 connections',
      value: ratio(by('planning_grid_c10'), by('planning_c10')) },
  );
  const grid = by('planning_grid_c10');
  if (grid) {
    report.targets.push({ name: 'team month, compact grid, 200 employees, 10 connections: req/s', value: grid.rps, limit: '≥ 60',
      ok: grid.rps >= 60 });
  }

  // The same read's fixed cost in each server's own process: CPU per request, bare / service.
  const me = by('me')?.cpuMsPerRequest;
  const bareMe = by('bare_me')?.cpuMsPerRequest;
  report.ratios.push({ name: 'server CPU per request, bare node:http + pg / GET /api/auth/me/',
    value: me && bareMe ? Math.round((bareMe / me) * 100) / 100 : null });
  const planning = by('planning');
  report.targets.push({ name: 'planning month, 200 employees: p50', value: planning?.p50 ?? null, limit: '≤ 150 ms',
    ok: planning?.p50 == null ? null : planning.p50 <= 150 });
  for (const s of report.scenarios.filter((x) => x.goal === 'interactive')) {
    report.targets.push({ name: `${s.label}: p99`, value: s.p99, limit: '≤ 100 ms', ok: s.p99 === null ? null : s.p99 <= 100 });
  }
  for (const r of report.ratios.filter((x) => x.target !== undefined)) {
    report.targets.push({ name: r.name, value: r.value, limit: `≥ ${r.target}`, ok: r.value === null ? null : r.value >= r.target! });
  }
  report.targets.push({ name: 'server RSS (peak)', value: report.rss.peakMb, limit: '≤ 250 MB',
    ok: report.rss.peakMb === null ? null : report.rss.peakMb <= 250 });
  const errors = report.scenarios.reduce((sum, s) => sum + s.errors, 0);
  report.targets.push({ name: 'errors (non-2xx, connection errors, failed transactions)', value: errors, limit: '0', ok: errors === 0 });
}

await main();
