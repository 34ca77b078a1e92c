/**
 * pgbench baselines: the same SQL functions as the service, run by pgbench with the same
 * concurrency as the HTTP scenarios, through the authenticator role as the service does
 * (begin, app_private.begin_request, set local role wfm_visitor, the function, commit),
 * pipelined so that each transaction is one round trip: the database's own limit.
 * Latencies come from pgbench's per-transaction log (-l).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT_DIR } from '../../src/db/migrate.js';
import { sessionOptions } from '../../src/db/pool.js';
import type { LoadResult } from './load.js';

export interface PgbenchOptions {
  /** Connection URL (the authenticator role on the run database). */
  url: string;
  script: string;
  connections: number;
  duration: number;
  variables: Record<string, string | number>;
}

export interface PgbenchResult extends LoadResult {
  transactions: number;
  failed: number;
  output: string;
}

/** What the creation scripts (absence_create.sql, absence_create_floor.sql) need of the dataset. */
export interface AbsenceWrites {
  employees: number;
  firstAccount: number;
  firstEmployee: number;
  cpTypeId: number;
  writeDays: string[];
}

/** The -D variables of the creation scripts: distinct employees and weekdays from `slot` on (the scripts' header). */
export function absenceCreateVariables(writes: AbsenceWrites, slot: number, clients: number): Record<string, string | number> {
  return { base: slot, clients, employees: writes.employees, acc_base: writes.firstAccount, emp_base: writes.firstEmployee,
    type: writes.cpTypeId, days: `{${writes.writeDays.join(',')}}`, n: 0 };
}

export async function pgbenchVersion(): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn('pgbench', ['--version']);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code === 0 ? out.trim() : null));
  });
}

export async function runPgbench(options: PgbenchOptions): Promise<PgbenchResult> {
  const url = new URL(options.url);
  const logDir = await mkdtemp(path.join(tmpdir(), 'wfm-pgbench-'));
  const args = [
    // -M extended: pgbench 15 loses its prepared statements inside a pipeline; extended is
    // also what node-postgres sends (unnamed statements).
    '-n', '-M', 'extended', '-c', String(options.connections), '-j', String(Math.min(2, options.connections)),
    '-T', String(options.duration), '-f', path.join(ROOT_DIR, 'bench/pgbench', options.script),
    '-l', `--log-prefix=${path.join(logDir, 'tx')}`,
    '-h', url.hostname, '-p', url.port || '5432', '-U', decodeURIComponent(url.username),
  ];
  for (const [name, value] of Object.entries(options.variables)) args.push('-D', `${name}=${value}`);
  args.push(url.pathname.slice(1));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PGAPPNAME: 'wfm-bench-pgbench',
    // The session settings of the service's connections.
    PGOPTIONS: sessionOptions({ businessTimeZone: 'Europe/Paris', publicUrl: 'http://localhost:8000' }),
  };
  if (url.password) env.PGPASSWORD = decodeURIComponent(url.password);
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn('pgbench', args, { env });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(text));
  });
  const latencies: number[] = [];
  for (const file of await readdir(logDir)) {
    for (const line of (await readFile(path.join(logDir, file), 'utf8')).split('\n')) {
      const fields = line.trim().split(/\s+/);
      if (fields.length >= 3 && /^\d+$/.test(fields[2]!)) latencies.push(Number(fields[2]) / 1000);
    }
  }
  await rm(logDir, { recursive: true, force: true });
  latencies.sort((a, b) => a - b);
  const pick = (p: number) =>
    latencies.length ? Math.round(latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]! * 100) / 100 : null;
  const transactions = Number(/number of transactions actually processed: (\d+)/.exec(output)?.[1] ?? latencies.length);
  const failed = Number(/number of failed transactions: (\d+)/.exec(output)?.[1] ?? 0);
  const aborted = /aborted|error/i.test(output) ? (output.match(/client \d+ aborted/g) ?? []).length : 0;
  const tps = Number(/tps = ([\d.]+)/.exec(output)?.[1] ?? 0);
  const duration = options.duration;
  return {
    seconds: duration,
    requests: transactions,
    transactions,
    rps: Math.round(tps * 10) / 10,
    p50: pick(50),
    p99: pick(99),
    mean: latencies.length ? Math.round((latencies.reduce((a, b) => a + b, 0) / latencies.length) * 100) / 100 : null,
    errors: failed + aborted,
    failed,
    statusCodes: {},
    rssPeakMb: null,
    output,
  };
}
