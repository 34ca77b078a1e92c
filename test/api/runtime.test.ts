/**
 * Run it like a server (issue 31 points 1 and 3): the Node.js version stated once (package.json
 * engines, .node-version) and refused in one sentence when older, and the build's freshness logic
 * (scripts/freshness.mjs) that decides when `npm start` compiles.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/db/migrate.js';
import { minimumVersion, nodeVersionProblem, requiredEngines } from '../../src/runtime.js';
import { BUILDS, ensureBuilt, hasTool, isStale } from '../../scripts/freshness.mjs';

describe('the Node.js version', () => {
  it('is stated once: engines, and .node-version names the same major', async () => {
    const engines = requiredEngines();
    expect(engines).toBe('>=22');
    expect((await readFile(path.join(ROOT_DIR, '.node-version'), 'utf8')).trim()).toBe(String(minimumVersion(engines)[0]));
    const manifest = JSON.parse(await readFile(path.join(ROOT_DIR, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    // The `node` package npm puts first on PATH satisfies it.
    expect(Number(manifest.dependencies.node!.split('.')[0])).toBeGreaterThanOrEqual(minimumVersion(engines)[0]);
  });

  it('an older Node is refused with one sentence saying which version and how npm start provides it', () => {
    expect(nodeVersionProblem('v22.0.0', '>=22')).toBeNull();
    expect(nodeVersionProblem('v24.1.0', '>=22.12')).toBeNull();
    expect(nodeVersionProblem('v22.12.0', '>=22.12')).toBeNull();
    expect(nodeVersionProblem('v20.20.2', '>=22')).toBe(
      'This service needs Node.js 22 or later but runs on Node.js 20.20.2: start it with `npm start` (npm runs the ' +
        'Node.js 22 of the `node` package in node_modules), or install Node.js 22 or later (docs/running.md, "Node.js").',
    );
    expect(nodeVersionProblem('v22.11.9', '>=22.12')).toMatch(/^This service needs Node\.js 22\.12 or later but runs on Node\.js 22\.11\.9: /);
    expect(() => minimumVersion('^22')).toThrow('package.json engines.node must read ">=MAJOR[.MINOR[.PATCH]]" (got "^22").');
  });

  // The machine's own Node (Debian's, 20 here) is older than the service's: started outside npm, the
  // entry point stops on the check before it loads a dependency.
  const system = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
  const systemMajor = system.status === 0 ? Number(/^v(\d+)/.exec(system.stdout)?.[1]) : null;
  it.runIf(systemMajor !== null && systemMajor < 22)('started by an older Node outside npm, npm start\'s entry stops with that sentence and code 1', () => {
    for (const entry of ['src/cli/start.ts', 'worker/run.ts', 'src/cli/db-reset.ts']) {
      const result = spawnSync('/usr/bin/node', ['--import', 'tsx', entry], {
        cwd: ROOT_DIR, encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' }, timeout: 60_000,
      });
      expect(result.status).toBe(1);
      expect(result.stderr.trim()).toBe(nodeVersionProblem(system.stdout.trim(), '>=22'));
      expect(result.stdout).toBe('');
    }
  });
});

describe('the build freshness (scripts/freshness.mjs)', () => {
  let root: string;
  const at = (file: string, seconds: number) => utimes(path.join(root, file), seconds, seconds);

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'wfm-freshness-'));
    await mkdir(path.join(root, 'src/cli'), { recursive: true });
    await mkdir(path.join(root, 'worker'), { recursive: true });
    await writeFile(path.join(root, 'package.json'), '{"name":"t","private":true}');
    await writeFile(path.join(root, 'src/cli/start.ts'), 'export {};');
    await writeFile(path.join(root, 'worker/run.ts'), 'export {};');
    await at('src/cli/start.ts', 1_000_000);
    await at('worker/run.ts', 1_000_000);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('stale when the output is missing or older than any source file, fresh otherwise', async () => {
    const { output, sources } = BUILDS.server;
    expect(await isStale(output, sources, root)).toBe(true);
    await mkdir(path.join(root, 'dist/src/cli'), { recursive: true });
    await writeFile(path.join(root, output), '');
    await at(output, 2_000_000);
    expect(await isStale(output, sources, root)).toBe(false);
    // A source edited after the build, however deep.
    await at('worker/run.ts', 2_000_001);
    expect(await isStale(output, sources, root)).toBe(true);
    await at('worker/run.ts', 1_000_000);
    await mkdir(path.join(root, 'src/http/routes'), { recursive: true });
    await writeFile(path.join(root, 'src/http/routes/new.ts'), 'export {};');
    expect(await isStale(output, sources, root)).toBe(true);
  });

  it('without the build tool (a production install): a fresh build runs, an old one runs with a warning, a missing one is an error saying what to do', async () => {
    expect(hasTool('typescript', root)).toBe(false);
    expect(hasTool('typescript', ROOT_DIR)).toBe(true);
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    await expect(ensureBuilt('server', { root, log })).rejects.toThrow(
      'dist/src/cli/start.js is missing and typescript is not installed (a production install): run `npm run build` in a ' +
        'full install (npm ci) and install the built tree with `npm ci --omit=dev`.',
    );
    await mkdir(path.join(root, 'dist/src/cli'), { recursive: true });
    await writeFile(path.join(root, BUILDS.server.output), '');
    await at(BUILDS.server.output, 2_000_000);
    expect(await ensureBuilt('server', { root, log })).toBe('fresh');
    expect(lines).toEqual([]);
    await at('src/cli/start.ts', 3_000_000);
    expect(await ensureBuilt('server', { root, log })).toBe('kept');
    expect(lines).toEqual(['warning: dist/src/cli/start.js is older than its sources and typescript is not installed: running the build as it is.']);
    // TypeScript alone (an optional peer of a runtime package comes with it): no build without the type packages.
    await mkdir(path.join(root, 'node_modules/typescript'), { recursive: true });
    await writeFile(path.join(root, 'node_modules/typescript/package.json'), '{"name":"typescript","version":"5.9.3"}');
    expect(hasTool('typescript', root)).toBe(true);
    expect(await ensureBuilt('server', { root, log })).toBe('kept');
    expect(lines[1]).toBe('warning: dist/src/cli/start.js is older than its sources and @types/node is not installed: running the build as it is.');
  });

  it('each command of scripts/launch.mjs runs the build of an entry that exists in the sources, as package.json names it', async () => {
    const manifest = JSON.parse(await readFile(path.join(ROOT_DIR, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(manifest.scripts.start).toMatch(/ node scripts\/launch\.mjs start$/);
    expect(manifest.scripts.dev).toContain('tsx watch src/cli/start.ts');
    const launch = await readFile(path.join(ROOT_DIR, 'scripts/launch.mjs'), 'utf8');
    const entries = [...launch.matchAll(/^  '?([a-z:]+)'?: \{ entry: 'dist\/([^']+)\.js'/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(entries.map(([name]) => name)).toEqual(['start', 'worker', 'job', 'db:reset', 'org:import']);
    for (const [name, entry] of entries) {
      if (name !== 'start') expect(manifest.scripts[name]).toBe(`node scripts/launch.mjs ${name}`);
      expect(await readFile(path.join(ROOT_DIR, `${entry}.ts`), 'utf8')).toMatch(/requireSupportedNode|check-node\.js/);
    }
  });
});
