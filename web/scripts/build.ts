/**
 * Builds the web application into web/dist. `npm run web:build` (and `npm ci`, through the root
 * `prepare` script) always builds; `npm start` builds only when the build is missing or older
 * than its sources.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB_DIR = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = ['src', 'index.html', 'vite.config.ts', 'public'];

async function newestMtime(entry: string): Promise<number> {
  const info = await stat(entry).catch(() => null);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  const names = await readdir(entry);
  const times = await Promise.all(names.map((name) => newestMtime(path.join(entry, name))));
  return Math.max(0, ...times);
}

/** True when web/dist/index.html is missing or older than a source file of the application. */
export async function webBuildIsStale(): Promise<boolean> {
  const built = await stat(path.join(WEB_DIR, 'dist', 'index.html')).catch(() => null);
  if (!built) return true;
  const sources = await Promise.all(SOURCES.map((name) => newestMtime(path.join(WEB_DIR, name))));
  return Math.max(...sources) > built.mtimeMs;
}

export async function buildWeb(): Promise<void> {
  const { build } = await import('vite');
  // A production bundle even when the caller runs under NODE_ENV=test (vitest's global setup).
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ configFile: path.join(WEB_DIR, 'vite.config.ts'), mode: 'production', logLevel: 'warn' });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const onlyIfStale = process.argv.includes('--if-stale');
  if (!onlyIfStale || (await webBuildIsStale())) {
    await buildWeb();
    console.log(`web application built into ${path.join(WEB_DIR, 'dist')}`);
  }
}
