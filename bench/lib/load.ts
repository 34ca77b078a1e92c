/**
 * One load phase: autocannon against a URL with a request generator (each request may have
 * its own path, token and body: distinct employees, dates and pending items), the latency
 * of every response recorded at full precision, the server's RSS sampled meanwhile.
 */
import autocannon, { type AutocannonRequest, type AutocannonResult } from 'autocannon';
import { cpuMs, sampleRss } from './children.js';

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  token?: string;
  /** Further headers (the back-office session cookie and X-CSRFToken of /graphql). */
  headers?: Record<string, string>;
  body?: unknown;
}

export interface LoadOptions {
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  /** The next request; null when a finite supply (pending items, free dates) is exhausted. */
  next: () => RequestSpec | null;
  /** Requests the generator can still produce (writes); unlimited when absent. */
  supply?: number;
  /** Process whose RSS is sampled (the server under test). */
  pid?: number;
  /** Process whose CPU time (user + system) is counted over the measured phase (the server answering). */
  cpuPid?: number;
}

export interface LoadResult {
  seconds: number;
  requests: number;
  rps: number;
  /** Latency of 2xx responses, ms. */
  p50: number | null;
  p99: number | null;
  mean: number | null;
  /** Non-2xx responses plus connection errors and timeouts. */
  errors: number;
  statusCodes: Record<string, number>;
  rssPeakMb: number | null;
  /**
   * CPU time (user + system, /proc/<pid>/stat) of the answering server over the phase, divided by
   * its responses: the fixed cost of a request in the server's own process, in ms.
   */
  cpuMsPerRequest?: number | null;
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[index]! * 100) / 100;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  const request: AutocannonRequest = {
    setupRequest(req) {
      const spec = options.next();
      if (!spec) {
        // Exhausted supply: a harmless request the run will not count (maxOverallRequests stops it).
        return { ...req, method: 'GET', path: '/api/health/', headers: {}, body: undefined };
      }
      const headers: Record<string, string> = { ...spec.headers };
      if (spec.token) headers.authorization = `Bearer ${spec.token}`;
      let body: string | undefined;
      if (spec.body !== undefined) {
        body = JSON.stringify(spec.body);
        headers['content-type'] = 'application/json';
      }
      return { ...req, method: spec.method, path: spec.path, headers, body };
    },
  };
  const rss = options.pid ? sampleRss(options.pid) : null;
  const cpuBefore = options.cpuPid ? cpuMs(options.cpuPid) : null;
  const started = process.hrtime.bigint();
  const result = await new Promise<AutocannonResult>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        duration: options.duration,
        timeout: 30,
        requests: [request],
        ...(options.supply !== undefined ? { maxOverallRequests: Math.max(options.supply, options.connections) } : {}),
      },
      (error, res) => (error ? reject(error) : resolve(res)),
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const rssPeakMb = rss ? rss.stop() : null;
  const cpuAfter = options.cpuPid ? cpuMs(options.cpuPid) : null;
  const statusCodes: Record<string, number> = {};
  let requests = 0;
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {}) as Array<[string, { count: number }]>) {
    statusCodes[code] = Number(count);
    requests += Number(count);
  }
  latencies.sort((a, b) => a - b);
  const mean = latencies.length ? Math.round((latencies.reduce((a, b) => a + b, 0) / latencies.length) * 100) / 100 : null;
  return {
    seconds: Math.round(seconds * 100) / 100,
    requests,
    rps: Math.round((requests / seconds) * 10) / 10,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    mean,
    errors: result.non2xx + result.errors + result.timeouts,
    statusCodes,
    rssPeakMb,
    ...(options.cpuPid
      ? { cpuMsPerRequest: cpuBefore !== null && cpuAfter !== null && requests > 0
          ? Math.round(((cpuAfter - cpuBefore) / requests) * 1000) / 1000 : null }
      : {}),
  };
}
