import type { Request } from 'express';
import type { RequestIdentity } from '../db/transaction.js';
import type { BackofficeSession } from '../backoffice/sessions.js';

/** What the authentication middleware learned from the Authorization header or the session cookie. */
export interface RequestAuth {
  identity: RequestIdentity | null;
  /** Set when a token was sent but is invalid or expired. */
  tokenError: string | null;
  /** The back-office session of the cookie, when there is one (pre-authentication included). */
  session?: BackofficeSession | null;
}

const AUTH = Symbol('requestAuth');

export function setRequestAuth(req: Request, auth: RequestAuth): void {
  (req as unknown as Record<symbol, RequestAuth>)[AUTH] = auth;
}

export function getRequestAuth(req: Request): RequestAuth {
  return (req as unknown as Record<symbol, RequestAuth>)[AUTH] ?? { identity: null, tokenError: null };
}
