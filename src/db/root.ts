import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory of package.json above `from`: the repository, or the installed tree. The same
 * from the sources (src/db/, run by tsx) and from the build (dist/src/db/, run by node), where a
 * fixed number of `..` would differ.
 */
export function rootAbove(from: string): string {
  let dir = from;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${from}`);
    dir = parent;
  }
  return dir;
}

/** Where package.json, migrations/, sql/, web/dist/ and worker/crontab are. */
export const ROOT_DIR = rootAbove(path.dirname(fileURLToPath(import.meta.url)));
