/**
 * Back-office sessions, stored in PostgreSQL (app_private.backoffice_sessions): the cookie
 * carries a random token, the database its SHA-256. The same session authenticates the
 * back-office pages, the API and its interactive documentation (SPEC, Authentication).
 */
import type { Request, Response } from 'express';
import type pg from 'pg';
import type { Config } from '../config.js';
import { withAuthenticatorTransaction } from '../db/transaction.js';
import { BackofficeSecrets, safeEqual } from './secrets.js';

export const SESSION_COOKIE = 'wfm_session';
/** Not HttpOnly: the interactive documentation reads it to send X-CSRFToken (Django's convention). */
export const CSRF_COOKIE = 'wfm_csrftoken';
export const CSRF_HEADER = 'x-csrftoken';
export const CSRF_FIELD = 'csrf_token';

export interface BackofficeSession {
  token: string;
  accountId: number;
  stage: 'pre' | 'full';
  method: 'totp' | 'enrol' | 'backup_code' | 'password';
  username: string;
  isSuperuser: boolean;
  /** The account's credential generation, checked again by each request the session makes. */
  generation: number;
}

/** Cookies of a request (no dependency: the few cookies this service sets are simple). */
export function readCookies(req: Request): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index < 0) continue;
    const name = part.slice(0, index).trim();
    if (!name || name in cookies) continue;
    try {
      cookies[name] = decodeURIComponent(part.slice(index + 1).trim());
    } catch {
      // A value that is not valid percent-encoding is ignored.
    }
  }
  return cookies;
}

/** Sets a cookie: SameSite=Lax, Path=/, Secure when the request came over TLS (trust proxy). */
export function setCookie(req: Request, res: Response, name: string, value: string, { httpOnly = true, clear = false } = {}): void {
  const attributes = [`${name}=${clear ? '' : encodeURIComponent(value)}`, 'Path=/', 'SameSite=Lax'];
  if (httpOnly) attributes.push('HttpOnly');
  if (req.secure) attributes.push('Secure');
  if (clear) attributes.push('Max-Age=0');
  res.append('Set-Cookie', attributes.join('; '));
}

export class SessionStore {
  readonly secrets: BackofficeSecrets;

  constructor(
    private readonly pool: pg.Pool,
    private readonly config: Config,
  ) {
    this.secrets = new BackofficeSecrets(config.jwtSecret);
  }

  /** The frozen clock of the tests, else none (the database's own clock). */
  get clock(): { frozenNow?: string | null } {
    return { frozenNow: this.config.frozenNow?.() ?? null };
  }

  /** Current time in seconds for TOTP (the frozen clock when tests freeze it). */
  epochSeconds(): number {
    const frozen = this.config.frozenNow?.();
    return Math.floor((frozen ? Date.parse(frozen) : Date.now()) / 1000);
  }

  /** A transaction as the authenticator; `req`: its client address goes into the audit lines written. */
  authenticator<T>(work: (client: pg.PoolClient) => Promise<T>, req?: Request): Promise<T> {
    return withAuthenticatorTransaction(this.pool, work, { ...this.clock, clientAddress: req?.ip ?? null });
  }

  /** authenticator() bound to a request (its client address). */
  authenticatorFor(req: Request): <T>(work: (client: pg.PoolClient) => Promise<T>) => Promise<T> {
    return (work) => this.authenticator(work, req);
  }

  /**
   * The live session of a cookie value, or null (unknown, expired, account without access, or
   * opened through the password-only bypass while this instance does not allow it).
   */
  async load(token: string | undefined): Promise<BackofficeSession | null> {
    if (!token || token.length > 100) return null;
    const rows = await this.authenticator(async (client) =>
      (await client.query<{ account_id: number; stage: 'pre' | 'full'; method: BackofficeSession['method']; username: string; is_superuser: boolean; token_generation: number }>(
        'select * from app_private.backoffice_session_get($1, $2)',
        [BackofficeSecrets.tokenHash(token), this.config.backofficePasswordOnly],
      )).rows);
    const row = rows[0];
    if (!row) return null;
    return { token, accountId: row.account_id, stage: row.stage, method: row.method, username: row.username,
      isSuperuser: row.is_superuser, generation: row.token_generation };
  }

  /**
   * Opens a session under a new token (never the one the browser had: no fixation), closing
   * the previous one, and sets the cookies. Returns the new token. `generation`: the account's
   * credential generation read with the password (or the pre-authentication's).
   */
  async open(req: Request, res: Response, accountId: number, stage: 'pre' | 'full', method: BackofficeSession['method'],
    generation: number): Promise<string> {
    const previous = readCookies(req)[SESSION_COOKIE];
    const token = BackofficeSecrets.newSessionToken();
    await this.authenticator(async (client) => {
      if (previous) await client.query('select app_private.backoffice_session_close($1)', [BackofficeSecrets.tokenHash(previous)]);
      await client.query('select app_private.backoffice_session_open($1, $2, $3, $4, $5)',
        [BackofficeSecrets.tokenHash(token), accountId, stage, method, generation]);
    }, req);
    setCookie(req, res, SESSION_COOKIE, token);
    // The page rendered in this answer carries a CSRF token of the new session.
    res.locals.sessionToken = token;
    return token;
  }

  async close(req: Request, res: Response): Promise<void> {
    const token = readCookies(req)[SESSION_COOKIE];
    if (token) {
      await this.authenticator((client) => client.query('select app_private.backoffice_session_close($1)', [BackofficeSecrets.tokenHash(token)]));
    }
    setCookie(req, res, SESSION_COOKIE, '', { clear: true });
    res.locals.sessionToken = '';
    setCookie(req, res, CSRF_COOKIE, '', { clear: true, httpOnly: false });
  }

  /**
   * The CSRF token for the page being rendered: the cookie's when it belongs to this session
   * cookie, else a new one (set in the answer). `sessionToken` is the session cookie the
   * browser will send with the form ('' when none).
   */
  csrfFor(req: Request, res: Response, sessionToken: string): string {
    const current = readCookies(req)[CSRF_COOKIE];
    if (current && this.secrets.csrfValid(current, sessionToken)) return current;
    const fresh = this.secrets.csrfToken(sessionToken);
    setCookie(req, res, CSRF_COOKIE, fresh, { httpOnly: false });
    return fresh;
  }

  /** True when the submitted token equals the CSRF cookie and belongs to the session cookie sent. */
  csrfOk(req: Request, submitted: string | undefined): boolean {
    const cookies = readCookies(req);
    const cookie = cookies[CSRF_COOKIE];
    return !!cookie && !!submitted && safeEqual(submitted, cookie) && this.secrets.csrfValid(submitted, cookies[SESSION_COOKIE] ?? '');
  }
}
