/**
 * The export phase (issue 16): one download at a time of a whole export (100 000 absences on
 * the default dataset), read as a stream like a browser saving a file: time to the first byte,
 * total time, size, and the service's RSS sampled during the downloads (the cursor keeps it
 * flat: 1 000 rows in memory at a time, whatever the export's size).
 */
import { sampleRss } from './children.js';
import type { LoadResult, RequestSpec } from './load.js';

export interface ExportRun {
  firstByteMs: number;
  totalMs: number;
  bytes: number;
  status: number;
}

async function download(url: string, request: RequestSpec): Promise<ExportRun> {
  const started = performance.now();
  const response = await fetch(`${url}${request.path}`, {
    headers: { ...(request.token ? { authorization: `Bearer ${request.token}` } : {}), ...request.headers },
  });
  let firstByteMs = 0;
  let bytes = 0;
  for await (const chunk of response.body!) {
    if (bytes === 0) firstByteMs = performance.now() - started;
    bytes += (chunk as Uint8Array).byteLength;
  }
  return { firstByteMs, totalMs: performance.now() - started, bytes, status: response.status };
}

const round = (value: number) => Math.round(value * 10) / 10;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

/** `runs` downloads one after the other (after one unmeasured download), the RSS sampled meanwhile. */
export async function runExport(options: { url: string; request: RequestSpec; runs: number; pid: number }): Promise<LoadResult & { note: string }> {
  await download(options.url, options.request);
  const rss = sampleRss(options.pid);
  const started = performance.now();
  const runs: ExportRun[] = [];
  for (let i = 0; i < options.runs; i++) runs.push(await download(options.url, options.request));
  const seconds = (performance.now() - started) / 1000;
  const rssPeakMb = rss.stop();
  const ok = runs.filter((run) => run.status === 200);
  const totals = ok.map((run) => run.totalMs);
  const statusCodes: Record<string, number> = {};
  for (const run of runs) statusCodes[run.status] = (statusCodes[run.status] ?? 0) + 1;
  const note = ok.length
    ? `${ok.length} downloads one at a time: first byte ${round(median(ok.map((run) => run.firstByteMs)))} ms, ` +
      `total ${round(median(totals))} ms (median), ${round(ok[0]!.bytes / 1024 / 1024)} MB; service RSS peak ${rssPeakMb} MB`
    : 'no successful download';
  return {
    seconds: round(seconds),
    requests: runs.length,
    rps: round(runs.length / seconds),
    p50: totals.length ? round(median(totals)) : null,
    p99: totals.length ? round(Math.max(...totals)) : null,
    mean: totals.length ? round(totals.reduce((a, b) => a + b, 0) / totals.length) : null,
    errors: runs.length - ok.length,
    statusCodes,
    rssPeakMb,
    note,
  };
}
