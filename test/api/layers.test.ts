/**
 * The layering rules of .dependency-cruiser.cjs (docs/architecture.md, "Layers") fail on planted
 * wrong imports: a small tree of modules, each import named after the rule it breaks, cruised
 * with the project's configuration. `npm test` runs the same check on the real tree.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/db/migrate.js';

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
}

let dir: string;

/** Writes `files` (path → content) under the scratch tree. */
async function plant(files: Record<string, string>): Promise<void> {
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
}

/** dependency-cruiser on the scratch tree with the project's configuration: its exit code and output. */
function cruise(outputType: 'json' | 'err'): Promise<{ code: number; stdout: string }> {
  const bin = path.join(ROOT_DIR, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
  const config = path.join(ROOT_DIR, '.dependency-cruiser.cjs');
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, '--config', config, '--output-type', outputType, 'src', 'worker'], { cwd: dir },
      (error, stdout) => resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout }));
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'wfm-layers-'));
  await plant({
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }),
    'package.json': JSON.stringify({ type: 'module' }),
    'src/config.ts': 'export const config = {};\n',
    'src/http/errors.ts': 'export class ApiError extends Error {}\n',
    'src/backoffice/sessions.ts': 'export const cookie = "wfm_session";\n',
    'src/backoffice/views.ts': 'export const views = [];\n',
    'test/helpers/free-port.ts': 'export const freePort = () => 0;\n',
    // Allowed: db imports config and itself.
    'src/db/pool.ts': "import { config } from '../config.js';\nexport const pool = config;\n",
    // db-imports-nothing-above
    'src/db/reachable.ts': "import { ApiError } from '../http/errors.js';\nimport { pool } from './pool.js';\nexport const x = [ApiError, pool];\n",
    // auth-not-backoffice, through a type-only import
    'src/auth/jwt.ts': "import type { views } from '../backoffice/views.js';\nexport type X = typeof views;\n",
    // auth-not-backoffice again: the former known exception (the session cookie, now src/auth/sessions.ts) is no exception any more.
    'src/auth/middleware.ts': "import { cookie } from '../backoffice/sessions.js';\nexport const y = cookie;\n",
    // production-not-bench-or-test
    'worker/jobs.ts': "import { freePort } from '../test/helpers/free-port.js';\nexport const z = freePort;\n",
    // no-cycles
    'src/http/router.ts': "import { stream } from './stream.js';\nexport const router = () => stream;\n",
    'src/http/stream.ts': "import { router } from './router.js';\nexport const stream = () => router;\n",
  });
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('layering check (dependency-cruiser)', () => {
  it('fails on each planted wrong import, naming its rule, with no known exception left', { timeout: 60_000 }, async () => {
    const json = await cruise('json');
    const { violations } = (JSON.parse(json.stdout) as { summary: { violations: Violation[] } }).summary;
    const found = violations
      .filter((v) => v.rule.severity === 'error')
      // A cycle is reported once, from whichever of its modules was reached first.
      .map((v) => (v.rule.name === 'no-cycles' ? `no-cycles: ${[v.from, v.to].sort().join(' ↔ ')}` : `${v.rule.name}: ${v.from} → ${v.to}`))
      .sort();
    expect(found).toEqual([
      'auth-not-backoffice: src/auth/jwt.ts → src/backoffice/views.ts',
      'auth-not-backoffice: src/auth/middleware.ts → src/backoffice/sessions.ts',
      'db-imports-nothing-above: src/db/reachable.ts → src/http/errors.ts',
      'no-cycles: src/http/router.ts ↔ src/http/stream.ts',
      'production-not-bench-or-test: worker/jobs.ts → test/helpers/free-port.ts',
    ]);
    const known = violations.filter((v) => v.rule.severity === 'ignore').map((v) => `${v.from} → ${v.to}`);
    expect(known).toEqual([]);
    // What npm test reads: the exit code of the plain run (one per error).
    const plain = await cruise('err');
    expect(plain.code).toBe(found.length);
    expect(plain.stdout).toContain('db-imports-nothing-above: src/db/reachable.ts → src/http/errors.ts');
  });
});
