import express, { type NextFunction, type Request, type Response } from 'express';
import type http from 'node:http';
import { createRequire } from 'node:module';
import compression from 'compression';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { createLogger } from './log.js';
import { createMetrics, METRICS_PATH } from './http/metrics.js';
import type { Config } from './config.js';
import { createPool } from './db/pool.js';
import { RateLimiter } from './auth/rate-limit.js';
import { authenticate, passwordResetLimit, rateLimit } from './auth/middleware.js';
import type pg from 'pg';
import { isConnectionLoss } from './db/connection-loss.js';
import { ApiError, apiErrorFromPg } from './http/errors.js';
import { startupMismatches } from './http/manifest-check.js';
import { inputContractMismatches } from './http/input-contract.js';
import { buildApiRouter, foldsRateLimit, sendsItsOwnAnswers } from './http/router.js';
import { API_HEADERS, SECURITY_HEADERS, applyApiHeaders, deferApiHeaders, markSelfCompressed, sendApiJson, setHeaders }
  from './http/api-response.js';
import { BROTLI_OPTIONS } from './http/compress.js';
import { takePendingHit } from './http/request-context.js';
import { buildOpenApi } from './http/openapi.js';
import { mountDocs } from './http/docs.js';
import { mountWeb } from './http/web.js';
import { redactRequest, redactUrl } from './http/log-redaction.js';
import { routeModules, routes } from './http/routes/index.js';
import { FileStorage } from './storage/storage.js';
import { mountBackoffice } from './backoffice/index.js';
import { declaredCalls } from './backoffice/calls.js';
import { SessionStore } from './auth/sessions.js';

// node:http required, not imported: an ESM import builds the builtin's namespace from every export,
// and reading http.WebSocket loads undici, 60 to 300 ms of a start (BENCHMARKS.md, "Start-up (issue 31)").
const { createServer } = createRequire(import.meta.url)('node:http') as typeof http;

export const API_INFO = {
  title: 'Service de gestion des temps et absences',
  version: '1.0.0',
  description:
    'Absences, demandes de modification de journée, compteurs, planning et périmètres des associations ' +
    'sociales et médico-sociales. Jeton JWT (6 h) obtenu sur /api/auth/token/, présenté en `Authorization: Bearer`.',
};

/**
 * TRUST_PROXY (docs/running.md): a hop count (`1`), `true`, or addresses and subnets
 * (`loopback`, `10.0.0.0/8`). Behind a TLS-terminating proxy it makes req.secure (the Secure
 * flag of the back-office cookies) and req.ip (rate limits) follow X-Forwarded-*.
 */
function trustProxy(value: string | undefined): boolean | number | string {
  if (!value || value === 'false') return false;
  if (value === 'true') return true;
  return /^\d+$/.test(value) ? Number(value) : value;
}

export interface RunningServer {
  url: string;
  server: http.Server;
  close(): Promise<void>;
}

export interface AppOptions {
  logger?: Logger;
  /** The built web application to serve at `/` (default web/dist). */
  webDist?: string;
}

/**
 * Start-up stops when a route's SQL call or a call the back-office declares (src/backoffice/calls.ts)
 * does not fit its function (manifest-check.ts) or a limit of
 * the route schemas differs from sql/'s (input-contract.ts). A database
 * that cannot be reached yet is not a reason to stop: the routes answer 503 until it is back.
 */
async function checkManifest(pool: pg.Pool, logger: Logger): Promise<void> {
  let problems: string[];
  try {
    problems = (await Promise.all([startupMismatches(pool, routes, declaredCalls()), inputContractMismatches(pool)])).flat();
  } catch (error) {
    if (!isConnectionLoss(error)) throw error;
    logger.warn('database unreachable at start-up: the SQL calls of the manifest were not checked');
    return;
  }
  if (problems.length) throw new Error(`The route manifest does not fit the database:\n${problems.join('\n')}`);
}

/** Composes the HTTP service: logging, headers, auth, rate limits, the manifest's routes, docs, GraphQL. */
export async function createApp(config: Config, options: AppOptions = {}) {
  const logger = options.logger ?? createLogger(config);
  const pool = createPool(config.authDatabaseUrl, config);
  const metrics = createMetrics(config, pool);
  const storage = new FileStorage(config.storageDir);
  const limiter = new RateLimiter(pool);
  const app = express();
  const server = createServer(app);
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxy(process.env.TRUST_PROXY));
  app.set('json spaces', 0);
  // No ETag on answers that are never cached (Cache-Control: no-store below): it was a SHA-1
  // of every body, 4 ms for a month of planning.
  app.set('etag', false);

  const logRequests = config.logRequests ?? (config.logFormat === 'json' && logger.isLevelEnabled('info'));
  const requestLogger = logRequests
    ? pinoHttp({ logger, serializers: { req: redactRequest },
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info') })
    : null;
  /**
   * Without request lines (LOG_REQUESTS off, the human format, or a level above info) pino-http
   * would still serialise every request into a child logger (a third of the memory churn of a
   * simple read); only the lines that are written remain: a 5xx response, at error level.
   */
  const errorLine = (req: Request, res: Response, started: bigint) => {
    if (res.statusCode < 500) return;
    logger.error({ req: { method: req.method, url: redactUrl(req.originalUrl) }, res: { statusCode: res.statusCode },
      responseTime: Number((process.hrtime.bigint() - started) / 1_000_000n) }, 'request errored');
  };
  // gzip or brotli when the client accepts it, for the types worth it (JSON, HTML, CSS, JavaScript,
  // CSV, iCalendar, SVG; not images, PDF, ZIP or XLSX, compressed already) from 1 KB on. Brotli at
  // quality 4: at its default 11 a month of planning took ~100 ms of CPU to compress. The API's
  // routes that write their own answers compress them themselves, with the same rules
  // (src/http/compress.ts): the middleware wraps every other answer.
  const compress = compression({ brotli: BROTLI_OPTIONS });
  // Personal data is never cached by intermediaries or browsers: every answer of the API and of
  // GraphQL (data, 401, 403, errors alike), under the paths Express would mount at /api and
  // /graphql (any case, the segment whole).
  const privatePath = /^\/(?:api|graphql)(?:\/|$)/i;
  const sessions = new SessionStore(pool, config);
  const authenticated = authenticate(config, sessions);
  const limited = rateLimit(config, limiter, routes.filter((route) => route.auth === 'public').map((route) => route.path),
    routes.filter(foldsRateLimit));
  // Routes with their own bucket (the manifest's rateLimit: the password reset, 5 per hour).
  const resetLimited = passwordResetLimit(config, limiter);
  // With no proxy trusted, req.ip is the socket's address (proxy-addr's answer, without its parsing).
  const trustsNoProxy = !app.get('trust proxy');

  // The check's queries run while the routes are assembled; awaited before the app is handed out.
  const checked = checkManifest(pool, logger).then(() => null, (error: unknown) => ({ error }));
  const api = buildApiRouter(routes, { config, pool, storage, limiter });

  /*
   * The API's routes first, before any other layer of the application: a request for one of them
   * goes through, in one function and in the same order as the layers below for any other
   * request, the metrics and the error line (one `finish` listener), the compression middleware
   * (only for the routes that do not compress their own answers), the headers (sent with the
   * answer by the routes that write their own), authentication, the rate limits, then its route.
   * The client's address is read once.
   */
  app.use((req: Request, res: Response, next: NextFunction) => {
    const found = api.match(req);
    if (!found) {
      next();
      return;
    }
    const started = process.hrtime.bigint();
    Object.defineProperty(req, 'ip', { value: trustsNoProxy ? req.socket.remoteAddress : req.ip, configurable: true, writable: true });
    if (requestLogger) {
      requestLogger(req, res);
      res.on('finish', () => metrics.finished(req, res, started));
    } else {
      req.log = logger;
      // (`on`, not `once`: an answer finishes once, and once's wrapper is one more allocation)
      res.on('finish', () => {
        metrics.finished(req, res, started);
        errorLine(req, res, started);
      });
    }
    const spec = found.route?.spec;
    if (spec && sendsItsOwnAnswers(spec)) {
      markSelfCompressed(res);
      deferApiHeaders(res);
    } else {
      compress(req, res, () => undefined);
      setHeaders(res, API_HEADERS);
    }
    const fail = (error: unknown) => {
      applyApiHeaders(res);
      next(error);
    };
    const route = () => found.run(req, res, fail);
    authenticated(req, res, (error?: unknown) => {
      if (error) return fail(error);
      limited(req, res, (error?: unknown) => {
        if (error) return fail(error);
        if (spec?.rateLimit === 'password_reset') resetLimited(req, res, (error?: unknown) => (error ? fail(error) : route()));
        else route();
      });
    });
  });

  // Every other answer is counted (GET /metrics), the scrapes too.
  app.use(metrics.count);
  app.use(compress);
  // Before authentication, rate limits and request lines: the scrapes and probes of the host.
  app.get(METRICS_PATH, metrics.serve);
  // Liveness: the process answers (no database, no rate limit); /api/health/ is readiness.
  app.get('/livez', (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.type('application/json').send('{"status":"ok"}');
  });
  if (requestLogger) {
    app.use(requestLogger);
  } else {
    app.use((req: Request, res: Response, next: NextFunction) => {
      const started = process.hrtime.bigint();
      req.log = logger;
      res.once('finish', () => errorLine(req, res, started));
      next();
    });
  }
  app.use((req: Request, res: Response, next: NextFunction) => {
    setHeaders(res, privatePath.test(req.path) ? API_HEADERS : SECURITY_HEADERS);
    next();
  });
  app.use(authenticated);
  app.use(limited);
  // (no route of the API past this point: the requests for one were answered above)

  // Built at the first request for it rather than at start-up (BENCHMARKS.md, "Start-up").
  let openApi: ReturnType<typeof buildOpenApi> | null = null;
  app.get('/api/schema/', (_req, res) => {
    openApi ??= buildOpenApi(routeModules, API_INFO);
    res.json(openApi);
  });
  mountDocs(app);
  mountBackoffice(app, { config, pool, limiter, sessions, storage });

  let releaseGraphql: (() => Promise<void>) | null = null;
  if (config.graphql) {
    // Loaded on demand: PostGraphile (and Grafast) cost start-up time the REST API does not need.
    process.env.GRAPHILE_ENV ??= 'production';
    // No named prepared statements (Grafast prepares its queries by default): a server connection
    // lent per transaction by PgBouncer in transaction mode may not hold them (docs/running.md).
    process.env.DATAPLAN_PG_PREPARED_STATEMENT_CACHE_SIZE ??= '0';
    const { mountGraphql } = await import('./graphql.js');
    releaseGraphql = await mountGraphql(app, server, pool, config.frozenNow);
  }

  app.use('/api', (_req: Request, _res: Response, next: NextFunction) => next(ApiError.notFound('Adresse inconnue.')));
  // The web application at `/` (web/dist, built by `npm run web:build`); without a build, `/`
  // leads to the interactive documentation.
  if (!mountWeb(app, options.webDist)) app.get('/', (_req: Request, res: Response) => res.redirect(302, '/api/docs/'));
  app.use(async (error: unknown, req: Request, res: Response, _next: NextFunction) => {
    // A hit the middleware handed to a route that never took it (the router did not dispatch
    // the request): counted now, and over the limit 429 is the answer.
    const hit = takePendingHit(req);
    const wait = hit ? await hit.settle().catch(() => 0) : 0;
    const apiError = wait > 0 ? ApiError.tooManyRequests(wait) : apiErrorFromPg(error);
    if (!apiError) {
      req.log?.error({ err: error }, 'unhandled error');
      await sendApiJson(req, res, 500, { detail: 'Erreur interne du serveur.' });
      return;
    }
    for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
    await sendApiJson(req, res, apiError.status, apiError.body);
  });

  const refused = await checked;
  if (refused) {
    // Refused: nothing will serve, the pool is closed (a caller that catches it leaks nothing).
    if (releaseGraphql) await releaseGraphql().catch(() => {});
    await metrics.close().catch(() => {});
    await pool.end().catch(() => {});
    throw refused.error;
  }

  async function close(): Promise<void> {
    // Stop accepting, let the requests in flight finish, drop idle keep-alive sockets.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await closed;
    if (releaseGraphql) await releaseGraphql();
    await metrics.close();
    await pool.end();
  }

  async function listen(port: number, host = '0.0.0.0'): Promise<RunningServer> {
    await new Promise<void>((resolve) => server.listen(port, host, () => resolve()));
    // prom-client is loaded once the service answers (src/http/metrics.ts).
    setImmediate(() => metrics.load());
    const address = server.address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    return { url: `http://127.0.0.1:${actualPort}`, server, close };
  }

  return { app, server, pool, storage, listen, close, logger };
}
