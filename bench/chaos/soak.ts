/**
 * Soak figures: the server's RSS sampled every 10 s (growth measured after a warm-up, from
 * the mean of the first minute to the mean of the last one), and p99 latency per slice
 * (5 minutes; a sixth of the run when shorter).
 */
import type { Service } from './service.js';

export interface SoakFigures {
  warmupSeconds: number;
  samples: Array<{ atSeconds: number; rssMb: number }>;
  rssStartMb: number;
  rssEndMb: number;
  rssMaxMb: number;
  rssGrowthPercent: number;
  sliceSeconds: number;
  p99BySliceMs: number[];
}

export const RSS_GROWTH_LIMIT_PERCENT = 10;

export class RssSampler {
  readonly samples: Array<{ atSeconds: number; rssMb: number }> = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly service: Service, private readonly started: number) {}

  start(everyMs = 10_000): void {
    this.timer = setInterval(() => {
      void this.service.rss().then((rss) => {
        if (rss !== null) this.samples.push({ atSeconds: Math.round((Date.now() - this.started) / 1000), rssMb: rss / 1048576 });
      });
    }, everyMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

export function soakFigures(
  samples: RssSampler['samples'],
  latencies: Array<[number, number]>,
  durationSeconds: number,
): SoakFigures {
  const warmupSeconds = Math.min(120, Math.floor(durationSeconds / 4));
  const window = Math.min(60, Math.floor(durationSeconds / 6));
  const measured = samples.filter((s) => s.atSeconds >= warmupSeconds);
  const first = measured.filter((s) => s.atSeconds < warmupSeconds + window).map((s) => s.rssMb);
  const last = measured.filter((s) => s.atSeconds > durationSeconds - window).map((s) => s.rssMb);
  const rssStartMb = mean(first);
  const rssEndMb = mean(last);
  const sliceSeconds = Math.min(300, Math.floor(durationSeconds / 6));
  const slices: number[][] = [];
  for (const [startMs, ms] of latencies) {
    const index = Math.floor(startMs / 1000 / sliceSeconds);
    (slices[index] ??= []).push(ms);
  }
  return {
    warmupSeconds,
    samples,
    rssStartMb,
    rssEndMb,
    rssMaxMb: Math.max(0, ...measured.map((s) => s.rssMb)),
    rssGrowthPercent: rssStartMb > 0 ? ((rssEndMb - rssStartMb) / rssStartMb) * 100 : 0,
    sliceSeconds,
    p99BySliceMs: slices.filter((slice) => slice && slice.length > 0).map((slice) => percentile(slice, 99)),
  };
}

export { percentile };
