/**
 * Child process of `npm run bench`: the physical limit of this stack for an authenticated
 * read. A bare node:http server and a pg pool of the same size as the service's; each
 * request sends ONE simple-protocol message with the same SQL the service runs for
 * GET /api/auth/me/ (begin, reload the account, switch to the visitor role, app_public.me(),
 * commit) and answers its JSON. No Express, no JWT, no validation, no logging.
 *   GET /me?account=<id>
 * Two more floors, to say what the service's rules cost against what Express and the rate limit
 * cost by themselves (BENCHMARKS.md, "A cheap request path"): the same message with the request's
 * rate-limit hit before the commit, as the service counts it (a rule, not a layer), served by
 * node:http, then by an Express application with nothing but that route.
 *   GET /me-hit?account=<id>            node:http, the read and the hit
 *   GET /express/me-hit?account=<id>    Express (x-powered-by off), the read and the hit
 *   env: AUTH_DATABASE_URL, DB_POOL_SIZE
 */
import http from 'node:http';
import express from 'express';
import pg from 'pg';
import { sessionOptions } from '../src/db/pool.js';

const pool = new pg.Pool({
  connectionString: process.env.AUTH_DATABASE_URL,
  max: Number(process.env.DB_POOL_SIZE ?? 10),
  options: sessionOptions({ businessTimeZone: 'Europe/Paris', publicUrl: 'http://localhost' }),
  application_name: 'wfm-bench-bare',
});
pool.on('error', () => {});

/** The read of GET /api/auth/me/ in one message; with `hit`, the request's rate-limit hit before the commit. */
function answer(res: http.ServerResponse, account: number, hit: boolean): void {
  // The id is a checked integer: the only value spliced into the message.
  void (async () => {
    const client = await pool.connect();
    let broken = false;
    try {
      const results = (await client.query(
        `begin; select app_private.begin_request(${account}); set local role wfm_visitor; ` +
          'select app_public.me() as result; ' +
          (hit ? `reset role; select app_private.rate_limit_hit_or_fail('account:${account}', 100000000, '60 seconds'); ` : '') +
          'commit;',
      )) as unknown as pg.QueryResult[];
      const body = JSON.stringify(results[3]!.rows[0]?.result ?? null);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    } catch {
      broken = await client.query('rollback').then(() => false, () => true);
      res.writeHead(500).end();
    } finally {
      client.release(broken);
    }
  })();
}

/** The account named by the query string, else null. */
function accountOf(url: URL): number | null {
  const account = Number(url.searchParams.get('account'));
  return Number.isSafeInteger(account) && account > 0 ? account : null;
}

const app = express();
app.disable('x-powered-by');
app.get('/express/me-hit', (req, res) => {
  const account = accountOf(new URL(req.url, 'http://localhost'));
  if (account === null) res.status(404).end();
  else answer(res, account, true);
});

const server = http.createServer((req, res) => {
  if (req.url?.startsWith('/express/')) {
    app(req, res);
    return;
  }
  const url = new URL(req.url ?? '/', 'http://localhost');
  const account = accountOf(url);
  if ((url.pathname !== '/me' && url.pathname !== '/me-hit') || account === null) {
    res.writeHead(404).end();
    return;
  }
  answer(res, account, url.pathname === '/me-hit');
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.send?.({ ready: true, url: `http://127.0.0.1:${port}` });
});

const stop = () => {
  server.close();
  void pool.end().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('disconnect', stop);
