/**
 * The summary of alternated before/after bench runs (bench/lib/pairs.ts, used by
 * `npm run bench:against`): ratios of the means and of single pairs, median p99, a scenario
 * one side lacks; the results' file names (--label) the bench tools accept.
 */
import { describe, expect, it } from 'vitest';
import { pairsTable, summarisePairs, type PairRound } from '../../bench/lib/pairs.js';
import { checkedLabel, type BenchReport, type ScenarioResult } from '../../bench/lib/report.js';

function scenario(key: string, rps: number, p99: number | null): ScenarioResult {
  return { key, label: `label of ${key}`, target: 'api', goal: 'baseline', connections: 10, seconds: 10, requests: rps * 10, rps,
    p50: null, p99, mean: null, errors: 0, statusCodes: {}, rssPeakMb: null };
}
const report = (scenarios: ScenarioResult[]) => ({ scenarios }) as BenchReport;

describe('bench pairs summary', () => {
  const rounds: PairRound[] = [
    { before: report([scenario('absence_create', 100, 90), scenario('me', 1000, 20)]), after: report([scenario('absence_create', 150, 60), scenario('me', 800, 30)]) },
    { before: report([scenario('absence_create', 200, 110), scenario('me', 1000, 22)]), after: report([scenario('absence_create', 250, 70), scenario('me', 700, 31)]) },
    { before: report([scenario('absence_create', 150, 100)]), after: report([scenario('absence_create', 350, 80), scenario('me', 900, 29)]) },
  ];

  it('gives the ratio of the means, the extreme pair ratios and the median p99 per scenario', () => {
    const [create, me] = summarisePairs(rounds);
    expect(create!.key).toBe('absence_create');
    expect(create!.before).toEqual([100, 200, 150]);
    expect(create!.after).toEqual([150, 250, 350]);
    expect(create!.ratioOfMeans).toBeCloseTo(250 / 150, 10);
    expect(create!.pairRatios.min).toBeCloseTo(1.25, 10);
    expect(create!.pairRatios.max).toBeCloseTo(350 / 150, 10);
    expect(create!.p99).toEqual({ before: 100, after: 70 });
    // A round whose before run lacks the scenario counts on the side that has it, and in no pair.
    expect(me!.before).toEqual([1000, 1000]);
    expect(me!.after).toEqual([800, 700, 900]);
    expect(me!.ratioOfMeans).toBeCloseTo(800 / 1000, 10);
    expect(me!.pairRatios).toEqual({ min: 0.7, max: 0.8 });
    expect(me!.p99).toEqual({ before: 21, after: 30 });
  });

  it('has no ratio where a side served nothing or never ran', () => {
    const [only] = summarisePairs([{ before: report([scenario('absence_create', 0, null)]), after: report([scenario('absence_create', 120, 50)]) }]);
    expect(only!.ratioOfMeans).toBeNull();
    expect(only!.pairRatios).toEqual({ min: null, max: null });
    expect(only!.p99).toEqual({ before: null, after: 50 });
    expect(summarisePairs([])).toEqual([]);
  });

  it('writes one table row per scenario with the runs and the ratios', () => {
    const table = pairsTable(summarisePairs(rounds)).split('\n');
    expect(table).toHaveLength(4);
    expect(table[2]).toBe('| label of absence_create | 100.0, 200.0, 150.0 | 150.0, 250.0, 350.0 | ×1.67 | ×1.25 – ×2.33 | 100.0 → 70.0 |');
    expect(table[3]).toBe('| label of me | 1000.0, 1000.0 | 800.0, 700.0, 900.0 | ×0.80 | ×0.70 – ×0.80 | 21.0 → 30.0 |');
  });
});

describe('checkedLabel', () => {
  it('accepts a results file name and refuses a path, upper case or an empty name', () => {
    expect(checkedLabel('against-da33811-2026-11-26')).toBe('against-da33811-2026-11-26');
    expect(checkedLabel('variants_parts')).toBe('variants_parts');
    for (const bad of ['', '-leading', '../escape', 'a/b', 'Upper', 'x'.repeat(42)]) {
      expect(() => checkedLabel(bad)).toThrow('--label');
    }
  });
});
