import { isIP } from 'node:net';
import pg from 'pg';
import { ROLES } from './roles.js';
import { transactionSettingsStatement } from './pool.js';

export interface RequestIdentity {
  accountId: number;
  impersonatorId?: number | null;
  /**
   * The credential generation the token or session was issued under (app_public.accounts.
   * token_generation of its holder): the prelude refuses an earlier one with 401.
   */
  generation: number;
}

export interface ActingAccount {
  id: number;
  username: string;
  employee_id: number | null;
  is_staff: boolean;
  is_superuser: boolean;
}

export class InactiveAccountError extends Error {}

/**
 * A statement written last in a request's transaction, just before the commit, and told when
 * that commit succeeded: the request's rate-limit hit (PendingHit, src/auth/rate-limit.ts).
 */
export interface StatementBeforeCommit {
  statement(): pg.QueryConfig;
  committed(): void;
}

export interface TransactionOptions {
  /** Test-only frozen clock (ISO timestamp with offset), applied as app.frozen_now. */
  frozenNow?: string | null;
  /** The request's client address (req.ip), recorded in the audit lines of the transaction. */
  clientAddress?: string | null;
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
  /**
   * The request's rate-limit hit, counted after the work and before the commit, as the
   * authenticator (reset role): one round trip less than counting it on its own. Over the limit
   * it raises WL429 and the transaction rolls back; committed, the hit is marked counted.
   */
  rateLimitHit?: StatementBeforeCommit | null;
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

/**
 * The same settings as settingStatements, written as literals into one simple-protocol message
 * (runRequestCall's single message); null when there are uploaded files (their metadata names
 * files a client sent: always a parameter).
 */
function settingLiterals(options: TransactionOptions): string | null {
  if (options.uploadedFiles?.length) return null;
  let text = '';
  for (const [name, value] of Object.entries(options.settings ?? {})) {
    text += `select set_config(${pg.escapeLiteral(name)}, ${pg.escapeLiteral(value)}, true); `;
  }
  return text;
}

/** The statements counting the request's rate-limit hit before the commit, as the authenticator (none without a hit). */
function rateLimitStatements(options: TransactionOptions): Array<string | pg.QueryConfig> {
  return options.rateLimitHit ? ['reset role', options.rateLimitHit.statement()] : [];
}

const FROZEN_NOW_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The clock statement of a prelude; the value is checked against a strict pattern first. */
function clockStatement(options: TransactionOptions): string {
  if (!options.frozenNow) return '';
  if (!FROZEN_NOW_PATTERN.test(options.frozenNow)) throw new Error(`invalid frozen clock ${options.frozenNow}`);
  return `select set_config('app.frozen_now', '${options.frozenNow}', true); `;
}

/**
 * The client address as a SQL literal: an IPv4 or IPv6 address only (isIP, then the characters
 * of one), else null; it is written into the prelude's text, never anything else.
 */
export function clientAddressLiteral(address: string | null | undefined): string {
  if (!address || address.length > 45 || !isIP(address) || !/^[0-9A-Fa-f:.]+$/.test(address)) return 'null';
  return `'${address}'`;
}

/** SQLSTATE of app_private.begin_request_or_fail for an inactive or unknown account. */
const INACTIVE_ACCOUNT_SQLSTATE = 'WA001';

function isSqlError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length === 5;
}

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
  const { accountId, impersonatorId, generation } = identity;
  if (!Number.isSafeInteger(accountId) || (impersonatorId != null && !Number.isSafeInteger(impersonatorId))
      || !Number.isSafeInteger(generation)) {
    throw new InactiveAccountError();
  }
  return `begin; ${settings}select app_private.begin_request_or_fail(${accountId}, ${impersonatorId ?? 'null'}, ` +
    `${options.staffOnly ? 'true' : 'false'}, ${generation}, ${clientAddressLiteral(options.clientAddress)}) as account; ` +
    `set local role ${ROLES.visitor};`;
}

/**
 * One transaction per request, in round trips: the prelude (requestPrelude), then `work`
 * with the acting account, then commit. Any error rolls back. Only for work of several
 * statements that depend on each other (an export's cursor, the back-office's forms, GraphQL,
 * the account check before an input error); a route's call goes through runRequestCall.
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
    for (const statement of rateLimitStatements(options)) await client.query(statement);
    await client.query('commit');
    options.rateLimitHit?.committed();
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

/**
 * The end of a request's transaction in one simple-protocol message: the rate-limit hit, when it
 * is folded in (as the authenticator: reset role), then the commit. Its values are the hit's own:
 * a bucket key the service made (src/auth/rate-limit.ts) as a quoted literal, and two numbers.
 */
function closingStatement(options: TransactionOptions): string {
  const hit = options.rateLimitHit?.statement();
  if (!hit) return 'commit';
  const [bucket, limit, seconds] = hit.values as [string, number, number];
  if (!Number.isFinite(limit) || !Number.isFinite(seconds)) throw new Error('bad rate-limit values');
  // An account's requests close with the same text: made once per statement, bucket and figures.
  const key = `${hit.text}\u0000${bucket}\u0000${limit}\u0000${seconds}`;
  const known = closingTexts.get(key);
  if (known !== undefined) return known;
  const literals = [pg.escapeLiteral(String(bucket)), String(limit), String(seconds)];
  // One pass, with a function: a literal is never scanned again nor read as a replacement pattern.
  const text = `reset role; ${hit.text.replace(/\$([123])\b/g, (_, n: string) => literals[Number(n) - 1]!)}; commit`;
  if (closingTexts.size >= CLOSING_TEXTS_MAX) closingTexts.delete(closingTexts.keys().next().value!);
  closingTexts.set(key, text);
  return text;
}

/** The closing texts made (closingStatement), the oldest dropped first beyond CLOSING_TEXTS_MAX. */
const closingTexts = new Map<string, string>();
const CLOSING_TEXTS_MAX = 10_000;

/** How many results closingStatement(options) answers. */
const closingResults = (options: TransactionOptions) => (options.rateLimitHit ? 3 : 1);

/**
 * The one call of a SQL route in ONE round trip, on a pipelined connection (src/db/pool.ts). A call
 * without parameters (GET /api/auth/me/, and most reads without input) goes out as ONE simple-protocol
 * message: the prelude, the route's settings, the call, the rate-limit hit when it is folded in
 * (options.rateLimitHit) and the commit; PostgreSQL answers it with one flush and the client parses
 * one answer (the call's row in text format, whatever `query.binary` asked). A call with parameters
 * goes out as three messages written together (the prelude, the call in the extended protocol, the
 * closing hit and commit). Same transaction, same statements either way: a refused prelude (inactive
 * account, non-staff caller of a staff route) or a failed call leaves the rest undone, and the
 * transaction, aborted, is rolled back before the connection goes back to the pool. Without a
 * pipelined pool it falls back to withRequestTransaction.
 */
export async function runRequestCall<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  identity: RequestIdentity | null,
  query: pg.QueryConfig,
  options: TransactionOptions = {},
): Promise<pg.QueryResult<R>> {
  const prelude = requestPrelude(pool, identity, options);
  const client = await pool.connect();
  if (!(client as unknown as { pipeline?: boolean }).pipeline) {
    client.release();
    return withRequestTransaction(pool, identity, (c) => c.query<R>(query), options);
  }
  let broken = false;
  try {
    const inlineSettings = query.values?.length ? null : settingLiterals(options);
    if (inlineSettings !== null) {
      // One message, one answer: the call's result is the one before the closing statements'.
      const text = `${prelude} ${inlineSettings}${query.text}; ${closingStatement(options)};`;
      const results = (await client.query({ text, ...(query.types ? { types: query.types } : {}) })) as unknown as pg.QueryResult<R>[];
      options.rateLimitHit?.committed();
      return results[results.length - 1 - closingResults(options)]!;
    }
    // Corked: the messages of the three statements leave in one write (node-postgres corks the
    // messages of one statement; a pipelined client writes each statement when issued).
    const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } })
      .connection?.stream;
    stream?.cork?.();
    let sent: Array<Promise<unknown>>;
    let call: Promise<pg.QueryResult<R>>;
    try {
      sent = [client.query(prelude), ...settingStatements(options).map((statement) => client.query(statement))];
      call = client.query<R>(query);
      sent.push(call);
      sent.push(client.query(closingStatement(options)));
    } finally {
      stream?.uncork?.();
    }
    const settled = await Promise.allSettled(sent);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    options.rateLimitHit?.committed();
    return await call;
  } catch (error) {
    // A lost connection (no SQLSTATE) is not given back to the pool; after a SQL error the
    // transaction, aborted (a statement failed before the commit ran), is rolled back first. Always:
    // the error of a one-message call arrives before the message's ReadyForQuery, so the client
    // does not know yet that its transaction is open.
    if (!isSqlError(error)) broken = true;
    else broken = await client.query('rollback').then(() => false, () => true);
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
  const settings = transactionSettingsStatement(pool) + clockStatement(options)
    + (options.clientAddress ? `select app_private.set_client_address(${clientAddressLiteral(options.clientAddress)}); ` : '');
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
