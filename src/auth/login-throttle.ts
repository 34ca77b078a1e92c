/**
 * Login throttling (SECURITY.md, « Login throttling »): the rule lives in SQL
 * (app_private.login_throttle, login_failed, login_succeeded in sql/auth/rate_limits.sql); this
 * module gives each login its figures and waits the delay SQL answers. Only failures count: per
 * (username, address) strictly (refused once used up), per username a ceiling beyond which logins
 * are slowed, never refused. A success counts nothing.
 */
import type { Config } from '../config.js';

/** 'api': POST /api/auth/token/; 'bo': the back-office password step; 'bo-2fa': its second factor. */
export type LoginScope = 'api' | 'bo' | 'bo-2fa';

export interface LoginPolicy {
  /** Failures of one username from one address before that address is refused for it. */
  pairLimit: number;
  pairWindowSeconds: number;
  /** Failures of one username (any address) before its logins are slowed. */
  ceiling: number;
  ceilingWindowSeconds: number;
  /** The longest a login waits (the delay doubles from 1 s with each failure over the ceiling). */
  maxDelaySeconds: number;
}

/** The longest wait the per-username ceiling imposes on a login (a person who knows the password included). */
export const LOGIN_MAX_DELAY_SECONDS = 10;

export function loginPolicy(config: Config, scope: LoginScope): LoginPolicy {
  return {
    pairLimit: scope === 'api' ? config.rateLimits.loginFailuresPerAddress ?? 10 : config.backofficeLoginAttempts,
    pairWindowSeconds: 15 * 60,
    ceiling: config.rateLimits.loginPerUsernamePerHour,
    ceilingWindowSeconds: 3600,
    maxDelaySeconds: LOGIN_MAX_DELAY_SECONDS,
  };
}

/** Runs `select * from <fn>(<args>)` as the authenticator and answers its rows. */
export type AuthenticatorCall = <R extends Record<string, unknown>>(fn: string, args: unknown[]) => Promise<R[]>;

const seconds = (value: number) => `${value} seconds`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class LoginThrottle {
  constructor(
    private readonly call: AuthenticatorCall,
    readonly scope: LoginScope,
    readonly policy: LoginPolicy,
    /** The username (any case), or the account id for the second factor. */
    readonly username: string,
    /** The client address (req.ip: X-Forwarded-For only when TRUST_PROXY says so). */
    readonly address: string,
  ) {}

  /**
   * Before the credentials are checked: the seconds to wait when this address used up its failures
   * on this username (the caller answers 429), else 0, once the slowing delay (if any) has passed.
   */
  async before(): Promise<number> {
    const [row] = await this.call<{ retry_after: number; delay_ms: number }>('app_private.login_throttle', [
      this.scope, this.username, this.address, this.policy.pairLimit, this.policy.ceiling, seconds(this.policy.maxDelaySeconds),
    ]);
    if (!row) return 0;
    if (row.retry_after > 0) return row.retry_after;
    if (row.delay_ms > 0) await sleep(row.delay_ms);
    return 0;
  }

  async failed(): Promise<void> {
    await this.call('app_private.login_failed', [
      this.scope, this.username, this.address, seconds(this.policy.pairWindowSeconds), seconds(this.policy.ceilingWindowSeconds),
    ]);
  }

  async succeeded(): Promise<void> {
    await this.call('app_private.login_succeeded', [this.scope, this.username, this.address]);
  }
}
