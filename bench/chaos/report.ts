/**
 * The figures of a run, printed and written as JSON (--output), and the verdict: the run
 * fails on any lost or half-written write, unexpected 5xx, fault problem (a slow recovery, a
 * service restarted by a database fault), crash of the service, or, in a soak, an error or
 * an RSS growth over the limit.
 */
import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { CheckResult } from './checks.js';
import type { FaultRecord } from './faults.js';
import type { Ledger } from './ledger.js';
import type { ChaosOptions } from './options.js';
import { percentile, RSS_GROWTH_LIMIT_PERCENT, type SoakFigures } from './soak.js';
import type { RequestStats } from './workload.js';

export interface RunFigures {
  mode: 'chaos' | 'soak';
  options: ChaosOptions;
  startedAt: string;
  durationSeconds: number;
  requests: number;
  byStatus: Record<string, number>;
  acknowledgedWrites: number;
  refusedWrites: number;
  writesWithoutAnswer: number;
  faults: Record<string, number>;
  lost: number;
  halfWritten: number;
  unexpected5xx: number;
  recoveryMedianMs: number | null;
  recoveryMaxMs: number | null;
  serviceRespawnMedianMs: number | null;
  latencyP50Ms: number;
  latencyP99Ms: number;
  checks: CheckResult;
  faultRecords: FaultRecord[];
  problems: string[];
  unexpected: string[];
  errors: string[];
  soak?: Omit<SoakFigures, 'samples'> & { samples: SoakFigures['samples'] };
  passed: boolean;
}

export function buildFigures(input: {
  options: ChaosOptions;
  startedAt: Date;
  durationSeconds: number;
  stats: RequestStats;
  ledger: Ledger;
  checks: CheckResult;
  faults: FaultRecord[];
  problems: string[];
  soak?: SoakFigures;
}): RunFigures {
  const { stats, ledger, checks, faults, soak } = input;
  const dbFaults = faults.filter((f) => f.kind !== 'kill').map((f) => f.recoveryMs);
  const restarts = faults.filter((f) => f.kind.startsWith('restart')).map((f) => f.recoveryMs);
  const kills = faults.filter((f) => f.kind === 'kill').map((f) => f.outageMs);
  const problems = [...input.problems];
  if (soak) {
    if (soak.rssGrowthPercent >= RSS_GROWTH_LIMIT_PERCENT) problems.push(`RSS grew ${soak.rssGrowthPercent.toFixed(1)} % after the warm-up`);
    if (stats.errors.length) problems.push(`${stats.errors.length} unexpected answer(s)`);
    if (ledger.unanswered) problems.push(`${ledger.unanswered} write(s) without a definite answer`);
  }
  const durations = stats.latencies.map(([, ms]) => ms);
  const figures: RunFigures = {
    mode: input.options.soak ? 'soak' : 'chaos',
    options: input.options,
    startedAt: input.startedAt.toISOString(),
    durationSeconds: input.durationSeconds,
    requests: stats.requests,
    byStatus: stats.byStatus,
    acknowledgedWrites: ledger.acknowledged,
    refusedWrites: ledger.refused,
    writesWithoutAnswer: ledger.unanswered,
    faults: faults.reduce<Record<string, number>>((acc, f) => ({ ...acc, [f.kind]: (acc[f.kind] ?? 0) + 1 }), {}),
    lost: checks.lost.length,
    halfWritten: checks.halfWritten.length,
    unexpected5xx: stats.unexpected.length,
    recoveryMedianMs: restarts.length ? percentile(restarts, 50) : dbFaults.length ? percentile(dbFaults, 50) : null,
    recoveryMaxMs: restarts.length ? Math.max(...restarts) : dbFaults.length ? Math.max(...dbFaults) : null,
    serviceRespawnMedianMs: kills.length ? percentile(kills, 50) : null,
    latencyP50Ms: percentile(durations, 50),
    latencyP99Ms: percentile(durations, 99),
    checks,
    faultRecords: faults,
    problems,
    unexpected: stats.unexpected.slice(0, 50),
    errors: stats.errors.slice(0, 50),
    soak,
    passed: false,
  };
  figures.passed = figures.lost === 0 && figures.halfWritten === 0 && figures.unexpected5xx === 0 && problems.length === 0;
  return figures;
}

const n = (value: number) => value.toLocaleString('en-US').replace(/,/g, ' ');

export function printFigures(f: RunFigures): void {
  const log = (line = '') => console.log(line);
  log('');
  log(`== ${f.mode === 'soak' ? 'Soak' : 'Chaos'} run of ${f.startedAt} (${f.durationSeconds} s)`);
  log(`requests:              ${n(f.requests)}, ${n(f.requests - (f.byStatus.none ?? 0))} answered (by status: ${Object.entries(f.byStatus).map(([s, c]) => `${s} ${n(c)}`).join(', ')})`);
  log(`acknowledged writes:   ${n(f.acknowledgedWrites)} (refused ${n(f.refusedWrites)}, without a definite answer ${n(f.writesWithoutAnswer)})`);
  if (f.mode === 'chaos') {
    log(`faults survived:       ${Object.entries(f.faults).map(([k, c]) => `${k} ${c}`).join(', ') || 'none'}`);
    log(`recovery after PostgreSQL is back: median ${f.recoveryMedianMs ?? '-'} ms, max ${f.recoveryMaxMs ?? '-'} ms; service respawn (SIGKILL) median ${f.serviceRespawnMedianMs ?? '-'} ms`);
  }
  log(`latency:               p50 ${f.latencyP50Ms} ms, p99 ${f.latencyP99Ms} ms`);
  log(`rows:                  ${n(f.checks.rows.absences)} absences, ${n(f.checks.rows.shiftChangeRequests)} day-change requests, ${n(f.checks.rows.documents)} documents, ${n(f.checks.rows.decisions)} decisions`);
  log(`orphan files (unknown outcome): ${f.checks.orphanFiles} + ${f.checks.orphanPartFiles} partial, swept ${f.checks.sweptFiles}`);
  if (f.soak) {
    log(`RSS after ${f.soak.warmupSeconds} s warm-up: ${f.soak.rssStartMb.toFixed(1)} MB → ${f.soak.rssEndMb.toFixed(1)} MB (${f.soak.rssGrowthPercent.toFixed(1)} %), max ${f.soak.rssMaxMb.toFixed(1)} MB`);
    log(`p99 per ${f.soak.sliceSeconds} s slice: ${f.soak.p99BySliceMs.join(', ')} ms`);
  }
  log(`lost ${f.lost}, half-written ${f.halfWritten}, unexpected 5xx ${f.unexpected5xx}`);
  for (const line of [...f.checks.lost, ...f.checks.halfWritten, ...f.unexpected, ...f.problems].slice(0, 40)) log(`  ! ${line}`);
  if (f.errors.length) log(`unexpected answers (first): ${f.errors.slice(0, 5).join(' | ')}`);
  log(f.passed ? 'PASSED' : 'FAILED');
}

export async function writeFigures(file: string, figures: RunFigures): Promise<void> {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  await writeFile(file, `${JSON.stringify(figures, null, 2)}\n`);
}
