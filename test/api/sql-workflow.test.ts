/**
 * The workflow of docs/architecture.md ("Migrations"), on a copy of sql/ and migrations/:
 * edit a rule in sql/, the drift check names it; `npm run db:current` brings the check back
 * to green; under CI the uncommitted current.sql fails until `npm run db:commit`.
 */
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/db/migrate.js';
import { SCRIPTS, commandEnv, runCommand } from './cli-helpers.js';

let dir: string;

const TIMEOUT = 240_000;
const dbSql = (args: string[], ci = false) =>
  runCommand(SCRIPTS.dbSql, [...args, '--dir', dir], commandEnv({ WFM_REQUIRE_COMMITTED_MIGRATIONS: ci ? '1' : undefined }), TIMEOUT);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'wfm-sql-workflow-'));
  for (const folder of ['sql', 'migrations']) {
    await cp(path.join(ROOT_DIR, folder), path.join(dir, folder), { recursive: true, verbatimSymlinks: true });
  }
  // A working checkout may hold uncommitted SQL in current.sql (it may even include the file
  // edited below): the copy starts from a committed state, as main does.
  const current = await readFile(path.join(dir, 'migrations/current.sql'), 'utf8');
  if (/^--!include /m.test(current)) {
    const committed = await dbSql(['commit', 'the working checkout\'s current.sql']);
    if (committed.code !== 0) throw new Error(`db:commit of the copy failed:\n${committed.stdout}${committed.stderr}`);
  }
}, 4 * TIMEOUT);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});


describe('sql/ is what runs', () => {
  it('a rule edited in sql/ fails the drift check by name until db:current, and CI wants it committed', { timeout: TIMEOUT * 4 }, async () => {
    // Edit the first function of the absence rules: one more line in its body.
    const file = path.join(dir, 'sql/absences/rules.sql');
    const text = await readFile(file, 'utf8');
    const match = /^create or replace function (\w+\.\w+)\([^]*?\$\$\n/m.exec(text);
    expect(match).not.toBeNull();
    const name = match![1]!;
    const at = match!.index + match![0].length;
    await writeFile(file, `${text.slice(0, at)}  -- edited by the workflow test\n${text.slice(at)}`);

    const drifted = await dbSql(['check']);
    expect(drifted.code, drifted.stdout + drifted.stderr).toBe(1);
    expect(drifted.stderr).toMatch(new RegExp(`function ${name.replace('.', '\\.')}\\([^)]*\\): differs \\(sql/absences/rules\\.sql\\)`));
    expect(drifted.stderr).toContain('npm run db:current');

    const current = await dbSql(['current']);
    expect(current.code, current.stdout + current.stderr).toBe(0);
    const currentSql = await readFile(path.join(dir, 'migrations/current.sql'), 'utf8');
    expect(currentSql).toContain('--!include absences/rules.sql\n--!include finalize.sql');

    // Under CI the drift is gone, and what is left is the uncommitted current.sql.
    const uncommitted = await dbSql(['check'], true);
    expect(uncommitted.code).toBe(1);
    expect(uncommitted.stderr).not.toContain('differ');
    expect(uncommitted.stderr).toContain('migrations/current.sql is not empty');
    expect(uncommitted.stderr).toContain('npm run db:commit');

    const before = await readdir(path.join(dir, 'migrations/committed'));
    const committed = await dbSql(['commit', 'workflow test edits a rule']);
    expect(committed.code, committed.stdout + committed.stderr).toBe(0);
    const added = (await readdir(path.join(dir, 'migrations/committed'))).filter((f) => !before.includes(f));
    expect(added).toHaveLength(1);
    expect(added[0]).toMatch(/-workflow-test-edits-a-rule\.sql$/);
    const migration = await readFile(path.join(dir, 'migrations/committed', added[0]!), 'utf8');
    expect(migration).toContain('-- edited by the workflow test');
    // The state now records the edited file and the new migration: the next db:current starts from here.
    const state = JSON.parse(await readFile(path.join(dir, 'migrations/sql-state.json'), 'utf8'));
    expect(state.migration).toBe(/^--! Hash: (\S+)$/m.exec(migration)![1]);
    expect(state.files['absences/rules.sql']).toBe(createHash('sha256').update(await readFile(file)).digest('hex'));

    const clean = await dbSql(['check'], true);
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
  });
});
