/**
 * The bench's results: a JSON document (bench/results/<label>.json) and a markdown report
 * (table, ratios, targets) written to bench/results/<label>.md and, between the markers
 * <!-- bench:<label>:start --> and <!-- bench:<label>:end -->, into BENCHMARKS.md.
 */
import { execSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT_DIR } from '../../src/db/migrate.js';
import type { LoadResult } from './load.js';
import type { Scenario } from './scenarios.js';

/** A results' file name given with --label (bench, bench:variants, bench:against): checked, then returned. */
export function checkedLabel(label: string): string {
  if (!/^[a-z0-9][a-z0-9_-]{0,40}$/.test(label)) throw new Error('--label: lower-case letters, digits, - and _');
  return label;
}

/**
 * The summary of a comparison tool (bench:against, bench:variants): its heading, stamped with the
 * UTC minute, and its table printed, then written to bench/results/<label>.md, and `data` with the
 * table's figures to bench/results/<label>.json.
 */
export async function writeComparison(label: string, heading: string, table: string, data: object): Promise<void> {
  const stamped = `${heading}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC.`;
  console.log(`\n${stamped}\n\n${table}\n`);
  await writeFile(path.join(ROOT_DIR, 'bench/results', `${label}.md`), `${stamped}\n\n${table}\n`);
  await writeFile(path.join(ROOT_DIR, 'bench/results', `${label}.json`), `${JSON.stringify(data, null, 2)}\n`);
}

export interface ScenarioResult extends LoadResult {
  key: string;
  label: string;
  target: Scenario['target'];
  goal: Scenario['goal'];
  connections: number;
  note?: string;
  /** process.memoryUsage() of the service after the phase, MB. */
  memoryMb?: Record<string, number>;
}

export interface Machine {
  cpu: string;
  cores: number;
  ramGb: number;
  os: string;
  node: string;
  postgres: string;
  pgbench: string | null;
}

export interface BenchReport {
  label: string;
  date: string;
  machine: Machine;
  params: Record<string, unknown>;
  dataset: { database: string; reused: boolean; seconds: number | null; steps: Array<{ step: string; seconds: number }>; size: string };
  settings: { duration: number; warmup: number; connections: number; poolSize: number; serviceRuntime: Record<string, string> };
  scenarios: ScenarioResult[];
  rss: { startMb: number | null; peakMb: number | null; afterMb: number | null };
  ratios: Array<{ name: string; value: number | null; target?: number }>;
  targets: Array<{ name: string; value: number | null; limit: string; ok: boolean | null }>;
}

export function describeMachine(postgres: string, pgbench: string | null): Machine {
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    const lscpu = execSync('lscpu', { encoding: 'utf8' });
    cpu = /Model name:\s+(.+)/.exec(lscpu)?.[1]?.trim() ?? cpu;
    const hypervisor = /Hypervisor vendor:\s+(.+)/.exec(lscpu)?.[1]?.trim();
    if (hypervisor) cpu += ` (${hypervisor} guest)`;
  } catch {
    // lscpu missing: os.cpus() is enough
  }
  return {
    cpu,
    cores: os.cpus().length,
    ramGb: Math.round(os.totalmem() / 1024 ** 3),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres,
    pgbench,
  };
}

const fmt = (value: number | null | undefined, digits = 1) => (value === null || value === undefined ? '–' : value.toFixed(digits));

export function renderMarkdown(report: BenchReport): string {
  const m = report.machine;
  const lines: string[] = [];
  lines.push(`Run \`${report.label}\` of ${report.date.slice(0, 16).replace('T', ' ')} UTC — ${m.cpu}, ${m.cores} cores, ${m.ramGb} GB RAM, ` +
    `${m.os}; Node ${m.node}; ${m.postgres}; ${m.pgbench ?? 'pgbench missing'}.`);
  const p = report.params as Record<string, number | string>;
  lines.push('');
  lines.push(`Dataset: ${p.employees} employees in ${p.establishments} establishments, ${p.absences} absences, ` +
    `${p.shiftChanges} day-change requests, around ${p.today} (${report.dataset.size}; ` +
    (report.dataset.reused ? 'reused' : `generated in ${fmt(report.dataset.seconds, 0)} s`) + '). ' +
    `Each phase: ${report.settings.warmup} s warm-up, then ${report.settings.duration} s measured; ` +
    `service pool ${report.settings.poolSize} connections; service runtime: ` +
    (Object.entries(report.settings.serviceRuntime).map(([k, v]) => `${k}=${v || '(empty)'}`).join(' ') || 'Node defaults') + '.');
  lines.push('');
  lines.push('| scenario | conns | req/s | p50 ms | p99 ms | errors | server RSS peak MB | server CPU ms/request |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of report.scenarios) {
    const codes = Object.entries(s.statusCodes).filter(([code]) => !code.startsWith('2'));
    const errors = s.errors + (codes.length ? ` (${codes.map(([c, n]) => `${c}×${n}`).join(', ')})` : '');
    lines.push(`| ${s.label}${s.note ? ` — ${s.note}` : ''} | ${s.connections} | ${fmt(s.rps)} | ${fmt(s.p50, 2)} | ${fmt(s.p99, 2)} | ${errors} | ${fmt(s.rssPeakMb, 0)} | ${fmt(s.cpuMsPerRequest ?? null, 3)} |`);
  }
  lines.push('');
  lines.push(`Server RSS: ${fmt(report.rss.startMb, 0)} MB after start-up, ${fmt(report.rss.peakMb, 0)} MB peak, ` +
    `${fmt(report.rss.afterMb, 0)} MB after the run.`);
  lines.push('');
  lines.push('| ratio | value | target |');
  lines.push('|---|---:|---:|');
  for (const r of report.ratios) lines.push(`| ${r.name} | ${fmt(r.value, 2)} | ${r.target === undefined ? '' : `≥ ${r.target}`} |`);
  lines.push('');
  lines.push('| target | measured | limit | met |');
  lines.push('|---|---:|---:|:---:|');
  for (const t of report.targets) lines.push(`| ${t.name} | ${fmt(t.value, 2)} | ${t.limit} | ${t.ok === null ? '–' : t.ok ? 'yes' : '**no**'} |`);
  return lines.join('\n');
}

export async function writeReport(report: BenchReport, updateBenchmarksMd: boolean): Promise<string[]> {
  const written: string[] = [];
  const base = path.join(ROOT_DIR, 'bench/results', report.label);
  await writeFile(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  const markdown = renderMarkdown(report);
  await writeFile(`${base}.md`, `${markdown}\n`);
  written.push(`${base}.json`, `${base}.md`);
  if (updateBenchmarksMd) {
    const file = path.join(ROOT_DIR, 'BENCHMARKS.md');
    const text = await readFile(file, 'utf8').catch(() => null);
    const start = `<!-- bench:${report.label}:start -->`;
    const end = `<!-- bench:${report.label}:end -->`;
    if (text && text.includes(start) && text.includes(end)) {
      const updated = text.slice(0, text.indexOf(start) + start.length) + `\n${markdown}\n` + text.slice(text.indexOf(end));
      await writeFile(file, updated);
      written.push(file);
    }
  }
  return written;
}
