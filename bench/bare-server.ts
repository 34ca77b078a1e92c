/**
 * Child process of `npm run bench`: the physical limit of this stack for an authenticated
 * read. A bare node:http server and a pg pool of the same size as the service's; each
 * request sends ONE simple-protocol message with the same SQL the service runs for
 * GET /api/auth/me/ (begin, reload the account, switch to the visitor role, app_public.me(),
 * commit) and answers its JSON. No Express, no JWT, no validation, no logging.
 *   GET /me?account=<id>
 *   env: AUTH_DATABASE_URL, DB_POOL_SIZE
 */
import http from 'node:http';
import pg from 'pg';
import { sessionOptions } from '../src/db/pool.js';

const pool = new pg.Pool({
  connectionString: process.env.AUTH_DATABASE_URL,
  max: Number(process.env.DB_POOL_SIZE ?? 10),
  options: sessionOptions({ businessTimeZone: 'Europe/Paris', publicUrl: 'http://localhost' }),
  application_name: 'wfm-bench-bare',
});
pool.on('error', () => {});

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const account = Number(url.searchParams.get('account'));
  if (url.pathname !== '/me' || !Number.isSafeInteger(account) || account <= 0) {
    res.writeHead(404).end();
    return;
  }
  // The id is a checked integer: the only value spliced into the message.
  void (async () => {
    const client = await pool.connect();
    let broken = false;
    try {
      const results = (await client.query(
        `begin; select app_private.begin_request(${account}); set local role wfm_visitor; ` +
          'select app_public.me() as result; commit;',
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
