/**
 * The Node.js the service needs, stated once: package.json's `engines.node` (.node-version names the
 * same major, and test/api/runtime.test.ts checks that they agree). Every entry point calls
 * requireSupportedNode() before it loads anything else, so that an older Node stops with one
 * sentence instead of a crash deep in a dependency.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT_DIR } from './db/root.js';

/** The lowest version `engines` accepts, as [major, minor, patch]: ">=22" → [22, 0, 0]. */
export function minimumVersion(engines: string): [number, number, number] {
  const match = /^\s*>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/.exec(engines);
  if (!match) throw new Error(`package.json engines.node must read ">=MAJOR[.MINOR[.PATCH]]" (got "${engines}").`);
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

/** The sentence refusing `current` (process.version) under `engines`, or null when it is recent enough. */
export function nodeVersionProblem(current: string, engines: string): string | null {
  const minimum = minimumVersion(engines);
  const have = current.replace(/^v/, '').split('.').map((part) => Number.parseInt(part, 10) || 0);
  for (let i = 0; i < 3; i += 1) {
    if ((have[i] ?? 0) > minimum[i]!) return null;
    if ((have[i] ?? 0) < minimum[i]!) {
      const needed = minimum.slice(0, minimum[2] ? 3 : minimum[1] ? 2 : 1).join('.');
      return (
        `This service needs Node.js ${needed} or later but runs on Node.js ${current.replace(/^v/, '')}: ` +
        `start it with \`npm start\` (npm runs the Node.js ${minimum[0]} of the \`node\` package in node_modules), ` +
        `or install Node.js ${needed} or later (docs/running.md, "Node.js").`
      );
    }
  }
  return null;
}

/** package.json's engines.node. */
export function requiredEngines(root = ROOT_DIR): string {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines?: { node?: string } };
  return manifest.engines?.node ?? '>=0';
}

/** Exits with the sentence (code 1) when this Node is older than package.json's engines.node. */
export function requireSupportedNode(): void {
  const problem = nodeVersionProblem(process.version, requiredEngines());
  if (problem) {
    process.stderr.write(`${problem}\n`);
    process.exit(1);
  }
}
