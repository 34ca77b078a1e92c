/**
 * The API's dispatcher (src/http/router.ts, dispatchRoutes) answers every request as the Express
 * router it replaced: the same route chosen (case-insensitive, one optional trailing slash, the
 * manifest's order), the same parameters decoded, 405 with the same Allow, 200 to OPTIONS, a 400
 * for a parameter that cannot be decoded, and nothing for the paths it does not know. Both serve
 * the manifest's routes with the same stub handlers; their answers are compared request by request.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/http/routes/index.js';
import { ApiError } from '../../src/http/errors.js';
import { dispatchRoutes, expressPath } from '../../src/http/router.js';

const stub = (method: string, path: string) => async (req: Request, res: Response) => {
  res.json({ route: `${method} ${path}`, params: { ...req.params }, label: (req as Request & { route?: { path: string } }).route?.path });
};

/** The router as src/http/router.ts built it before the dispatcher (an Express router, strict: false). */
function expressRouter(): express.Router {
  const router = express.Router({ strict: false });
  const methodsByPath = new Map<string, Set<string>>();
  for (const route of routes) {
    const path = expressPath(route.path);
    router[route.method](path, stub(route.method, route.path));
    const methods = methodsByPath.get(path) ?? new Set<string>();
    methods.add(route.method.toUpperCase());
    if (route.method === 'get') methods.add('HEAD');
    methodsByPath.set(path, methods);
  }
  for (const [path, methods] of methodsByPath) {
    const allow = [...methods, 'OPTIONS'];
    router.all(path, (req: Request, res: Response, next: NextFunction) => {
      if (req.method === 'OPTIONS') {
        res.setHeader('Allow', allow.join(', '));
        res.status(200).end();
        return;
      }
      next(ApiError.methodNotAllowed(req.method, allow));
    });
  }
  return router;
}

function serve(handler: express.RequestHandler | express.Router): http.Server {
  const app = express();
  app.use(handler);
  app.use((req: Request, res: Response) => {
    res.status(404).json({ unknown: req.path });
  });
  app.use((error: Error & { status?: number; headers?: Record<string, string> }, _req: Request, res: Response, _next: NextFunction) => {
    for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
    res.status(error.status ?? 500).json({ error: error.message });
  });
  return http.createServer(app);
}

const servers: http.Server[] = [];
let before = '';
let after = '';

beforeAll(async () => {
  const start = (server: http.Server) => new Promise<string>((resolve) => {
    servers.push(server);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
  before = await start(serve(expressRouter()));
  after = await start(serve(dispatchRoutes(routes.map((route) => ({ method: route.method, path: route.path,
    handler: stub(route.method, route.path) })))));
});

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

/** Concrete paths of a manifest path: parameters filled, cases and trailing slashes varied. */
function variants(path: string): string[] {
  const filled = [path.replace(/\{[a-z_]+\}/g, '12'), path.replace(/\{[a-z_]+\}/g, 'a%20b%2Fc'),
    path.replace(/\{[a-z_]+\}/g, '%E0%A4%A'), path.replace(/\{[a-z_]+\}/g, '')];
  const out = new Set<string>();
  for (const p of filled) {
    const bare = p.replace(/\/+$/, '');
    out.add(p);
    out.add(p.toUpperCase().replace(/%[0-9A-F]{2}/gi, (m) => m));
    out.add(bare);
    out.add(`${bare}/`);
    out.add(`${bare}//`);
    out.add(`${bare}/extra/`);
    out.add(`${bare}?page=2`);
    out.add(`${bare.replace(/^\/api/, '/Api')}/`);
  }
  return [...out];
}

async function answer(base: string, method: string, path: string) {
  const response = await fetch(`${base}${path}`, { method });
  return { status: response.status, allow: response.headers.get('allow'), body: method === 'HEAD' ? '' : await response.text() };
}

describe('the API dispatcher answers as the Express router did', () => {
  it('for every manifest path, its variants and every method', async () => {
    const paths = new Set<string>(['/api', '/api/', '/api/unknown/', '/API/AUTH/ME', '/api/auth/me//', '/api//auth/me/',
      '/apix/auth/me/', '/api/auth/me/%', '/api/%61uth/me/', '/api/absences/12/validate', '/api/absences//validate/']);
    for (const route of routes) for (const path of variants(route.path)) paths.add(path);
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
    const differences: string[] = [];
    let compared = 0;
    for (const path of paths) {
      await Promise.all(methods.map(async (method) => {
        const [a, b] = await Promise.all([answer(before, method, path), answer(after, method, path)]);
        compared++;
        if (JSON.stringify(a) !== JSON.stringify(b)) differences.push(`${method} ${path}: ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`);
      }));
    }
    expect(differences).toEqual([]);
    expect(compared).toBeGreaterThan(routes.length * methods.length);
  }, 300_000);

  it('matches the manifest paths without case and with one trailing slash at most', async () => {
    expect((await answer(after, 'GET', '/API/Auth/Me')).body).toContain('"route":"get /api/auth/me/"');
    expect((await answer(after, 'GET', '/api/auth/me')).status).toBe(200);
    expect((await answer(after, 'GET', '/api/auth/me//')).status).toBe(404);
    const method = await answer(after, 'DELETE', '/api/auth/me/');
    expect(method.status).toBe(405);
    expect(method.allow).toBe('GET, HEAD, OPTIONS');
  });
});
