import { readdir } from 'node:fs/promises';
import path from 'node:path';

/** Every file below `dir`, sorted (none when it does not exist): content hashes of templates read them. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const files = await Promise.all(
    entries.map(async (entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return filesUnder(full);
      return entry.isFile() ? [full] : [];
    }),
  );
  return files.flat().sort();
}
