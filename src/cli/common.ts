/** Shared pieces of the command-line entry points (npm start, db:reset, org:import). */
import path from 'node:path';
import type pg from 'pg';
import { ConfigError, withOperatingSystemUser } from '../config.js';
import { hasCurrentMigration, migrateDatabase } from '../db/migrate.js';
import { sessionOptions } from '../db/pool.js';
import { ensureRoles, ROLES } from '../db/roles.js';

/** An error whose message is the whole story for the person at the terminal. */
export class CliError extends Error {}

/** `./.data` unless DATA_DIR relocates it; relative paths are taken from the working directory. */
export function dataDirFrom(env: NodeJS.ProcessEnv): string {
  return path.resolve(env.DATA_DIR && env.DATA_DIR.trim() !== '' ? env.DATA_DIR : '.data');
}

export function requireDatabaseUrl(env: NodeJS.ProcessEnv, command: string): string {
  const url = env.DATABASE_URL;
  if (!url || url.trim() === '') {
    throw new CliError(
      `DATABASE_URL is required by ${command} (the owner connection, e.g. postgres://owner:password@localhost:5432/wfm).`,
    );
  }
  return withOperatingSystemUser(url, env);
}

/**
 * Session settings of the owner connections of the commands: the business time zone (so
 * that "today" is right) and the public URL (links in the e-mails an import queues).
 */
export function cliSessionOptions(env: NodeJS.ProcessEnv, publicUrl?: string): string {
  return sessionOptions({
    businessTimeZone: env.TZ_BUSINESS || 'Europe/Paris',
    publicUrl: publicUrl ?? env.PUBLIC_URL ?? `http://localhost:${env.PORT || 8000}`,
  });
}

/** ensureRoles, explaining what to do when the owner may not create roles. */
export async function ensureServiceRoles(client: pg.ClientBase, authenticatorPassword?: string): Promise<void> {
  try {
    await ensureRoles(client, authenticatorPassword);
  } catch (error) {
    if ((error as { code?: string }).code === '42501') {
      const { rows } = await client.query<{ user: string }>('select current_user as "user"');
      const user = rows[0]?.user ?? 'the DATABASE_URL user';
      throw new CliError(
        `The database user "${user}" may not create or grant the service roles ` +
          `(${ROLES.visitor}, ${ROLES.api}, ${ROLES.authenticator}): ${(error as Error).message}. ` +
          `It needs CREATEROLE the first time (ALTER ROLE "${user}" CREATEROLE;), or a superuser creates the roles ` +
          `beforehand: CREATE ROLE ${ROLES.visitor} NOLOGIN; CREATE ROLE ${ROLES.api} NOLOGIN; ` +
          `CREATE ROLE ${ROLES.authenticator} LOGIN NOINHERIT; GRANT ${ROLES.visitor} TO ${ROLES.authenticator}; ` +
          `GRANT ${ROLES.api} TO "${user}";`,
      );
    }
    throw error;
  }
}

/**
 * Applies the committed migrations and, while migrations/current.sql is not empty
 * (development checkouts), current.sql too, saying so on one line.
 */
export async function migrate(connectionString: string, log: (line: string) => void): Promise<void> {
  const includeCurrent = await hasCurrentMigration();
  if (includeCurrent) {
    log('warning: migrations/current.sql is not empty (development checkout): applying it after the committed migrations.');
  }
  try {
    await migrateDatabase(connectionString, { includeCurrent });
  } catch (error) {
    const message = (error as Error).message;
    throw new CliError(
      `Migration failed: ${message}` +
        (includeCurrent
          ? '\nIf migrations/current.sql changed since this database was migrated, it cannot be applied again on top ' +
            'of itself: reset the database (npm run db:reset with DATABASE_URL; for the embedded database, remove ' +
            'the data directory).'
          : ''),
    );
  }
}

/** True when the database holds any organisation data (establishment, employee or account). */
export async function holdsOrganisation(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ any: boolean }>(
    `select exists (select 1 from app_public.establishments)
         or exists (select 1 from app_public.employees)
         or exists (select 1 from app_public.accounts) as any`,
  );
  return rows[0]!.any;
}

function describe(error: unknown): string {
  const pgError = error as { code?: string; message?: string; errors?: unknown[]; address?: string; port?: number };
  if (pgError?.code === 'ECONNREFUSED' || (error instanceof AggregateError && !pgError.message)) {
    return 'cannot connect to the database: connection refused (is PostgreSQL running, and is DATABASE_URL right?)';
  }
  if (pgError?.code === 'ENOTFOUND') return `cannot connect to the database: unknown host (${pgError.message})`;
  if (pgError?.code === '3F000' || pgError?.code === '42883' || pgError?.code === '42P01') {
    return `${pgError.message} (is the database migrated? npm start or npm run db:reset migrate it)`;
  }
  return pgError?.message || String(error);
}

/**
 * Runs a command: its resolved value is the exit code. A CliError or a configuration error
 * prints its message; anything else prints the error and its stack. Always exits
 * explicitly (libraries' exit hooks must not decide the code).
 */
export function runCommand(name: string, command: () => Promise<number>): void {
  command().then(
    (code) => process.exit(code),
    (error: unknown) => {
      if (error instanceof CliError || error instanceof ConfigError) {
        console.error(`${name}: ${error.message}`);
      } else {
        console.error(`${name}: ${describe(error)}`);
        if (process.env.DEBUG && error instanceof Error && error.stack) console.error(error.stack);
      }
      process.exit(1);
    },
  );
}
