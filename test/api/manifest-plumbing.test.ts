/**
 * The manifest has no escape hatch for plumbing (issue 12, point 4): route modules declare
 * routes; the router runs their SQL calls, transactions and purges. A route module that writes
 * SQL, runs a query or a transaction, or borrows another module's helper for it, fails here.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/db/migrate.js';
import type { RouteSpec } from '../../src/http/route.js';
import { routes } from '../../src/http/routes/index.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

const ROUTES_DIR = path.join(ROOT_DIR, 'src/http/routes');

/** Machinery that belongs to the router (src/http/router.ts, src/db/transaction.ts, src/storage/garbage.ts). */
const PLUMBING_NAMES = [
  'client.query', '.query(', 'pool.connect', 'inRequestTransaction', 'inAuthenticatorTransaction', 'withRequestTransaction',
  'withAuthenticatorTransaction', 'runRequestCall', 'callApi', 'purgeStorageGarbage', 'purgeAfterCommit',
];

/** SQL text: a statement, a named argument bound to a parameter, a cast parameter, a transaction-local setting. */
const SQL_PATTERNS: RegExp[] = [
  /\bselect\s+(\*|[a-z_]+\.[a-z_]|[a-z_]+\s*\()/i,
  /\binsert\s+into\b/i,
  /\bdelete\s+from\b/i,
  /\bupdate\s+[a-z_.]+\s+set\b/i,
  /\bdeclare\s+\w+\s+(no\s+scroll\s+)?cursor\b/i,
  /\bset\s+local\b/i,
  /\bset_config\s*\(/i,
  /=>\s*\$\d/,
  /\$\d+::[a-z]/i,
  /\b(begin|commit|rollback)\s*;/i,
];

/** Modules a route module may not import: the transaction helpers and the storage purge. */
const PLUMBING_IMPORTS = [/\/db\/(transaction|pool)\.js'/, /\/storage\/garbage\.js'/, /from 'pg'/];

interface Finding {
  line: number;
  text: string;
  why: string;
}

/** What a route module's source holds that belongs to the router. */
function plumbingIn(source: string): Finding[] {
  const findings: Finding[] = [];
  source.split('\n').forEach((text, index) => {
    const line = index + 1;
    for (const name of PLUMBING_NAMES) if (text.includes(name)) findings.push({ line, text, why: `uses ${name}` });
    for (const pattern of SQL_PATTERNS) if (pattern.test(text)) findings.push({ line, text, why: `SQL text (${pattern.source})` });
    if (/^\s*import\b/.test(text) || /^\s*}\s*from\s/.test(text)) {
      for (const pattern of PLUMBING_IMPORTS) if (pattern.test(text)) findings.push({ line, text, why: 'imports transaction machinery' });
    }
    // A helper that takes a handler's context is machinery another module could borrow.
    if (/^export\s+(async\s+)?function\s+\w+\s*(<[^>]*>)?\(\s*\w+\s*:\s*HandlerContext\b/.test(text)) {
      findings.push({ line, text, why: 'exports a helper taking a HandlerContext' });
    }
  });
  return findings;
}

/** The names a module imports from the other route modules (./x.js), by module. */
function siblingImports(source: string): Array<{ from: string; names: string[] }> {
  const found: Array<{ from: string; names: string[] }> = [];
  for (const match of source.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'\.\/([a-z-]+)\.js'/g)) {
    found.push({ from: match[2]!, names: match[1]!.split(',').map((name) => name.replace(/^\s*type\s+/, '').trim()).filter(Boolean) });
  }
  return found;
}

async function routeModules(): Promise<Array<{ file: string; source: string }>> {
  const files = (await readdir(ROUTES_DIR)).filter((file) => file.endsWith('.ts')).sort();
  return Promise.all(files.map(async (file) => ({ file, source: await readFile(path.join(ROUTES_DIR, file), 'utf8') })));
}

describe('route modules declare, the router does the plumbing', () => {
  it('the check finds what it looks for', () => {
    // The shapes the route modules held before the purge became a manifest property.
    const before = [
      "import { MAX_DOCUMENT_BYTES, callApi, purgeAfterCommit } from './documents.js';",
      "        const { rows } = await client.query<{ result: T }>(sql, values);",
      "  'select app_public.absence_delete(p_id => $1::int) as result',",
      "    await ctx.inAuthenticatorTransaction((client) => purgeStorageGarbageIn(client, ctx.storage));",
      "export async function callApi<T = unknown>(ctx: HandlerContext, sql: string, values: unknown[]): Promise<T> {",
      "import { withRequestTransaction } from '../../db/transaction.js';",
      "          await client.query(\"select set_config('app.allow_impersonation', 'on', true)\");",
      "          await pool.query('select 1');",
    ];
    for (const text of before) expect(plumbingIn(text), text).not.toEqual([]);
    // Declarations are not plumbing.
    const declarations = [
      "      sql: { fn: 'app_public.absence_delete', args: [idArg] },",
      '      purgeStorageAfterCommit: true,',
      "      method: 'delete',",
      "      summary: 'Retirer sa demande en attente, ou « Supprimer l’absence » accordée (décideur)',",
      "        const [row] = await callAsAuthenticator<{ account_id: number }>('app_private.login_lookup', [username]);",
    ];
    for (const text of declarations) expect(plumbingIn(text), text).toEqual([]);
  });

  it('no route module writes SQL, runs a query or a transaction, or imports the machinery', async () => {
    const problems: string[] = [];
    for (const { file, source } of await routeModules()) {
      for (const finding of plumbingIn(source)) problems.push(`${file}:${finding.line}: ${finding.why}: ${finding.text.trim()}`);
    }
    expect(problems).toEqual([]);
  });

  it('what a route module takes from another is never a function working on a request', async () => {
    const modules = await routeModules();
    const byName = new Map(modules.map((m) => [m.file.replace(/\.ts$/, ''), m.source]));
    const problems: string[] = [];
    for (const { file, source } of modules) {
      for (const { from, names } of siblingImports(source)) {
        const lender = byName.get(from);
        if (!lender) continue;
        for (const name of names) {
          const definition = new RegExp(`export\\s+(async\\s+)?function\\s+${name}\\s*(<[^>]*>)?\\(([^)]*)\\)`).exec(lender);
          if (definition && /HandlerContext|PoolClient|Request\b|Response\b/.test(definition[3]!)) {
            problems.push(`${file} borrows ${name} from ${from}.ts`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('the routes whose call deletes stored files declare the purge after commit', () => {
    const purging = routes.filter((route) => route.purgeStorageAfterCommit).map((route) => route.operationId).sort();
    expect(purging).toEqual([
      'absence_delete', 'absence_update', 'absence_validate', 'honorability_certificate_delete', 'honorability_certificate_put',
    ]);
    // The property belongs to a SQL call: the router purges after that call's commit.
    expect(routes.filter((route) => route.purgeStorageAfterCommit && !route.sql).map((route) => route.operationId)).toEqual([]);
  });

  it('a handler is left only to work outside a request transaction; a SQL call is declared', () => {
    const handlers = routes.filter((route) => route.handler).map((route) => route.operationId).sort();
    expect(handlers).toEqual(['auth_password_reset', 'auth_password_reset_confirm', 'auth_token', 'health']);
    expect(routes.filter((route) => (route.render || route.export || route.purgeStorageAfterCommit) && route.handler)
      .map((route) => route.operationId)).toEqual([]);
  });
});

describe('the staff refusal is made once, by the request prelude in SQL', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  const REFUSAL = 'Réservé aux comptes du personnel d’administration.';
  const staffRoutes = routes.filter((route) => route.auth === 'staff');

  /** A request the route's input checks refuse (400): a body that is no object, a query out of its schema. */
  function badRequest(route: RouteSpec, token: string) {
    const path = route.path.replace(/\{[a-z_]+\}/g, '999999');
    if (['post', 'put', 'patch'].includes(route.method)) {
      // rawBody is sent as application/json (a second, capitalised Content-Type header would make it
      // « application/json, application/json »: not a JSON type, 415).
      return env.request(route.method.toUpperCase(), path, { token, rawBody: '[1]' });
    }
    return env.request(route.method.toUpperCase(), `${path}?page=0`, { token });
  }

  it('a non-staff caller of every staff route gets 403 with the one message, before any input error', async () => {
    expect(staffRoutes.length).toBeGreaterThan(0);
    for (const username of ['rh1', 'rh1_noemp', 'alice']) {
      const token = await env.login(username);
      for (const route of staffRoutes) {
        const res = await badRequest(route, token);
        expect([res.status, res.body], `${username} ${route.method} ${route.path}`).toEqual([403, { detail: REFUSAL }]);
      }
    }
  });

  it('staff and superusers reach the input checks', async () => {
    for (const username of ['staff', 'root']) {
      const token = await env.login(username);
      for (const route of staffRoutes) {
        const res = await badRequest(route, token);
        expect(res.status, `${username} ${route.method} ${route.path}`).toBe(route.method === 'delete' ? 404 : 400);
      }
    }
  });

  it('a non-staff caller with a valid request is refused before the route\'s function runs', async () => {
    const token = await env.login('rh1');
    const before = (await env.db.query('select count(*)::int as n from app_public.divisions')).rows[0].n;
    const res = await env.post('/api/divisions/', token, { name: 'Pôle refusé' });
    expect([res.status, res.body]).toEqual([403, { detail: REFUSAL }]);
    expect((await env.db.query('select count(*)::int as n from app_public.divisions')).rows[0].n).toBe(before);
  });
});
