/**
 * The team month's bytes (issue 29 point 6, BENCHMARKS.md "The team month, fast and light"):
 * GET /api/planning/ (the full read the team planning drew before) and GET /api/planning/grid/
 * (the compact grid it reads since), for one month, as a real service sends them: uncompressed,
 * and over the wire with `Accept-Encoding: gzip` (the server's compression middleware), counted
 * from the socket's body bytes.
 *
 *   npx tsx bench/grid-sizes.ts                                    the demo (42 people), Admin, November 2026
 *   npx tsx bench/grid-sizes.ts --bench-template wfm_bench_default_<hash>
 *                                                                  and the bench's 200-people month (its first
 *                                                                  Manager n2, the month of its today)
 */
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { signAccessToken } from '../src/auth/jwt.js';
import { demoTemplate, DEMO_TEST_PASSWORD, migratedDatabase } from '../test/helpers/demo.js';
import { startTestEnv, type TestEnv } from '../test/helpers/server.js';
import { databaseUrl } from '../test/helpers/settings.js';

const { values: args } = parseArgs({ options: { 'bench-template': { type: 'string' } } });

/** The body's bytes as they arrive (compressed when the server compressed), and its encoding. */
function fetchBytes(url: string, token: string, gzip: boolean): Promise<{ status: number; bytes: number; encoding: string | null }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (gzip) headers['accept-encoding'] = 'gzip';
    http.get(url, { headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => { bytes += chunk.length; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, encoding: (res.headers['content-encoding'] as string | undefined) ?? null }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function measure(env: TestEnv, token: string, from: string, to: string, what: string): Promise<void> {
  for (const route of ['/api/planning/', '/api/planning/grid/']) {
    const url = `${env.url}${route}?from=${from}&to=${to}`;
    const raw = await fetchBytes(url, token, false);
    const gzip = await fetchBytes(url, token, true);
    if (raw.status !== 200 || gzip.status !== 200) throw new Error(`${route}: ${raw.status}/${gzip.status}`);
    const people = (await env.get(`${route}?from=${from}&to=${to}`, token)).body.employees.length;
    console.log(`${what} | ${route} | ${people} people | raw ${(raw.bytes / 1024).toFixed(1)} KB | ` +
      `${gzip.encoding ?? 'identity'} ${(gzip.bytes / 1024).toFixed(1)} KB`);
  }
}

const cleanups: Array<() => Promise<unknown>> = [];
try {
  // The demo, loaded at the date of its tests.
  const storage = await mkdtemp(path.join(tmpdir(), 'wfm-grid-sizes-'));
  cleanups.push(() => rm(storage, { recursive: true, force: true }));
  const now = '2026-11-16T10:00:00+01:00';
  const demo = await demoTemplate(now, path.join(storage, 'storage'));
  cleanups.push(demo.drop);
  const demoEnv = await startTestEnv({ template: demo.name, now, configOverrides: { storageDir: path.join(storage, 'storage') } });
  cleanups.push(() => demoEnv.close());
  await measure(demoEnv, await demoEnv.login('admin', DEMO_TEST_PASSWORD), '2026-11-01', '2026-11-30', 'demo, Admin, November 2026');

  // The bench's dataset: a copy of its template with the empty table of ids startTestEnv reads.
  if (args['bench-template']) {
    if (!/^wfm_bench_[a-z0-9_]+$/.test(args['bench-template'])) throw new Error('--bench-template: a wfm_bench_* name is expected');
    const copy = await migratedDatabase(args['bench-template']);
    cleanups.push(copy.drop);
    const owner = new pg.Client({ connectionString: databaseUrl(copy.name) });
    await owner.connect();
    let today: string;
    let manager: number;
    try {
      await owner.query('create table public.fixture_ids (section text, key text, id int, primary key (section, key))');
      today = (await owner.query<{ today: string }>('select today::text from bench.windows')).rows[0]!.today;
      manager = (await owner.query<{ account_id: number }>(
        "select account_id from bench.actors where role = 'Manager n2' order by establishment_idx limit 1")).rows[0]!.account_id;
    } finally {
      await owner.end();
    }
    const env = await startTestEnv({ template: copy.name, now: `${today}T10:00:00+01:00` });
    cleanups.push(() => env.close());
    const [y, m] = today.split('-').map(Number) as [number, number];
    const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
    const mm = String(m).padStart(2, '0');
    await measure(env, signAccessToken(env.config.jwtSecret, manager), `${y}-${mm}-01`, `${y}-${mm}-${last}`, `bench, Manager n2, ${y}-${mm}`);
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
}
