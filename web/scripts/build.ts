/**
 * Builds the web application into web/dist. `npm run web:build` and `npm run build` always build;
 * `npm ci` (prepare) and `npm start` (scripts/launch.mjs) only when the build is missing or older
 * than its sources.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILDS, ROOT, isStale } from '../../scripts/freshness.mjs';

const WEB_DIR = fileURLToPath(new URL('..', import.meta.url));

/** True when web/dist/index.html is missing or older than a source file of the application (scripts/freshness.mjs). */
export function webBuildIsStale(): Promise<boolean> {
  return isStale(BUILDS.web.output, BUILDS.web.sources, ROOT);
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
