/**
 * Secrets generated once and kept in `<DATA_DIR>/secrets.json` (mode 0600): the embedded
 * superuser's password, wfm_authenticator's password, JWT_SECRET and the demo password.
 * Nothing of this file is ever committed (`.data/` is ignored).
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

export type SecretName = 'postgres_password' | 'authenticator_password' | 'jwt_secret' | 'demo_password';

const GENERATORS: Record<SecretName, () => string> = {
  postgres_password: () => randomBytes(24).toString('base64url'),
  authenticator_password: () => randomBytes(24).toString('base64url'),
  jwt_secret: () => randomBytes(48).toString('base64url'),
  // Typed by people: letters and digits only, 16 characters (about 95 bits).
  demo_password: () => {
    const alphabet = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
    const bytes = randomBytes(16);
    return `Demo-${Array.from(bytes, (byte) => alphabet[byte % alphabet.length]).join('')}`;
  },
};

export class SecretStore {
  readonly file: string;

  constructor(readonly dataDir: string) {
    this.file = path.join(dataDir, 'secrets.json');
  }

  private async read(): Promise<Partial<Record<SecretName, string>>> {
    let raw: string;
    try {
      raw = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new Error(`Cannot read ${this.file}: ${(error as Error).message}`);
    }
    try {
      const parsed = JSON.parse(raw) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      return parsed as Partial<Record<SecretName, string>>;
    } catch (error) {
      throw new Error(`${this.file} is damaged (${(error as Error).message}); restore it or remove the data directory.`);
    }
  }

  /** The stored value, or null when it was never generated. */
  async peek(name: SecretName): Promise<string | null> {
    const value = (await this.read())[name];
    return typeof value === 'string' && value !== '' ? value : null;
  }

  /** The stored value of each name, generating (and storing) the missing ones. */
  async get<N extends SecretName>(...names: N[]): Promise<Record<N, string>> {
    const stored = await this.read();
    let changed = false;
    for (const name of names) {
      if (typeof stored[name] !== 'string' || stored[name] === '') {
        stored[name] = GENERATORS[name]();
        changed = true;
      }
    }
    if (changed) {
      await mkdir(this.dataDir, { recursive: true, mode: 0o700 });
      const temporary = `${this.file}.${process.pid}.tmp`;
      await writeFile(temporary, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
      await rename(temporary, this.file);
    }
    // Tighten a file whose mode was loosened by hand.
    await chmod(this.file, 0o600);
    return Object.fromEntries(names.map((name) => [name, stored[name]!])) as Record<N, string>;
  }
}
