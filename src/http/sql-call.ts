/**
 * The SQL call of a manifest route: its statement text (function and argument names are
 * manifest constants, checked here and against pg_proc at start-up) and its parameter values,
 * taken from the request. Used by the router, the exports and the back-office's views.
 */
import type { Config } from '../config.js';
import type { ArgSpec, RouteSpec, SqlCall } from './route.js';

const SQL_CASTS: Record<ArgSpec['cast'], string> = {
  int: 'int',
  text: 'text',
  date: 'date',
  'int[]': 'int[]',
  numeric: 'numeric',
  time: 'time',
  timestamptz: 'timestamptz',
  boolean: 'boolean',
  jsonb: 'jsonb',
  'text[]': 'text[]',
};

/** The SQL text of a manifest call: only manifest constants go into it. */
export function sqlText(route: RouteSpec): string {
  return callText(route.operationId, route.sql!);
}

/**
 * The SQL text of a declared call (a route's, or the back-office's: src/backoffice/calls.ts):
 * `select <fn>(p_x => $1::cast, ...) as result`, or with `rows`, `select * from <fn>(...)` (a
 * set-returning function). Function and argument names are checked here; values never go into it.
 */
export function callText(label: string, call: SqlCall, rows = false): string {
  if (!/^app_(public|hidden)\.[a-z_][a-z0-9_]*$/.test(call.fn)) throw new Error(`${label}: bad function name`);
  const args = call.args.map((arg, i) => {
    if (!/^p_[a-z0-9_]+$/.test(arg.name)) throw new Error(`${label}: bad argument name ${arg.name}`);
    return `${arg.name} => $${i + 1}::${SQL_CASTS[arg.cast]}`;
  });
  return rows ? `select * from ${call.fn}(${args.join(', ')})` : `select ${call.fn}(${args.join(', ')}) as result`;
}

export interface ArgContext {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
  page: number;
  pageSize: number;
  config: Config;
}

/**
 * The keys a body sent, a null value included (those the schema does not declare too: a
 * function may refuse one, as the employee record refuses a username after its creation).
 */
function keysSent(body: Record<string, unknown>): string[] {
  // A key whose value is undefined is not sent (JSON has no undefined; a form leaves it out).
  return Object.keys(body).filter((key) => body[key] !== undefined);
}

function argValue(arg: ArgSpec, ctx: ArgContext): unknown {
  switch (arg.from) {
    case 'path':
      return ctx.params[arg.key];
    case 'query':
      return ctx.query[arg.key] ?? null;
    case 'query-object':
      return JSON.stringify(ctx.query);
    case 'body-field': {
      const value = ctx.body[arg.key];
      if (value === undefined) return null;
      return arg.cast === 'jsonb' ? JSON.stringify(value) : value;
    }
    case 'body-keys':
      return keysSent(ctx.body);
    case 'body-object':
      return JSON.stringify(arg.keys ? Object.fromEntries(arg.keys.map((key) => [key, ctx.body[key] ?? null])) : ctx.body);
    case 'page':
      return ctx.page;
    case 'page_size':
      return ctx.pageSize;
    case 'context':
      return ctx.config.publicUrl;
  }
}

/** The values of a route's SQL call, in the order of sqlText's parameters. */
export function sqlValues(route: RouteSpec, ctx: ArgContext): unknown[] {
  return callValues(route.sql!, ctx);
}

/** The values of a declared call, in the order of callText's parameters (the back-office's calls too). */
export function callValues(call: SqlCall, ctx: ArgContext): unknown[] {
  return call.args.map((arg) => argValue(arg, ctx));
}
