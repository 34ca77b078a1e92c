/**
 * CSRF and body types (issue 25, finding 1): a request authenticated by the back-office session
 * cookie with an unsafe method needs its X-CSRFToken header whatever the letter case of its path
 * (the router matches paths case-insensitively: a prefix test on `/api/` let `/API/…` through), and
 * a body is read as JSON only when it says `application/json` (a plain HTML form posts
 * `text/plain`). Every unsafe route of the manifest is sent, not a hand list; the back-office's own
 * forms are found by walking its pages. Each refusal runs between two fingerprints of the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/http/routes/index.js';
import type { RouteSpec } from '../../src/http/route.js';
import { BackofficeVisitor, enrolAs } from '../helpers/backoffice.js';
import { databaseFingerprint } from '../helpers/fingerprint.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let root: BackofficeVisitor;

beforeAll(async () => {
  env = await startTestEnv();
  ({ visitor: root } = await enrolAs(env, 'root'));
}, 120_000);
afterAll(async () => {
  await env?.close();
});

const unsafeRoutes = routes.filter((route) => route.method !== 'get');

/** A value for a path parameter that its schema accepts (an id, an enum's first value, a pattern). */
function parameterValue(route: RouteSpec, name: string): string {
  const schema = (route.pathParams?.[name] ?? {}) as { enum?: string[]; pattern?: string; type?: string };
  if (schema.enum) return schema.enum[0]!;
  if (schema.pattern === '^[0-9a-f]{64}$') return 'a'.repeat(64);
  return '999999';
}

/**
 * The route's path in three letter cases: as written, upper case, mixed case (every other letter).
 * Only the literal segments change: a parameter's value keeps its case (an enum value is a value).
 */
export function pathCases(route: RouteSpec): Array<[string, string]> {
  const segments = route.path.split('/');
  const build = (transform: (text: string) => string) => segments
    .map((segment) => segment.replace(/\{([a-z_]+)\}|([^{]+)/g, (_all, param: string | undefined, literal: string | undefined) =>
      (param ? parameterValue(route, param) : transform(literal!))))
    .join('/');
  let flip = false;
  const mixed = (text: string) => [...text].map((c) => ((flip = !flip) ? c.toUpperCase() : c.toLowerCase())).join('');
  return [['lower', build((t) => t)], ['upper', build((t) => t.toUpperCase())], ['mixed', build(mixed)]];
}

/** The forged body of finding 1: a text/plain form whose name and value make a JSON object. */
const FORGED_BODY = '{"version":1,"reason":"x","name":"CSRF","pad":"=x"}';

async function send(method: string, path: string, headers: Record<string, string>, body?: string) {
  const response = await fetch(`${env.url}${path}`, { method, headers, body, redirect: 'manual' });
  return { status: response.status, text: await response.text() };
}

describe('CSRF: the session cookie on every unsafe route, whatever the letter case of its path', () => {
  it('the manifest has unsafe routes, and each is sent in three letter cases', () => {
    expect(unsafeRoutes.length).toBeGreaterThan(50);
    for (const route of unsafeRoutes) expect(new Set(pathCases(route).map(([, p]) => p)).size).toBe(3);
  });

  it('cookie without X-CSRFToken: 403 on every unsafe route (lower, UPPER, MiXeD case), as JSON or text/plain, nothing written', async () => {
    const before = await databaseFingerprint(env.db);
    const wrong: string[] = [];
    for (const route of unsafeRoutes) {
      for (const [kind, path] of pathCases(route)) {
        for (const type of ['application/json', 'text/plain']) {
          const method = route.method.toUpperCase();
          const answer = await send(method, path, { cookie: root.cookieHeader(), 'content-type': type }, FORGED_BODY);
          if (answer.status !== 403 || !answer.text.includes('Jeton CSRF')) wrong.push(`${method} ${path} (${kind}, ${type}): ${answer.status} ${answer.text.slice(0, 120)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(await databaseFingerprint(env.db)).toBe(before);
  }, 300_000);

  it('cookie with a wrong X-CSRFToken: 403 as well', async () => {
    const route = routes.find((r) => r.operationId === 'calendar_feeds_create')!;
    const before = await databaseFingerprint(env.db);
    for (const [, path] of pathCases(route)) {
      const answer = await send('POST', path, { cookie: root.cookieHeader(), 'content-type': 'application/json', 'x-csrftoken': 'x'.repeat(40) }, '{"kind":"planning"}');
      expect(answer.status, path).toBe(403);
    }
    expect(await databaseFingerprint(env.db)).toBe(before);
  });

  it('an unsafe request with the cookie and without its token on a path no route serves: refused too (403)', async () => {
    for (const path of ['/nowhere/', '/API/nowhere/', '/static/x', '/graphql', '/GraphQL/']) {
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        const answer = await send(method, path, { cookie: root.cookieHeader(), 'content-type': 'text/plain' }, FORGED_BODY);
        expect(answer.status, `${method} ${path}`).toBe(403);
      }
    }
  });

  it('the same session with its X-CSRFToken acts (the path case does not matter to the router)', async () => {
    const csrf = decodeURIComponent(root.cookies.get('wfm_csrftoken')!);
    const created = await send('POST', '/API/Calendar-Feeds/', { cookie: root.cookieHeader(), 'x-csrftoken': csrf, 'content-type': 'application/json' }, '{"kind":"planning"}');
    expect(created.status, created.text).toBe(201);
    const route = routes.find((r) => r.operationId === 'calendar_feeds_rotate')!;
    for (const [kind, path] of pathCases(route)) {
      const answer = await send('POST', path, { cookie: root.cookieHeader(), 'x-csrftoken': csrf });
      expect(answer.status, `${kind} ${path}: ${answer.text}`).toBe(200);
    }
  });
});

describe('body types: JSON only with application/json (415 otherwise, nothing written)', () => {
  const TYPES = ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', ''];

  it('every unsafe route refuses a body of another type, with the cookie and its token, in every letter case: 415 with the error envelope', async () => {
    const csrf = decodeURIComponent(root.cookies.get('wfm_csrftoken')!);
    const before = await databaseFingerprint(env.db);
    const wrong: string[] = [];
    for (const route of unsafeRoutes) {
      for (const [kind, path] of pathCases(route)) {
        for (const type of TYPES) {
          // An upload route reads multipart/form-data: that type is its own, tested by its upload tests.
          if (route.multipart && type.startsWith('multipart/')) continue;
          // The one-click unsubscribe (RFC 8058) reads a form body: that type is its own, tested in notification-emails.
          if (route.acceptsFormBody && type === 'application/x-www-form-urlencoded') continue;
          const method = route.method.toUpperCase();
          const headers: Record<string, string> = { cookie: root.cookieHeader(), 'x-csrftoken': csrf };
          if (type) headers['content-type'] = type;
          const answer = await send(method, path, headers, FORGED_BODY);
          let detail: unknown;
          try {
            detail = JSON.parse(answer.text).detail;
          } catch {
            detail = undefined;
          }
          if (answer.status !== 415 || typeof detail !== 'string' || !detail.includes('Content-Type: application/json')) {
            wrong.push(`${method} ${path} (${kind}, ${type || 'no type'}): ${answer.status} ${answer.text.slice(0, 120)}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(await databaseFingerprint(env.db)).toBe(before);
  }, 300_000);

  it('a bearer token is held to the same rule (415), and an empty body needs no type', async () => {
    const token = await env.login('rh1');
    const before = await databaseFingerprint(env.db);
    const forged = await send('POST', '/api/calendar-feeds/', { authorization: `Bearer ${token}`, 'content-type': 'text/plain' }, '{"kind":"planning"}');
    expect(forged.status).toBe(415);
    expect(await databaseFingerprint(env.db)).toBe(before);
    const json = await send('POST', '/api/calendar-feeds/', { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' }, '{"kind":"planning"}');
    expect(json.status, json.text).toBe(201);
    const rotate = await send('POST', '/api/calendar-feeds/planning/rotate/', { authorization: `Bearer ${token}`, 'content-type': 'text/plain' });
    expect(rotate.status, rotate.text).toBe(200);
  });

  it('a closed account sending a wrong type is told 401 first, as for any other input error', async () => {
    const token = await env.login('emma');
    await env.db.query('update app_public.accounts set is_active = false where username = $1', ['emma']);
    try {
      const answer = await send('POST', '/api/calendar-feeds/', { authorization: `Bearer ${token}`, 'content-type': 'text/plain' }, '{"kind":"planning"}');
      expect(answer.status).toBe(401);
    } finally {
      await env.db.query('update app_public.accounts set is_active = true where username = $1', ['emma']);
    }
  });

  it('the document lists 415 (and the CSRF 403) on every unsafe route', async () => {
    const schema = (await env.get('/api/schema/')).body as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    for (const route of unsafeRoutes) {
      const responses = schema.paths[route.path]![route.method]!.responses;
      expect(Object.keys(responses), route.operationId).toEqual(expect.arrayContaining(['403', '415']));
    }
  });
});

describe('the back-office: its own unsafe routes check the token of their form, whatever the letter case', () => {
  /** Every form action of the back-office reachable from its home page (a walk of its pages). */
  async function formActions(): Promise<string[]> {
    const seen = new Set<string>();
    const actions = new Set<string>();
    const shapes = new Set<string>();
    const actionShapes = new Set<string>();
    const queue = ['/backoffice/'];
    while (queue.length && seen.size < 300) {
      const page = queue.shift()!;
      if (seen.has(page)) continue;
      seen.add(page);
      const answer = await root.get(page);
      if (answer.status !== 200) continue;
      for (const [, action] of answer.text.matchAll(/<form[^>]*method="post"[^>]*action="([^"]+)"/g)) {
        const shape = action!.replace(/\/\d+\//g, '/{id}/');
        if (!actionShapes.has(shape)) {
          actionShapes.add(shape);
          actions.add(action!.replace(/&amp;/g, '&'));
        }
      }
      for (const [, href] of answer.text.matchAll(/href="(\/backoffice\/[^"#?]*)(?:\?[^"]*)?"/g)) {
        // One page of each kind (ids aside): the forms of a record's page are those of any record.
        const shape = href!.replace(/\/\d+\//g, '/{id}/');
        if (!seen.has(href!) && !shapes.has(shape) && !href!.includes('/static/')) {
          shapes.add(shape);
          queue.push(href!);
        }
      }
    }
    return [...actions];
  }

  it('every form of the back-office, posted without its token in three letter cases (and PUT, PATCH, DELETE): refused, nothing written', async () => {
    const actions = await formActions();
    expect(actions.length).toBeGreaterThan(20);
    const before = await databaseFingerprint(env.db);
    const wrong: string[] = [];
    for (const action of actions.filter((a) => a.startsWith('/backoffice/'))) {
      const cases = [action, action.toUpperCase(), action.replace(/[a-z]/g, (c, i: number) => (i % 2 ? c.toUpperCase() : c))];
      for (const path of cases) {
        for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
          const answer = await send(method, path, { cookie: root.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' }, 'name=CSRF&code=CSRF');
          // The back-office's own refusal page, before any of its routes runs.
          if (answer.status !== 403 || !answer.text.includes('protection CSRF')) wrong.push(`${method} ${path}: ${answer.status} ${answer.text.slice(0, 100)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(await databaseFingerprint(env.db)).toBe(before);
  }, 300_000);
});
