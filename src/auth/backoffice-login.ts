/**
 * The back-office login and its second factor (SPEC, Authentication rule 3), without their pages
 * (src/backoffice/login.ts, authenticators.ts and backup-codes.ts draw them): the password step,
 * the TOTP enrolment and its backup codes, the verification of a TOTP or backup code, the
 * sessions it opens (./sessions.ts), and the superuser's removal of an account's factors. Every
 * rule is in SQL (sql/backoffice/sessions.sql, sql/auth/): this module reads and writes through
 * its functions as the authenticator (no account acts yet), or as the signed-in account for the
 * authenticators' list and removal. The API accepts the same session (./middleware.ts).
 */
import type { Request, Response } from 'express';
import type pg from 'pg';
import { generateSecret, verify } from 'otplib';
import type { Config } from '../config.js';
import { LoginThrottle, loginPolicy, type AuthenticatorCall, type LoginScope } from './login-throttle.js';
import { verifyPassword } from './passwords.js';
import { BackofficeSecrets, findHash } from './secrets.js';
import type { BackofficeSession, SessionStore } from './sessions.js';

const ISSUER = 'Gestion des temps';
/** One step of tolerance either side of the current 30-second step. */
const TOTP_TOLERANCE_SECONDS = 30;

/** The TOTP time step a valid code belongs to (otplib's result type also covers HOTP). */
function timeStepOf(result: object): number {
  const step = (result as { timeStep?: unknown }).timeStep;
  if (typeof step !== 'number') throw new Error('TOTP verification gave no time step');
  return step;
}

/** The account a right password opened (active or not: the caller answers a closed one as a wrong password). */
export interface PasswordAccount {
  account_id: number;
  is_active: boolean;
  token_generation: number;
}

/** An account of the authenticators' list. */
export interface FactorAccount {
  id: number;
  username: string;
  name: string;
  enrolled: boolean;
  enrolled_at: string | null;
  backup_codes_left: number;
}

export class BackofficeLogin {
  /** `select * from fn(args)` as the authenticator (the functions of login throttling). */
  private readonly call: AuthenticatorCall;

  constructor(
    private readonly sessions: SessionStore,
    private readonly config: Config,
  ) {
    this.call = (fn, args) => sessions.authenticator(async (client) =>
      (await client.query(`select * from ${fn}(${args.map((_, i) => `$${i + 1}`).join(', ')})`, args)).rows);
  }

  /**
   * Login throttling (./login-throttle.ts, the rule in SQL): only failures count, per
   * (username, address) strictly and per username with a slowing ceiling; a success counts nothing.
   */
  attempt(req: Request, scope: LoginScope, username: string): LoginThrottle {
    return new LoginThrottle(this.call, scope, loginPolicy(this.config, scope), username, req.ip ?? '');
  }

  /**
   * The password step: the account whose password this is, else null. The right password of a
   * closed account writes an audit line (app_private.login_refused) and answers the account: the
   * caller refuses it as a wrong password.
   */
  async password(req: Request, username: string, password: string): Promise<PasswordAccount | null> {
    const row = username
      ? await this.sessions.authenticator(async (client) =>
          (await client.query<PasswordAccount & { password_hash: string | null }>(
            'select * from app_private.login_lookup($1)', [username])).rows[0] ?? null)
      : null;
    if (!(await verifyPassword(row?.password_hash, password)) || !row) return null;
    if (!row.is_active) {
      await this.sessions.authenticatorFor(req)((client) => client.query("select app_private.login_refused($1, 'backoffice')", [row.account_id]));
    }
    return { account_id: row.account_id, is_active: row.is_active, token_generation: row.token_generation };
  }

  /** Whether the account may enter the back-office, and whether it has enrolled a second factor. */
  async state(accountId: number): Promise<{ may_enter: boolean; enrolled: boolean }> {
    return this.sessions.authenticator(async (client) =>
      (await client.query<{ state: { may_enter: boolean; enrolled: boolean } }>(
        'select app_private.backoffice_login_state($1) as state', [accountId])).rows[0]!.state);
  }

  /** The pre-authentication (account and method, 10 minutes) that the second factor completes. */
  async openPre(req: Request, res: Response, accountId: number, method: 'totp' | 'enrol', generation: number): Promise<void> {
    await this.sessions.open(req, res, accountId, 'pre', method, generation);
  }

  /** Second factor passed (or the DEBUG bypass): the authenticated session replaces the pre-authentication. */
  async openFull(req: Request, res: Response, accountId: number, method: 'totp' | 'backup_code' | 'password',
    generation: number): Promise<string> {
    const token = await this.sessions.open(req, res, accountId, 'full', method, generation);
    await this.sessions.authenticator((client) => client.query('select app_private.record_login($1)', [accountId]));
    return token;
  }

  /** A new TOTP secret for the enrolment (stored encrypted, unconfirmed) and its otpauth:// URI. */
  async startEnrolment(session: BackofficeSession): Promise<{ secret: string; uri: string }> {
    const secret = await generateSecret();
    await this.sessions.authenticator((client) =>
      client.query('select app_private.backoffice_enrol_start($1, $2)', [session.accountId, this.sessions.secrets.encryptTotpSecret(secret)]));
    const uri = `otpauth://totp/${encodeURIComponent(`${ISSUER}:${session.username}`)}?secret=${secret}` +
      `&issuer=${encodeURIComponent(ISSUER)}&algorithm=SHA1&digits=6&period=30`;
    return { secret, uri };
  }

  /**
   * The first code of the enrolled application: 'invalid' (a wrong code), 'gone' (the enrolment
   * changed meanwhile), else the 10 backup codes, kept as hashes, to show once.
   */
  async confirmEnrolment(req: Request, session: BackofficeSession, code: string): Promise<'invalid' | 'gone' | string[]> {
    const factor = await this.sessions.authenticator(async (client) =>
      (await client.query<{ secret_encrypted: string; confirmed: boolean }>(
        'select * from app_private.backoffice_factor($1)', [session.accountId])).rows[0] ?? null);
    const result = factor && !factor.confirmed && /^\d{6}$/.test(code)
      ? await verify({ secret: this.sessions.secrets.decryptTotpSecret(factor.secret_encrypted), token: code,
          epoch: this.sessions.epochSeconds(), epochTolerance: TOTP_TOLERANCE_SECONDS })
      : { valid: false as const };
    if (!result.valid) return 'invalid';
    const codes = BackofficeSecrets.newBackupCodes();
    const confirmed = await this.sessions.authenticatorFor(req)(async (client) =>
      (await client.query<{ ok: boolean }>('select app_private.backoffice_enrol_confirm($1, $2, $3) as ok',
        [session.accountId, timeStepOf(result), codes.map((c) => this.sessions.secrets.backupCodeHash(c))])).rows[0]!.ok);
    return confirmed ? codes : 'gone';
  }

  /** A TOTP code (each time step passes once) or an unused backup code (used up): the method it proves, else null. */
  async verifyCode(req: Request, session: BackofficeSession, code: string): Promise<'totp' | 'backup_code' | null> {
    const { sessions } = this;
    if (/^\d{6}$/.test(code)) {
      const factor = await sessions.authenticator(async (client) =>
        (await client.query<{ secret_encrypted: string; confirmed: boolean; last_step: string | null }>(
          'select * from app_private.backoffice_factor($1)', [session.accountId])).rows[0] ?? null);
      if (!factor?.confirmed) return null;
      const result = await verify({
        secret: sessions.secrets.decryptTotpSecret(factor.secret_encrypted), token: code, epoch: sessions.epochSeconds(),
        epochTolerance: TOTP_TOLERANCE_SECONDS,
        ...(factor.last_step === null ? {} : { afterTimeStep: Number(factor.last_step) }),
      });
      // The step is recorded atomically: the same code sent twice at once passes once.
      return result.valid && await sessions.authenticator(async (client) =>
        (await client.query<{ ok: boolean }>('select app_private.backoffice_totp_accept($1, $2) as ok',
          [session.accountId, timeStepOf(result)])).rows[0]!.ok) ? 'totp' : null;
    }
    if (code.length < 10) return null;
    const hash = sessions.secrets.backupCodeHash(code);
    const unused = await sessions.authenticator(async (client) =>
      (await client.query<{ id: string; code_hash: Buffer }>('select * from app_private.backoffice_backup_codes($1)', [session.accountId])).rows);
    const index = findHash(hash, unused.map((row) => row.code_hash));
    return index >= 0 && await sessions.authenticatorFor(req)(async (client) =>
      (await client.query<{ ok: boolean }>('select app_private.backoffice_backup_code_use($1, $2) as ok',
        [session.accountId, unused[index]!.id])).rows[0]!.ok) ? 'backup_code' : null;
  }

  /** How many unused backup codes the account has left. */
  async backupCodesLeft(req: Request, session: BackofficeSession): Promise<number> {
    return this.sessions.authenticatorFor(req)(async (client) =>
      (await client.query<{ n: number }>('select count(*)::int as n from app_private.backoffice_backup_codes($1)', [session.accountId])).rows[0]!.n);
  }

  /**
   * 10 new backup codes replacing the unused ones, to show once; null when SQL refuses (a session
   * that did not pass a second factor: app_private.backoffice_backup_codes_regenerate decides it
   * from the session's token).
   */
  async regenerateBackupCodes(req: Request, sessionToken: string): Promise<string[] | null> {
    const codes = BackofficeSecrets.newBackupCodes();
    const done = await this.sessions.authenticatorFor(req)(async (client) =>
      (await client.query<{ ok: boolean }>('select app_private.backoffice_backup_codes_regenerate($1, $2) as ok',
        [BackofficeSecrets.tokenHash(sessionToken), codes.map((c) => this.sessions.secrets.backupCodeHash(c))])).rows[0]!.ok);
    return done ? codes : null;
  }
}

/** The back-office accounts and their second factor, as the signed-in superuser reads them (SQL refuses the others). */
export async function factorAccounts(client: pg.PoolClient): Promise<FactorAccount[]> {
  return (await client.query<{ accounts: FactorAccount[] }>('select app_public.backoffice_factor_accounts() as accounts')).rows[0]!.accounts;
}

/** Removes the factors of an account (it enrols again at its next login; its sessions end), as the signed-in superuser. */
export async function deleteFactors(client: pg.PoolClient, accountId: number): Promise<void> {
  await client.query('select app_public.backoffice_factors_delete($1)', [accountId]);
}
