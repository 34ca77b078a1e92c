import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import { createApp } from '../../src/server.js';
import { ROLES } from '../../src/db/roles.js';
import { cloneTemplate } from './template.js';
import { throughPgBouncer } from './pgbouncer.js';
import { makeClient, type HttpClient } from './http.js';
import { DEFAULT_NOW, FIXTURE_PASSWORD, databaseUrl } from './settings.js';

export interface TestEnv extends HttpClient {
  url: string;
  config: Config;
  /** Owner connection to the test database, for arranging data and asserting side effects. */
  db: pg.Pool;
  /** Fixture ids by section and key, e.g. ids.employees.alice. */
  ids: Record<string, Record<string, number>>;
  /** Logs in a fixture account (cached) and returns its access token. */
  login(username: string, password?: string): Promise<string>;
  /** Freezes the business clock (ISO timestamp with offset) for the next requests. */
  setNow(iso: string | null): void;
  now(): string | null;
  close(): Promise<void>;
}

export interface TestEnvOptions {
  /** Template database to clone; inside vitest it comes from the global setup. */
  template?: string;
  now?: string | null;
  graphql?: boolean;
  rateLimits?: Config['rateLimits'];
  configOverrides?: Partial<Config>;
  /**
   * A PgBouncer port (test/helpers/pgbouncer.ts) the server's own connections go through;
   * default TEST_PGBOUNCER_PORT (npm run test:pgbouncer). The test's owner connection stays direct.
   */
  pgbouncerPort?: number;
  /** The address the server listens on (default 127.0.0.1; `0.0.0.0` lets tests use 127.0.0.2 as a second client address). */
  host?: string;
}

/**
 * A running server on its own database (cloned from the migrated, fixture-loaded
 * template), with the clock frozen at DEFAULT_NOW unless told otherwise.
 */
export async function startTestEnv(options: TestEnvOptions = {}): Promise<TestEnv> {
  const template = options.template ?? (await import('vitest')).inject('templateDatabase');
  const database = await cloneTemplate(template);
  const storageDir = await mkdtemp(path.join(tmpdir(), 'wfm-storage-'));
  let frozenNow: string | null = options.now === undefined ? DEFAULT_NOW : options.now;
  const pgbouncerPort = options.pgbouncerPort ?? (Number(process.env.TEST_PGBOUNCER_PORT) || null);
  const authDatabaseUrl = databaseUrl(database.name, ROLES.authenticator);
  const config = loadConfig({}, {
    databaseUrl: databaseUrl(database.name),
    authDatabaseUrl: pgbouncerPort ? throughPgBouncer(authDatabaseUrl, pgbouncerPort) : authDatabaseUrl,
    jwtSecret: randomBytes(32).toString('hex'),
    port: 0,
    graphql: options.graphql ?? false,
    logLevel: 'silent',
    storageDir,
    publicUrl: 'http://wfm.test',
    rateLimits: options.rateLimits ?? { anonymousPerMinute: 100_000, authenticatedPerMinute: 100_000, passwordResetPerHour: 100_000, loginPerUsernamePerHour: 100_000, loginFailuresPerAddress: 100_000 },
    poolSize: 10,
    frozenNow: () => frozenNow,
    ...options.configOverrides,
  });
  const app = await createApp(config, { logger: pino({ level: 'silent' }) });
  const running = await app.listen(0, options.host ?? '127.0.0.1');
  const db = new pg.Pool({ connectionString: config.databaseUrl, max: 4 });
  db.on('error', () => {});
  const { rows } = await db.query<{ section: string; key: string; id: number }>('select section, key, id from public.fixture_ids');
  const ids: Record<string, Record<string, number>> = {};
  for (const row of rows) (ids[row.section] ??= {})[row.key] = row.id;

  const client = makeClient(running.url);
  const tokens = new Map<string, string>();
  return {
    ...client,
    url: running.url,
    config,
    db,
    ids,
    async login(username, password = FIXTURE_PASSWORD) {
      const key = `${username}\u0000${password}`;
      const cached = tokens.get(key);
      if (cached) return cached;
      const response = await client.post('/api/auth/token/', null, { username, password });
      if (response.status !== 200) throw new Error(`login ${username} failed: ${response.status} ${response.text}`);
      tokens.set(key, response.body.access);
      return response.body.access as string;
    },
    setNow(iso) {
      frozenNow = iso;
    },
    now: () => frozenNow,
    async close() {
      await running.close();
      await db.end();
      await database.drop();
      await rm(storageDir, { recursive: true, force: true });
    },
  };
}
