/**
 * The migration check of a start (src/db/migrate.ts): a database already at the last committed
 * migration is left as it is without graphile-migrate reading every file (a respawn after a crash,
 * BENCHMARKS.md "Start-up (issue 31)"), and one that is behind, or new, is still migrated before it
 * is served: a service never serves an un-migrated schema.
 */
import { cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, atLastMigration, committedMigrations, migrateDatabase } from '../../src/db/migrate.js';
import { createEmptyDatabase } from './cli-helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/** A copy of migrations/ whose committed folder stops before the last migration. */
async function migrationsWithoutTheLast(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'wfm-migrations-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await cp(MIGRATIONS_DIR, dir, { recursive: true });
  const names = (await readdir(path.join(dir, 'committed'))).filter((name) => name.endsWith('.sql')).sort();
  await rm(path.join(dir, 'committed', names.at(-1)!));
  return dir;
}

/** The application names of the connections to the database other than this query's own. */
async function otherConnections(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      'select application_name as name from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    return rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

async function lastApplied(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ filename: string }>('select filename from graphile_migrate.migrations order by filename desc limit 1');
    return rows[0]?.filename ?? null;
  } finally {
    await client.end();
  }
}

describe('the migration check of a start', () => {
  it('reads the chain of committed migrations from their headers, as graphile-migrate links them', async () => {
    const chain = await committedMigrations();
    const files = (await readdir(path.join(MIGRATIONS_DIR, 'committed'))).filter((name) => name.endsWith('.sql'));
    expect(chain).toHaveLength(files.length);
    expect(chain[0]!.previousHash).toBeNull();
    for (let i = 1; i < chain.length; i += 1) expect(chain[i]!.previousHash).toBe(chain[i - 1]!.hash);
    expect(chain.at(-1)!.filename).toBe(`${files.sort().at(-1)!.split('-')[0]}.sql`);

    // A file whose Previous does not follow the one before it is refused, as graphile-migrate refuses it.
    const broken = await migrationsWithoutTheLast();
    await writeFile(path.join(broken, 'committed', '999999-planted.sql'), '--! Previous: sha1:0000\n--! Hash: sha1:1111\n\nselect 1;\n');
    await expect(committedMigrations(broken)).rejects.toThrow(/follows 'sha1:0000'/);
  });

  it('migrates a new database and one that is behind; leaves one at the last migration as it is', async () => {
    const database = await createEmptyDatabase();
    cleanups.push(database.drop);
    const last = (await committedMigrations()).at(-1)!;

    // New: no graphile_migrate schema at all.
    expect(await atLastMigration(database.url)).toBe(false);

    // One migration behind (the previous release's schema): not at the last migration, and migrated
    // to it before anything is served.
    const older = await migrationsWithoutTheLast();
    expect(await migrateDatabase(database.url, { migrationsFolder: older })).toBe('migrated');
    // graphile-migrate's connections have left when it returns: it kept its pool 200 ms and ended
    // the whole process when an idle connection was terminated then (a drop, a restart; CI of
    // 2026-11-28 lost a run to this test's own cleanup).
    expect(await otherConnections(database.url)).toEqual([]);
    expect(await atLastMigration(database.url, older)).toBe(true);
    expect(await atLastMigration(database.url)).toBe(false);
    // The database holds the previous release's last migration, then the last one once migrated.
    const previous = (await committedMigrations()).at(-2)!;
    expect(await lastApplied(database.url)).toBe(previous.filename);
    expect(await migrateDatabase(database.url)).toBe('migrated');
    expect(await otherConnections(database.url)).toEqual([]);
    expect(await lastApplied(database.url)).toBe(last.filename);

    // At the last migration (a restart): nothing to apply, graphile-migrate is not run.
    expect(await atLastMigration(database.url)).toBe(true);
    expect(await migrateDatabase(database.url)).toBe('up to date');

    // The same number with another hash (a database migrated from another history): not taken as
    // migrated, graphile-migrate decides.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query('update graphile_migrate.migrations set hash = $1 where filename = $2', ['sha1:planted', last.filename]);
    } finally {
      await client.end();
    }
    expect(await atLastMigration(database.url)).toBe(false);
  }, 240_000);
});
