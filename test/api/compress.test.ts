/**
 * The API's own compression (src/http/compress.ts, issue 31 point 5): a route that writes its own
 * answers (the JSON text of its call, an error envelope) compresses them itself instead of going
 * through the `compression` middleware, with the middleware's decisions: the negotiation of
 * Accept-Encoding (compared here with the middleware's on the same headers), the 1 KB threshold,
 * none for HEAD, `Vary: Accept-Encoding` on every JSON answer, no Content-Length once compressed;
 * and the API's headers (nosniff, no-store, …) sent with the answer, on success and error alike.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import compression from 'compression';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROTLI_OPTIONS, negotiateEncoding } from '../../src/http/compress.js';
import { sendsItsOwnAnswers } from '../../src/http/router.js';
import { routes } from '../../src/http/routes/index.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A request whose body is kept as sent (fetch would decompress it). */
function raw(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject).end();
  });
}

function decoded(response: RawResponse): Buffer {
  const encoding = response.headers['content-encoding'];
  if (encoding === 'gzip') return gunzipSync(response.body);
  if (encoding === 'br') return brotliDecompressSync(response.body);
  if (encoding === 'deflate') return inflateSync(response.body);
  return response.body;
}

const ACCEPT_ENCODINGS = [
  'gzip', 'br', 'deflate', 'identity', '*', 'gzip, deflate, br', 'deflate, gzip', 'br;q=0.5, gzip', 'gzip;q=0.5, br;q=0.9',
  'gzip;q=0', 'br;q=0, gzip;q=0', '*;q=0', 'identity;q=0', 'identity;q=0, *;q=0', 'compress', 'x-gzip', 'GZIP', 'Br',
  'gzip;q=0.8, br;q=0.8, deflate;q=0.9', 'br;q=0, *', ' , gzip', 'gzip;q=abc', 'deflate, gzip;q=1.0, *;q=0.5',
  'identity, br', 'identity;q=1, br;q=0.9', 'identity;q=0.5, deflate', 'gzip ; q=0.7 , br ; q=0.6', 'br;level=4, gzip',
  ';q=1, gzip', 'gzip;q=1;foo=bar, br;foo=bar;q=0.2', '*;q=0.3, gzip;q=0.2', 'zstd, br', 'zstd',
];

describe('the negotiation of Accept-Encoding', () => {
  it('chooses what the compression middleware chooses, for every header of the list', async () => {
    const app = express();
    app.use(compression({ brotli: BROTLI_OPTIONS }));
    app.get('/', (_req, res) => {
      res.type('application/json').send(JSON.stringify({ text: 'x'.repeat(4000) }));
    });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const differences: string[] = [];
      for (const header of [...ACCEPT_ENCODINGS, '']) {
        const response = await raw(url, header === '' ? {} : { 'accept-encoding': header });
        const middleware = response.headers['content-encoding'] ?? null;
        const ours = negotiateEncoding(header === '' ? undefined : header);
        if (middleware !== ours) differences.push(`${JSON.stringify(header)}: middleware ${middleware}, API ${ours}`);
      }
      expect(differences).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('the answers of an API route that writes its own', () => {
  let env: TestEnv;
  let token: string;
  beforeAll(async () => {
    env = await startTestEnv();
    token = await env.login('rh1');
  });
  afterAll(async () => {
    await env?.close();
  });

  const own = (method: string, path: string) => {
    const route = routes.find((r) => r.method === method && r.path === path);
    if (!route) throw new Error(`no route ${method} ${path}`);
    return sendsItsOwnAnswers(route);
  };
  const apiHeaders = (response: RawResponse) => {
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['referrer-policy']).toBe('same-origin');
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers.vary).toBe('Accept-Encoding');
  };

  it('a small answer (GET /api/auth/me/): as it is, its length, the API headers and Vary', async () => {
    expect(own('get', '/api/auth/me/')).toBe(true);
    const response = await raw(`${env.url}/api/auth/me/`, { authorization: `Bearer ${token}`, 'accept-encoding': 'gzip, br' });
    expect(response.status).toBe(200);
    expect(response.body.length).toBeLessThan(1024);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(response.headers['content-length'])).toBe(response.body.length);
    apiHeaders(response);
    expect(JSON.parse(response.body.toString('utf8'))).toMatchObject({ username: 'rh1' });
  });

  it('a list over 1 KB (GET /api/employees/): br, gzip, deflate as negotiated, chunked, the same text; none for HEAD or identity', async () => {
    expect(own('get', '/api/employees/')).toBe(true);
    const address = `${env.url}/api/employees/`;
    const authorization = `Bearer ${token}`;
    const plain = await raw(address, { authorization });
    expect(plain.status).toBe(200);
    expect(plain.body.length).toBeGreaterThanOrEqual(1024);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(Number(plain.headers['content-length'])).toBe(plain.body.length);
    apiHeaders(plain);
    for (const [accept, encoding] of [['gzip, deflate, br', 'br'], ['gzip', 'gzip'], ['deflate', 'deflate']] as const) {
      const response = await raw(address, { authorization, 'accept-encoding': accept });
      expect(response.status).toBe(200);
      expect(response.headers['content-encoding']).toBe(encoding);
      expect(response.headers['content-length']).toBeUndefined();
      expect(response.headers['transfer-encoding']).toBe('chunked');
      apiHeaders(response);
      expect(decoded(response).equals(plain.body)).toBe(true);
      expect(response.body.length).toBeLessThan(plain.body.length);
    }
    const identity = await raw(address, { authorization, 'accept-encoding': 'identity' });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.body.equals(plain.body)).toBe(true);
    const head = await raw(address, { authorization, 'accept-encoding': 'gzip, br' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-encoding']).toBeUndefined();
    expect(Number(head.headers['content-length'])).toBe(plain.body.length);
    expect(head.body.length).toBe(0);
    apiHeaders(head);
  });

  it('an error of such a route (401 without token, 404 past the last page): the envelope with the API headers', async () => {
    const unauthorised = await raw(`${env.url}/api/auth/me/`, { 'accept-encoding': 'gzip' });
    expect(unauthorised.status).toBe(401);
    expect(unauthorised.headers['www-authenticate']).toBe('Bearer realm="api"');
    expect(unauthorised.headers['content-type']).toBe('application/json; charset=utf-8');
    apiHeaders(unauthorised);
    expect(JSON.parse(unauthorised.body.toString('utf8'))).toHaveProperty('detail');
    const pastTheEnd = await raw(`${env.url}/api/employees/?page=9999`, { authorization: `Bearer ${token}`, 'accept-encoding': 'br' });
    expect(pastTheEnd.status).toBe(404);
    apiHeaders(pastTheEnd);
    expect(JSON.parse(pastTheEnd.body.toString('utf8'))).toEqual({ detail: 'Page non valide.' });
  });

  it('a route that does not (a custom handler, an OPTIONS answer): still behind the middleware, with the API headers', async () => {
    const options = await raw(`${env.url}/api/auth/me/`, {}, 'OPTIONS');
    expect(options.status).toBe(200);
    expect(options.headers.allow).toContain('GET');
    expect(options.headers['x-content-type-options']).toBe('nosniff');
    expect(options.headers['cache-control']).toBe('no-store');
    const custom = routes.find((r) => r.method === 'get' && !sendsItsOwnAnswers(r) && r.handler && r.auth === 'public'
      && !r.path.includes('{'));
    if (custom) {
      const response = await raw(`${env.url}${custom.path}`, { 'accept-encoding': 'gzip' });
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['cache-control']).toBeDefined();
    }
  });
});
