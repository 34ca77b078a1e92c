/**
 * purge_rate_limit_windows: every 10 minutes (worker/crontab). Deletes the rate-limit
 * windows that ended (app_private.purge_rate_limit_windows, sql/auth/rate_limits.sql): the
 * table keeps only the live counters of the limits shared by every server process.
 */
import type { JobHelpers } from 'graphile-worker';
import type pg from 'pg';

/** One statement; returns how many windows went. */
export async function purgeRateLimitWindows(db: pg.Pool | pg.ClientBase): Promise<number> {
  const { rows } = await db.query<{ n: number }>('select app_private.purge_rate_limit_windows() as n');
  return rows[0]?.n ?? 0;
}

export default async function task(_payload: unknown, helpers: JobHelpers): Promise<void> {
  const removed = await helpers.withPgClient((client) => purgeRateLimitWindows(client));
  helpers.logger.info(`purge_rate_limit_windows: ${removed} window(s) removed`);
}
