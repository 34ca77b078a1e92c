/**
 * Operations a host expects (issue 31 point 4): GET /metrics (Prometheus text, scraped and parsed
 * here) reachable from the allowed addresses or with the bearer secret only, /livez (liveness)
 * beside /api/health/ (readiness), compressed answers (negotiated; sizes printed for
 * BENCHMARKS.md), and the request log lines (JSON or human, LOG_REQUESTS).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger, humanLine } from '../../src/log.js';
import { compilePendingValidators } from '../../src/http/validation.js';
import { createApp } from '../../src/server.js';
import { ensureWorkerSchema } from '../../worker/runner.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format (version 0.0.4): HELP/TYPE comments and one sample a line. */
function parseMetrics(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    // A float, or NaN, +Inf, -Inf, read as Prometheus reads them (Go's ParseFloat: any letter case;
    // prom-client writes « Nan » for an event-loop mean that has no sample yet).
    const special: Record<string, number> = { nan: Number.NaN, '+inf': Infinity, inf: Infinity, '-inf': -Infinity };
    const word = match[3]!.toLowerCase();
    const value = word in special ? special[word]! : Number(match[3]);
    if (Number.isNaN(value) && word !== 'nan') throw new Error(`not a number: ${line}`);
    samples.push({ name: match[1]!, labels, value });
  }
  return { samples, types };
}

const sample = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))?.value;

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A GET whose body is kept as sent (fetch would decompress it). */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

function decoded(response: RawResponse): Buffer {
  const encoding = response.headers['content-encoding'];
  if (encoding === 'gzip') return gunzipSync(response.body);
  if (encoding === 'br') return brotliDecompressSync(response.body);
  return response.body;
}

/** Another server on the same database with other settings; closed by the caller. */
async function serverWith(config: Config, options: Parameters<typeof createApp>[1] = {}) {
  const app = await createApp(config, options);
  return app.listen(0, '127.0.0.1');
}

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

describe('GET /metrics', () => {
  it('from the loopback: the Prometheus text with requests by route and status, the pool, jobs and e-mails', async () => {
    expect((await env.get('/api/health/')).status).toBe(200);
    expect((await env.get('/api/absences/', null)).status).toBe(401);
    const response = await fetch(`${env.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const { samples, types } = parseMetrics(await response.text());
    expect(types.get('wfm_http_requests_total')).toBe('counter');
    expect(types.get('wfm_http_request_duration_seconds')).toBe('histogram');
    // The route's pattern, never the address as typed.
    expect(sample(samples, 'wfm_http_requests_total', { method: 'GET', route: '/api/health/', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(samples, 'wfm_http_requests_total', { method: 'GET', route: '/api/absences/', status: '401' })).toBe(1);
    expect(sample(samples, 'wfm_http_request_duration_seconds_count', { route: '/api/health/', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(samples, 'wfm_http_request_duration_seconds_bucket', { route: '/api/health/', le: '+Inf' })).toBeGreaterThanOrEqual(1);
    for (const name of ['wfm_db_pool_in_use', 'wfm_db_pool_waiting']) {
      expect(types.get(name)).toBe('gauge');
      expect(sample(samples, name)).toBeGreaterThanOrEqual(0);
    }
    expect(sample(samples, 'wfm_database_up')).toBe(1);
    // Without graphile-worker's schema (no worker ran on this database): no job.
    expect(sample(samples, 'wfm_jobs_queued')).toBe(0);
    expect(sample(samples, 'wfm_jobs_failed')).toBe(0);
    // Node's own figures come along.
    expect(sample(samples, 'process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
    expect(sample(samples, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
  });

  it('two scrapes back to back: both in the text format (a gauge with no sample reads NaN, as the format allows)', async () => {
    // The event-loop delay histogram samples every 10 ms and is reset at each scrape: a second
    // scrape within 10 ms finds no sample, and prom-client writes its mean as « Nan ».
    const texts = await Promise.all([fetch(`${env.url}/metrics`), fetch(`${env.url}/metrics`)].map(async (r) => (await r).text()));
    for (const text of texts) expect(parseMetrics(text).types.get('wfm_http_requests_total')).toBe('counter');
    expect(() => parseMetrics('x_total twelve')).toThrow('not a number: x_total twelve');
    expect(parseMetrics('x NaN\ny Nan\nz -Inf').samples.map((s) => s.value)).toEqual([Number.NaN, Number.NaN, -Infinity]);
  });

  it('counts the jobs queued and failed and the e-mails pending and abandoned as the database holds them', async () => {
    await ensureWorkerSchema(env.config);
    await env.db.query("select graphile_worker.add_job('purge_audit_log', '{}'::json)");
    await env.db.query("select graphile_worker.add_job('purge_storage_garbage', '{}'::json)");
    await env.db.query("select graphile_worker.add_job('purge_rate_limit_windows', '{}'::json)");
    await env.db.query("update graphile_worker._private_jobs set attempts = max_attempts where task_id = (select id from graphile_worker._private_tasks where identifier = 'purge_audit_log')");
    await env.db.query(`insert into app_private.email_outbox (kind, to_address, subject, body_text, attempts)
      values ('test', 'a@example.org', 'Objet', 'Texte', 0), ('test', 'b@example.org', 'Objet', 'Texte', 3),
             ('test', 'c@example.org', 'Objet', 'Texte', 10)`);
    await env.db.query(`insert into app_private.email_outbox (kind, to_address, subject, body_text, sent_at)
      values ('test', 'd@example.org', 'Objet', 'Texte', now())`);
    const { rows } = await env.db.query<{ pending: string }>('select count(*) filter (where sent_at is null and attempts < 10)::text as pending from app_private.email_outbox');
    // The outbox's inserts queued the e-mail drain job too: three jobs waiting, one failed.
    const jobs = await env.db.query<{ task_identifier: string; failed: boolean }>(
      'select task_identifier, attempts >= max_attempts as failed from graphile_worker.jobs order by task_identifier');
    expect(jobs.rows).toEqual([
      { task_identifier: 'drain_email_outbox', failed: false }, { task_identifier: 'purge_audit_log', failed: true },
      { task_identifier: 'purge_rate_limit_windows', failed: false }, { task_identifier: 'purge_storage_garbage', failed: false },
    ]);
    const { samples } = parseMetrics(await (await fetch(`${env.url}/metrics`)).text());
    expect(sample(samples, 'wfm_jobs_queued')).toBe(3);
    expect(sample(samples, 'wfm_jobs_failed')).toBe(1);
    expect(sample(samples, 'wfm_emails_pending')).toBe(Number(rows[0]!.pending));
    expect(sample(samples, 'wfm_emails_abandoned')).toBe(1);
  });

  it('from an address outside METRICS_ALLOW: 404 without the bearer secret, the metrics with it', async () => {
    const token = randomBytes(24).toString('hex');
    const running = await serverWith({ ...env.config, metricsAllow: ['10.0.0.0/8', 'fd00::/8'], metricsToken: token });
    try {
      const refused = await fetch(`${running.url}/metrics`);
      expect(refused.status).toBe(404);
      expect(await refused.text()).not.toContain('wfm_');
      expect((await fetch(`${running.url}/metrics`, { headers: { authorization: `Bearer ${token}x` } })).status).toBe(404);
      expect((await fetch(`${running.url}/metrics`, { headers: { authorization: `Bearer ${token.slice(1)}` } })).status).toBe(404);
      const allowed = await fetch(`${running.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(allowed.status).toBe(200);
      expect(parseMetrics(await allowed.text()).types.get('wfm_http_requests_total')).toBe('counter');
    } finally {
      await running.close();
    }
    // Without a secret nobody outside the list gets them, whatever the header says.
    const closed = await serverWith({ ...env.config, metricsAllow: ['10.0.0.0/8'], metricsToken: null });
    try {
      expect((await fetch(`${closed.url}/metrics`, { headers: { authorization: 'Bearer anything', 'x-forwarded-for': '10.1.2.3' } })).status).toBe(404);
    } finally {
      await closed.close();
    }
  });

  it('refuses a METRICS_ALLOW or METRICS_TOKEN it cannot use, saying which', async () => {
    const base = { DATABASE_URL: 'postgres://x@localhost/x', JWT_SECRET: 'x'.repeat(32) };
    expect(() => loadConfig({ ...base, METRICS_TOKEN: 'short' })).toThrow('METRICS_TOKEN must be at least 32 characters long.');
    expect(loadConfig(base).metricsAllow).toEqual(['127.0.0.1', '::1']);
    expect(loadConfig({ ...base, METRICS_ALLOW: ' 10.0.0.0/8 , 192.168.1.7' }).metricsAllow).toEqual(['10.0.0.0/8', '192.168.1.7']);
    await expect(createApp({ ...env.config, metricsAllow: ['10.0.0.0/33'] })).rejects.toThrow('METRICS_ALLOW: "10.0.0.0/33" has no valid prefix length.');
    await expect(createApp({ ...env.config, metricsAllow: ['localhost'] })).rejects.toThrow('METRICS_ALLOW: "localhost" is not an IP address or subnet.');
  });
});

describe('start-up', () => {
  it('the validators are compiled at their first use, and every one of them compiles', async () => {
    const running = await serverWith(env.config, { logger: createLogger({ logFormat: 'json', logLevel: 'silent' }) });
    try {
      // A validation before and after: the same answer from a lazily compiled validator.
      const before = await fetch(`${running.url}/api/planning/?from=2026-13-01`);
      expect(before.status).toBe(401);
      expect(compilePendingValidators()).toBeGreaterThan(100);
      expect(compilePendingValidators()).toBe(0);
      const token = await env.login('rh1');
      const invalid = await fetch(`${running.url}/api/planning/?from=2026-13-01`, { headers: { authorization: `Bearer ${token}` } });
      expect(invalid.status).toBe(400);
      expect(await invalid.json()).toMatchObject({ from: ['Date invalide : format attendu AAAA-MM-JJ.'] });
    } finally {
      await running.close();
    }
  });
});

describe('liveness and readiness', () => {
  it('/livez answers without the database; /api/health/ (readiness) says the database is away', async () => {
    const running = await serverWith({ ...env.config, authDatabaseUrl: 'postgres://nobody@127.0.0.1:1/none' }, { logger: createLogger({ logFormat: 'json', logLevel: 'silent' }) });
    try {
      const live = await fetch(`${running.url}/livez`);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'ok' });
      expect(live.headers.get('cache-control')).toBe('no-store');
      const ready = await fetch(`${running.url}/api/health/`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'error', database: 'unavailable' });
    } finally {
      await running.close();
    }
  });
});

describe('compression', () => {
  let webDist: string;
  const js = `export const days = [${Array.from({ length: 400 }, (_, i) => `"jour-${i}"`).join(',')}];\n`;
  const png = randomBytes(4096);
  beforeAll(async () => {
    webDist = await mkdtemp(path.join(tmpdir(), 'wfm-web-dist-'));
    await mkdir(path.join(webDist, 'assets'));
    await writeFile(path.join(webDist, 'index.html'), `<!doctype html><html lang="fr"><title>WFM</title><body>${'<p>Bonjour</p>'.repeat(200)}</body></html>`);
    await writeFile(path.join(webDist, 'assets', 'index-abc.js'), js);
    await writeFile(path.join(webDist, 'assets', 'logo-abc.png'), png);
  });
  afterAll(async () => {
    await rm(webDist, { recursive: true, force: true });
  });

  it('JSON, HTML and JavaScript in brotli or gzip as negotiated, identity otherwise; images as they are (sizes printed)', async () => {
    const running = await serverWith(env.config, { webDist, logger: createLogger({ logFormat: 'json', logLevel: 'silent' }) });
    const sizes: string[] = [];
    try {
      for (const [label, address] of [['OpenAPI document (JSON)', '/api/schema/'], ['page (HTML)', '/absences'], ['bundle (JavaScript)', '/assets/index-abc.js']] as const) {
        const plain = await rawGet(`${running.url}${address}`);
        const gzip = await rawGet(`${running.url}${address}`, { 'accept-encoding': 'gzip' });
        const brotli = await rawGet(`${running.url}${address}`, { 'accept-encoding': 'gzip, deflate, br' });
        expect(plain.status).toBe(200);
        expect(plain.headers['content-encoding']).toBeUndefined();
        expect(gzip.headers['content-encoding']).toBe('gzip');
        expect(brotli.headers['content-encoding']).toBe('br');
        for (const compressed of [gzip, brotli]) {
          expect(compressed.headers.vary).toMatch(/Accept-Encoding/i);
          expect(decoded(compressed).equals(plain.body)).toBe(true);
          expect(compressed.body.length).toBeLessThan(plain.body.length / 2);
        }
        sizes.push(`${label}: ${plain.body.length} B, gzip ${gzip.body.length} B, brotli ${brotli.body.length} B`);
      }
      // A client that refuses compression gets none.
      const refused = await rawGet(`${running.url}/api/schema/`, { 'accept-encoding': 'identity' });
      expect(refused.headers['content-encoding']).toBeUndefined();
      // An image is compressed already: sent as it is, whatever the client accepts.
      const image = await rawGet(`${running.url}/assets/logo-abc.png`, { 'accept-encoding': 'gzip, br' });
      expect(image.status).toBe(200);
      expect(image.headers['content-encoding']).toBeUndefined();
      expect(image.body.equals(png)).toBe(true);
      // Under 1 KB: not worth it.
      const small = await rawGet(`${running.url}/livez`, { 'accept-encoding': 'gzip, br' });
      expect(small.headers['content-encoding']).toBeUndefined();
      console.log(`compressed answers:\n  ${sizes.join('\n  ')}`);
    } finally {
      await running.close();
    }
  });

  it('a month of the planning in JSON through the API, compressed (size printed)', async () => {
    const token = await env.login('rh1');
    const address = '/api/planning/?from=2026-11-01&to=2026-11-30';
    const plain = await rawGet(`${env.url}${address}`, { authorization: `Bearer ${token}` });
    const brotli = await rawGet(`${env.url}${address}`, { authorization: `Bearer ${token}`, 'accept-encoding': 'br' });
    expect(plain.status).toBe(200);
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(JSON.parse(decoded(brotli).toString('utf8'))).toEqual(JSON.parse(plain.body.toString('utf8')));
    console.log(`planning month (fixture organisation): ${plain.body.length} B, brotli ${brotli.body.length} B`);
  });
});

describe('request log lines', () => {
  function sink() {
    const lines: string[] = [];
    return { lines, stream: new Writable({ write(chunk, _encoding, done) { lines.push(...String(chunk).split('\n').filter(Boolean)); done(); } }) };
  }

  it('JSON at level info: one line a request; LOG_REQUESTS=0: none', async () => {
    const on = sink();
    const running = await serverWith(env.config, { logger: createLogger({ logFormat: 'json', logLevel: 'info' }, on.stream) });
    const off = sink();
    const quiet = await serverWith({ ...env.config, logRequests: false }, { logger: createLogger({ logFormat: 'json', logLevel: 'info' }, off.stream) });
    try {
      await fetch(`${running.url}/livez`);
      await fetch(`${running.url}/api/health/`);
      await fetch(`${quiet.url}/api/health/`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const requests = on.lines.map((line) => JSON.parse(line) as { req?: { url: string }; res?: { statusCode: number } }).filter((record) => record.req);
      expect(requests.map((record) => [record.req!.url, record.res!.statusCode])).toEqual([['/api/health/', 200]]);
      expect(off.lines).toEqual([]);
    } finally {
      await running.close();
      await quiet.close();
    }
  });

  it('human (the demo): no line for a request unless LOG_REQUESTS=1; a failed request always, short', async () => {
    const demo = sink();
    const running = await serverWith({ ...env.config, logFormat: 'human', logLevel: 'warn', logRequests: null }, { logger: createLogger({ logFormat: 'human', logLevel: 'warn' }, demo.stream) });
    const asked = sink();
    const verbose = await serverWith({ ...env.config, logFormat: 'human', logLevel: 'info', logRequests: true }, { logger: createLogger({ logFormat: 'human', logLevel: 'info' }, asked.stream) });
    const broken = sink();
    const away = await serverWith({ ...env.config, authDatabaseUrl: 'postgres://nobody@127.0.0.1:1/none', logFormat: 'human', logLevel: 'warn', logRequests: null },
      { logger: createLogger({ logFormat: 'human', logLevel: 'warn' }, broken.stream) });
    try {
      await fetch(`${running.url}/api/health/`);
      await fetch(`${verbose.url}/api/health/`);
      expect((await fetch(`${away.url}/api/health/`)).status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(demo.lines).toEqual([]);
      expect(asked.lines).toHaveLength(1);
      expect(asked.lines[0]).toMatch(/^\d\d:\d\d:\d\d GET \/api\/health\/ 200 \d+ ms$/);
      const failed = broken.lines.filter((line) => line.includes('/api/health/'));
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatch(/^\d\d:\d\d:\d\d error GET \/api\/health\/ 503 \d+ ms: request errored$/);
    } finally {
      await running.close();
      await verbose.close();
      await away.close();
    }
  });

  it('humanLine: a message, a request, an error', () => {
    const time = new Date('2026-11-16T09:04:31Z').getTime();
    const clock = new Date(time).toTimeString().slice(0, 8);
    expect(humanLine({ level: 40, time, msg: 'database unreachable at start-up' })).toBe(`${clock} warn database unreachable at start-up`);
    expect(humanLine({ level: 30, time, msg: 'request completed', req: { method: 'GET', url: '/api/auth/me/' }, res: { statusCode: 200 }, responseTime: 3.4 }))
      .toBe(`${clock} GET /api/auth/me/ 200 3 ms`);
    expect(humanLine({ level: 50, time, msg: 'unhandled error', err: { message: 'boom', stack: 'Error: boom\n    at f (x.js:1:1)' } }, true))
      .toBe(`${clock} error unhandled error: boom\n    at f (x.js:1:1)`);
  });
});
