/**
 * The web application's layering rules (web/.dependency-cruiser.cjs; docs/architecture.md, "The web
 * application") fail on planted wrong imports: a small tree shaped like web/src/, each import named
 * after the rule it breaks, cruised with the project's configuration. `npm test` runs the same check
 * on the real tree.
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

async function plant(files: Record<string, string>): Promise<void> {
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
}

/** dependency-cruiser on the scratch tree with the web application's configuration. */
function cruise(outputType: 'json' | 'err'): Promise<{ code: number; stdout: string }> {
  const bin = path.join(ROOT_DIR, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
  const config = path.join(ROOT_DIR, 'web/.dependency-cruiser.cjs');
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, '--config', config, '--output-type', outputType, 'web/src'], { cwd: dir },
      (error, stdout) => resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout }));
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'wfm-web-layers-'));
  await plant({
    'web/tsconfig.json': JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler', jsx: 'react-jsx' } }),
    'package.json': JSON.stringify({ type: 'module' }),
    // Allowed: a feature imports shared code and itself; a screen imports features; the app imports screens.
    'web/src/lib/format.ts': 'export const format = (x: string) => x;\n',
    'web/src/features/absences/components/card.tsx': "import { format } from '../../../lib/format';\nimport { list } from '../api/list';\nexport const card = [format, list];\n",
    'web/src/routes/requests.tsx': "import { card } from '../features/absences/components/card';\nexport const screen = card;\n",
    'web/src/app/screens.tsx': "import { screen } from '../routes/requests';\nexport const screens = [screen];\n",
    // feature-imports-another-feature
    'web/src/features/absences/api/list.ts': "import { panel } from '../../queue/api/panel';\nexport const list = panel;\n",
    // feature-imports-a-screen-or-the-app
    'web/src/features/queue/api/panel.ts': "import { queue } from '../../../routes/queue';\nexport const panel = queue;\n",
    // screen-imports-the-app
    'web/src/routes/queue.tsx': "import { title } from '../app/title';\nexport const queue = title;\n",
    'web/src/app/title.ts': "export const title = 'Temps & absences';\n",
    // shared-imports-upwards, through a type-only import
    'web/src/lib/paths.ts': "import type { list } from '../features/absences/api/list';\nexport type X = typeof list;\n",
    // no-circular
    'web/src/components/a.ts': "import { b } from './b';\nexport const a = () => b;\n",
    'web/src/components/b.ts': "import { a } from './a';\nexport const b = () => a;\n",
    // not-to-unresolvable
    'web/src/lib/missing.ts': "import { nothing } from './not-there';\nexport const m = nothing;\n",
  });
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('web application layers (dependency-cruiser)', () => {
  it('fails on each planted wrong import, naming its rule, and lets the allowed directions through', { timeout: 60_000 }, async () => {
    const json = await cruise('json');
    const { violations } = (JSON.parse(json.stdout) as { summary: { violations: Violation[] } }).summary;
    const found = [...new Set(violations
      .filter((v) => v.rule.severity === 'error')
      // A cycle is reported from each module it goes through: named once, by its two ends.
      .map((v) => (v.rule.name === 'no-circular' ? `no-circular: ${[v.from, v.to].sort().join(' ↔ ')}` : `${v.rule.name}: ${v.from} → ${v.to}`)))]
      .sort();
    expect(found).toEqual([
      'feature-imports-a-screen-or-the-app: web/src/features/queue/api/panel.ts → web/src/routes/queue.tsx',
      'feature-imports-another-feature: web/src/features/absences/api/list.ts → web/src/features/queue/api/panel.ts',
      'no-circular: web/src/components/a.ts ↔ web/src/components/b.ts',
      'not-to-unresolvable: web/src/lib/missing.ts → ./not-there',
      'screen-imports-the-app: web/src/routes/queue.tsx → web/src/app/title.ts',
      'shared-imports-upwards: web/src/lib/paths.ts → web/src/features/absences/api/list.ts',
    ]);
    const plain = await cruise('err');
    expect(plain.code).toBeGreaterThan(0);
    expect(plain.stdout).toContain('feature-imports-another-feature: web/src/features/absences/api/list.ts → web/src/features/queue/api/panel.ts');
  });
});
