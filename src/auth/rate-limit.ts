/**
 * Fixed-window request counters kept in PostgreSQL (app_private.rate_limit_hit,
 * sql/auth/rate_limits.sql), so that a limit holds across server processes and machines:
 * 60 anonymous requests a minute are 60 in total, whichever process answers.
 *
 * A hit is counted in one of two ways, once per request either way:
 * - on its own pooled connection, before the request does anything (`hit`): a refused request
 *   writes nothing else, and an accepted one keeps its count even if its transaction rolls back;
 * - folded into the request's own transaction (`PendingHit`, for an authenticated call of a SQL
 *   route): counted after the call and before the commit (app_private.rate_limit_hit_or_fail),
 *   which saves a round trip per request. Over the limit the transaction rolls back and the
 *   request is answered 429; when the transaction fails for another reason, the hit did not
 *   commit and is counted on its own (`settle`) before the error is answered, 429 first.
 * When the database cannot be reached the limiter lets the request through (fails open): the
 * request itself then answers 503.
 *
 * A bucket this process saw refused is counted the first way again until its window ends: a
 * client over its limit costs one statement per request, not a call run then rolled back. The
 * database alone still decides each answer (a window reset by hand is seen at once).
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { isConnectionLoss } from '../db/connection-loss.js';
import type { StatementBeforeCommit } from '../db/transaction.js';
import { rateLimitedWait } from '../http/errors.js';

/** Bucket keys stay short in the table; a longer one (a long username) is replaced by its hash. */
const MAX_KEY_LENGTH = 200;

/** Refusals remembered at most (buckets of addresses can be many): the oldest are forgotten first. */
const MAX_REMEMBERED_REFUSALS = 10_000;

/**
 * The arguments of app_private.rate_limit_hit and rate_limit_hit_or_fail, in their SQL order:
 * the bucket, the limit and the window in seconds.
 */
const HIT_ARGUMENTS = '$1, $2, make_interval(secs => $3)';
const hitValues = (bucket: string, limit: number, windowMs: number) => [bucket, limit, windowMs / 1000];

function bucketKey(key: string): string {
  if (key.length <= MAX_KEY_LENGTH) return key;
  const kind = key.slice(0, key.indexOf(':') + 1);
  return `${kind}sha256:${createHash('sha256').update(key).digest('hex')}`;
}

export class RateLimiter {
  /** bucket → time (ms) until which its last refusal's window lasts: its hits are counted first. */
  private readonly refusedUntil = new Map<string, number>();

  constructor(private readonly pool: pg.Pool) {}

  /** Counts one hit; resolves to the seconds to wait when the limit is exceeded, else 0. */
  async hit(key: string, limit: number, windowMs: number): Promise<number> {
    const bucket = bucketKey(key);
    try {
      const { rows } = await this.pool.query<{ retry_after: number }>(
        `select retry_after from app_private.rate_limit_hit(${HIT_ARGUMENTS})`,
        hitValues(bucket, limit, windowMs),
      );
      const wait = rows[0]?.retry_after ?? 0;
      if (wait > 0) this.remember(bucket, wait);
      else this.refusedUntil.delete(bucket);
      return wait;
    } catch (error) {
      if (isConnectionLoss(error)) return 0;
      throw error;
    }
  }

  /**
   * A hit to count inside the request's transaction (PendingHit), or null when the bucket was
   * refused within its current window: then the hit is counted first, on its own (`hit`).
   */
  pending(key: string, limit: number, windowMs: number): PendingHit | null {
    const bucket = bucketKey(key);
    const until = this.refusedUntil.get(bucket);
    if (until !== undefined) {
      if (until > Date.now()) return null;
      this.refusedUntil.delete(bucket);
    }
    return new PendingHit(this, key, bucket, limit, windowMs);
  }

  /** A refusal of `wait` seconds (the database's retry_after): the bucket's window lasts that long at most. */
  remember(bucket: string, wait: number): void {
    if (this.refusedUntil.size >= MAX_REMEMBERED_REFUSALS) {
      const now = Date.now();
      for (const [key, until] of this.refusedUntil) if (until <= now) this.refusedUntil.delete(key);
      if (this.refusedUntil.size >= MAX_REMEMBERED_REFUSALS) this.refusedUntil.delete(this.refusedUntil.keys().next().value!);
    }
    this.refusedUntil.set(bucket, Date.now() + wait * 1000);
  }
}

/**
 * The hit of one request, counted exactly once: folded into its transaction (`statement`, then
 * `committed` once the commit succeeded), or on its own (`settle`) when it was not. Settling
 * again, or after the commit, counts nothing more.
 */
export class PendingHit implements StatementBeforeCommit {
  private counted = false;

  constructor(
    private readonly limiter: RateLimiter,
    readonly key: string,
    readonly bucket: string,
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** The statement of the transaction, run as the authenticator after the call: raises WL429 over the limit. */
  statement(): pg.QueryConfig {
    return {
      text: `select app_private.rate_limit_hit_or_fail(${HIT_ARGUMENTS})`,
      values: hitValues(this.bucket, this.limit, this.windowMs),
    };
  }

  /** The transaction carrying the statement committed: the hit is counted. */
  committed(): void {
    this.counted = true;
  }

  /**
   * Seconds to wait when `error`, thrown by the transaction carrying the statement, is the hit's
   * own refusal (the transaction rolled back; the bucket was already full), else 0.
   */
  refusal(error: unknown): number {
    const wait = rateLimitedWait(error);
    if (wait === 0) return 0;
    this.counted = true;
    this.limiter.remember(this.bucket, wait);
    return wait;
  }

  /** Counts the hit on its own if no transaction did; resolves to the seconds to wait, else 0. */
  async settle(): Promise<number> {
    if (this.counted) return 0;
    this.counted = true;
    return this.limiter.hit(this.key, this.limit, this.windowMs);
  }
}
