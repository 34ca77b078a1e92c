import pg from 'pg';
import type { Config } from '../config.js';

// Dates stay strings ('YYYY-MM-DD'): a JS Date would shift them through the local zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);

/**
 * Session settings every connection carries: the business time zone (app_hidden.today())
 * and the public URL used in e-mail links.
 */
export function sessionOptions(config: Pick<Config, 'businessTimeZone' | 'publicUrl'>): string {
  const escape = (value: string) => value.replace(/\\/g, '\\\\').replace(/ /g, '\\ ');
  return (
    `-c TimeZone=${escape(config.businessTimeZone)} -c app.business_timezone=${escape(config.businessTimeZone)} ` +
    `-c app.public_url=${escape(config.publicUrl)}`
  );
}

export function createPool(connectionString: string, config: Config, max = config.poolSize): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    options: sessionOptions(config),
    application_name: 'wfm-service',
  });
  // A client whose connection dies (terminated by the server, network) emits 'error'; unheard,
  // that event would crash the process. Idle clients are handled by the pool's listener;
  // checked-out clients by their own: the request in flight fails with the query's error,
  // and the transaction helper destroys the client instead of returning it to the pool.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}
