/**
 * The manifest names SQL functions and their arguments by name (`p_id => $1`); a renamed or
 * removed argument in sql/ would only show when the route is first called. At start-up every
 * route's call, and every call the back-office declares (src/backoffice/calls.ts), is compared with pg_proc: the function exists, each named argument is one of its
 * input arguments, every argument without a default is given, and a function taking the keys
 * of its body (p_sent) gets them. The limits a route restates
 * for its own checks (the size of an uploaded file) are compared with their SQL home
 * (sql/core/limits.sql), so that a number is changed in one place or start-up names both.
 */
import type pg from 'pg';
import { SENT_KEYS as SENT_KEYS_ARG, type RouteSpec, type SqlCall } from './route.js';

/** The argument of the keys a body sent (sql/core/arguments.sql, app_hidden.sent). */
const SENT_KEYS = SENT_KEYS_ARG.name;

export interface Overload {
  name: string;
  inputs: string[];
  /** Input arguments that have no default (the first ones, in PostgreSQL). */
  withoutDefault: string[];
}

/**
 * The overloads of the functions named (`schema.name`) among app_public's and app_hidden's. Read by
 * name through pg_proc's index on proname: a scan of pg_proc read every function's source, dead
 * versions included (0.1 to 0.3 s after a series of migrations, BENCHMARKS.md "Start-up (issue 31)");
 * the argument arrays come as JSON (JSON.parse rather than pg's array parser).
 */
async function overloads(pool: pg.Pool, names: Iterable<string>): Promise<Map<string, Overload[]>> {
  const shortNames = [...new Set([...names].map((name) => name.slice(name.indexOf('.') + 1)))];
  const { rows } = await pool.query<{ name: string; argnames: string[] | null; argmodes: string[] | null; nargs: number; ndefaults: number }>(
    `select n.nspname || '.' || p.proname as name, to_json(p.proargnames) as argnames, to_json(p.proargmodes) as argmodes,
            p.pronargs as nargs, p.pronargdefaults as ndefaults
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where p.proname = any($1::name[]) and n.nspname in ('app_public', 'app_hidden')`,
    [shortNames],
  );
  const result = new Map<string, Overload[]>();
  for (const row of rows) {
    // proargnames lists every argument (out ones too when proargmodes is set); pronargs counts inputs.
    const names = row.argnames ?? [];
    const inputs = row.argmodes ? names.filter((_, i) => ['i', 'b', 'v'].includes(row.argmodes![i]!)) : names.slice(0, row.nargs);
    const overload = { name: row.name, inputs, withoutDefault: inputs.slice(0, row.nargs - row.ndefaults) };
    result.set(row.name, [...(result.get(row.name) ?? []), overload]);
  }
  return result;
}

/** Every function a call names: its own, and the list's text variant of a route. */
function calledNames(calls: Iterable<SqlCall>, alternatives: Iterable<string> = []): string[] {
  return [...[...calls].map((call) => call.fn), ...alternatives];
}

/** app_hidden.document_max_bytes(), read as a request reads it (the server's pool may be the authenticator's). */
async function documentMaxBytes(pool: pg.Pool): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('set local role wfm_visitor');
    const { rows } = await client.query<{ bytes: number }>('select app_hidden.document_max_bytes() as bytes');
    return rows[0]!.bytes;
  } finally {
    await client.query('rollback').catch(() => {});
    client.release();
  }
}

/** Routes whose largest accepted file differs from app_hidden.document_max_bytes(), one line each. */
export async function limitMismatches(pool: pg.Pool, routes: RouteSpec[]): Promise<string[]> {
  const uploading = routes.filter((route) => route.multipart);
  if (uploading.length === 0) return [];
  const bytes = await documentMaxBytes(pool);
  return uploading
    .filter((route) => route.multipart!.maxFileBytes !== bytes)
    .map((route) => `${route.operationId}: multipart.maxFileBytes is ${route.multipart!.maxFileBytes}, app_hidden.document_max_bytes() is ${bytes} (sql/core/limits.sql)`);
}

/**
 * What is wrong with one declared call (a route's or the back-office's), one line each: the function
 * exists, each named argument is one of its inputs, every input without a default is given, and
 * p_sent comes from the body's keys. `label` names the declaration, `declaration` its kind.
 */
function callProblems(label: string, call: SqlCall, functions: Map<string, Overload[]>, declaration: string,
  alternatives: string[] = []): string[] {
  const problems: string[] = [];
  const given = call.args.map((arg) => arg.name);
  const misnamed = call.args.find((arg) => arg.from === 'body-keys' && arg.name !== SENT_KEYS);
  if (misnamed) problems.push(`${label}: the body's keys go to ${SENT_KEYS}, not ${misnamed.name}`);
  for (const name of [call.fn, ...alternatives]) {
    const candidates = functions.get(name) ?? [];
    if (candidates.length === 0) {
      problems.push(`${label}: ${name} does not exist`);
      continue;
    }
    const fitting = candidates.filter((fn) => given.every((arg) => fn.inputs.includes(arg)) && fn.withoutDefault.every((arg) => given.includes(arg)));
    if (fitting.length === 0) {
      const signatures = candidates.map((fn) => `(${fn.inputs.join(', ')})`).join(' or ');
      problems.push(`${label}: ${name} takes ${signatures}, the ${declaration} gives (${given.join(', ')})`);
      continue;
    }
    // p_sent has a default (a GraphQL caller may leave it out), but a call that omitted it
    // would turn every null it passes into "not sent": it must come from the body's keys.
    const keys = call.args.find((arg) => arg.name === SENT_KEYS);
    if (fitting.some((fn) => fn.inputs.includes(SENT_KEYS)) && keys?.from !== 'body-keys') {
      problems.push(`${label}: ${name} takes ${SENT_KEYS}, the ${declaration} must give it from 'body-keys'`);
    }
  }
  return problems;
}

/**
 * What is wrong with each route's SQL call, one line per route (empty when every call fits),
 * then the routes whose file size limit differs from SQL's (limitMismatches).
 */
export async function manifestMismatches(pool: pg.Pool, routes: RouteSpec[],
  functions?: Map<string, Overload[]>): Promise<string[]> {
  const [read, limits] = await Promise.all([functions ?? overloads(pool, routeNames(routes)), limitMismatches(pool, routes)]);
  const problems: string[] = [];
  for (const route of routes) {
    if (!route.sql) continue;
    if (!route.sql.fn.startsWith('app_public.')) problems.push(`${route.operationId}: a route calls a function of app_public, not ${route.sql.fn}`);
    const whole = route.sql.args.find((arg) => arg.from === 'body-object');
    if (whole) problems.push(`${route.operationId}: a route's body reaches SQL key by key, not as one JSON value (${whole.name})`);
    // The list's text variant (listText) takes the same arguments.
    problems.push(...callProblems(route.operationId, route.sql, read, 'manifest', route.listText ? [route.listText] : []));
  }
  return [...problems, ...limits];
}

/** The functions the routes call. */
function routeNames(routes: RouteSpec[]): string[] {
  const withSql = routes.filter((route) => route.sql);
  return calledNames(withSql.map((route) => route.sql!), withSql.flatMap((route) => (route.listText ? [route.listText] : [])));
}

/**
 * The back-office's declared calls (src/backoffice/calls.ts) against pg_proc, as the routes':
 * one line per call that does not fit its function, labelled by where it is declared.
 */
export async function callMismatches(pool: pg.Pool, calls: ReadonlyArray<SqlCall & { label: string }>,
  functions?: Map<string, Overload[]>): Promise<string[]> {
  const read = functions ?? (await overloads(pool, calledNames(calls)));
  return calls.flatMap((call) => callProblems(call.label, call, read, 'declaration'));
}

/**
 * The start-up check (src/server.ts): the routes' calls and the back-office's, with pg_proc read
 * once for both, and the file size limits, one line per problem.
 */
export async function startupMismatches(pool: pg.Pool, routes: RouteSpec[], calls: ReadonlyArray<SqlCall & { label: string }>): Promise<string[]> {
  const functions = await overloads(pool, [...routeNames(routes), ...calledNames(calls)]);
  return [...(await manifestMismatches(pool, routes, functions)), ...(await callMismatches(pool, calls, functions))];
}
