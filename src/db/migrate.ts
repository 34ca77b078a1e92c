import { open, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { Settings } from 'graphile-migrate';
import { ROOT_DIR } from './root.js';

export { ROOT_DIR };
export const MIGRATIONS_DIR = path.join(ROOT_DIR, 'migrations');

async function settingsFor(connectionString: string, verbose: boolean, migrationsFolder: string): Promise<Settings> {
  const logger = verbose ? {} : { logger: (await import('./silent-logger.js')).makeSilentLogger() };
  return {
    connectionString,
    migrationsFolder,
    pgSettings: { search_path: 'pg_catalog, public' },
    afterReset: [],
    ...logger,
  };
}

/** True when migrations/current.sql holds uncommitted SQL (development only). */
export async function hasCurrentMigration(migrationsFolder = MIGRATIONS_DIR): Promise<boolean> {
  const content = await readFile(path.join(migrationsFolder, 'current.sql'), 'utf8').catch(() => '');
  return content
    .split('\n')
    .some((line) => line.trim() !== '' && (!line.trim().startsWith('--') || /^--!\s*include/.test(line.trim())));
}

/** A committed migration as graphile-migrate names it in graphile_migrate.migrations. */
export interface CommittedMigration {
  /** `000025.sql`: the number, as graphile_migrate.migrations.filename holds it. */
  filename: string;
  hash: string;
  previousHash: string | null;
}

/** graphile-migrate's committed file names (its migrationFilename.js). */
const MIGRATION_FILE = /^([0-9]+)(-[-_a-zA-Z0-9]*)?\.sql$/;

/** The `--! Key: value` header lines at the top of a committed migration (read up to the blank line). */
async function headersOf(file: string): Promise<Map<string, string>> {
  const handle = await open(file, 'r');
  try {
    let text = '';
    const buffer = Buffer.alloc(4096);
    // The headers (Previous, Hash, Message, AllowInvalidHash) end at the first line that is not one.
    for (let position = 0; ;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      text += buffer.toString('utf8', 0, bytesRead);
      position += bytesRead;
      const lines = text.split('\n');
      const ended = lines.slice(0, -1).some((line) => !line.startsWith('--! '));
      if (ended || bytesRead === 0) {
        const headers = new Map<string, string>();
        for (const line of lines) {
          const match = /^--! ([A-Z][a-zA-Z0-9_]*)(?::(.*))?$/.exec(line);
          if (!match) break;
          headers.set(match[1]!, (match[2] ?? '').trim());
        }
        return headers;
      }
    }
  } finally {
    await handle.close();
  }
}

/**
 * The chain of committed migrations read from their headers only (`--! Previous`, `--! Hash`),
 * each linked to the one before it as graphile-migrate links them; throws on a broken chain.
 * graphile-migrate itself reads and splits every file whole (4.5 MB, about 0.1 s of CPU at each
 * start), which a database already at the last migration does not need.
 */
export async function committedMigrations(migrationsFolder = MIGRATIONS_DIR): Promise<CommittedMigration[]> {
  const folder = path.join(migrationsFolder, 'committed');
  const names = (await readdir(folder).catch(() => [] as string[])).filter((name) => MIGRATION_FILE.test(name));
  const migrations = await Promise.all(names.map(async (name) => {
    const headers = await headersOf(path.join(folder, name));
    const previous = headers.get('Previous');
    const hash = headers.get('Hash');
    if (!previous || !hash) throw new Error(`Invalid committed migration '${name}': no 'Previous' or 'Hash' header`);
    return { filename: `${MIGRATION_FILE.exec(name)![1]}.sql`, hash, previousHash: previous === '-' ? null : previous };
  }));
  // Zero-padded numbers: the order of the code units (graphile-migrate compares in 'en', the same here).
  migrations.sort((a, b) => (a.filename < b.filename ? -1 : a.filename > b.filename ? 1 : 0));
  migrations.forEach((migration, i) => {
    const expected = i === 0 ? null : migrations[i - 1]!.hash;
    if (migration.previousHash !== expected) {
      throw new Error(`Committed migration '${migration.filename}' follows '${migration.previousHash ?? '-'}', not '${expected ?? '-'}'`);
    }
  });
  return migrations;
}

/**
 * True when the database's last applied migration (graphile_migrate.migrations) is the last
 * committed one, by number and hash: nothing is left to apply. False when it is behind, when
 * it never was migrated, or when it holds another chain (graphile-migrate then applies or refuses).
 */
export async function atLastMigration(connectionString: string, migrationsFolder = MIGRATIONS_DIR): Promise<boolean> {
  const last = (await committedMigrations(migrationsFolder)).at(-1);
  if (!last) return false;
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const { rows } = await client.query<{ filename: string; hash: string }>(
      'select filename, hash from graphile_migrate.migrations order by filename desc limit 1',
    ).catch((error: { code?: string }) => {
      // No graphile_migrate schema yet (a new database): never migrated.
      if (error.code === '3F000' || error.code === '42P01') return { rows: [] };
      throw error;
    });
    return rows[0]?.filename === last.filename && rows[0]?.hash === last.hash;
  } finally {
    await client.end();
  }
}

/**
 * Applies the committed migrations; with `includeCurrent`, then runs current.sql once
 * (the development workflow and the test templates use it; `npm start` does not).
 * `migrationsFolder` defaults to the project's (the sql/ workflow test passes a copy).
 * A database already at the last committed migration (a restart, a respawn after a crash),
 * with no current.sql to run, is left as it is without loading graphile-migrate: returns
 * 'up to date'; else 'migrated' once graphile-migrate has run.
 */
export async function migrateDatabase(
  connectionString: string,
  { includeCurrent = false, verbose = false, migrationsFolder = MIGRATIONS_DIR } = {},
): Promise<'up to date' | 'migrated'> {
  const withCurrent = includeCurrent && (await hasCurrentMigration(migrationsFolder));
  if (!withCurrent && (await atLastMigration(connectionString, migrationsFolder))) return 'up to date';
  const settings = await settingsFor(withApplicationName(connectionString, MIGRATE_APPLICATION_NAME), verbose, migrationsFolder);
  const { migrate, watch } = await import('graphile-migrate');
  try {
    await migrate(settings);
    if (withCurrent) await watch(settings, true);
  } finally {
    await releaseMigratePools(connectionString);
  }
  return 'migrated';
}

/** The application_name of graphile-migrate's connections (pg_stat_activity tells them apart). */
export const MIGRATE_APPLICATION_NAME = 'wfm-migrate';

/** The connection string with an application_name (left as it is when it is not a URL). */
function withApplicationName(connectionString: string, name: string): string {
  try {
    const url = new URL(connectionString);
    url.searchParams.set('application_name', name);
    return url.toString();
  } catch {
    return connectionString;
  }
}

/**
 * graphile-migrate keeps each database's pool 200 ms after its last use and ends the whole process
 * (`process.exit(1)`) when an idle connection of that pool gets an error: a database dropped, its
 * backends terminated or PostgreSQL restarted in that window (a test's cleanup; a restart just after
 * the service's start) ended the process. Its pools are closed as soon as its work is done, and the
 * migration returns once their connections have left the database (at most 5 s).
 */
async function releaseMigratePools(connectionString: string): Promise<void> {
  const { clearAllPools } = await import('graphile-migrate/dist/pgReal.js');
  clearAllPools();
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    for (let waited = 0; waited < 5000; waited += 20) {
      const { rows } = await client.query(
        'select 1 from pg_stat_activity where datname = current_database() and application_name = $1 and pid <> pg_backend_pid()',
        [MIGRATE_APPLICATION_NAME]);
      if (rows.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await client.end();
  }
}
