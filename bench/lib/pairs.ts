/**
 * Alternated before/after runs of the same scenarios on one machine (bench/against.ts): the
 * per-scenario summary. One run of 15 to 30 s swings by 5 to 20 % on a shared virtual machine,
 * so a gain is read from several pairs, each pair taken back to back: the ratio of the means,
 * and the smallest and largest ratio of one pair.
 */
import type { BenchReport } from './report.js';
import { fmt, mean, median, times } from './stats.js';

export interface PairRound {
  before: BenchReport;
  after: BenchReport;
}

export interface PairSummary {
  key: string;
  label: string;
  before: number[];
  after: number[];
  /** Mean requests per second after / before (null when a side has no run or served nothing). */
  ratioOfMeans: number | null;
  pairRatios: { min: number | null; max: number | null };
  p99: { before: number | null; after: number | null };
}

/** Per scenario of the after runs (in their order): the rounds' throughputs, ratios and median p99. */
export function summarisePairs(rounds: PairRound[]): PairSummary[] {
  const keys: Array<{ key: string; label: string }> = [];
  for (const round of rounds) {
    for (const s of round.after.scenarios) if (!keys.some((k) => k.key === s.key)) keys.push({ key: s.key, label: s.label });
  }
  return keys.map(({ key, label }) => {
    const before: number[] = [];
    const after: number[] = [];
    const beforeP99: number[] = [];
    const afterP99: number[] = [];
    const ratios: number[] = [];
    for (const round of rounds) {
      const b = round.before.scenarios.find((s) => s.key === key);
      const a = round.after.scenarios.find((s) => s.key === key);
      if (b) before.push(b.rps);
      if (a) after.push(a.rps);
      if (b?.p99 != null) beforeP99.push(b.p99);
      if (a?.p99 != null) afterP99.push(a.p99);
      if (a && b && b.rps > 0) ratios.push(a.rps / b.rps);
    }
    const meanBefore = mean(before);
    const meanAfter = mean(after);
    return {
      key,
      label,
      before,
      after,
      ratioOfMeans: meanBefore && meanAfter !== null ? meanAfter / meanBefore : null,
      pairRatios: { min: ratios.length ? Math.min(...ratios) : null, max: ratios.length ? Math.max(...ratios) : null },
      p99: { before: median(beforeP99), after: median(afterP99) },
    };
  });
}

/** The markdown table of a summary. */
export function pairsTable(summaries: PairSummary[]): string {
  const lines = [
    '| scenario | req/s before | req/s after | after / before (means) | one pair: lowest – highest | p99 ms before → after (median) |',
    '|---|---|---|---:|---:|---:|',
  ];
  for (const s of summaries) {
    lines.push(`| ${s.label} | ${s.before.map((v) => fmt(v)).join(', ') || '–'} | ${s.after.map((v) => fmt(v)).join(', ') || '–'} | ` +
      `${times(s.ratioOfMeans)} | ${times(s.pairRatios.min)} – ${times(s.pairRatios.max)} | ${fmt(s.p99.before)} → ${fmt(s.p99.after)} |`);
  }
  return lines.join('\n');
}
