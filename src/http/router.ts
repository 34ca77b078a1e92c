import express, { type Request, type RequestHandler, type Response, type NextFunction } from 'express';
import type pg from 'pg';
import type { ValidateFunction } from 'ajv';
import type { Config } from '../config.js';
import {
  runRequestCall, withAuthenticatorTransaction, withRequestTransaction, InactiveAccountError, type RequestIdentity, type TransactionOptions,
} from '../db/transaction.js';
import { purgeAfterCommit } from '../storage/garbage.js';
import type { FileStorage } from '../storage/storage.js';
import { csrfRefusal } from '../auth/middleware.js';
import type { PendingHit, RateLimiter } from '../auth/rate-limit.js';
import { isConnectionLoss } from '../db/connection-loss.js';
import { ApiError } from './errors.js';
import { API_HEADERS, applyApiHeaders, isConditional, isSelfCompressed, mergeHeaders, takeApiHeaders } from './api-response.js';
import { sendWhole } from './compress.js';
import { isMultipart, parseMultipart } from './multipart.js';
import { firstTwoSegments, routePattern } from './path-patterns.js';
import { getRequestAuth, takePendingHit } from './request-context.js';
import { streamExport } from './exports/stream.js';
import type { HandlerContext, RouteSpec } from './route.js';
import { sqlText, sqlValues } from './sql-call.js';
import { compileValidator, jsonBodyErrors, nulCharacterErrors, toFieldErrors } from './validation.js';

export interface RouterDeps {
  config: Config;
  pool: pg.Pool;
  storage: FileStorage;
  limiter: RateLimiter;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** /api/absences/{id}/ → /api/absences/:id/ */
export function expressPath(openApiPath: string): string {
  return openApiPath.replace(/\{([a-z_]+)\}/g, ':$1');
}

/**
 * The statement a route runs: the body as JSON text, sent to the client as it comes (no
 * JSON.parse then JSON.stringify of what PostgreSQL already wrote; a month of planning is
 * megabytes). A list answers its count and its results' text, for the envelope around them
 * (offset 0 keeps the function from being evaluated once per output column).
 */
export function sqlTextForResponse(route: RouteSpec): string {
  if (route.paginated && route.listText) {
    // The list's text variant: its total and its results' JSON text, in binary format (raw bytes).
    const textCall = sqlText({ ...route, sql: { ...route.sql!, fn: route.listText } }).replace(/^select /, '').replace(/ as result$/, '');
    return `select l.count, l.results from ${textCall} as l`;
  }
  const call = sqlText(route).replace(/^select /, '').replace(/ as result$/, '');
  if (route.resultParts) return `select part from ${call} as part`;
  return route.paginated
    ? `select (r ->> 'count')::int as count, (r -> 'results')::text as results from (select ${call} as r offset 0) x`
    : `select (${call})::text as result`;
}

/**
 * The statement of a handler's call to an `app_private` function as the authenticator: the
 * function's name is a constant of the route module, the values are parameters.
 */
export function authenticatorCallText(fn: string, argumentCount: number): string {
  if (!/^app_private\.[a-z_][a-z0-9_]*$/.test(fn)) throw new Error(`bad authenticator function name ${fn}`);
  const params = Array.from({ length: argumentCount }, (_, i) => `$${i + 1}`);
  return `select * from ${fn}(${params.join(', ')}) as result`;
}

interface CompiledRoute {
  spec: RouteSpec;
  sql: string | null;
  params: ValidateFunction | null;
  query: ValidateFunction | null;
  body: ValidateFunction | null;
  /** The same schema for multipart form fields (text, coerced); JSON bodies are never coerced. */
  formBody: ValidateFunction | null;
  /** The route's own headers (name, value, …), and after the API's (src/http/api-response.ts), made once. */
  ownHeaders: string[];
  apiHeaders: string[];
}

/**
 * Whether every answer of a route is written by this module (the JSON text of its call, its
 * status without body, an error envelope by the error handler): such a route compresses its
 * answers itself and sends the API's headers with them (src/server.ts). The others (custom
 * handlers, exports, rendered answers) write through Express, behind the compression middleware.
 */
export function sendsItsOwnAnswers(spec: RouteSpec): boolean {
  return Boolean(spec.sql) && !spec.handler && !spec.export && !spec.render;
}

function compile(route: RouteSpec): CompiledRoute {
  const pageProps = route.paginated
    ? {
        page: { type: 'integer', minimum: 1 },
        ...(typeof route.paginated === 'object' ? {} : { page_size: { type: 'integer', minimum: 1 } }),
      }
    : {};
  const querySchema = route.query || route.paginated
    ? {
        ...(route.query ?? { type: 'object' }),
        properties: { ...((route.query?.properties as object) ?? {}), ...pageProps },
      }
    : null;
  return {
    spec: route,
    sql: route.sql ? sqlTextForResponse(route) : null,
    params: route.pathParams
      ? compileValidator({ type: 'object', properties: route.pathParams, required: Object.keys(route.pathParams) }, true)
      : null,
    query: querySchema ? compileValidator(querySchema, true) : null,
    body: route.body ? compileValidator(route.body, false) : null,
    formBody: route.body && route.multipart ? compileValidator(route.body, true) : null,
    ownHeaders: mergeHeaders([], route.headers),
    apiHeaders: mergeHeaders(API_HEADERS, route.headers),
  };
}

/** A link to another page of a list, on PUBLIC_URL: never on the client's Host header. */
function pageUrl(req: Request, publicUrl: string, page: number | null): string | null {
  if (page === null) return null;
  // Appended, not resolved: PUBLIC_URL may carry a path prefix, and the request path stays under it.
  const url = new URL(`${publicUrl.replace(/\/+$/, '')}${req.originalUrl}`);
  if (page === 1) url.searchParams.delete('page');
  else url.searchParams.set('page', String(page));
  return url.toString();
}

/**
 * The body of a non-list route comes back in binary result format: the bytes of the JSON
 * text, kept as a Buffer (no UTF-8 decoding into a string, no encoding back), sent as is.
 */
const RAW_BYTES: pg.CustomTypesConfig = { getTypeParser: () => (value: unknown) => value } as unknown as pg.CustomTypesConfig;

/**
 * A value read with RAW_BYTES: the bytes in binary format, the text when the call went out in the
 * simple protocol (a call without parameters, src/db/transaction.ts runRequestCall).
 */
const bytesOf = (value: Buffer | string): Buffer => (typeof value === 'string' ? Buffer.from(value) : value);

/**
 * A body PostgreSQL already wrote as JSON text, with the type Express's res.send gave it (a text:
 * `application/json; charset=utf-8`, bytes: `application/json`). A route that sends its own
 * answers (sendsItsOwnAnswers) writes its head in one writeHead and compresses the body itself
 * (src/http/compress.ts); a conditional request goes through res.send (its freshness check).
 */
function sendJsonText(req: Request, res: Response, route: CompiledRoute, status: number, json: string | Buffer): Promise<void> | void {
  if (isSelfCompressed(res) && !isConditional(req)) {
    const headers = takeApiHeaders(res) ? route.apiHeaders : route.ownHeaders;
    return sendWhole(req, res, status, typeof json === 'string' ? 'application/json; charset=utf-8' : 'application/json', json, headers);
  }
  applyApiHeaders(res);
  if (isSelfCompressed(res)) res.setHeader('Vary', 'Accept-Encoding');
  for (let i = 0; i < route.ownHeaders.length; i += 2) res.setHeader(route.ownHeaders[i]!, route.ownHeaders[i + 1]!);
  res.status(status).type('application/json').send(json);
}

function sendResult(res: Response, status: number, body: unknown, headers: Record<string, string> = {}): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (status === 204 || body === undefined) {
    res.status(status).end();
    return;
  }
  res.status(status).json(body);
}

/**
 * The JSON body reader of every route, made once. It runs only once `bodyMediaTypeError` let the
 * request through: a body that is not `application/json` never reaches it.
 */
const readJsonBody = express.json({ limit: '1mb', strict: false, type: () => true });

/** Whether a request carries body bytes (a length above 0, or a chunked body). */
function carriesBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length.trim() !== '0';
}

/**
 * 415 for an unsafe request whose body is not JSON (`Content-Type: application/json`), or
 * multipart/form-data on a route that takes uploads: a body of any other type is never read as
 * JSON (a plain HTML form sending `text/plain` could otherwise write through a session cookie).
 * An empty body needs no type.
 */
function bodyMediaTypeError(spec: RouteSpec, req: Request): ApiError | null {
  if (!carriesBody(req)) return null;
  if (req.is('application/json')) return null;
  if (spec.multipart && isMultipart(req)) return null;
  // RFC 8058's one-click unsubscribe posts a small form; its body is dropped unread.
  if (spec.acceptsFormBody && req.is('application/x-www-form-urlencoded')) return null;
  return ApiError.unsupportedMediaType(spec.multipart
    ? 'Type de contenu non pris en charge : envoyez un corps JSON (Content-Type: application/json) ou multipart/form-data.'
    : 'Type de contenu non pris en charge : envoyez un corps JSON (Content-Type: application/json).');
}

function parseJsonBody(req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    readJsonBody(req, res, (error?: unknown) => {
      if (error) {
        const err = error as { type?: string; status?: number };
        if (err.type === 'entity.too.large') {
          reject(ApiError.field('non_field_errors', 'Corps de requête trop volumineux (1 Mo au plus).'));
        } else {
          reject(ApiError.field('non_field_errors', 'Corps JSON illisible.'));
        }
        return;
      }
      resolve();
    });
  });
}

/** Reads and drops a small form body (a route's `acceptsFormBody`: RFC 8058 one-click). */
function dropFormBody(req: Request): Promise<void> {
  return new Promise((resolve, reject) => {
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 1024) {
        req.pause();
        reject(ApiError.field('non_field_errors', 'Corps de requête trop volumineux (1 Kio au plus).'));
      }
    });
    req.on('end', () => resolve());
    req.on('error', reject);
  });
}

/** Set on a request once its input is read and validated. */
const INPUT_READ = Symbol('inputRead');

/**
 * Reloads the acting account alone: inactive → 401, and a non-staff caller of a staff route →
 * 403, both answered by the request prelude in SQL (app_private.begin_request_or_fail).
 */
async function checkAccount(spec: RouteSpec, identity: RequestIdentity, deps: RouterDeps): Promise<void> {
  try {
    await withRequestTransaction(deps.pool, identity, async () => undefined,
      { frozenNow: deps.config.frozenNow?.(), staffOnly: spec.auth === 'staff' });
  } catch (error) {
    if (error instanceof InactiveAccountError) throw ApiError.unauthorized('Compte inactif ou inconnu.');
    throw error;
  }
}

/**
 * The account is reloaded before any input error is reported: a closed account gets 401 and
 * a non-staff caller of a staff route 403, never a 400 or a 404 about its input.
 */
function handlerFor(route: CompiledRoute, deps: RouterDeps) {
  const handle = routeHandler(route, deps);
  const folds = foldsRateLimit(route.spec);
  return async (req: Request, res: Response): Promise<void> => {
    // The request's rate-limit hit, when the middleware handed it over (src/auth/middleware.ts).
    const hit = takePendingHit(req);
    // An upload stores its files before the call: its hit is counted first.
    const foldsHere = folds && !(route.spec.multipart && isMultipart(req));
    if (hit && !foldsHere) {
      const wait = await hit.settle();
      if (wait > 0) throw ApiError.tooManyRequests(wait);
    }
    try {
      await handle(req, res, foldsHere ? hit : null);
      // Every path of a folding route counts its hit in its call's transaction; should one not
      // have, it is counted now (too late to refuse, never uncounted).
      await hit?.settle();
    } catch (error) {
      // The hit's own refusal (the transaction rolled back), else the hit counted on its own
      // unless the transaction committed it: over the limit, 429 comes before any other answer.
      if (hit) {
        const wait = hit.refusal(error) || (await hit.settle());
        if (wait > 0) throw ApiError.tooManyRequests(wait);
      }
      const { identity } = getRequestAuth(req);
      const inputRefused = !(req as unknown as Record<symbol, boolean>)[INPUT_READ];
      if (route.spec.auth !== 'public' && identity && inputRefused && error instanceof ApiError) {
        await checkAccount(route.spec, identity, deps);
      }
      throw error;
    }
  };
}

/**
 * Whether a route's authenticated requests count their rate-limit hit inside the transaction of
 * its call (src/auth/rate-limit.ts, PendingHit): a route whose work is one SQL call, but for a
 * multipart body (an upload stores its files before the call). The others (custom handlers,
 * exports, and the routes with their own bucket) count it before they start.
 */
export function foldsRateLimit(spec: RouteSpec): boolean {
  return spec.auth !== 'public' && Boolean(spec.sql) && !spec.handler && !spec.export && !spec.rateLimit;
}

function routeHandler(route: CompiledRoute, deps: RouterDeps) {
  const { spec } = route;
  const readsBody = ['post', 'put', 'patch'].includes(spec.method);
  return async (req: Request, res: Response, hit: PendingHit | null): Promise<void> => {
    const auth = getRequestAuth(req);
    // Already refused by the authentication middleware; refused here again, whatever the path it matched.
    if (auth.csrf === 'missing') throw csrfRefusal();
    if (spec.auth !== 'public') {
      if (auth.tokenError) throw ApiError.unauthorized(auth.tokenError);
      if (!auth.identity) throw ApiError.unauthorized();
    }

    // Path parameters that do not match their type name no resource: 404.
    const params: Record<string, unknown> = { ...req.params };
    if (route.params && !route.params(params)) throw ApiError.notFound();

    // A body of another type is refused before anything of the request is read.
    if (spec.method !== 'get') {
      const mediaTypeError = bodyMediaTypeError(spec, req);
      if (mediaTypeError) throw mediaTypeError;
    }

    // (no query string: no parse by Express's req.query getter)
    const query: Record<string, unknown> = req.url.includes('?') ? { ...(req.query as Record<string, unknown>) } : {};
    const queryNul = nulCharacterErrors(query);
    if (Object.keys(queryNul).length) throw ApiError.badRequest(queryNul);
    if (route.query && !route.query(query)) throw ApiError.badRequest(toFieldErrors(route.query.errors));
    let page = 1;
    let pageSize = DEFAULT_PAGE_SIZE;
    if (spec.paginated) {
      page = (query.page as number | undefined) ?? 1;
      pageSize = typeof spec.paginated === 'object'
        ? spec.paginated.fixedPageSize
        : Math.min((query.page_size as number | undefined) ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
      delete query.page;
      delete query.page_size;
    }

    let body: Record<string, unknown> = {};
    let storedKeys: string[] = [];
    let uploadedFiles: object[] = [];
    if (readsBody) {
      let validate = route.body;
      if (spec.multipart && isMultipart(req)) {
        // An upload reaches the disk: the account is reloaded first, so that a closed account
        // (or a non-staff caller of a staff route) is answered before one byte is stored.
        if (spec.auth !== 'public' && auth.identity) await checkAccount(spec, auth.identity, deps);
        const parsed = await parseMultipart(req, spec.multipart, deps.storage);
        body = { ...parsed.fields };
        storedKeys = parsed.storedKeys;
        uploadedFiles = Object.values(parsed.files).flat();
        for (const field of spec.multipart.files) {
          body[field] = parsed.files[field] ?? [];
        }
        validate = route.formBody;
      } else if (spec.acceptsFormBody && req.is('application/x-www-form-urlencoded')) {
        await dropFormBody(req);
        body = {};
      } else {
        await parseJsonBody(req, res);
        const raw = req.body as unknown;
        if (raw === undefined) {
          body = {};
        } else if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
          throw ApiError.field('non_field_errors', 'Un objet JSON est attendu.');
        } else {
          body = raw as Record<string, unknown>;
        }
        const shapeErrors = jsonBodyErrors(body);
        if (Object.keys(shapeErrors).length) throw ApiError.badRequest(shapeErrors);
        if (spec.multipart) {
          // Files travel only in multipart bodies.
          for (const field of spec.multipart.files) {
            if (field in body) throw ApiError.field(field, 'Les fichiers se déposent dans un corps multipart/form-data.');
          }
        }
      }
      const bodyNul = nulCharacterErrors(body);
      if (Object.keys(bodyNul).length) {
        await deps.storage.remove(storedKeys);
        throw ApiError.badRequest(bodyNul);
      }
      if (validate && !validate(body)) {
        await deps.storage.remove(storedKeys);
        throw ApiError.badRequest(toFieldErrors(validate.errors));
      }
    }

    (req as unknown as Record<symbol, boolean>)[INPUT_READ] = true;
    const identity = spec.auth === 'public' ? null : auth.identity;
    const transaction: TransactionOptions = {
      frozenNow: deps.config.frozenNow?.(),
      clientAddress: req.ip,
      uploadedFiles,
      settings: spec.settings?.(deps.config),
      staffOnly: spec.auth === 'staff',
      rateLimitHit: hit,
    };
    // Made for the routes that take it (custom handlers, exports, rendered answers), not per request.
    const context = (): HandlerContext => ({
      req,
      res,
      config: deps.config,
      identity: auth.identity,
      params,
      query,
      body,
      storage: deps.storage,
      callAsAuthenticator: async <R extends Record<string, unknown>>(fn: string, args: unknown[]) =>
        (await withAuthenticatorTransaction(deps.pool, (client) => client.query<R>(authenticatorCallText(fn, args.length), args),
          { frozenNow: transaction.frozenNow, clientAddress: req.ip })).rows,
      databaseAnswers: async () => {
        try {
          await deps.pool.query('select 1');
          return true;
        } catch {
          return false;
        }
      },
    });
    try {
      if (spec.enabled && !spec.enabled(deps.config)) {
        if (identity) await checkAccount(spec, identity, deps);
        throw ApiError.notFound('Adresse inconnue.');
      }
      if (spec.handler) {
        const result = await spec.handler(context());
        if ('handled' in result) return;
        sendResult(res, result.status, result.body, { ...spec.headers, ...result.headers });
        return;
      }
      if (spec.export) {
        await streamExport(context(), spec, spec.export, (work) => withRequestTransaction(deps.pool, identity, work, transaction));
        return;
      }

      const values = sqlValues(spec, { params, query, body, page, pageSize, config: deps.config });
      if (spec.resultParts) {
        const { rows: parts } = await runRequestCall<{ part: Buffer | string }>(deps.pool, identity,
          { text: route.sql!, values, binary: true, types: RAW_BYTES } as pg.QueryConfig, transaction);
        // One buffer: the head and the parts leave together, compressed whole.
        await sendJsonText(req, res, route, spec.status, Buffer.concat(parts.map((row) => bytesOf(row.part))));
        return;
      }
      const rendered = Boolean(spec.render);
      const statement: pg.QueryConfig & { binary?: boolean } = (spec.paginated && !spec.listText) || rendered
        ? { text: route.sql!, values }
        : { text: route.sql!, values, binary: true, types: RAW_BYTES };
      // The one path of a route's call: prelude, call and commit in one round trip (runRequestCall).
      const { rows } = await runRequestCall<Record<string, unknown>>(deps.pool, identity, statement, transaction);
      // Committed: the rows may name the uploaded files, which stay whatever follows.
      storedKeys = [];
      if (spec.purgeStorageAfterCommit) {
        await purgeAfterCommit(deps.pool, deps.storage, { frozenNow: transaction.frozenNow, log: req.log });
      }
      const row = rows[0] ?? {};

      if (spec.render) {
        const text = row.result as string | null | undefined;
        const answer = await spec.render(context(), text == null ? null : JSON.parse(text));
        if ('handled' in answer) return;
        sendResult(res, answer.status, answer.body, { ...spec.headers, ...answer.headers });
        return;
      }
      if (spec.paginated) {
        // The text variant (listText) answers in binary format: the int4 total, the results' UTF-8 bytes.
        const rawCount = row.count as Buffer | string | number | null;
        const count = rawCount == null ? 0
          : typeof rawCount === 'number' ? rawCount
          : typeof rawCount === 'string' ? Number(rawCount) : rawCount.readInt32BE(0);
        const lastPage = Math.max(1, Math.ceil(count / pageSize));
        if (page > lastPage) throw ApiError.notFound('Page non valide.');
        const next = page < lastPage ? pageUrl(req, deps.config.publicUrl, page + 1) : null;
        const previous = page > 1 ? pageUrl(req, deps.config.publicUrl, page - 1) : null;
        const head = `{"count":${count},"next":${JSON.stringify(next)},"previous":${JSON.stringify(previous)},"results":`;
        if (spec.listText) {
          const results = row.results == null ? Buffer.from('[]') : bytesOf(row.results as Buffer | string);
          await sendJsonText(req, res, route, spec.status, Buffer.concat([Buffer.from(head), results, Buffer.from('}')]));
          return;
        }
        await sendJsonText(req, res, route, spec.status, `${head}${(row.results as string | null) ?? '[]'}}`);
        return;
      }
      const text = row.result as Buffer | string | null | undefined;
      if (spec.status === 204) {
        applyApiHeaders(res);
        sendResult(res, spec.status, undefined, spec.headers);
        return;
      }
      // (null: res.json(null)'s text)
      await sendJsonText(req, res, route, spec.status, text ?? 'null');
    } catch (error) {
      // A lost connection leaves the outcome unknown: the COMMIT may have reached the server,
      // and its rows name these files. They stay; the orphan sweep removes them if no row does.
      if (storedKeys.length && !isConnectionLoss(error)) await deps.storage.remove(storedKeys);
      if (error instanceof InactiveAccountError) throw ApiError.unauthorized('Compte inactif ou inconnu.');
      throw error;
    }
  };
}

/** A path parameter decoded as Express decodes it: a malformed escape is a 400 error. */
function decodeParam(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch (error) {
    if (error instanceof URIError) Object.assign(error, { message: `Failed to decode param '${value}'`, status: 400, statusCode: 400 });
    throw error;
  }
}

/**
 * The key of a path's bucket in the dispatcher: its first two segments, in lower case
 * (/api/absences of /API/Absences/12/). Every manifest path starts with two literal segments.
 */
function bucketKey(path: string): string {
  return firstTwoSegments(path).toLowerCase();
}

interface DispatchEntry {
  pattern: RegExp;
  names: string[];
  /** The route's path as Express writes it (the metrics' route label, req.route.path). */
  label: string;
  /** A route's method (HEAD is served by GET), or null for the path's other methods (405, OPTIONS). */
  method: string | null;
  /** The route (null for the 405 / OPTIONS handler of its path). */
  route: DispatchedRoute | null;
  handle: (req: Request, res: Response, next: NextFunction) => void;
}

/** A route as the dispatcher serves it: its method, its manifest path, its handler (a rejection goes to `next`). */
export interface DispatchedRoute {
  method: RouteSpec['method'];
  path: string;
  handler: (req: Request, res: Response) => Promise<void>;
  /** The manifest's route, when it is one (src/server.ts reads what it needs before the handler). */
  spec?: RouteSpec;
}

/**
 * What the dispatcher found for a request: the route (null for a 405 / OPTIONS answer, or a path
 * parameter that cannot be decoded), and `run`, which answers it (or passes the error to `next`).
 */
export interface DispatchMatch {
  route: DispatchedRoute | null;
  run(req: Request, res: Response, next: NextFunction): void;
}

export interface ApiDispatcher {
  /** The request's route, or null when no route of the API has its path (the request goes on). */
  match(req: Request): DispatchMatch | null;
  /** match then run, as one middleware. */
  handler: RequestHandler;
}

/**
 * The API's dispatcher: one handler per route, and 405 with Allow (200 to OPTIONS) for the other
 * methods of a known path. It answers exactly as an Express router of the same routes did
 * (case-insensitive, one optional trailing slash, routes in the manifest's order, then the paths'
 * 405 handlers; test/api/routing.test.ts compares them), but a request is compared with the
 * routes of its first two segments only (a map), not with every route's regular expression in
 * turn, and goes through none of the layers of Express's router.
 */
export function apiDispatcher(routes: DispatchedRoute[]): ApiDispatcher {
  const buckets = new Map<string, DispatchEntry[]>();
  const add = (openApiPath: string, entry: Omit<DispatchEntry, 'pattern' | 'names'>) => {
    if (!/^\/[^/{}]+\/[^/{}]+/.test(openApiPath)) throw new Error(`route path ${openApiPath}: two literal segments first`);
    const key = bucketKey(openApiPath.replace(/\/+$/, ''));
    const list = buckets.get(key) ?? [];
    list.push({ ...routePattern(openApiPath), ...entry });
    buckets.set(key, list);
  };
  const methodsByPath = new Map<string, { openApiPath: string; methods: Set<string> }>();
  for (const route of routes) {
    const { handler } = route;
    const label = expressPath(route.path);
    add(route.path, {
      label,
      method: route.method.toUpperCase(),
      route,
      handle: (req, res, next) => {
        handler(req, res).then(undefined, (error: unknown) => next(error ?? new Error('Rejected promise')));
      },
    });
    const known = methodsByPath.get(label) ?? { openApiPath: route.path, methods: new Set<string>() };
    known.methods.add(route.method.toUpperCase());
    if (route.method === 'get') known.methods.add('HEAD');
    methodsByPath.set(label, known);
  }
  for (const [label, { openApiPath, methods }] of methodsByPath) {
    const allow = [...methods, 'OPTIONS'];
    const allowHeader = allow.join(', ');
    add(openApiPath, {
      label,
      method: null,
      route: null,
      handle: (req, res, next) => {
        if (req.method === 'OPTIONS') {
          res.setHeader('Allow', allowHeader);
          res.status(200).end();
          return;
        }
        next(ApiError.methodNotAllowed(req.method, allow));
      },
    });
  }
  // Within a bucket: the routes in the manifest's order, then the 405 handlers (as they were added).
  const match = (req: Request): DispatchMatch | null => {
    const path = req.path;
    if (typeof path !== 'string') return null;
    const entries = buckets.get(bucketKey(path));
    if (!entries) return null;
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    for (const entry of entries) {
      const found = entry.pattern.exec(path);
      if (!found) continue;
      let params: Record<string, string>;
      try {
        params = {};
        for (let i = 0; i < entry.names.length; i++) params[entry.names[i]!] = decodeParam(found[i + 1]!);
      } catch (error) {
        // As Express: a parameter that cannot be decoded ends the routing with its error.
        return { route: null, run: (_req, _res, next) => next(error) };
      }
      if (entry.method !== null && entry.method !== method) continue;
      return {
        route: entry.route,
        run: (req, res, next) => {
          req.params = params;
          (req as Request & { route?: { path: string } }).route = { path: entry.label };
          entry.handle(req, res, next);
        },
      };
    }
    return null;
  };
  return {
    match,
    handler: (req: Request, res: Response, next: NextFunction) => {
      const found = match(req);
      if (found) found.run(req, res, next);
      else next();
    },
  };
}

/** The dispatcher as one middleware (apiDispatcher). */
export function dispatchRoutes(routes: DispatchedRoute[]): RequestHandler {
  return apiDispatcher(routes).handler;
}

/** The API's routes from the manifest, compiled once, behind the dispatcher (apiDispatcher). */
export function buildApiRouter(routes: RouteSpec[], deps: RouterDeps): ApiDispatcher {
  return apiDispatcher(routes.map((route) => ({ method: route.method, path: route.path, spec: route, handler: handlerFor(compile(route), deps) })));
}
