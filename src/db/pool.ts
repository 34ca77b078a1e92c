import pg from 'pg';
import type { Config } from '../config.js';

// Dates stay strings ('YYYY-MM-DD'): a JS Date would shift them through the local zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);

/**
 * Session settings every connection carries: the business time zone (app_hidden.today())
 * and the public URL used in e-mail links; and no JIT compilation. The service runs short
 * statements whose costs the planner overestimates (set-returning helpers, row-level
 * security sub-plans): above jit_above_cost each one was compiled by LLVM first, 5 to 10 ms
 * a statement, most of the time of an absence request (BENCHMARKS.md).
 */
export function sessionOptions(config: Pick<Config, 'businessTimeZone' | 'publicUrl'>): string {
  const escape = (value: string) => value.replace(/\\/g, '\\\\').replace(/ /g, '\\ ');
  return (
    `-c TimeZone=${escape(config.businessTimeZone)} -c app.business_timezone=${escape(config.businessTimeZone)} ` +
    `-c app.public_url=${escape(config.publicUrl)} -c jit=off`
  );
}

/** The same settings by name, for transaction-local use (set_config(name, value, true)). */
export function sessionSettings(config: Pick<Config, 'businessTimeZone' | 'publicUrl'>): Record<string, string> {
  return { TimeZone: config.businessTimeZone, 'app.business_timezone': config.businessTimeZone, 'app.public_url': config.publicUrl, jit: 'off' };
}

const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** The settings of a server pool, for the first statement of each of its transactions. */
const poolSettings = new WeakMap<pg.Pool, { settings: Record<string, string>; statement: string }>();

/**
 * The statement that gives a transaction of `pool` its session settings ('' for a pool not
 * made by createPool): set_config(..., true), local to the transaction, so that it holds
 * whichever server connection PgBouncer in transaction mode lends (docs/running.md).
 */
export function transactionSettingsStatement(pool: pg.Pool): string {
  return poolSettings.get(pool)?.statement ?? '';
}

/** The session settings of a pool made by createPool, by name (GraphQL's pgSettings). */
export function transactionSettingsOf(pool: pg.Pool): Record<string, string> {
  return poolSettings.get(pool)?.settings ?? {};
}

/**
 * The server's pool. Its connections carry no startup `options` (PgBouncer refuses them):
 * every transaction sets the session settings itself, in its first round trip
 * (src/db/transaction.ts); statements outside a transaction (the rate-limit hit, the health
 * probe, the manifest check) read none of them.
 */
export function createPool(connectionString: string, config: Config, max = config.poolSize): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    application_name: 'wfm-service',
    // Queries are written as soon as they are issued (src/db/transaction.ts runRequestCall
    // sends the prelude, the call and the commit of a request in one round trip); code that
    // awaits each query behaves as without it.
    pipeline: true,
  } as pg.PoolConfig);
  const settings = sessionSettings(config);
  const calls = Object.entries(settings).map(([name, value]) => `set_config(${literal(name)}, ${literal(value)}, true)`);
  poolSettings.set(pool, { settings, statement: `select ${calls.join(', ')}; ` });
  // A client whose connection dies (terminated by the server, network) emits 'error'; unheard,
  // that event would crash the process. Idle clients are handled by the pool's listener;
  // checked-out clients by their own: the request in flight fails with the query's error,
  // and the transaction helper destroys the client instead of returning it to the pool.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}
