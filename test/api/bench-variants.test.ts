/**
 * The summary of database variants measured against the unchanged dataset (bench/lib/variants.ts,
 * used by `npm run bench:variants`): gains against the baseline, CPU saved, /proc/stat reading.
 */
import { describe, expect, it } from 'vitest';
import { cpuJiffies, summariseVariants, variantsTable, type VariantRun } from '../../bench/lib/variants.js';

const run = (variant: string, tps: number, cpu: number | null, errors = 0): VariantRun =>
  ({ variant, tps, transactions: Math.round(tps * 6), cpuMsPerTransaction: cpu, errors });

describe('bench variants summary', () => {
  const runs = [run('routing', 600, 3.0), run('baseline', 500, 3.6), run('answer', 550, 3.3, 2),
    run('baseline', 520, 3.4), run('routing', 640, 3.2), run('answer', 0, null)];

  it('puts the baseline first and gives each variant its gain and the CPU it saves', () => {
    const [base, routing, answer] = summariseVariants(runs, 'baseline');
    expect(base!.variant).toBe('baseline');
    expect(base!.meanTps).toBe(510);
    expect(base!.gain).toBeNull();
    expect(base!.cpuSavedMs).toBeNull();
    expect(routing!.tps).toEqual([600, 640]);
    expect(routing!.gain).toBeCloseTo(620 / 510, 10);
    expect(routing!.cpuSavedMs).toBeCloseTo(3.5 - 3.1, 10);
    // A run that served nothing counts in the errors and the list, not in the means.
    expect(answer!.meanTps).toBe(550);
    expect(answer!.meanCpuMs).toBe(3.3);
    expect(answer!.errors).toBe(2);
  });

  it('gives no gain without a baseline run', () => {
    const [only] = summariseVariants([run('routing', 600, 3)], 'baseline');
    expect(only!.gain).toBeNull();
    expect(only!.cpuSavedMs).toBeNull();
  });

  it('writes one row per variant', () => {
    const table = variantsTable(summariseVariants(runs, 'baseline')).split('\n');
    expect(table).toHaveLength(5);
    expect(table[2]).toBe('| baseline | 500.0, 520.0 | 510.0 | – | 3.50 | – | 0 |');
    expect(table[3]).toBe('| routing | 600.0, 640.0 | 620.0 | ×1.22 | 3.10 | 0.40 | 0 |');
  });

  it('reads the busy and idle jiffies of /proc/stat', () => {
    expect(cpuJiffies('cpu  100 5 50 1000 20 3 7 2 0 0\ncpu0 1 2 3 4\n')).toEqual({ busy: 167, idle: 1020 });
    expect(() => cpuJiffies('nothing here')).toThrow(/proc\/stat/);
  });
});
