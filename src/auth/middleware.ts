import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../config.js';
import { ApiError } from '../http/errors.js';
import { firstTwoSegments, routePattern } from '../http/path-patterns.js';
import { getRequestAuth, setPendingHit, setRequestAuth } from '../http/request-context.js';
import { CSRF_HEADER, SESSION_COOKIE, readCookies, type SessionStore } from './sessions.js';
import { verifyAccessToken } from './jwt.js';
import type { RateLimiter } from './rate-limit.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The back-office's pages, as Express mounts them (`app.use('/backoffice/', …)`: case-insensitive,
 * on the raw path). Their forms carry the CSRF token in a form field, which the back-office router
 * checks itself on every unsafe method (src/backoffice/index.ts); nothing else is routed there.
 */
export const isBackofficePath = (path: string) => /^\/backoffice(\/|$)/i.test(path);

export function authenticate(config: Config, sessions?: SessionStore) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const header = req.headers.authorization;
    if (!header) {
      const cookie = sessions ? readCookies(req)[SESSION_COOKIE] : undefined;
      if (!cookie) {
        setRequestAuth(req, { identity: null, tokenError: null });
        next();
        return;
      }
      sessions!.load(cookie).then((session) => {
        const identity = session?.stage === 'full' ? { accountId: session.accountId, generation: session.generation } : null;
        const unsafe = !SAFE_METHODS.has(req.method);
        const csrf = !identity || !unsafe ? 'not_needed' : sessions!.csrfOk(req, req.get(CSRF_HEADER)) ? 'ok' : 'missing';
        setRequestAuth(req, { identity, tokenError: null, session, csrf });
        if (csrf === 'missing' && !isBackofficePath(req.path)) {
          next(csrfRefusal());
          return;
        }
        next();
      }, next);
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

/** The answer to a cookie-authenticated unsafe request without its CSRF token. */
export function csrfRefusal(): ApiError {
  return ApiError.forbidden('Jeton CSRF manquant ou invalide : envoyez l’en-tête X-CSRFToken avec la valeur du cookie wfm_csrftoken.');
}

/** A route path as Express matches it (case-insensitive, trailing slash optional). */
const routeKey = (path: string) => path.toLowerCase().replace(/\/+$/, '');

/** The first two segments of a route key (/api/absences of /api/absences/12), or null with a parameter in them. */
function prefixOf(key: string): string | null {
  const prefix = firstTwoSegments(key);
  return prefix.includes('{') ? null : prefix;
}

/**
 * Whether a request's method and path are those of one of `routes` (HEAD as GET, as Express;
 * a route without method matches any). The patterns of routes with parameters are grouped by
 * their first two segments (literal in every manifest path): a request is tested against those
 * of its own two segments only, not against every pattern.
 */
function routeMatcher(routes: ReadonlyArray<{ method?: string; path: string }>): (method: string, path: string) => boolean {
  const verbOf = (route: { method?: string }) => route.method?.toUpperCase() ?? '*';
  const exact = new Set(routes.filter((route) => !route.path.includes('{'))
    .map((route) => `${verbOf(route)} ${routeKey(route.path)}`));
  type Pattern = { method: string; pattern: RegExp };
  const byPrefix = new Map<string, Pattern[]>();
  const anywhere: Pattern[] = [];
  for (const route of routes.filter((r) => r.path.includes('{'))) {
    const pattern = { method: verbOf(route), pattern: routePattern(route.path).pattern };
    const prefix = prefixOf(routeKey(route.path));
    if (prefix === null) anywhere.push(pattern);
    else byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), pattern]);
  }
  const test = (patterns: Pattern[] | undefined, verb: string, key: string) =>
    patterns !== undefined && patterns.some((p) => (p.method === verb || p.method === '*') && p.pattern.test(key));
  return (method, path) => {
    const verb = method === 'HEAD' ? 'GET' : method;
    const key = routeKey(path);
    return exact.has(`${verb} ${key}`) || exact.has(`* ${key}`)
      || test(byPrefix.get(prefixOf(key) ?? ''), verb, key) || test(anywhere, verb, key);
  };
}

/**
 * 60/min anonymous (by address), 1000/min authenticated (by account), every route. The
 * public routes (`publicPaths`: the login, the password reset, the probe) always count in
 * the address's bucket: a token, even a closed account's, must not lift a login to 1000/min.
 * An authenticated request to one of `foldedRoutes` (a route whose work is one SQL call, see
 * foldsRateLimit in src/http/router.ts) is not counted here: its hit is handed to the route
 * (setPendingHit), which counts it inside its transaction or, failing that, on its own; unless
 * its account was refused within the current window, then it is counted here first.
 */
export function rateLimit(config: Config, limiter: RateLimiter, publicPaths: string[],
                          foldedRoutes: ReadonlyArray<{ method: string; path: string }> = []) {
  const isPublic = routeMatcher(publicPaths.map((path) => ({ path })));
  const isFolded = routeMatcher(foldedRoutes);
  return (req: Request, _res: Response, next: NextFunction) => {
    const { identity } = getRequestAuth(req);
    const account = identity && !isPublic(req.method, req.path) ? `account:${identity.accountId}` : null;
    const hit = account && isFolded(req.method, req.path)
      ? limiter.pending(account, config.rateLimits.authenticatedPerMinute, 60_000)
      : null;
    if (hit) {
      setPendingHit(req, hit);
      next();
      return;
    }
    const counted = account
      ? limiter.hit(account, config.rateLimits.authenticatedPerMinute, 60_000)
      : limiter.hit(`ip:${req.ip}`, config.rateLimits.anonymousPerMinute, 60_000);
    counted.then((wait) => next(wait > 0 ? ApiError.tooManyRequests(wait) : undefined), next);
  };
}

/** The password reset route's own bucket: 5 per hour per address. */
export function passwordResetLimit(config: Config, limiter: RateLimiter) {
  return (req: Request, _res: Response, next: NextFunction) => {
    limiter.hit(`reset:${req.ip}`, config.rateLimits.passwordResetPerHour, 3_600_000)
      .then((wait) => next(wait > 0 ? ApiError.tooManyRequests(wait) : undefined), next);
  };
}
