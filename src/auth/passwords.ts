import os from 'node:os';
import argon2 from 'argon2';

/** argon2id with OWASP's recommended minimum (19 MiB, 2 passes, 1 lane). */
const HASH_OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/*
 * At most one hash per core at a time: argon2 is CPU-bound (more hashes at once only wait for
 * a core) and each one holds its 19 MiB while it runs, so a burst of logins would otherwise
 * take libuv's four threads and their memory (the bench's login phase: +80 MB of RSS).
 */
const HASH_SLOTS = Math.max(1, os.availableParallelism());
let hashing = 0;
const waiting: Array<() => void> = [];

async function withHashSlot<T>(work: () => Promise<T>): Promise<T> {
  if (hashing >= HASH_SLOTS) await new Promise<void>((resolve) => waiting.push(resolve));
  else hashing += 1;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else hashing -= 1;
  }
}

export function hashPassword(password: string): Promise<string> {
  return withHashSlot(() => argon2.hash(password, HASH_OPTIONS));
}

// Verified when the account does not exist or has no usable password, so that a login
// costs the same time either way.
let dummyHash: Promise<string> | null = null;

/** Constant-time verification (argon2.verify compares in constant time). */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash) {
    dummyHash ??= hashPassword('dummy password for timing');
    const dummy = await dummyHash;
    await withHashSlot(() => argon2.verify(dummy, password)).catch(() => false);
    return false;
  }
  try {
    return await withHashSlot(() => argon2.verify(hash, password));
  } catch {
    return false;
  }
}

const COMMON_PASSWORDS = new Set([
  'password', 'motdepasse', 'azerty', 'azertyuiop', 'qwerty', '123456789', '1234567890', '12345678',
  'soleil', 'bonjour', 'doudou', 'loulou', 'marseille', 'password1', 'motdepasse1', 'azerty123',
  'changeme', 'bienvenue', 'welcome1', 'iloveyou', 'admin123', 'administrateur',
]);

/**
 * Password policy, checked before hashing (the clear password never reaches the
 * database). Returns French messages, empty when the password is acceptable.
 */
export function passwordProblems(password: string, username: string | null): string[] {
  const problems: string[] = [];
  if (password.length < 10) problems.push('Le mot de passe doit contenir au moins 10 caractères.');
  if (password.length > 128) problems.push('Le mot de passe doit contenir au plus 128 caractères.');
  if (/^\d+$/.test(password)) problems.push('Le mot de passe ne peut pas être entièrement numérique.');
  if (COMMON_PASSWORDS.has(password.toLowerCase())) problems.push('Ce mot de passe est trop courant.');
  if (username && username.length >= 3 && password.toLowerCase().includes(username.toLowerCase())) {
    problems.push('Le mot de passe ne doit pas contenir l’identifiant.');
  }
  return problems;
}
