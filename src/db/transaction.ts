import type pg from 'pg';
import { ROLES } from './roles.js';
import { transactionSettingsStatement } from './pool.js';

export interface RequestIdentity {
  accountId: number;
  impersonatorId?: number | null;
}

export interface ActingAccount {
  id: number;
  username: string;
  employee_id: number | null;
  is_staff: boolean;
  is_superuser: boolean;
}

export class InactiveAccountError extends Error {}

export interface TransactionOptions {
  /** Test-only frozen clock (ISO timestamp with offset), applied as app.frozen_now. */
  frozenNow?: string | null;
  /**
   * Files this request stored (metadata): listed in app.uploaded_files so that a file row
   * can only name a file of this request (sql/documents/uploads.sql).
   */
  uploadedFiles?: readonly object[];
  /** Transaction-local settings the call reads, by name (a route's `settings`, e.g. app.allow_impersonation). */
  settings?: Readonly<Record<string, string>>;
  /**
   * The route is reserved to staff (manifest `auth: 'staff'`): the prelude refuses any other
   * account (app_private.begin_request_or_fail, WF002, answered 403) before anything else runs.
   */
  staffOnly?: boolean;
}

/** The statements setting `options`' transaction-local values (uploaded files, route settings), parameterised. */
function settingStatements(options: TransactionOptions): pg.QueryConfig[] {
  const statements: pg.QueryConfig[] = [];
  if (options.uploadedFiles?.length) {
    statements.push({ text: "select set_config('app.uploaded_files', $1, true)", values: [JSON.stringify(options.uploadedFiles)] });
  }
  for (const [name, value] of Object.entries(options.settings ?? {})) {
    statements.push({ text: 'select set_config($1, $2, true)', values: [name, value] });
  }
  return statements;
}

const FROZEN_NOW_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The clock statement of a prelude; the value is checked against a strict pattern first. */
function clockStatement(options: TransactionOptions): string {
  if (!options.frozenNow) return '';
  if (!FROZEN_NOW_PATTERN.test(options.frozenNow)) throw new Error(`invalid frozen clock ${options.frozenNow}`);
  return `select set_config('app.frozen_now', '${options.frozenNow}', true); `;
}

/** SQLSTATE of app_private.begin_request_or_fail for an inactive or unknown account (answered 401). */
const INACTIVE_ACCOUNT_SQLSTATE = 'WA001';

/**
 * The prelude of a request transaction, one simple-protocol message: begin, the session
 * settings, reload the acting account (app_private.begin_request_or_fail: an inactive or
 * unknown account is an error, WA001, and so is a non-staff account when `staffOnly`, WF002),
 * switch to the visitor role. The ids in it are integers we verified (Number.isSafeInteger)
 * from a token we signed, never raw input.
 */
function requestPrelude(pool: pg.Pool, identity: RequestIdentity | null, options: TransactionOptions): string {
  const settings = transactionSettingsStatement(pool) + clockStatement(options);
  if (!identity) return `begin; ${settings}set local role ${ROLES.visitor};`;
  const { accountId, impersonatorId } = identity;
  if (!Number.isSafeInteger(accountId) || (impersonatorId != null && !Number.isSafeInteger(impersonatorId))) {
    throw new InactiveAccountError();
  }
  return `begin; ${settings}select app_private.begin_request_or_fail(${accountId}, ${impersonatorId ?? 'null'}, ` +
    `${options.staffOnly ? 'true' : 'false'}) as account; set local role ${ROLES.visitor};`;
}

/**
 * One transaction per request: the prelude (requestPrelude), then `work` with the acting
 * account, then commit, each awaited in turn (the one path of every request: a route's call,
 * an export's cursor, the back-office's forms, GraphQL). Any error rolls back. Sending the
 * prelude, the call and the commit in one pipelined write did not pay (BENCHMARKS.md, "One
 * transaction path").
 */
export async function withRequestTransaction<T>(
  pool: pg.Pool,
  identity: RequestIdentity | null,
  work: (client: pg.PoolClient, account: ActingAccount | null) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const prelude = requestPrelude(pool, identity, options);
  const client = await pool.connect();
  let broken = false;
  try {
    const results = (await client.query(prelude)) as unknown as pg.QueryResult[];
    // The answer of begin_request_or_fail: the one before the role switch's.
    const account = identity ? ((results[results.length - 2]?.rows[0]?.account as ActingAccount | null) ?? null) : null;
    for (const statement of settingStatements(options)) await client.query(statement);
    const result = await work(client, account);
    await client.query('commit');
    return result;
  } catch (error) {
    try {
      await client.query('rollback');
    } catch {
      broken = true;
    }
    if ((error as { code?: string } | null)?.code === INACTIVE_ACCOUNT_SQLSTATE) throw new InactiveAccountError();
    throw error;
  } finally {
    client.release(broken);
  }
}

/** A transaction as the authenticator itself (login, password reset): no visitor switch. */
export async function withAuthenticatorTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const settings = transactionSettingsStatement(pool) + clockStatement(options);
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query(`begin; ${settings}`);
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    try {
      await client.query('rollback');
    } catch {
      broken = true;
    }
    throw error;
  } finally {
    client.release(broken);
  }
}
