import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { migrate, watch, type Settings } from 'graphile-migrate';
import { ROOT_DIR } from './root.js';
import { makeSilentLogger } from './silent-logger.js';

export { ROOT_DIR };
export const MIGRATIONS_DIR = path.join(ROOT_DIR, 'migrations');

function settingsFor(connectionString: string, verbose: boolean, migrationsFolder: string): Settings {
  return {
    connectionString,
    migrationsFolder,
    pgSettings: { search_path: 'pg_catalog, public' },
    afterReset: [],
    ...(verbose ? {} : { logger: makeSilentLogger() }),
  };
}

/** True when migrations/current.sql holds uncommitted SQL (development only). */
export async function hasCurrentMigration(migrationsFolder = MIGRATIONS_DIR): Promise<boolean> {
  const content = await readFile(path.join(migrationsFolder, 'current.sql'), 'utf8').catch(() => '');
  return content
    .split('\n')
    .some((line) => line.trim() !== '' && (!line.trim().startsWith('--') || /^--!\s*include/.test(line.trim())));
}

/**
 * Applies the committed migrations; with `includeCurrent`, then runs current.sql once
 * (the development workflow and the test templates use it; `npm start` does not).
 * `migrationsFolder` defaults to the project's (the sql/ workflow test passes a copy).
 */
export async function migrateDatabase(
  connectionString: string,
  { includeCurrent = false, verbose = false, migrationsFolder = MIGRATIONS_DIR } = {},
): Promise<void> {
  const settings = settingsFor(connectionString, verbose, migrationsFolder);
  await migrate(settings);
  if (includeCurrent && (await hasCurrentMigration(migrationsFolder))) {
    await watch(settings, true);
  }
}
