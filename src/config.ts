import { userInfo } from 'node:os';

/** Runtime configuration, read once from the environment (CONTRACT section 1). */
export interface RateLimits {
  anonymousPerMinute: number;
  authenticatedPerMinute: number;
  passwordResetPerHour: number;
  /**
   * Failed logins per username within an hour, whatever the address, beyond which every login of
   * that username is slowed (a progressive delay, never a refusal; SECURITY.md, login throttling).
   */
  loginPerUsernamePerHour: number;
  /**
   * Failed API logins of one username from one address within 15 minutes, after which that address
   * is refused (429) for that username until the window ends (default 10).
   */
  loginFailuresPerAddress?: number;
}

export interface Config {
  /** Owner connection: migrations, worker, CLI. */
  databaseUrl: string;
  /** Connection used by request handlers (the authenticator role). */
  authDatabaseUrl: string;
  port: number;
  jwtSecret: string;
  debug: boolean;
  /** Local-only back-office bypass: password alone, no second factor (DEBUG only). */
  backofficePasswordOnly: boolean;
  /** Back-office login attempts (password and second factor) per 15 minutes, per address and per account. */
  backofficeLoginAttempts: number;
  allowImpersonation: boolean;
  businessTimeZone: string;
  publicUrl: string;
  storageDir: string;
  rateLimits: RateLimits;
  logLevel: string;
  /** JSON lines (production) or short human lines (the embedded demo): src/log.ts. */
  logFormat: 'json' | 'human';
  /**
   * One log line per request (LOG_REQUESTS=1/0); null (unset): in JSON when the logger writes info
   * lines, never in the human format. Failed requests (5xx) are always logged.
   */
  logRequests: boolean | null;
  /**
   * GET /metrics (Prometheus): answered to the addresses of METRICS_ALLOW (default loopback) and to
   * `Authorization: Bearer METRICS_TOKEN` when that is set (src/http/metrics.ts).
   */
  metricsAllow: string[];
  metricsToken: string | null;
  /**
   * Mount PostGraphile at /graphql (GRAPHQL=on; off by default): a back-office surface, meant
   * to sit behind the back-office session with its second factor; until then, staff tokens only.
   */
  graphql: boolean;
  /** Pool size of the request connection pool. */
  poolSize: number;
  /** Tests only (never read from the environment): the frozen business clock. */
  frozenNow?: () => string | null;
}

export class ConfigError extends Error {}

function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigError(`${name} must be a positive integer (got "${raw}").`);
  }
  return value;
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  return ['1', 'true', 'yes', 'on'].includes((env[name] ?? '').toLowerCase());
}

/**
 * A PostgreSQL URL that names no user (postgres:///wfm?host=/var/run/postgresql) gets the
 * operating-system user, as libpq does (after PGUSER): node-postgres would fall back to
 * $USER, which services and CI often leave unset ("no PostgreSQL user name specified").
 */
export function withOperatingSystemUser(url: string, env: NodeJS.ProcessEnv = process.env): string {
  const match = /^(postgres(?:ql)?:\/\/)([^/?#]*)([\s\S]*)$/i.exec(url);
  if (!match || env.PGUSER) return url;
  const [, scheme, authority, rest] = match as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  const credentials = at === -1 ? '' : authority.slice(0, at);
  if (credentials !== '' && !credentials.startsWith(':')) return url;
  let osUser: string;
  try {
    osUser = userInfo().username;
  } catch {
    return url; // no passwd entry for this uid: leave the choice to the driver
  }
  return `${scheme}${encodeURIComponent(osUser)}${credentials}@${authority.slice(at + 1)}${rest}`;
}

function logFormatFromEnv(env: NodeJS.ProcessEnv): 'json' | 'human' {
  const raw = (env.LOG_FORMAT ?? '').toLowerCase();
  if (raw === '' || raw === 'json') return 'json';
  if (raw === 'human') return 'human';
  throw new ConfigError(`LOG_FORMAT must be json or human (got "${env.LOG_FORMAT}").`);
}

function metricsToken(env: NodeJS.ProcessEnv): string | null {
  const token = env.METRICS_TOKEN;
  if (!token) return null;
  if (token.length < 32) throw new ConfigError('METRICS_TOKEN must be at least 32 characters long.');
  return token;
}

/**
 * Builds the configuration. `overrides` come from the embedded-database bootstrap (which
 * generates the URLs and the JWT secret) and from tests.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const rawDatabaseUrl = overrides.databaseUrl ?? env.DATABASE_URL;
  if (!rawDatabaseUrl) throw new ConfigError('DATABASE_URL is required.');
  const databaseUrl = withOperatingSystemUser(rawDatabaseUrl, env);
  const jwtSecret = overrides.jwtSecret ?? env.JWT_SECRET;
  if (!jwtSecret) {
    throw new ConfigError('JWT_SECRET is required when DATABASE_URL is set (at least 32 characters).');
  }
  if (jwtSecret.length < 32) throw new ConfigError('JWT_SECRET must be at least 32 characters long.');
  const port = overrides.port ?? intFromEnv(env, 'PORT', 8000);
  const debug = overrides.debug ?? flag(env, 'DEBUG');
  const backofficePasswordOnly = overrides.backofficePasswordOnly ?? flag(env, 'BACKOFFICE_PASSWORD_ONLY');
  if (backofficePasswordOnly && !debug) {
    // SPEC Authentication rule 3: the local-only bypass outside debug mode prevents startup.
    throw new ConfigError(
      'BACKOFFICE_PASSWORD_ONLY (local bypass of the second factor of the back-office) requires DEBUG: ' +
        'outside debug mode the back-office always asks for a second factor. Unset BACKOFFICE_PASSWORD_ONLY, ' +
        'or set DEBUG=1 on a local machine only.',
    );
  }
  const logFormat = overrides.logFormat ?? logFormatFromEnv(env);
  // The human format (the demo's console) shows warnings and errors, and the request lines when asked.
  const logLevel = overrides.logLevel ?? env.LOG_LEVEL ?? (logFormat === 'human' && !flag(env, 'LOG_REQUESTS') ? 'warn' : 'info');
  return {
    databaseUrl,
    authDatabaseUrl: overrides.authDatabaseUrl ?? (env.AUTH_DATABASE_URL ? withOperatingSystemUser(env.AUTH_DATABASE_URL, env) : databaseUrl),
    port,
    jwtSecret,
    debug,
    backofficePasswordOnly,
    backofficeLoginAttempts: overrides.backofficeLoginAttempts ?? intFromEnv(env, 'RATE_LIMIT_BACKOFFICE_LOGIN_PER_15_MINUTES', 10),
    allowImpersonation: overrides.allowImpersonation ?? flag(env, 'ALLOW_IMPERSONATION'),
    businessTimeZone: overrides.businessTimeZone ?? env.TZ_BUSINESS ?? 'Europe/Paris',
    publicUrl: overrides.publicUrl ?? env.PUBLIC_URL ?? `http://localhost:${port}`,
    storageDir: overrides.storageDir ?? env.STORAGE_DIR ?? './.data/storage',
    rateLimits: overrides.rateLimits ?? {
      anonymousPerMinute: intFromEnv(env, 'RATE_LIMIT_ANONYMOUS_PER_MINUTE', 60),
      authenticatedPerMinute: intFromEnv(env, 'RATE_LIMIT_AUTHENTICATED_PER_MINUTE', 1000),
      passwordResetPerHour: intFromEnv(env, 'RATE_LIMIT_PASSWORD_RESET_PER_HOUR', 5),
      loginPerUsernamePerHour: intFromEnv(env, 'RATE_LIMIT_LOGIN_PER_USERNAME_PER_HOUR', 20),
      loginFailuresPerAddress: intFromEnv(env, 'RATE_LIMIT_LOGIN_FAILURES_PER_ADDRESS', 10),
    },
    logLevel,
    logFormat,
    logRequests: overrides.logRequests !== undefined ? overrides.logRequests : env.LOG_REQUESTS ? flag(env, 'LOG_REQUESTS') : null,
    metricsAllow: overrides.metricsAllow ?? (env.METRICS_ALLOW ?? '127.0.0.1,::1').split(',').map((entry) => entry.trim()).filter(Boolean),
    metricsToken: overrides.metricsToken !== undefined ? overrides.metricsToken : metricsToken(env),
    graphql: overrides.graphql ?? flag(env, 'GRAPHQL'),
    poolSize: overrides.poolSize ?? intFromEnv(env, 'DB_POOL_SIZE', 10),
    // Tests only: never read from the environment, but kept when a test passes it.
    ...(overrides.frozenNow ? { frozenNow: overrides.frozenNow } : {}),
  };
}
