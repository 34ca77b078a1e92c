/**
 * Fixed-window request counters kept in PostgreSQL (app_private.rate_limit_hit,
 * sql/auth/rate_limits.sql), so that a limit holds across server processes and machines:
 * 60 anonymous requests a minute are 60 in total, whichever process answers.
 *
 * Each hit is one statement on its own pooled connection, outside the request's
 * transaction: a refused request writes nothing else, and an accepted one has its count
 * even if its transaction rolls back. When the database cannot be reached the limiter lets
 * the request through (fails open): the request itself then answers 503.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { isConnectionLoss } from '../http/errors.js';

/** Bucket keys stay short in the table; a longer one (a long username) is replaced by its hash. */
const MAX_KEY_LENGTH = 200;

function bucketKey(key: string): string {
  if (key.length <= MAX_KEY_LENGTH) return key;
  const kind = key.slice(0, key.indexOf(':') + 1);
  return `${kind}sha256:${createHash('sha256').update(key).digest('hex')}`;
}

export class RateLimiter {
  constructor(private readonly pool: pg.Pool) {}

  /** Counts one hit; resolves to the seconds to wait when the limit is exceeded, else 0. */
  async hit(key: string, limit: number, windowMs: number): Promise<number> {
    try {
      const { rows } = await this.pool.query<{ retry_after: number }>(
        'select retry_after from app_private.rate_limit_hit($1, $2, make_interval(secs => $3))',
        [bucketKey(key), limit, windowMs / 1000],
      );
      return rows[0]?.retry_after ?? 0;
    } catch (error) {
      if (isConnectionLoss(error)) return 0;
      throw error;
    }
  }
}
