import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../config.js';
import { ApiError } from '../http/errors.js';
import { getRequestAuth, setRequestAuth } from '../http/request-context.js';
import { verifyAccessToken } from './jwt.js';
import type { RateLimiter } from './rate-limit.js';

/** Reads `Authorization: Bearer <JWT>`; the account itself is reloaded by each transaction. */
export function authenticate(config: Config) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const header = req.headers.authorization;
    if (!header) {
      setRequestAuth(req, { identity: null, tokenError: null });
      next();
      return;
    }
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) {
      setRequestAuth(req, { identity: null, tokenError: 'En-tête Authorization invalide : « Bearer <jeton> » attendu.' });
      next();
      return;
    }
    try {
      const identity = verifyAccessToken(config.jwtSecret, match[1]!);
      if (identity.impersonatorId != null && !config.allowImpersonation) {
        // Impersonation is off (ALLOW_IMPERSONATION): a token speaking for someone else is refused.
        setRequestAuth(req, { identity: null, tokenError: 'Jeton d’emprunt d’identité refusé : cette fonction est désactivée.' });
        next();
        return;
      }
      setRequestAuth(req, { identity, tokenError: null });
    } catch {
      setRequestAuth(req, { identity: null, tokenError: 'Jeton invalide ou expiré.' });
    }
    next();
  };
}

/** 60/min anonymous (by address), 1000/min authenticated (by account), every route. */
export function rateLimit(config: Config, limiter: RateLimiter) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const { identity } = getRequestAuth(req);
    const wait = identity
      ? limiter.hit(`account:${identity.accountId}`, config.rateLimits.authenticatedPerMinute, 60_000)
      : limiter.hit(`ip:${req.ip}`, config.rateLimits.anonymousPerMinute, 60_000);
    if (wait > 0) {
      next(ApiError.tooManyRequests(wait));
      return;
    }
    next();
  };
}

/** The password reset route's own bucket: 5 per hour per address. */
export function passwordResetLimit(config: Config, limiter: RateLimiter) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const wait = limiter.hit(`reset:${req.ip}`, config.rateLimits.passwordResetPerHour, 3_600_000);
    if (wait > 0) {
      next(ApiError.tooManyRequests(wait));
      return;
    }
    next();
  };
}
