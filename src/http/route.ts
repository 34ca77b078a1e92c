import type { Request, Response } from 'express';
import type { FileStorage } from '../storage/storage.js';
import type { Config } from '../config.js';
import type { JsonSchema } from './schema.js';
import type { ExportDefinition } from './exports/definition.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Who may call a route: anyone, any active account, or a staff account. For 'staff' the
 * request prelude asks SQL (app_private.begin_request_or_fail, WF002 → 403), also when the
 * input is refused, so that a non-staff caller gets 403 before any 400.
 */
export type RouteAuth = 'public' | 'account' | 'staff';

/**
 * Where a SQL argument comes from. Casts are fixed strings of the manifest, never input. A body
 * reaches SQL key by key (typed arguments, docs/architecture.md "Typed arguments"), never as
 * one JSON value.
 */
export type ArgSpec =
  | { name: string; from: 'path'; key: string; cast: 'int' | 'text' }
  | { name: string; from: 'query'; key: string; cast: 'int' | 'text' | 'date' | 'boolean' }
  | { name: string; from: 'query-object'; cast: 'jsonb' }
  | { name: string; from: 'body-field'; key: string; cast: 'int' | 'int[]' | 'text' | 'date' | 'time' | 'timestamptz' | 'boolean' | 'jsonb' }
  /**
   * The keys the body sent, a null value included: a write that keeps what the body leaves out
   * (PATCH, PUT) tells an absent key from a null one by this list (app_hidden.sent,
   * sql/core/arguments.sql).
   */
  | { name: string; from: 'body-keys'; cast: 'text[]' }
  | { name: string; from: 'page' | 'page_size'; cast: 'int' }
  | { name: string; from: 'context'; key: 'public_url'; cast: 'text' };

export type BodyFieldCast = Extract<ArgSpec, { from: 'body-field' }>['cast'];

/** One key of the body as the typed argument `p_<key>` of the SQL function (absent: null). */
export function bodyField(key: string, cast: BodyFieldCast): ArgSpec {
  return { name: `p_${key}`, from: 'body-field', key, cast };
}

/**
 * The keys the body sent, as `p_sent`: the argument of the writes that keep what a body leaves
 * out (every PATCH and the PUT sharing its save, an absence's correction preview, the employee's
 * creation): a key left out keeps its value, a key sent as null clears it. A function taking it
 * must be given it (the start-up check, src/http/manifest-check.ts).
 */
export const SENT_KEYS: ArgSpec = { name: 'p_sent', from: 'body-keys', cast: 'text[]' };

/** A call to one SQL function returning the response body as jsonb. */
export interface SqlCall {
  fn: string;
  args: ArgSpec[];
}

export interface MultipartSpec {
  /** File fields (each may repeat); uploaded files reach SQL as metadata under the same key. */
  files: string[];
  /** Fields that repeat and form an array (e.g. remove_document_ids). */
  arrays?: string[];
  /** Per-file size limit in bytes. */
  maxFileBytes: number;
}

export interface HandlerContext {
  req: Request;
  res: Response;
  config: Config;
  identity: { accountId: number; impersonatorId?: number | null; generation: number } | null;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
  storage: FileStorage;
  /**
   * Calls one `app_private` function as the authenticator itself, in a transaction of its own
   * (login, password reset: no acting account yet), with positional arguments; answers its rows
   * (a scalar function's value under `result`).
   */
  callAsAuthenticator<R extends Record<string, unknown> = Record<string, unknown>>(fn: string, args: unknown[]): Promise<R[]>;
  /** Whether the database answers (the health probe). */
  databaseAnswers(): Promise<boolean>;
}

/** A custom handler returns the status, body and headers, or writes the response itself. */
export type HandlerResult =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { handled: true };

/**
 * Writes the answer of a `sql` route from the call's result (parsed JSON) when it is not that
 * JSON itself: a stored file (src/http/downloads.ts), a calendar, a signed token. It runs after
 * the commit.
 */
export type ResultRenderer = (ctx: HandlerContext, result: unknown) => Promise<HandlerResult> | HandlerResult;

export interface RouteSpec {
  method: HttpMethod;
  /** OpenAPI path, e.g. /api/absences/{id}/ */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: RouteAuth;
  /** Documentation of the permission that opens the route (enforced in SQL). */
  permission?: string;
  pathParams?: Record<string, JsonSchema>;
  query?: JsonSchema;
  body?: JsonSchema;
  multipart?: MultipartSpec;
  /** The SQL function that does the work, called by the router in the request transaction. */
  sql?: SqlCall;
  /** With `sql`: the answer written from the call's result instead of the result itself. */
  render?: ResultRenderer;
  /**
   * With `sql` (a set-returning function of `bytea`): the answer is its rows joined, sent in order as
   * they come with their total length (the planning month: megabytes that a single value would make
   * the driver buffer whole, doubled).
   */
  resultParts?: boolean;
  /** With `sql` (a set-returning function): the rows streamed as a CSV or XLSX file (src/http/exports/stream.ts). */
  export?: ExportDefinition;
  /** Without `sql`: work outside a request transaction (login, password reset, health probe). */
  handler?: (ctx: HandlerContext) => Promise<HandlerResult>;
  /**
   * The call may delete rows naming stored files (app_private.storage_garbage): once it has
   * committed, the router removes their files at once instead of leaving them to the worker.
   */
  purgeStorageAfterCommit?: boolean;
  /**
   * A route the server's configuration may turn off (impersonation without ALLOW_IMPERSONATION):
   * off, it answers 404 like an unknown address, once the account is reloaded.
   */
  enabled?: (config: Config) => boolean;
  /** Transaction-local settings of a SQL route's call, from the server's configuration (never from input). */
  settings?: (config: Config) => Record<string, string>;
  /** Calls with a SQL result get page/page_size and answer the list envelope. */
  paginated?: boolean | { fixedPageSize: number };
  /**
   * With `sql` and `paginated`: a function of the same arguments answering the list's total and its
   * results as JSON text (one row: count int, results text), which the route calls instead of
   * `sql.fn` and sends as written, without a jsonb envelope nor a parse in node (the whole
   * association's queue: 50 records a page). The back-office and GraphQL keep `sql.fn`.
   */
  listText?: string;
  status: number;
  response?: JsonSchema;
  /** Content types of a binary response (file downloads: the stored file's detected type). */
  responseContentTypes?: readonly string[];
  errors: number[];
  /** Other answers without a body, by status, with their description (a feed's 304 Not Modified). */
  otherResponses?: Partial<Record<number, string>>;
  /** An error status whose body is not the usual { detail } (the health probe's 503 says what is down). */
  errorBodies?: Partial<Record<number, JsonSchema>>;
  headers?: Record<string, string>;
  /**
   * A form-encoded body (application/x-www-form-urlencoded, 1 KiB at most) is accepted and
   * ignored: RFC 8058's one-click POST of a List-Unsubscribe address, whose parameters travel in
   * the URL. Any other body is read as JSON, as everywhere.
   */
  acceptsFormBody?: boolean;
  /** Extra rate-limit bucket: the password reset route (per address). The login throttles itself (src/auth/login-throttle.ts). */
  rateLimit?: 'password_reset';
}
