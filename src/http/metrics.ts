/**
 * GET /metrics: the Prometheus text format (prom-client) for the host's monitoring
 * (docs/running.md, "Metrics"). Per process: requests by method, route and status (a counter and a
 * duration histogram), the request pool's connections in use and clients waiting, Node's own
 * figures (CPU, memory, event loop, garbage collection); per database, through one SQL call on the
 * owner connection (app_private.operations_metrics): background jobs queued and failed, e-mails
 * pending and abandoned.
 *
 * Reachable only from an address of METRICS_ALLOW (the socket's address, not X-Forwarded-For: a
 * proxy in front would otherwise open it to everyone; default the loopback) or with
 * `Authorization: Bearer METRICS_TOKEN`; anything else gets 404, as if there were nothing here.
 * Mounted before authentication and rate limits: a scrape is neither an account nor a visitor.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type pg from 'pg';
import { createRequire } from 'node:module';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.js';
import { createPool } from '../db/pool.js';

export const METRICS_PATH = '/metrics';

/** METRICS_ALLOW entries: addresses (127.0.0.1, ::1) and subnets (10.0.0.0/8, fd00::/8). */
export function allowList(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const type = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
    if (!type) throw new Error(`METRICS_ALLOW: "${entry}" is not an IP address or subnet.`);
    if (prefix === undefined) list.addAddress(address, type);
    else {
      const bits = Number(prefix);
      if (!Number.isInteger(bits) || bits < 0 || bits > (type === 'ipv4' ? 32 : 128)) {
        throw new Error(`METRICS_ALLOW: "${entry}" has no valid prefix length.`);
      }
      list.addSubnet(address, bits, type);
    }
  }
  return list;
}

/** True when `address` (a socket's remote address) is in `list`; IPv4-mapped IPv6 counts as IPv4. */
export function addressAllowed(list: BlockList, address: string | undefined): boolean {
  if (!address) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return list.check(mapped[1]!, 'ipv4');
  return isIPv4(address) ? list.check(address, 'ipv4') : isIPv6(address) ? list.check(address, 'ipv6') : false;
}

function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The label of a request's route: the manifest's path pattern, never the concrete address. */
function routeLabel(req: Request): string {
  const route = (req as Request & { route?: { path?: unknown } }).route;
  if (route && typeof route.path === 'string') return `${req.baseUrl ?? ''}${route.path}`;
  if (req.path.startsWith('/assets/')) return '/assets/*';
  if (/^\/api(\/|$)/.test(req.path)) return '/api/*';
  if (/^\/backoffice(\/|$)/.test(req.path)) return '/backoffice/*';
  if (req.path === METRICS_PATH) return METRICS_PATH;
  return '/*';
}

interface OperationsRow {
  jobs_queued: string;
  jobs_failed: string;
  emails_pending: string;
  emails_abandoned: string;
}

export interface Metrics {
  /** Counts every request when its answer is finished. */
  count: RequestHandler;
  /**
   * Counts one finished answer, begun at `started` (process.hrtime.bigint()): for a caller with its
   * own `finish` listener (the API's requests, src/server.ts), instead of `count`'s.
   */
  finished(req: Request, res: Response, started: bigint): void;
  /** Serves GET /metrics to the allowed callers. */
  serve: RequestHandler;
  /** Loads prom-client and makes the registry now (else at the first scrape); the server calls it once listening. */
  load(): void;
  close(): Promise<void>;
}

type Labels = { method: string; route: string; status: string };

interface Instruments {
  registry: Registry;
  requests: Counter<keyof Labels>;
  durations: Histogram<keyof Labels>;
  databaseUp: Gauge;
  jobsQueued: Gauge;
  jobsFailed: Gauge;
  emailsPending: Gauge;
  emailsAbandoned: Gauge;
}

/** Answers counted before prom-client is loaded, kept to be counted then (a bound against a flood). */
const EARLY_LIMIT = 10_000;

/**
 * The registry of one server process; `pool` is its request pool. prom-client (32 modules and
 * OpenTelemetry's API for its CPU figures) is loaded after the server listens, not before
 * (BENCHMARKS.md, "Start-up (issue 31)"): the answers finished until then are counted when it is.
 */
export function createMetrics(config: Config, pool: pg.Pool): Metrics {
  const allowed = allowList(config.metricsAllow);
  let ownerPool: pg.Pool | null = null;
  let instruments: Instruments | null = null;
  const early: Array<[Labels, number]> = [];

  function load(): Instruments {
    if (instruments) return instruments;
    const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } =
      createRequire(import.meta.url)('prom-client') as typeof import('prom-client');
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const requests = new Counter({
      name: 'wfm_http_requests_total',
      help: 'HTTP requests answered, by method, route and status.',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    });
    const durations = new Histogram({
      name: 'wfm_http_request_duration_seconds',
      help: 'Time from a request\'s arrival to the end of its answer, by method, route and status.',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    new Gauge({
      name: 'wfm_db_pool_in_use',
      help: 'Connections of the request pool lent to a request now.',
      registers: [registry],
      collect() {
        this.set(pool.totalCount - pool.idleCount);
      },
    });
    new Gauge({
      name: 'wfm_db_pool_waiting',
      help: 'Requests waiting for a connection of the request pool now.',
      registers: [registry],
      collect() {
        this.set(pool.waitingCount);
      },
    });
    instruments = {
      registry, requests, durations,
      databaseUp: new Gauge({ name: 'wfm_database_up', help: '1 when the operations figures could be read from the database at this scrape, else 0.', registers: [registry] }),
      jobsQueued: new Gauge({ name: 'wfm_jobs_queued', help: 'Background jobs (graphile-worker) waiting or running, not failed for good.', registers: [registry] }),
      jobsFailed: new Gauge({ name: 'wfm_jobs_failed', help: 'Background jobs that used all their attempts (kept for inspection).', registers: [registry] }),
      emailsPending: new Gauge({ name: 'wfm_emails_pending', help: 'E-mails of the outbox not sent yet and still retried.', registers: [registry] }),
      emailsAbandoned: new Gauge({ name: 'wfm_emails_abandoned', help: 'E-mails of the outbox not sent after their last attempt (email_max_attempts).', registers: [registry] }),
    };
    for (const [labels, seconds] of early.splice(0)) {
      requests.inc(labels);
      durations.observe(labels, seconds);
    }
    return instruments;
  }

  /** The database's figures, one call on a one-connection owner pool opened at the first scrape. */
  async function readOperations({ databaseUp, jobsQueued, jobsFailed, emailsPending, emailsAbandoned }: Instruments): Promise<void> {
    try {
      ownerPool ??= createPool(config.databaseUrl, config, 1);
      const { rows } = await ownerPool.query<OperationsRow>(
        'select jobs_queued::text, jobs_failed::text, emails_pending::text, emails_abandoned::text from app_private.operations_metrics()',
      );
      const row = rows[0]!;
      jobsQueued.set(Number(row.jobs_queued));
      jobsFailed.set(Number(row.jobs_failed));
      emailsPending.set(Number(row.emails_pending));
      emailsAbandoned.set(Number(row.emails_abandoned));
      databaseUp.set(1);
    } catch {
      // The database's figures are missing from this scrape; the process's are there.
      for (const gauge of [jobsQueued, jobsFailed, emailsPending, emailsAbandoned]) gauge.reset();
      databaseUp.set(0);
    }
  }

  function finished(req: Request, res: Response, started: bigint): void {
    const labels = { method: req.method, route: routeLabel(req), status: String(res.statusCode) };
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (instruments) {
      instruments.requests.inc(labels);
      instruments.durations.observe(labels, seconds);
    } else if (early.length < EARLY_LIMIT) {
      early.push([labels, seconds]);
    }
  }

  const count: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => finished(req, res, started));
    next();
  };

  const serve: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const authorization = req.headers.authorization;
    const byToken = config.metricsToken !== null && typeof authorization === 'string' && authorization.startsWith('Bearer ') &&
      sameSecret(authorization.slice('Bearer '.length), config.metricsToken);
    if (!byToken && !addressAllowed(allowed, req.socket.remoteAddress)) {
      res.status(404).type('application/json').send('{"detail":"Adresse inconnue."}');
      return;
    }
    const loaded = load();
    const { registry } = loaded;
    void readOperations(loaded)
      .then(() => registry.metrics())
      .then(
        (text) => {
          res.setHeader('Cache-Control', 'no-store');
          res.type(registry.contentType).send(text);
        },
        (error: unknown) => next(error),
      );
  };

  return {
    count,
    finished,
    serve,
    load: () => void load(),
    async close() {
      if (ownerPool) await ownerPool.end().catch(() => undefined);
    },
  };
}
