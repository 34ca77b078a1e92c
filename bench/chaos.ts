/**
 * `npm run chaos`: fault injection (issue 15), or with --soak a steady run without faults.
 * Everything runs on the loopback, against a PostgreSQL cluster of its own in a temporary
 * directory (bench/chaos/cluster.ts), bounded by --duration. Exits 1 on any lost or
 * half-written write, unexpected 5xx, slow recovery or crash (bench/chaos/report.ts).
 *   npm run chaos -- --duration=600 --restarts=24 --kills=6 --terminations=4 --exhaustions=4 --output=bench/results/chaos-long.json
 *   npm run chaos -- --soak --duration=1800 --output=bench/results/soak.json
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt } from '../scripts/freshness.mjs';
import { freePort } from '../test/helpers/free-port.js';
import { runChecks } from './chaos/checks.js';
import { Cluster } from './chaos/cluster.js';
import { Faults } from './chaos/faults.js';
import { parseOptions } from './chaos/options.js';
import { loadOrganisation } from './chaos/organisation.js';
import { buildFigures, printFigures, writeFigures } from './chaos/report.js';
import { Service } from './chaos/service.js';
import { RssSampler, soakFigures } from './chaos/soak.js';
import { Workload } from './chaos/workload.js';

function seeded(seed: number): () => number {
  let state = (seed * 7919) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const log = (line: string) => console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}`);
  // The service runs compiled, as in production: built now if dist/ is missing or stale.
  await ensureBuilt('server', { log });
  log(`cluster: creating an embedded PostgreSQL in a temporary directory`);
  const cluster = await Cluster.create();
  const service = new Service({
    port: await freePort(),
    ownerUrl: cluster.ownerUrl,
    authUrl: cluster.authUrl,
    storageDir: cluster.storageDir,
    jwtSecret: randomBytes(32).toString('hex'),
    logFile: path.join(cluster.dir, 'service.log'),
  });
  const stopAll = async () => {
    await service.stop().catch(() => undefined);
    await cluster.destroy().catch(() => undefined);
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    log(`cluster on 127.0.0.1:${cluster.port} (${cluster.dir}); starting the service (migrations)`);
    service.spawn();
    await service.waitReady();
    const org = await loadOrganisation(cluster.ownerUrl, options.users);
    let faults: Faults | null = null;
    const workload = new Workload(() => service.url, org, () => faults?.inOutage() ?? false, options.seed);
    faults = new Faults(cluster, service, () => workload.probe());
    await workload.prepare();

    const startedAt = new Date();
    const start = Date.now();
    const end = start + options.duration * 1000;
    const sampler = new RssSampler(service, start);
    if (options.soak) sampler.start();
    const plan = faults.plan(options, seeded(options.seed));
    log(`${options.soak ? `soak at ${options.rate} actions/s` : `${options.users} users back to back`} for ${options.duration} s; faults: ${plan.join(', ') || 'none'}`);
    await Promise.all([
      options.soak ? workload.runSteady(options.rate, end) : workload.runBackToBack(options.users, end),
      // The last fault leaves a tenth of the run to recover under load.
      faults.run(plan, start, start + options.duration * 900),
    ]);
    sampler.stop();
    const durationSeconds = Math.round((Date.now() - start) / 1000);
    log('workload done; checking the database and the storage directory');
    if (!(await workload.probe())) await service.waitReady(30_000);
    const checks = await runChecks(cluster.ownerUrl, cluster.storageDir, workload.ledger);
    const problems = [...faults.problems, ...service.unexpectedExits.map((exit) => `the service exited by itself (${exit})`)];
    const figures = buildFigures({
      options, startedAt, durationSeconds, stats: workload.stats, ledger: workload.ledger, checks,
      faults: faults.records, problems,
      soak: options.soak ? soakFigures(sampler.samples, workload.stats.latencies, durationSeconds) : undefined,
    });
    printFigures(figures);
    if (options.output) {
      await writeFigures(options.output, figures);
      log(`figures written to ${options.output}`);
    }
    if (!figures.passed) {
      // The run's directory goes away with the cluster: its logs are kept next to the figures.
      const kept = path.join(options.output ? path.dirname(options.output) : os.tmpdir(), 'chaos-failed-');
      const dir = await mkdtemp(kept);
      await cp(path.join(cluster.dir, 'service.log'), path.join(dir, 'service.log')).catch(() => undefined);
      await cp(path.join(cluster.dir, 'postgres.log'), path.join(dir, 'postgres.log')).catch(() => undefined);
      log(`logs of the service and of PostgreSQL kept in ${dir}`);
    }
    return figures.passed ? 0 : 1;
  } finally {
    await stopAll();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`chaos: ${(error as Error).stack ?? error}`);
    process.exit(2);
  },
);
