import type { Request, Response } from 'express';
import type pg from 'pg';
import type { ActingAccount } from '../db/transaction.js';
import type { FileStorage } from '../storage/storage.js';
import type { Config } from '../config.js';
import type { JsonSchema } from './schema.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Who may call a route: anyone, any active account, or a staff account. */
export type RouteAuth = 'public' | 'account' | 'staff';

/** Where a SQL argument comes from. Casts are fixed strings of the manifest, never input. */
export type ArgSpec =
  | { name: string; from: 'path'; key: string; cast: 'int' | 'text' }
  | { name: string; from: 'query'; key: string; cast: 'int' | 'text' | 'date' | 'boolean' }
  | { name: string; from: 'query-object'; cast: 'jsonb' }
  | { name: string; from: 'body'; cast: 'jsonb' }
  | { name: string; from: 'body-field'; key: string; cast: 'int' | 'int[]' | 'text' | 'date' | 'time' | 'timestamptz' | 'boolean' | 'jsonb' }
  | { name: string; from: 'page' | 'page_size'; cast: 'int' }
  | { name: string; from: 'context'; key: 'public_url'; cast: 'text' };

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
  pool: pg.Pool;
  account: ActingAccount | null;
  identity: { accountId: number; impersonatorId?: number | null } | null;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
  storage: FileStorage;
  /** Runs `work` in the request transaction (account reloaded, visitor role, clock). */
  inRequestTransaction<T>(work: (client: pg.PoolClient, account: ActingAccount | null) => Promise<T>): Promise<T>;
  /** Runs `work` as the authenticator itself (login, password reset): no acting account. */
  inAuthenticatorTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
}

/** A custom handler returns the status, body and headers, or writes the response itself. */
export type HandlerResult =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { handled: true };

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
  /** The SQL function that does the work; or `handler` for non-SQL work (login, files). */
  sql?: SqlCall;
  handler?: (ctx: HandlerContext) => Promise<HandlerResult>;
  /** Transaction-local settings of a SQL route's call, from the server's configuration (never from input). */
  settings?: (config: Config) => Record<string, string>;
  /** Calls with a SQL result get page/page_size and answer the list envelope. */
  paginated?: boolean | { fixedPageSize: number };
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
  /** Extra rate-limit bucket: the password reset route (per address), the login (per username, once its body is read). */
  rateLimit?: 'password_reset' | 'login_per_username';
}
