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
  /**
   * The credential generation of the account holding the token (`act` when impersonating,
   * else `sub`) when it was issued: a request's prelude refuses a token of an earlier one
   * (app_private.begin_request_or_fail). A token without it (issued before generations
   * existed) counts as generation 0, the generation of an account never revoked.
   */
  gen?: number;
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

/**
 * `generation`: the current token generation of the holder (the impersonator's when
 * `impersonatorId` is given), as read in the same transaction that checked the credentials.
 */
export function signAccessToken(secret: string, accountId: number, impersonatorId?: number | null, generation = 0): string {
  const claims: AccessClaims = {
    sub: String(accountId), typ: 'access', ...(impersonatorId ? { act: impersonatorId } : {}), gen: generation,
  };
  return jwt.sign(claims, keyOf(secret), { algorithm: 'HS256', expiresIn: ACCESS_TOKEN_SECONDS });
}

/*
 * Tokens already verified, with their expiry: a client presents the same token for hours,
 * and verifying it again (decoding, HMAC, claims) was a quarter of the CPU of a simple
 * authenticated read. A token is immutable and signed with the process's secret, so a
 * verified one stays valid here until it expires: revocation is decided in SQL by each
 * request's prelude (a closed account, or a token of an earlier credential generation). Bounded: the oldest entries go first.
 */
const VERIFIED_MAX = 10_000;
/** By secret, then by token (no key made of the two per request: a 300-character string to hash). */
const verifiedBySecret = new Map<string, Map<string, { identity: RequestIdentity; exp: number }>>();

/** Verifies signature, algorithm and expiry; returns who the token speaks for. */
export function verifyAccessToken(secret: string, token: string): RequestIdentity {
  let verified = verifiedBySecret.get(secret);
  if (!verified) {
    verified = new Map();
    verifiedBySecret.set(secret, verified);
  }
  const known = verified.get(token);
  if (known) {
    // Expired as jsonwebtoken judges it: exp at or before the current second.
    if (known.exp > Math.floor(Date.now() / 1000)) return known.identity;
    verified.delete(token);
  }
  const payload = jwt.verify(token, keyOf(secret), { algorithms: ['HS256'] }) as jwt.JwtPayload & Partial<AccessClaims>;
  const accountId = Number(payload.sub);
  if (payload.typ !== 'access' || !Number.isSafeInteger(accountId) || accountId <= 0) {
    throw new Error('not an access token');
  }
  const impersonatorId = payload.act === undefined ? null : Number(payload.act);
  if (impersonatorId !== null && (!Number.isSafeInteger(impersonatorId) || impersonatorId <= 0)) {
    throw new Error('bad impersonation claim');
  }
  const generation = payload.gen === undefined ? 0 : Number(payload.gen);
  if (!Number.isSafeInteger(generation) || generation < 0 || generation > 2147483647) throw new Error('bad generation claim');
  const identity: RequestIdentity = Object.freeze({ accountId, impersonatorId, generation });
  if (typeof payload.exp === 'number') {
    if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value!);
    verified.set(token, { identity, exp: payload.exp });
  }
  return identity;
}
