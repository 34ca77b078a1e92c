import argon2 from 'argon2';

/** argon2id with OWASP's recommended minimum (19 MiB, 2 passes, 1 lane). */
const HASH_OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, HASH_OPTIONS);
}

// Verified when the account does not exist or has no usable password, so that a login
// costs the same time either way.
let dummyHash: Promise<string> | null = null;

/** Constant-time verification (argon2.verify compares in constant time). */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash) {
    dummyHash ??= hashPassword('dummy password for timing');
    await argon2.verify(await dummyHash, password).catch(() => false);
    return false;
  }
  try {
    return await argon2.verify(hash, password);
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
