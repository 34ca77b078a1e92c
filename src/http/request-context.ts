import type { Request } from 'express';
import type { RequestIdentity } from '../db/transaction.js';
import type { BackofficeSession } from '../backoffice/sessions.js';
import type { PendingHit } from '../auth/rate-limit.js';

/** What the authentication middleware learned from the Authorization header or the session cookie. */
export interface RequestAuth {
  identity: RequestIdentity | null;
  /** Set when a token was sent but is invalid or expired. */
  tokenError: string | null;
  /** The back-office session of the cookie, when there is one (pre-authentication included). */
  session?: BackofficeSession | null;
  /**
   * CSRF of a request authenticated by the session cookie: 'ok' (an unsafe method with its
   * X-CSRFToken), 'missing' (an unsafe method without it: refused, src/auth/middleware.ts), else
   * 'not_needed' (a safe method, a bearer token, no session).
   */
  csrf?: 'ok' | 'missing' | 'not_needed';
}

const AUTH = Symbol('requestAuth');

export function setRequestAuth(req: Request, auth: RequestAuth): void {
  (req as unknown as Record<symbol, RequestAuth>)[AUTH] = auth;
}

export function getRequestAuth(req: Request): RequestAuth {
  return (req as unknown as Record<symbol, RequestAuth>)[AUTH] ?? { identity: null, tokenError: null };
}

const PENDING_HIT = Symbol('pendingRateLimitHit');

/** The rate-limit hit a route's transaction is to count (src/auth/rate-limit.ts, PendingHit). */
export function setPendingHit(req: Request, hit: PendingHit): void {
  (req as unknown as Record<symbol, PendingHit | undefined>)[PENDING_HIT] = hit;
}

/** The request's pending hit, handed over once: whoever takes it counts it. */
export function takePendingHit(req: Request): PendingHit | null {
  const record = req as unknown as Record<symbol, PendingHit | undefined>;
  const hit = record[PENDING_HIT] ?? null;
  record[PENDING_HIT] = undefined;
  return hit;
}
