/**
 * The back-office's SQL calls, declared like the routes' (src/http/route.ts): a function name and
 * its arguments by name, each taken from the row's id, a filter, a form's body, the page or the
 * configuration. The resources hold no SQL text: they declare their calls here (at module level,
 * so that every declaration exists once the registry is loaded), and the start-up check compares
 * every declaration with pg_proc as it does the manifest's (src/http/manifest-check.ts,
 * `callMismatches`, called by src/server.ts).
 */
import type pg from 'pg';
import type { Config } from '../config.js';
import type { ArgSpec, BodyFieldCast, SqlCall } from '../http/route.js';
import type { JsonSchema } from '../http/schema.js';
import { callText, callValues } from '../http/sql-call.js';

export interface BackofficeCall extends SqlCall {
  /** Where it is declared, for the start-up check's messages (« back-office counters: adjust »). */
  label: string;
  /** A set-returning function, read as its rows (`select * from f(...)`), else its value as `result`. */
  rows: boolean;
  /** The statement (only declared names go into it). */
  text: string;
}

const DECLARED: BackofficeCall[] = [];

/** Declares a call of `fn`; `label` names it in the start-up check's refusal. */
export function declareCall(label: string, fn: string, args: ArgSpec[] = [], options: { rows?: boolean } = {}): BackofficeCall {
  const rows = Boolean(options.rows);
  const call: BackofficeCall = { label: `back-office ${label}`, fn, args, rows, text: callText(`back-office ${label}`, { fn, args }, rows) };
  DECLARED.push(call);
  return call;
}

/** Every call the back-office declared (the start-up check). */
export function declaredCalls(): readonly BackofficeCall[] {
  return DECLARED;
}

/** The row's id (the path's {id}) as the argument `name`. */
export const rowId = (name = 'p_id'): ArgSpec => ({ name, from: 'path', key: 'id', cast: 'int' });

/** A filter of a list (a query parameter) as `p_<key>`, or `name`. */
export function filterArg(key: string, cast: 'int' | 'text' | 'date' | 'boolean', name = `p_${key}`): ArgSpec {
  return { name, from: 'query', key, cast };
}

/** A key of the form's body (or of the inputs a page passes) as `p_<key>`, or `name`. */
export function inputArg(key: string, cast: BodyFieldCast, name = `p_${key}`): ArgSpec {
  return { name, from: 'body-field', key, cast };
}

/** The form's keys sent (a null value included) as `p_sent`: the writes that keep what a body leaves out. */
export const SENT_KEYS: ArgSpec = { name: 'p_sent', from: 'body-keys', cast: 'text[]' };

/** The whole body (or these keys of it) as one jsonb argument, for the functions that still read one. */
export function bodyObject(name = 'p_body', keys?: string[]): ArgSpec {
  return { name, from: 'body-object', cast: 'jsonb', ...(keys ? { keys } : {}) };
}

/** A list's page and page size: the paging arguments every list function takes. */
export const PAGE_ARGS: ArgSpec[] = [
  { name: 'p_page', from: 'page', cast: 'int' },
  { name: 'p_page_size', from: 'page_size', cast: 'int' },
];

/** The cast of a filter from its JSON Schema (integer, boolean, date, else text). */
function filterCast(schema: JsonSchema): 'int' | 'text' | 'date' | 'boolean' {
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type];
  if (types.includes('integer')) return 'int';
  if (types.includes('boolean')) return 'boolean';
  return schema.format === 'date' ? 'date' : 'text';
}

/**
 * A paginated list of the back-office, declared once: its filters' schema (`query`, which also
 * draws and validates the filters) gives the function's arguments, each property `p_<key>` in order,
 * then the page and its size (PAGE_ARGS). The function answers { count, results }
 * (app_hidden.list_page and list_answer, sql/backoffice/paging.sql).
 */
export function listCall(label: string, fn: string, query: JsonSchema): { call: BackofficeCall; query: JsonSchema } {
  const properties = (query.properties ?? {}) as Record<string, JsonSchema>;
  const filters = Object.entries(properties).map(([key, schema]) => filterArg(key, filterCast(schema)));
  return { call: declareCall(label, fn, [...filters, ...PAGE_ARGS]), query };
}

/** The public URL of the service (a function that writes links). */
export const PUBLIC_URL: ArgSpec = { name: 'p_public_url', from: 'context', key: 'public_url', cast: 'text' };

/** What a call's arguments are taken from. */
export interface CallInputs {
  id?: number | null;
  query?: Record<string, unknown>;
  body?: Record<string, unknown>;
  page?: number;
  pageSize?: number;
  /** The configuration: the calls that give the public URL need it (a missing one is an error, not a null). */
  config?: Config;
}

/** The statement and values of a declared call. */
export function statement(call: BackofficeCall, inputs: CallInputs = {}): { text: string; values: unknown[] } {
  if (!inputs.config && call.args.some((arg) => arg.from === 'context')) throw new Error(`${call.label}: the public URL needs the configuration`);
  const values = callValues(call, {
    params: inputs.id == null ? {} : { id: inputs.id },
    query: inputs.query ?? {},
    body: inputs.body ?? {},
    page: inputs.page ?? 1,
    pageSize: inputs.pageSize ?? 1,
    config: inputs.config!,
  });
  return { text: call.text, values };
}

/** The value a declared call answers (its `result`). */
export async function callValue<T>(client: pg.PoolClient, call: BackofficeCall, inputs: CallInputs = {}): Promise<T> {
  return (await client.query<{ result: T }>(statement(call, inputs))).rows[0]!.result;
}

/** The rows a declared set-returning call answers. */
export async function callRows<T extends Record<string, unknown>>(client: pg.PoolClient, call: BackofficeCall,
  inputs: CallInputs = {}): Promise<T[]> {
  return (await client.query<T>(statement(call, inputs))).rows;
}

/** app_hidden.current_account_is_staff(). */
export const IS_STAFF = declareCall('staff', 'app_hidden.current_account_is_staff');
/** app_hidden.current_account_has(permission), the permission given as the input `permission`. */
export const HAS_PERMISSION = declareCall('permission', 'app_hidden.current_account_has', [inputArg('permission', 'text')]);

/** Whether the signed-in account holds a permission (as of now, on its perimeter's scopes). */
export function holds(permission: string) {
  return async (client: pg.PoolClient): Promise<boolean> => callValue<boolean>(client, HAS_PERMISSION, { body: { permission } });
}

/** Whether the signed-in account is staff (or superuser). */
export async function isStaff(client: pg.PoolClient): Promise<boolean> {
  return callValue<boolean>(client, IS_STAFF);
}

/** True when any of the tests is (run in order, stopping at the first true). */
export function anyOf(...tests: Array<(client: pg.PoolClient) => Promise<boolean>>) {
  return async (client: pg.PoolClient): Promise<boolean> => {
    for (const test of tests) if (await test(client)) return true;
    return false;
  };
}

/**
 * The value of a call that may be refused (a reader who may not read it, a missing row) without
 * ending the transaction: inside a savepoint, a refusal `refused` accepts (default: any) answers null.
 */
export async function callValueOrNull<T>(client: pg.PoolClient, call: BackofficeCall, inputs: CallInputs = {},
  refused: (error: unknown) => boolean = () => true): Promise<T | null> {
  await client.query('savepoint optional_read');
  try {
    const value = await callValue<T>(client, call, inputs);
    await client.query('release savepoint optional_read');
    return value;
  } catch (error) {
    if (!refused(error)) throw error;
    await client.query('rollback to savepoint optional_read');
    return null;
  }
}
