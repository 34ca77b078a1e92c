/**
 * Database variants measured against the unchanged dataset (bench/variants.ts): the same pgbench
 * transaction on copies of one dataset, each copy with a SQL file applied (an ablation: a rule
 * replaced by a constant; or a candidate change), runs alternated round by round on one machine.
 * What a part of the transaction is worth at most is read from its ablation's gain.
 */
import { fmt, mean, times } from './stats.js';

export interface VariantRun {
  variant: string;
  /** Transactions per second reported by pgbench. */
  tps: number;
  transactions: number;
  /** Busy CPU of the whole machine during the run (/proc/stat), per transaction, ms. */
  cpuMsPerTransaction: number | null;
  errors: number;
}

export interface VariantSummary {
  variant: string;
  tps: number[];
  meanTps: number | null;
  /** Mean tps / the baseline's mean tps (null for the baseline itself or without a baseline). */
  gain: number | null;
  meanCpuMs: number | null;
  /** Baseline's mean CPU per transaction minus this variant's: what the ablated part costs, ms. */
  cpuSavedMs: number | null;
  errors: number;
}

/** The busy and idle jiffies of the first line of /proc/stat (user nice system idle iowait irq softirq steal). */
export function cpuJiffies(procStat: string): { busy: number; idle: number } {
  const fields = procStat.split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  if (fields[0] === undefined || fields.length < 5 || fields.some((f) => !Number.isFinite(f))) {
    throw new Error('unexpected /proc/stat');
  }
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  return { busy: user + nice + system + irq + softirq + steal, idle: idle + iowait };
}

/** Per variant, in the order of first appearance (the baseline first when present). */
export function summariseVariants(runs: VariantRun[], baseline: string): VariantSummary[] {
  const names: string[] = [];
  for (const run of runs) if (!names.includes(run.variant)) names.push(run.variant);
  const ordered = names.includes(baseline) ? [baseline, ...names.filter((n) => n !== baseline)] : names;
  const stats = (name: string) => {
    const mine = runs.filter((r) => r.variant === name);
    const cpu = mine.map((r) => r.cpuMsPerTransaction).filter((v): v is number => v !== null);
    return {
      tps: mine.map((r) => r.tps),
      meanTps: mean(mine.filter((r) => r.transactions > 0).map((r) => r.tps)),
      meanCpuMs: mean(cpu),
      errors: mine.reduce((sum, r) => sum + r.errors, 0),
    };
  };
  const base = names.includes(baseline) ? stats(baseline) : null;
  return ordered.map((variant) => {
    const s = stats(variant);
    const isBase = variant === baseline;
    return {
      variant,
      ...s,
      gain: !isBase && base?.meanTps && s.meanTps !== null ? s.meanTps / base.meanTps : null,
      cpuSavedMs: !isBase && base?.meanCpuMs != null && s.meanCpuMs !== null ? base.meanCpuMs - s.meanCpuMs : null,
    };
  });
}

/** The markdown table of a summary. */
export function variantsTable(summaries: VariantSummary[]): string {
  const lines = [
    '| variant | transactions/s per round | mean | gain | CPU ms per transaction (machine) | CPU saved, ms | errors |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const s of summaries) {
    lines.push(`| ${s.variant} | ${s.tps.map((v) => fmt(v)).join(', ') || '–'} | ${fmt(s.meanTps)} | ` +
      `${times(s.gain)} | ${fmt(s.meanCpuMs, 2)} | ${fmt(s.cpuSavedMs, 2)} | ${s.errors} |`);
  }
  return lines.join('\n');
}
