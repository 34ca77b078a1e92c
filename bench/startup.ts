/**
 * `npm run bench:startup`: how the service starts (BENCHMARKS.md, "Start-up"). On a database of
 * the system cluster (migrated by a first, uncounted start), starts the service N times as a
 * supervisor would, each run ended by SIGKILL of its process group (a crash): the time from the
 * spawn to /api/health/ answering 200, the CPU time the process group used until then (steadier
 * than the wall clock on a shared machine), the phases the service reports (START_PHASES=1), and
 * the resident memory of the whole process group one second after it is ready.
 *   npm run bench:startup -- --entry=node|npm|source-npm [--runs=N]
 *   node:        node dist/src/cli/start.js (production; the build must be fresh: npm run build)
 *   npm:         npm start (npm, its shell, then node scripts/launch.mjs running the build)
 *   source-npm:  npm exec tsx src/cli/start.ts: npm, tsx's launcher and node, as npm start ran before the build
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { BUILDS } from '../scripts/freshness.mjs';
import { ROOT_DIR } from '../src/db/migrate.js';
import { TEST_ROOT_URL } from '../src/db/test-cluster.js';
import { freePort } from '../test/helpers/free-port.js';

const args = new Map(process.argv.slice(2).map((arg) => arg.replace(/^--/, '').split('=', 2) as [string, string]));
const entry = args.get('entry') ?? 'node';
const runs = Number(args.get('runs') ?? 5);
const MEMORY_ENV = { NODE_OPTIONS: '--max-old-space-size=160 --max-semi-space-size=8', MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };
const COMMANDS: Record<string, [string, string[]]> = {
  node: [process.execPath, [path.join(ROOT_DIR, BUILDS.server.output)]],
  npm: ['npm', ['start', '--silent']],
  'source-npm': ['npm', ['exec', '--', 'tsx', 'src/cli/start.ts']],
};
if (!COMMANDS[entry] || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: npm run bench:startup -- --entry=node|npm|source-npm [--runs=N]');
  process.exit(1);
}

const CLOCK_TICKS = 100;

/**
 * Resident memory (bytes) and CPU time used so far (ms, user + system) of every process of the
 * group `pgid`, with their command lines.
 */
async function groupRss(pgid: number): Promise<{ total: number; cpuMs: number; processes: string[] }> {
  let total = 0;
  let cpuMs = 0;
  const processes: string[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) !== pgid) continue;
    // Fields 14 and 15 of /proc/<pid>/stat (utime, stime), counted from the one after the name.
    cpuMs += ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
    const status = await readFile(`/proc/${name}/status`, 'utf8').catch(() => '');
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    const command = (await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' ').trim();
    total += rss;
    processes.push(`${(rss / 1048576).toFixed(0)} MB ${command.slice(0, 90)}`);
  }
  return { total, cpuMs, processes };
}

async function once(env: NodeJS.ProcessEnv): Promise<{ readyMs: number; cpuMs: number; rss: number; processes: string[]; phases: string }> {
  const port = await freePort();
  const [command, commandArgs] = COMMANDS[entry]!;
  const started = performance.now();
  const child = spawn(command, commandArgs, {
    cwd: ROOT_DIR, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', START_PHASES: '1' },
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error(`the service exited:\n${output}`);
      const status = await fetch(`http://127.0.0.1:${port}/api/health/`).then((res) => res.status, () => 0);
      if (status === 200) break;
      if (performance.now() - started > 120_000) throw new Error(`not ready within 120 s:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const readyMs = performance.now() - started;
    const { cpuMs } = await groupRss(child.pid!);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const { total, processes } = await groupRss(child.pid!);
    const phases = /Start-up phases \(ms since the process started\): (.*)/.exec(output)?.[1] ?? '';
    return { readyMs, cpuMs, rss: total, processes, phases };
  } finally {
    process.kill(-child.pid!, 'SIGKILL');
    await new Promise((resolve) => (exited ? resolve(null) : child.once('exit', resolve)));
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;

const database = `wfm_startup_${process.pid}`;
const root = new pg.Client({ connectionString: TEST_ROOT_URL });
await root.connect();
await root.query(`create database ${database}`);
try {
  const url = new URL(TEST_ROOT_URL);
  url.pathname = `/${database}`;
  const env = {
    ...process.env, ...MEMORY_ENV, DATABASE_URL: url.toString(), JWT_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn', DATA_DIR: path.join(ROOT_DIR, '.data', `startup-${process.pid}`),
  };
  console.log(`entry ${entry}: a first start migrates ${database} (not counted)`);
  await once(env);
  const results = [];
  for (let i = 0; i < runs; i += 1) {
    const result = await once(env);
    results.push(result);
    console.log(`run ${i + 1}: ready after ${Math.round(result.readyMs)} ms (CPU ${Math.round(result.cpuMs)} ms), process group RSS ${(result.rss / 1048576).toFixed(0)} MB; ${result.phases}`);
  }
  console.log(`processes of the last run:\n  ${results.at(-1)!.processes.join('\n  ')}`);
  const ready = results.map((r) => r.readyMs);
  const rss = results.map((r) => r.rss / 1048576);
  const cpu = results.map((r) => r.cpuMs);
  console.log(`${entry}: ready median ${Math.round(median(ready))} ms (min ${Math.round(Math.min(...ready))}, max ${Math.round(Math.max(...ready))}); ` +
    `CPU to ready median ${Math.round(median(cpu))} ms; ` +
    `RSS median ${median(rss).toFixed(0)} MB (max ${Math.max(...rss).toFixed(0)})`);
} finally {
  await root.query(`drop database if exists ${database} with (force)`);
  await root.end();
}
