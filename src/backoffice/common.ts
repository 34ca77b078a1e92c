import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type pg from 'pg';
import type { RateLimiter } from '../auth/rate-limit.js';
import type { Config } from '../config.js';
import type { FileStorage } from '../storage/storage.js';
import { withRequestTransaction, type ActingAccount } from '../db/transaction.js';
import { getRequestAuth } from '../http/request-context.js';
import { type Html, type NavLink, type NavUser, page } from './html.js';
import { RESOURCES } from './resources/index.js';
import { isStaff } from './resources/staff.js';
import { SESSION_COOKIE, readCookies, type BackofficeSession, type SessionStore } from './sessions.js';

export interface BackofficeDeps {
  config: Config;
  pool: pg.Pool;
  limiter: RateLimiter;
  sessions: SessionStore;
  /** Where uploads are stored (the API's storage module): honorability certificates; files of deleted documents, removed after the commit. */
  storage: FileStorage;
}

/** The session loaded by the authentication middleware (src/auth/middleware.ts). */
export function currentSession(req: Request): BackofficeSession | null {
  return getRequestAuth(req).session ?? null;
}

export function sessionCookie(req: Request): string | undefined {
  return readCookies(req)[SESSION_COOKIE];
}

export function asyncRoute(handler: (req: Request, res: Response, next: NextFunction) => Promise<void>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    handler(req, res, next).catch(next);
  };
}

/** Sends a page; `body` may need the CSRF token of the forms it holds. */
export function render(req: Request, res: Response, status: number, title: string, user: NavUser | null,
  body: Html | ((csrf: string) => Html)): void {
  const deps = req.app.locals.backoffice as BackofficeDeps;
  const sessionToken = (res.locals.sessionToken as string | undefined) ?? sessionCookie(req) ?? '';
  const csrf = deps.sessions.csrfFor(req, res, sessionToken);
  res.status(status).type('html').send(page({
    title, user, csrf, path: req.originalUrl.split('?')[0], body: typeof body === 'function' ? body(csrf) : body,
  }));
}

/** The signed-in user of a full session, else a redirect to the login page (null). */
export function requireUser(req: Request, res: Response): BackofficeSession | null {
  const session = currentSession(req);
  if (session?.stage === 'full') return session;
  res.redirect(303, '/backoffice/login/');
  return null;
}

/**
 * Runs `work` as the signed-in account, exactly as an API request (reloaded account, visitor
 * role, RLS), telling SQL whether this session passed a second factor. `staffOnly`: the
 * prelude refuses an account that is neither staff nor superuser (WF002, 403), as for a staff route.
 */
export function asUser<T>(req: Request, session: BackofficeSession,
  work: (client: pg.PoolClient, account: ActingAccount) => Promise<T>,
  options: { uploadedFiles?: readonly object[]; staffOnly?: boolean } = {}): Promise<T> {
  const deps = req.app.locals.backoffice as BackofficeDeps;
  return withRequestTransaction(deps.pool, { accountId: session.accountId, generation: session.generation }, async (client, account) => {
    await client.query("select set_config('app.second_factor_verified', $1, true)", [secondFactorSetting(session)]);
    return work(client, account!);
  }, { ...deps.sessions.clock, clientAddress: req.ip, ...options });
}

/**
 * The value of app.second_factor_verified for a session: 'on' when it passed a TOTP code or a
 * backup code. Set by asUser for the pages, and by /graphql for its operations (src/graphql.ts).
 */
export function secondFactorSetting(session: BackofficeSession): 'on' | 'off' {
  return session.method === 'totp' || session.method === 'backup_code' ? 'on' : 'off';
}

export const AUTHENTICATORS_LINK: NavLink = {
  href: '/backoffice/authenticators/',
  label: 'Authentificateurs',
  summary: 'Comptes du back-office et leur second facteur ; suppression des facteurs d’un compte (nouvel enrôlement).',
};

export const COUNTER_OPENINGS_LINK: NavLink = {
  href: '/backoffice/counter-openings/',
  label: 'Ouverture des compteurs',
  summary: 'Ouvrir les compteurs de l’année suivante (ou de l’année) selon les règles : aperçu, puis confirmation.',
};

export const BACKUP_CODES_LINK: NavLink = {
  href: '/backoffice/backup-codes/',
  label: 'Mes codes de secours',
  summary: 'Combien il vous en reste ; en générer 10 nouveaux (les anciens cessent de fonctionner).',
};

/** The signed-in user for the page header: the pages of the registry this account may open. */
export async function navUser(req: Request, session: BackofficeSession): Promise<NavUser> {
  const links = await asUser(req, session, async (client) => {
    const open: NavLink[] = [];
    for (const resource of RESOURCES) {
      if (await resource.available(client)) open.push({ href: `/backoffice/${resource.slug}/`, label: resource.title, summary: resource.summary });
    }
    if (await isStaff(client)) open.push(COUNTER_OPENINGS_LINK);
    return open;
  });
  if (session.isSuperuser) links.push(AUTHENTICATORS_LINK);
  links.push(BACKUP_CODES_LINK);
  return { username: session.username, isSuperuser: session.isSuperuser, links };
}
