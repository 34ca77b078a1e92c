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

export function createPool(connectionString: string, config: Config, max = config.poolSize): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    options: sessionOptions(config),
    application_name: 'wfm-service',
    // Queries are written as soon as they are issued (src/db/transaction.ts runRequestCall
    // sends the prelude, the call and the commit of a request in one round trip); code that
    // awaits each query behaves as without it.
    pipeline: true,
  } as pg.PoolConfig);
  // A client whose connection dies (terminated by the server, network) emits 'error'; unheard,
  // that event would crash the process. Idle clients are handled by the pool's listener;
  // checked-out clients by their own: the request in flight fails with the query's error,
  // and the transaction helper destroys the client instead of returning it to the pool.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}
