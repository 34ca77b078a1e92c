/**
 * migrations/schema.sql (issue 31 point 6): `npm run db:commit` writes the pg_dump of the schema the
 * committed migrations produce, through graphile-migrate's afterAllMigrations hook, and the drift
 * check refuses a schema.sql that is not that dump. On a copy of sql/ and migrations/ (a temporary
 * project): a probe function is added in sql/, written into current.sql, committed, dumped.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/db/migrate.js';
import { normaliseDump } from '../../src/db/schema-dump.js';
import { commitCurrent, driftCheck, writeCurrent } from '../../src/db/sql-source.js';
import { TEST_ROOT_URL } from '../helpers/settings.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'wfm-schema-dump-'));
  await cp(path.join(ROOT_DIR, 'sql'), path.join(root, 'sql'), { recursive: true });
  // migrations/fixtures is a relative link to ../sql: kept as it is, so that it names the copy.
  await cp(path.join(ROOT_DIR, 'migrations'), path.join(root, 'migrations'), { recursive: true, verbatimSymlinks: true });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('migrations/schema.sql', () => {
  it('normalised: no pg_dump version line, no per-run \\restrict key, a header saying where it comes from', () => {
    const dump = normaliseDump('--\n-- Dumped from database version 15.20\n-- Dumped by pg_dump version 15.20\n\\restrict abc\n\nCREATE SCHEMA app_public;\n\n\n\n\\unrestrict abc\n');
    expect(dump).toBe(
      '-- Written by `npm run db:commit` (pg_dump --schema-only of app_public, app_hidden, app_private after the committed migrations):\n' +
        '-- never edit it; review its diff with the migration\'s.\n--\n\nCREATE SCHEMA app_public;\n',
    );
  });

  it('db:commit writes it from the migrated shadow database; the drift check accepts it, and refuses it edited', { timeout: 900_000 }, async () => {
    const project = { root, rootUrl: TEST_ROOT_URL };
    await writeFile(path.join(root, 'sql', 'schema_dump_probe.sql'),
      "create or replace function app_private.schema_dump_probe() returns int language sql immutable as 'select 31';\n");
    const order = await readFile(path.join(root, 'sql', 'ORDER'), 'utf8');
    await writeFile(path.join(root, 'sql', 'ORDER'), order.replace('\nfinalize.sql', '\nschema_dump_probe.sql\nfinalize.sql'));
    await writeCurrent(project);
    const before = await readFile(path.join(root, 'migrations', 'schema.sql'), 'utf8');
    expect(before).not.toContain('schema_dump_probe');

    const migration = await commitCurrent(project, 'schema dump probe');
    expect(migration).toMatch(/^sha1:[0-9a-f]{40}$/);
    const after = await readFile(path.join(root, 'migrations', 'schema.sql'), 'utf8');
    expect(after).toContain('CREATE FUNCTION app_private.schema_dump_probe() RETURNS integer');
    expect(after).not.toMatch(/^\\restrict /m);
    // The repository's own file is the same dump, but for what this test added (and for what the
    // branch's current.sql holds until it is committed).
    expect(after.length).toBeGreaterThan(before.length);

    // current.sql is empty now: the drift check compares schema.sql with a fresh dump.
    expect(await driftCheck(project)).toBeNull();
    await writeFile(path.join(root, 'migrations', 'schema.sql'), after.replace('RETURNS integer', 'RETURNS bigint'));
    expect(await driftCheck(project)).toBe(
      'migrations/schema.sql differs from the schema the committed migrations produce: it is written by npm run db:commit; ' +
        'after a hand edit of a committed migration, restore the migration.',
    );
  });
});
