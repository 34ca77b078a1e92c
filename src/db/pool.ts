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
  // An idle client that errors (e.g. terminated by the server) must not crash the process.
  pool.on('error', () => {});
  return pool;
}
