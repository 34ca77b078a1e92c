/** Runtime configuration, read once from the environment (CONTRACT section 1). */
export interface RateLimits {
  anonymousPerMinute: number;
  authenticatedPerMinute: number;
  passwordResetPerHour: number;
}

export interface Config {
  /** Owner connection: migrations, worker, CLI. */
  databaseUrl: string;
  /** Connection used by request handlers (the authenticator role). */
  authDatabaseUrl: string;
  port: number;
  jwtSecret: string;
  debug: boolean;
  allowImpersonation: boolean;
  businessTimeZone: string;
  publicUrl: string;
  storageDir: string;
  rateLimits: RateLimits;
  logLevel: string;
  /** Mount PostGraphile at /graphql (on by default; tests may turn it off for speed). */
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
 * Builds the configuration. `overrides` come from the embedded-database bootstrap (which
 * generates the URLs and the JWT secret) and from tests.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const databaseUrl = overrides.databaseUrl ?? env.DATABASE_URL;
  if (!databaseUrl) throw new ConfigError('DATABASE_URL is required.');
  const jwtSecret = overrides.jwtSecret ?? env.JWT_SECRET;
  if (!jwtSecret) {
    throw new ConfigError('JWT_SECRET is required when DATABASE_URL is set (at least 32 characters).');
  }
  if (jwtSecret.length < 32) throw new ConfigError('JWT_SECRET must be at least 32 characters long.');
  const port = overrides.port ?? intFromEnv(env, 'PORT', 8000);
  const debug = overrides.debug ?? flag(env, 'DEBUG');
  if (flag(env, 'BACKOFFICE_PASSWORD_ONLY') && !debug) {
    // SPEC Authentication rule 3: the local-only bypass outside debug mode prevents startup.
    throw new ConfigError('BACKOFFICE_PASSWORD_ONLY (local bypass of the second factor) requires DEBUG.');
  }
  return {
    databaseUrl,
    authDatabaseUrl: overrides.authDatabaseUrl ?? env.AUTH_DATABASE_URL ?? databaseUrl,
    port,
    jwtSecret,
    debug,
    allowImpersonation: overrides.allowImpersonation ?? flag(env, 'ALLOW_IMPERSONATION'),
    businessTimeZone: overrides.businessTimeZone ?? env.TZ_BUSINESS ?? 'Europe/Paris',
    publicUrl: overrides.publicUrl ?? env.PUBLIC_URL ?? `http://localhost:${port}`,
    storageDir: overrides.storageDir ?? env.STORAGE_DIR ?? './.data/storage',
    rateLimits: overrides.rateLimits ?? {
      anonymousPerMinute: intFromEnv(env, 'RATE_LIMIT_ANONYMOUS_PER_MINUTE', 60),
      authenticatedPerMinute: intFromEnv(env, 'RATE_LIMIT_AUTHENTICATED_PER_MINUTE', 1000),
      passwordResetPerHour: intFromEnv(env, 'RATE_LIMIT_PASSWORD_RESET_PER_HOUR', 5),
    },
    logLevel: overrides.logLevel ?? env.LOG_LEVEL ?? 'info',
    graphql: overrides.graphql ?? env.GRAPHQL !== 'off',
    poolSize: overrides.poolSize ?? intFromEnv(env, 'DB_POOL_SIZE', 10),
    ...(overrides.frozenNow ? { frozenNow: overrides.frozenNow } : {}),
  };
}
