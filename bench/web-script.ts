/**
 * `npx tsx bench/web-script.ts [--dist=web/dist]`: the script each screen of the web application
 * loads (BENCHMARKS.md, "The script, split (issue 29 point 6)"), from the build's manifest
 * (web/dist/.vite/manifest.json): the login (index.html's script and what it imports), the app after
 * the login (router, menu, table of screens), then each screen's own files. Sizes uncompressed, in
 * gzip at zlib's default level and in brotli at quality 4 (what the server's compression sends). A
 * build without a manifest (before the split) is one script, whatever the screen.
 * test/web/script-split.test.ts checks in Chromium that a screen fetches exactly these files.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { ROOT_DIR } from '../src/db/root.js';

export interface ManifestChunk {
  file: string;
  name?: string;
  src?: string;
  isEntry?: boolean;
  isDynamicEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
}
export type Manifest = Record<string, ManifestChunk>;

/** The manifest's key of each screen module (app/screens.tsx imports them on demand). */
export const SCREEN_MODULES = ['planning', 'my-requests', 'my-request', 'absence-request', 'counters', 'queue', 'team-planning', 'payroll',
  'notifications', 'account', 'impersonation'].map((name) => `src/routes/${name}.tsx`);

export function readManifest(dist: string): Manifest | null {
  const file = path.join(dist, '.vite/manifest.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Manifest) : null;
}

/** The files a chunk needs before it runs: itself and its static imports, transitively (`/assets/…`). */
export function filesOf(manifest: Manifest, key: string): Set<string> {
  const files = new Set<string>();
  const stack = [key];
  const seen = new Set<string>();
  while (stack.length) {
    const next = stack.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    const chunk = manifest[next];
    if (!chunk) throw new Error(`no chunk ${next} in the manifest`);
    files.add(`/${chunk.file}`);
    stack.push(...(chunk.imports ?? []));
  }
  return files;
}

/** The key of the app's chunk: what the login's script imports on demand (main.tsx). */
export function appKey(manifest: Manifest): string {
  const [key, ...others] = manifest['index.html']?.dynamicImports ?? [];
  if (!key || others.length) throw new Error('index.html should import the app, and only it, on demand');
  return key;
}

interface Size {
  files: number;
  raw: number;
  gzip: number;
  brotli: number;
}

function measure(dist: string, files: Iterable<string>): Size {
  const size: Size = { files: 0, raw: 0, gzip: 0, brotli: 0 };
  for (const file of files) {
    const body = readFileSync(path.join(dist, file));
    size.files += 1;
    size.raw += body.length;
    size.gzip += gzipSync(body).length;
    size.brotli += brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }).length;
  }
  return size;
}

const minus = (files: Set<string>, loaded: Set<string>) => new Set([...files].filter((file) => !loaded.has(file)));

export function scriptReport(dist: string): Array<[string, Size]> {
  const assets = readdirSync(path.join(dist, 'assets')).filter((name) => name.endsWith('.js')).map((name) => `/assets/${name}`);
  const manifest = readManifest(dist);
  if (!manifest) {
    // One bundle: every screen loads all of it, the login included.
    const all = measure(dist, assets);
    return [['login', all], ['« Mon planning » after the login', { files: 0, raw: 0, gzip: 0, brotli: 0 }], ['the whole application', all]];
  }
  const login = filesOf(manifest, 'index.html');
  const app = minus(filesOf(manifest, appKey(manifest)), login);
  const loaded = new Set([...login, ...app]);
  const rows: Array<[string, Size]> = [
    ['login', measure(dist, login)],
    ['the app (router, menu) after the login', measure(dist, app)],
  ];
  for (const screen of SCREEN_MODULES) {
    rows.push([`+ ${path.basename(screen, '.tsx')} (its own files)`, measure(dist, minus(filesOf(manifest, screen), loaded))]);
  }
  const home = new Set([...loaded, ...filesOf(manifest, 'src/routes/planning.tsx')]);
  rows.push(['« Mon planning » after the login (login + app + planning)', measure(dist, home)]);
  rows.push(['the whole application', measure(dist, assets)]);
  return rows;
}

if (process.argv[1] && path.resolve(process.argv[1]).replace(/\.ts$/, '') === path.resolve(ROOT_DIR, 'bench/web-script')) {
  const args = new Map(process.argv.slice(2).map((arg) => arg.replace(/^--/, '').split('=', 2) as [string, string]));
  const dist = path.resolve(args.get('dist') ?? path.join(ROOT_DIR, 'web/dist'));
  const fmt = (n: number) => n.toLocaleString('fr-FR').replace(/\u202f|\u00a0/g, ' ');
  console.log('| what | script files | uncompressed | gzip | brotli (q4) |\n|---|---|---|---|---|');
  for (const [what, size] of scriptReport(dist)) {
    console.log(`| ${what} | ${size.files} | ${fmt(size.raw)} B | ${fmt(size.gzip)} B | ${fmt(size.brotli)} B |`);
  }
}
