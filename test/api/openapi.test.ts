/**
 * /api/schema/ (OpenAPI 3.1, built from the route manifest) and /api/docs/ (Swagger UI served
 * from the package, no CDN), both public. The manifest is iterated, so a route added later
 * is checked too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/http/routes/index.js';
import { buildOpenApi } from '../../src/http/openapi.js';
import type { RouteSpec } from '../../src/http/route.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let doc: any;
beforeAll(async () => {
  env = await startTestEnv();
  const res = await env.get('/api/schema/');
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(async () => {
  await env?.close();
});

function operation(route: RouteSpec): any {
  return doc.paths?.[route.path]?.[route.method];
}

/** Every $ref of a JSON value. */
function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refs(v, out));
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

describe('GET /api/schema/', () => {
  it('is public OpenAPI 3.1.0 JSON', async () => {
    const res = await env.get('/api/schema/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.version).toBeTruthy();
  });

  it('declares the bearer security scheme and the ValidationError and Detail components', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(doc.components.schemas.Detail).toMatchObject({ type: 'object', required: ['detail'] });
    expect(doc.components.schemas.Detail.properties.detail.type).toBe('string');
    expect(doc.components.schemas.ValidationError.type).toBe('object');
    expect(doc.components.schemas.ValidationError.additionalProperties).toMatchObject({ type: 'array', items: { type: 'string' } });
  });

  it('documents exactly the routes of the manifest, each once, with unique operationIds', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops as object).map((m) => `${m} ${path}`));
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
    const ids = documented.map((key) => { const [m, p] = key.split(' '); return doc.paths[p!][m!].operationId; });
    expect(new Set(ids).size).toBe(ids.length);
  });

  for (const route of routes) {
    describe(`${route.method.toUpperCase()} ${route.path}`, () => {
      it('has its operationId, security and parameters', () => {
        const op = operation(route);
        expect(op).toBeDefined();
        expect(op.operationId).toBe(route.operationId);
        expect(op.summary).toBe(route.summary);
        expect(op.security).toEqual(route.auth === 'public' ? [] : [{ bearerAuth: [] }]);

        const params = op.parameters as Array<{ name: string; in: string; required: boolean; schema: object }>;
        // Every {name} of the path is a required path parameter, and nothing else is.
        const inPath = [...route.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
        expect(params.filter((p) => p.in === 'path').map((p) => p.name).sort()).toEqual(inPath.sort());
        for (const p of params.filter((p) => p.in === 'path')) expect(p.required).toBe(true);
        const query = Object.keys((route.query?.properties as object) ?? {});
        if (route.paginated) query.push('page', ...(typeof route.paginated === 'object' ? [] : ['page_size']));
        expect(params.filter((p) => p.in === 'query').map((p) => p.name).sort()).toEqual(query.sort());
        if (route.paginated && typeof route.paginated !== 'object') {
          expect(params.find((p) => p.name === 'page_size')!.schema).toMatchObject({ maximum: 200, default: 50 });
        }
      });

      it('has a requestBody exactly when it takes a body', () => {
        const op = operation(route);
        if (route.body) {
          expect(op.requestBody.content['application/json'].schema).toEqual(route.body);
          expect(op.requestBody.required).toBe(Boolean((route.body.required as string[] | undefined)?.length));
          if (route.multipart) expect(op.requestBody.content).toHaveProperty('multipart/form-data');
        } else {
          expect(op.requestBody).toBeUndefined();
        }
      });

      it('answers its success status and every error status it declares, 401 unless public, 429 and 503 always', () => {
        const responses = operation(route).responses;
        const expected = new Set([String(route.status), ...route.errors.map(String), '429', '503']);
        // Answers without a body besides the success (a feed's 304): documented without content.
        for (const status of Object.keys(route.otherResponses ?? {})) {
          expected.add(status);
          expect(responses[status].content).toBeUndefined();
        }
        if (route.auth !== 'public') expected.add('401');
        // A POST, PUT or PATCH reads a body even when it declares none: malformed JSON is a 400.
        if (route.body || route.query || route.paginated || ['post', 'put', 'patch'].includes(route.method)) expected.add('400');
        if (route.pathParams || route.paginated) expected.add('404');
        // An unsafe method: a body that is not JSON is a 415; the session cookie without X-CSRFToken a 403.
        if (route.method !== 'get') {
          expected.add('415');
          expected.add('403');
        }
        expect(Object.keys(responses).sort()).toEqual([...expected].sort());
        expect(responses[String(route.status)].description).toBeTruthy();
        if (route.status !== 204 && !route.responseContentTypes) {
          expect(responses[String(route.status)].content['application/json'].schema).toBeDefined();
        }
        for (const status of Object.keys(responses).filter((s) => Number(s) >= 400)) {
          const schema = responses[status].content['application/json'].schema;
          const own = route.errorBodies?.[Number(status)];
          if (own) expect(schema, `${status}`).toEqual(own);
          else expect(schema.$ref, `${status}`).toBe(status === '400' ? '#/components/schemas/ValidationError' : '#/components/schemas/Detail');
        }
        expect(responses['429'].headers['Retry-After']).toBeDefined();
        expect(responses['503'].headers['Retry-After']).toBeDefined();
        if (route.paginated) {
          expect(responses[String(route.status)].content['application/json'].schema.required).toEqual(['count', 'next', 'previous', 'results']);
        }
      });
    });
  }

  it('a component name declared by two modules is refused, never silently replaced', () => {
    const module = (name: string) => ({ routes: [], schemas: { Twice: { type: 'object', description: name } } });
    expect(() => buildOpenApi([module('a'), module('b')] as never, { title: 't', version: '1' } as never))
      .toThrow('OpenAPI component Twice is declared twice');
  });

  it('the planning documents its on-call items as they are answered', () => {
    const onCall = doc.components.schemas.PlanningBlock.properties.on_call.items.$ref.split('/').pop();
    expect(Object.keys(doc.components.schemas[onCall].properties).sort())
      .toEqual(['account', 'comment', 'end', 'establishments', 'id', 'name', 'start']);
  });

  it('every $ref resolves to a component', () => {
    for (const ref of refs(doc)) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas[ref.split('/').pop()!], ref).toBeDefined();
    }
  });
});

describe('/api/docs/', () => {
  it('is a public HTML page that loads Swagger UI from /api/docs/, from no other host', async () => {
    const res = await env.get('/api/docs/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const page = res.text;
    const sources = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) {
      const url = new URL(source, `${env.url}/api/docs/`);
      expect(url.origin, source).toBe(env.url);
      expect(url.pathname.startsWith('/api/docs/'), source).toBe(true);
    }
    expect(page).not.toMatch(/https?:\/\//);
  });

  it('its assets answer 200, with their types, and point to our schema only', async () => {
    const page = (await env.get('/api/docs/')).text;
    const sources = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => new URL(m[1]!, `${env.url}/api/docs/`).pathname);
    for (const path of sources) {
      const res = await env.get(path);
      expect(res.status, path).toBe(200);
      expect(res.text.length, path).toBeGreaterThan(0);
      expect(res.headers.get('content-type'), path).toMatch(path.endsWith('.css') ? /^text\/css/ : /javascript/);
    }
    const initializer = await env.get('/api/docs/initializer.js');
    expect(initializer.text).toContain("url: '/api/schema/'");
    // No validator badge fetched from validator.swagger.io.
    expect(initializer.text).toContain('validatorUrl: null');
    expect(initializer.text).not.toMatch(/https?:\/\//);
  });

  it('redirects /api/docs to /api/docs/, and does not serve the package demo files', async () => {
    const res = await fetch(`${env.url}/api/docs`, { redirect: 'manual' });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('/api/docs/');
    for (const path of ['/api/docs/index.html', '/api/docs/swagger-initializer.js']) {
      expect((await env.get(path)).status, path).toBe(404);
    }
  });
});
