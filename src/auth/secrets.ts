/**
 * The back-office's secrets: session tokens (the database keeps their SHA-256), CSRF tokens
 * (bound to the session cookie by an HMAC), backup codes (kept as an HMAC, compared in
 * constant time) and the TOTP secret (kept encrypted with AES-256-GCM). The keys are derived
 * from JWT_SECRET with HKDF, one per purpose.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

export class BackofficeSecrets {
  private readonly csrfKey: Buffer;
  private readonly backupKey: Buffer;
  private readonly totpKey: Buffer;

  constructor(masterSecret: string) {
    const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', masterSecret, 'wfm-backoffice', purpose, 32));
    this.csrfKey = derive('csrf');
    this.backupKey = derive('backup-codes');
    this.totpKey = derive('totp-secret');
  }

  /** A new session token (cookie value) and the hash the database keeps. */
  static newSessionToken(): string {
    return randomBytes(32).toString('base64url');
  }

  static tokenHash(token: string): Buffer {
    return createHash('sha256').update(token).digest();
  }

  /** CSRF token: a nonce and its HMAC with the session cookie it belongs to ('' when none). */
  csrfToken(sessionCookie: string): string {
    const nonce = randomBytes(16).toString('base64url');
    return `${nonce}.${this.csrfMac(nonce, sessionCookie)}`;
  }

  /** True when `token` is a CSRF token of this session cookie. */
  csrfValid(token: string | undefined, sessionCookie: string): boolean {
    if (!token) return false;
    const [nonce, mac, extra] = token.split('.');
    if (!nonce || !mac || extra !== undefined) return false;
    return safeEqual(mac, this.csrfMac(nonce, sessionCookie));
  }

  private csrfMac(nonce: string, sessionCookie: string): string {
    return createHmac('sha256', this.csrfKey).update(`${nonce}|${sessionCookie}`).digest('base64url');
  }

  /** Ten backup codes of 10 characters (50 bits), shown once, in groups of five. */
  static newBackupCodes(): string[] {
    const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
    return Array.from({ length: 10 }, () => {
      const chars = Array.from({ length: 10 }, () => alphabet[randomInt(alphabet.length)]).join('');
      return `${chars.slice(0, 5)}-${chars.slice(5)}`;
    });
  }

  /** Keyed hash of a backup code, as typed (spaces, dash and case do not matter). */
  backupCodeHash(code: string): Buffer {
    const normalized = code.toLowerCase().replace(/[\s-]/g, '');
    return createHmac('sha256', this.backupKey).update(normalized).digest();
  }

  encryptTotpSecret(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.totpKey, iv);
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join('.');
  }

  decryptTotpSecret(stored: string): string {
    const [iv, tag, body] = stored.split('.').map((part) => Buffer.from(part, 'base64url'));
    const decipher = createDecipheriv('aes-256-gcm', this.totpKey, iv!);
    decipher.setAuthTag(tag!);
    return Buffer.concat([decipher.update(body!), decipher.final()]).toString('utf8');
  }
}

/** Constant-time comparison of two strings (false when their lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * The index of `hash` among `candidates`, comparing with every candidate in constant time
 * (no early exit), or -1.
 */
export function findHash(hash: Buffer, candidates: readonly Buffer[]): number {
  let found = -1;
  candidates.forEach((candidate, index) => {
    if (candidate.length === hash.length && timingSafeEqual(candidate, hash) && found === -1) found = index;
  });
  return found;
}
