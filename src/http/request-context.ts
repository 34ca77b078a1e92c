import type { Request } from 'express';
import type { RequestIdentity } from '../db/transaction.js';

/** What the authentication middleware learned from the Authorization header. */
export interface RequestAuth {
  identity: RequestIdentity | null;
  /** Set when a token was sent but is invalid or expired. */
  tokenError: string | null;
}

const AUTH = Symbol('requestAuth');

export function setRequestAuth(req: Request, auth: RequestAuth): void {
  (req as unknown as Record<symbol, RequestAuth>)[AUTH] = auth;
}

export function getRequestAuth(req: Request): RequestAuth {
  return (req as unknown as Record<symbol, RequestAuth>)[AUTH] ?? { identity: null, tokenError: null };
}
