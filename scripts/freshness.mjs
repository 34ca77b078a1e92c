/**
 * The builds and when they are stale (plain JavaScript: it runs before anything is compiled).
 * A build is stale when its output file is missing or older than the newest file of its sources;
 * `npm start` (scripts/launch.mjs), `npm ci` (prepare), the chaos run and the test set-up rebuild
 * through here, and only then.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository (or installed tree) root: the directory of package.json. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The two builds: `output` is the file written last (or at once) by the build, `sources` what it is
 * built from (relative to ROOT), `tools` the development packages that build it.
 */
export const BUILDS = {
  server: {
    label: 'the server (tsc, dist/)',
    output: 'dist/src/cli/start.js',
    sources: ['src', 'worker', 'tsconfig.json', 'tsconfig.build.json'],
    // tsc type-checks as it compiles: it needs the type packages too. A production install holds
    // TypeScript and @types/node all the same (they come with graphile-worker and exceljs): tsx, which
    // no runtime package pulls in, tells a development install.
    tools: ['typescript', '@types/node', 'tsx'],
    /** Files the compiled code reads next to itself, copied into dist/ after tsc. */
    assets: ['src/backoffice/static', 'worker/crontab'],
  },
  web: {
    label: 'the web application (vite, web/dist/)',
    output: 'web/dist/index.html',
    sources: ['web/src', 'web/index.html', 'web/vite.config.ts', 'web/public'],
    tools: ['vite', 'tsx'],
  },
};

/** Modification time of the newest file under `entry` (0 when it does not exist). */
export async function newestMtime(entry) {
  const info = await stat(entry).catch(() => null);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  const names = await readdir(entry);
  const times = await Promise.all(names.map((name) => newestMtime(path.join(entry, name))));
  return Math.max(0, ...times);
}

/** True when `output` is missing or older than a file of `sources` (paths relative to `root`). */
export async function isStale(output, sources, root = ROOT) {
  const built = await stat(path.join(root, output)).catch(() => null);
  if (!built) return true;
  const times = await Promise.all(sources.map((source) => newestMtime(path.join(root, source))));
  return Math.max(0, ...times) > built.mtimeMs;
}

/** True when the package `name` is installed (a production install has no development package). */
export function hasTool(name, root = ROOT) {
  try {
    createRequire(path.join(root, 'package.json')).resolve(`${name}/package.json`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs the build `name` now (its tool must be installed); throws when it fails. The server's
 * build starts from an empty dist/ (no output of a deleted source stays) and writes nothing when a
 * type error stops tsc (noEmitOnError): a failed build stays stale.
 */
export function build(name, root = ROOT) {
  // The builds get Node's default heap, not the service's NODE_OPTIONS (160 MB is too little for tsc).
  const env = { ...process.env, NODE_OPTIONS: '' };
  const spec = BUILDS[name];
  let args;
  if (name === 'server') {
    rmSync(path.join(root, 'dist'), { recursive: true, force: true });
    args = [createRequire(path.join(root, 'package.json')).resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'];
  } else {
    args = ['--import', 'tsx', 'web/scripts/build.ts'];
  }
  const result = spawnSync(process.execPath, args, { cwd: root, env, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`building ${spec.label} failed (exit ${result.status ?? result.signal}).`);
  for (const asset of spec.assets ?? []) {
    cpSync(path.join(root, asset), path.join(root, 'dist', asset), { recursive: true });
  }
}

/**
 * Builds `name` when it is stale and its tool is installed. Without the tool (a production
 * install): a missing build is an error saying what to do; a build older than its sources (files
 * copied without their times) is used as it is, saying so. Returns what was done.
 */
export async function ensureBuilt(name, { root = ROOT, log = (line) => console.log(line) } = {}) {
  const spec = BUILDS[name];
  if (!(await isStale(spec.output, spec.sources, root))) return 'fresh';
  const missing = spec.tools.find((tool) => !hasTool(tool, root));
  if (!missing) {
    log(`Building ${spec.label}...`);
    build(name, root);
    return 'built';
  }
  if (!existsSync(path.join(root, spec.output))) {
    throw new Error(
      `${spec.output} is missing and ${missing} is not installed (a production install): ` +
        'run `npm run build` in a full install (npm ci) and install the built tree with `npm ci --omit=dev`.',
    );
  }
  log(`warning: ${spec.output} is older than its sources and ${missing} is not installed: running the build as it is.`);
  return 'kept';
}
