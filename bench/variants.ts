/**
 * `npm run bench:variants -- --variants routing,answer`: the creation's pgbench transaction
 * (bench/pgbench/absence_create.sql) on copies of this checkout's dataset, one unchanged (the
 * baseline) and one per variant with its SQL applied (bench/variants/<name>.sql, or a path):
 * ablations that replace one part of the transaction by a constant, so that its gain is the most
 * any work on that part could give; or a candidate change measured before it is written into sql/.
 *
 *   npm run bench:variants -- --variants routing,answer,counters,audit
 *   options: --clients 10 --duration 6 --rounds 3 --script absence_create.sql --small
 *   --http: POST /api/absences/ through the service instead (`npm run bench -- --template <copy>
 *   --only absence_create`, 10 connections, its own 2 s warm-up): requests per second, no CPU figure
 *
 * Every copy gets a warm-up run, then each round runs them all, in an order that rotates from one
 * round to the next so that a drift of the machine favours none. Per run: pgbench's transactions per
 * second and the busy CPU of the whole machine per transaction (/proc/stat: PostgreSQL and pgbench;
 * on a shared machine it moves less than the throughput). The summary (bench/lib/variants.ts) goes
 * to stdout and bench/results/<label>.{json,md} (--label; variants or variants-http by default). The
 * copies are dropped at the end.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT_DIR } from '../src/db/migrate.js';
import { runBenchChild } from './lib/bench-child.js';
import { ensureTemplate, type DatasetSize } from './lib/dataset.js';
import { authDatabaseUrl, createDatabase, databaseUrl, dropDatabase, withClient } from './lib/db.js';
import { absenceCreateVariables, runPgbench, type AbsenceWrites } from './lib/pgbench.js';
import { checkedLabel, writeComparison } from './lib/report.js';
import { slotsAfterWrites } from './lib/scenarios.js';
import { cpuJiffies, summariseVariants, variantsTable, type VariantRun } from './lib/variants.js';

const { values: args } = parseArgs({
  options: {
    variants: { type: 'string', default: 'routing,answer,counters,audit' },
    clients: { type: 'string', default: '10' },
    duration: { type: 'string', default: '6' },
    rounds: { type: 'string', default: '3' },
    script: { type: 'string', default: 'absence_create.sql' },
    small: { type: 'boolean', default: false },
    http: { type: 'boolean', default: false },
    label: { type: 'string' },
  },
});
const BASELINE = 'baseline';
const variants = args.variants!.split(',').map((v) => v.trim()).filter(Boolean);
const clients = Number(args.clients);
const duration = Number(args.duration);
const rounds = Number(args.rounds);
const nameOf = (variant: string) => path.basename(variant, '.sql');
if (!variants.length || variants.some((v) => !/^[a-z0-9_]+$/.test(nameOf(v)) || nameOf(v) === BASELINE)) {
  throw new Error('--variants: names of bench/variants/*.sql or paths to .sql files (lower case, digits, underscores; not "baseline")');
}
if (!Number.isInteger(clients) || clients < 1 || clients > 100) throw new Error('--clients: a whole number from 1 to 100 is expected');
if (!Number.isFinite(duration) || duration <= 0) throw new Error('--duration: a positive number of seconds is expected');
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new Error('--rounds: a whole number from 1 to 20 is expected');
if (!/^[a-z0-9_]+\.sql$/.test(args.script!)) throw new Error('--script: a file of bench/pgbench/ is expected');
if (args.label !== undefined) checkedLabel(args.label);
const size: DatasetSize = args.small ? 'small' : 'default';
const log = (line: string) => console.log(line);

interface Copy {
  variant: string;
  database: string;
  /** The next free slot of the writes window (as bench/run.ts advances it). */
  slot: number;
  writes: AbsenceWrites;
}

const sqlFileOf = (variant: string) => (variant.endsWith('.sql') ? path.resolve(variant) : path.join(ROOT_DIR, 'bench/variants', `${variant}.sql`));

/** A copy of the dataset with the variant's SQL applied (none for the baseline) and what the creation script needs of it. */
async function makeCopy(template: string, variant: string): Promise<Copy> {
  const database = `wfm_bench_variant_${nameOf(variant)}`;
  await dropDatabase(database);
  await createDatabase(database, template);
  return withClient(databaseUrl(database), async (db) => {
    if (variant !== BASELINE) await db.query(await readFile(sqlFileOf(variant), 'utf8'));
    const { rows: [writes] } = await db.query<AbsenceWrites>(
      `select (select count(*)::int from bench.employees) as employees,
              (select account_id from bench.employees order by idx limit 1) as "firstAccount",
              (select id from bench.employees order by idx limit 1) as "firstEmployee",
              (select id from app_public.absence_types where code = 'CP') as "cpTypeId",
              array(select day::text from bench.write_days order by n) as "writeDays"`);
    return { variant: nameOf(variant), database, slot: 0, writes: writes! };
  });
}

/** After a run: the next slot starts a fresh weekday of the writes window (bench/run.ts, advanceSlots). */
async function advance(copy: Copy): Promise<void> {
  const next = await withClient(databaseUrl(copy.database), (db) => slotsAfterWrites(db, copy.writes.employees));
  copy.slot = Math.max(copy.slot, next.absences);
}

async function measure(copy: Copy, seconds: number): Promise<VariantRun> {
  const before = cpuJiffies(await readFile('/proc/stat', 'utf8'));
  const result = await runPgbench({ url: authDatabaseUrl(copy.database), script: args.script!, connections: clients, duration: seconds,
    variables: absenceCreateVariables(copy.writes, copy.slot, clients) });
  const after = cpuJiffies(await readFile('/proc/stat', 'utf8'));
  await advance(copy);
  // Jiffies of /proc/stat are USER_HZ ticks, hundredths of a second on Linux: busy jiffies × 10 = busy ms.
  const busyMs = (after.busy - before.busy) * 10;
  return { variant: copy.variant, tps: result.rps, transactions: result.transactions,
    cpuMsPerTransaction: result.transactions > 0 ? busyMs / result.transactions : null, errors: result.errors };
}

/** The HTTP creation of the bench (a child `npm run bench`) on a copy used as its template. */
async function measureHttp(copy: Copy, seconds: number, round: number): Promise<VariantRun> {
  const report = await runBenchChild(ROOT_DIR, [...(size === 'small' ? ['--small'] : []), '--template', copy.database,
    '--only', 'absence_create', '--duration', String(seconds)], `variant-${copy.variant}-${round}`, true);
  const scenario = report.scenarios.find((s) => s.key === 'absence_create');
  return { variant: copy.variant, tps: scenario?.rps ?? 0, transactions: scenario?.requests ?? 0, cpuMsPerTransaction: null,
    errors: scenario?.errors ?? 1 };
}

async function main(): Promise<void> {
  const template = await ensureTemplate(size, log);
  const copies: Copy[] = [];
  const runs: VariantRun[] = [];
  try {
    for (const variant of [BASELINE, ...variants]) copies.push(await makeCopy(template, variant));
    // The HTTP bench writes into a copy of its template (each run starts from the same data) and warms up itself.
    if (!args.http) for (const copy of copies) await measure(copy, Math.min(3, duration));
    for (let round = 0; round < rounds; round += 1) {
      const order = copies.map((_, i) => copies[(i + round) % copies.length]!);
      for (const copy of order) {
        const run = args.http ? await measureHttp(copy, duration, round + 1) : await measure(copy, duration);
        runs.push(run);
        log(`  round ${round + 1}: ${run.variant.padEnd(12)} ${run.tps.toFixed(1)} tps, ${run.cpuMsPerTransaction?.toFixed(2) ?? '–'} ms CPU/tx, errors ${run.errors}`);
      }
    }
  } finally {
    for (const copy of copies) await dropDatabase(copy.database);
  }
  const summaries = summariseVariants(runs, BASELINE);
  const what = args.http ? 'POST /api/absences/ (the bench service, 10 connections)' : `bench/pgbench/${args.script}, ${clients} clients`;
  const heading = `Variants of ${template} (${size} dataset), ${what}, ${rounds} rounds of ${duration} s`;
  await writeComparison(args.label ?? (args.http ? 'variants-http' : 'variants'), heading, variantsTable(summaries),
    { template, size, http: args.http, script: args.script, clients, rounds, duration, runs, summaries });
}

await main();
