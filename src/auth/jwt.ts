import { createSecretKey, type KeyObject } from 'node:crypto';
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

// The secret as a KeyObject, made once: given a string, jsonwebtoken first tries it as a PEM
// public or private key, and that failed attempt (an exception) cost 5 % of the CPU of a
// simple authenticated read.
const keys = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret));
    keys.set(secret, key);
  }
  return key;
}

export function signAccessToken(secret: string, accountId: number, impersonatorId?: number): string {
  const claims: AccessClaims = { sub: String(accountId), typ: 'access', ...(impersonatorId ? { act: impersonatorId } : {}) };
  return jwt.sign(claims, keyOf(secret), { algorithm: 'HS256', expiresIn: ACCESS_TOKEN_SECONDS });
}

/** Verifies signature, algorithm and expiry; returns who the token speaks for. */
export function verifyAccessToken(secret: string, token: string): RequestIdentity {
  const payload = jwt.verify(token, keyOf(secret), { algorithms: ['HS256'] }) as jwt.JwtPayload & Partial<AccessClaims>;
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
