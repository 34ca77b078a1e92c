import jwt from 'jsonwebtoken';
import type { RequestIdentity } from '../db/transaction.js';

/** Access tokens live 6 hours; there is no refresh token (SPEC, Authentication rule 1). */
export const ACCESS_TOKEN_SECONDS = 6 * 60 * 60;

interface AccessClaims {
  sub: string;
  typ: 'access';
  /** Impersonation: the superuser account that acts as `sub`. */
  act?: number;
}

export function signAccessToken(secret: string, accountId: number, impersonatorId?: number): string {
  const claims: AccessClaims = { sub: String(accountId), typ: 'access', ...(impersonatorId ? { act: impersonatorId } : {}) };
  return jwt.sign(claims, secret, { algorithm: 'HS256', expiresIn: ACCESS_TOKEN_SECONDS });
}

/** Verifies signature, algorithm and expiry; returns who the token speaks for. */
export function verifyAccessToken(secret: string, token: string): RequestIdentity {
  const payload = jwt.verify(token, secret, { algorithms: ['HS256'] }) as jwt.JwtPayload & Partial<AccessClaims>;
  const accountId = Number(payload.sub);
  if (payload.typ !== 'access' || !Number.isSafeInteger(accountId) || accountId <= 0) {
    throw new Error('not an access token');
  }
  const impersonatorId = payload.act === undefined ? null : Number(payload.act);
  if (impersonatorId !== null && (!Number.isSafeInteger(impersonatorId) || impersonatorId <= 0)) {
    throw new Error('bad impersonation claim');
  }
  return { accountId, impersonatorId };
}
