/**
 * The closed default (SPEC Authentication rule 2): every route needs an authenticated
 * account except the public ones (health, token, password reset and its confirmation, the
 * calendar feeds read with their secret address). The manifest is iterated, so routes added later are
 * covered without touching this file. Also: the health probe and the security headers.
 */
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/http/routes/index.js';
import type { RouteSpec } from '../../src/http/route.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import type { HttpResponse } from '../helpers/http.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

/** /api/employees/{id}/account-activation/ → /api/employees/1/account-activation/ */
function concretePath(route: RouteSpec): string {
  return route.path.replace(/\{[a-z_]+\}/g, '1');
}

function call(route: RouteSpec, token: string | null, headers: Record<string, string> = {}): Promise<HttpResponse> {
  const hasBody = ['post', 'put', 'patch'].includes(route.method);
  return env.request(route.method.toUpperCase(), concretePath(route), { token, headers, ...(hasBody ? { body: {} } : {}) });
}

const PUBLIC_MANIFEST = [
  'GET /api/health/',
  'POST /api/auth/token/',
  'POST /api/auth/password/reset/',
  'POST /api/auth/password/reset/confirm/',
  'GET /api/feeds/{token}.ics',
  // The List-Unsubscribe address of the notification e-mails (issue 28): its secret is its authentication.
  'POST /api/notifications/unsubscribe/',
];

const protectedRoutes = routes.filter((route) => route.auth !== 'public');

function expect401(res: HttpResponse, what: string): void {
  expect(res.status, what).toBe(401);
  expect(Object.keys(res.body), what).toEqual(['detail']);
  expect(res.headers.get('www-authenticate'), what).toMatch(/^Bearer/);
}

describe('closed by default', () => {
  it('the public routes of the manifest are exactly health, token, password reset and its confirmation, calendar feeds', () => {
    const publicRoutes = routes.filter((route) => route.auth === 'public').map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(publicRoutes.sort()).toEqual([...PUBLIC_MANIFEST].sort());
    expect(protectedRoutes.length).toBeGreaterThan(0);
    expect(routes.every((route) => ['public', 'account', 'staff'].includes(route.auth))).toBe(true);
  });

  it('/api/schema/ and /api/docs/ (served outside the manifest) answer without authentication', async () => {
    const schema = await env.get('/api/schema/');
    expect(schema.status).toBe(200);
    expect(schema.body.openapi).toBe('3.1.0');
    const docs = await env.get('/api/docs/');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('every other route of the manifest answers 401 {"detail"} without a token', async () => {
    for (const route of protectedRoutes) {
      expect401(await call(route, null), `${route.method} ${route.path}`);
    }
  });

  it('every other route answers 401 with a token that is invalid, expired or of a closed account', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = jwt.sign({ sub: String(env.ids.accounts!.admin), typ: 'access', iat: now - 30000, exp: now - 60 }, env.config.jwtSecret);
    const forged = jwt.sign({ sub: String(env.ids.accounts!.admin), typ: 'access' }, 'not-the-server-secret-at-all-000000', { expiresIn: 600 });
    const closed = await env.login('farid');
    await env.db.query('update app_public.accounts set is_active = false where id = $1', [env.ids.accounts!.farid]);
    for (const route of protectedRoutes) {
      const what = `${route.method} ${route.path}`;
      expect401(await call(route, expired), `${what} (expired)`);
      expect401(await call(route, forged), `${what} (forged)`);
      expect401(await call(route, closed), `${what} (closed account)`);
      expect401(await call(route, null, { authorization: 'Basic YWRtaW46eA==' }), `${what} (other scheme)`);
    }
  });

  it('the public routes answer without a token (not 401)', async () => {
    expect((await env.get('/api/health/')).status).toBe(200);
    expect((await env.post('/api/auth/token/', null, {})).status).toBe(400);
    expect((await env.post('/api/auth/password/reset/', null, {})).status).toBe(400);
    expect((await env.post('/api/auth/password/reset/confirm/', null, {})).status).toBe(400);
    // A calendar feed: its secret address is its authentication (unknown secret: 404, not 401).
    expect((await env.get(`/api/feeds/${'0'.repeat(64)}.ics`)).status).toBe(404);
  });

  it('an unknown /api address answers 404 {"detail"}', async () => {
    const res = await env.get('/api/does-not-exist/');
    expect(res.status).toBe(404);
    expect(Object.keys(res.body)).toEqual(['detail']);
  });
});

describe('GET /api/health/', () => {
  it('answers 200 {"status":"ok","database":"ok"} without authentication', async () => {
    const res = await env.get('/api/health/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', database: 'ok' });
  });

  it('answers 503 when the database is unreachable, and says so', async () => {
    // A server whose request pool points to a closed port.
    const down = await startTestEnv({ configOverrides: { authDatabaseUrl: 'postgres://wfm_authenticator@127.0.0.1:1/nowhere' } });
    try {
      const res = await down.get('/api/health/');
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ status: 'error', database: 'unavailable' });
      expect(typeof res.body.detail).toBe('string');
      expect(res.headers.get('retry-after')).toBe('5');
    } finally {
      await down.close();
    }
  });
});

describe('security headers', () => {
  async function sample(): Promise<Array<[string, HttpResponse]>> {
    const token = await env.login('admin');
    const out: Array<[string, HttpResponse]> = [];
    for (const route of routes) {
      out.push([`${route.method} ${route.path} anonymous`, await call(route, null)]);
      out.push([`${route.method} ${route.path} authenticated`, await call(route, token)]);
    }
    out.push(['schema', await env.get('/api/schema/')]);
    out.push(['docs', await env.get('/api/docs/')]);
    out.push(['docs asset', await env.get('/api/docs/swagger-ui.css')]);
    out.push(['docs initializer', await env.get('/api/docs/initializer.js')]);
    out.push(['unknown', await env.get('/api/nothing-here/')]);
    out.push(['405', await env.post('/api/absence-types/', token, {})]);
    out.push(['400', await env.request('POST', '/api/auth/token/', { rawBody: '{' })]);
    return out;
  }

  it('X-Content-Type-Options: nosniff and Cache-Control: no-store on every /api response', async () => {
    const responses = await sample();
    const statuses = new Set(responses.map(([, res]) => res.status));
    // The sample covers successes and the usual errors.
    for (const status of [200, 400, 401, 404, 405]) expect(statuses.has(status), `status ${status} sampled`).toBe(true);
    for (const [what, res] of responses) {
      expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
      expect(res.headers.get('cache-control'), what).toBe('no-store');
    }
  });

  it('nosniff also outside /api', async () => {
    const res = await env.get('/');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-powered-by')).toBeNull();
  });
});
