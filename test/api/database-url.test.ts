/**
 * A DATABASE_URL without a user name (postgres:///db?host=/var/run/postgresql) connects as
 * the operating-system user, as libpq does (issue 11, finding 10). node-postgres falls back
 * to $USER, which services and CI often do not set: "no PostgreSQL user name specified".
 */
import { userInfo } from 'node:os';
import { parse } from 'pg-connection-string';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createPool } from '../../src/db/pool.js';
import { requireDatabaseUrl } from '../../src/cli/common.js';
import { workerConfigFromEnv } from '../../worker/config.js';

const osUser = userInfo().username;
const SECRET = 'x'.repeat(32);

describe('DATABASE_URL without a user name', () => {
  it.each([
    'postgres:///wfm?host=/var/run/postgresql',
    'postgresql://localhost:5432/wfm',
    'postgres://:secret@localhost/wfm',
  ])('%s: the server, the commands and the worker connect as the operating-system user', (url) => {
    const config = loadConfig({ DATABASE_URL: url, JWT_SECRET: SECRET });
    for (const resolved of [config.databaseUrl, config.authDatabaseUrl, requireDatabaseUrl({ DATABASE_URL: url }, 'test'),
      workerConfigFromEnv({ DATABASE_URL: url }).databaseUrl]) {
      const parsed = parse(resolved);
      expect(parsed.user).toBe(osUser);
      const original = parse(url);
      expect([parsed.host, parsed.database, parsed.password ?? '']).toEqual([original.host, original.database, original.password ?? '']);
    }
  });

  it('a URL that names its user keeps it', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://owner:pw@db.example:5433/wfm', JWT_SECRET: SECRET });
    expect(config.databaseUrl).toBe('postgres://owner:pw@db.example:5433/wfm');
  });

  it('the request pool asks PostgreSQL for the operating-system user (not "no PostgreSQL user name specified")', async () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://127.0.0.1:5432/postgres', JWT_SECRET: SECRET });
    const pool = createPool(config.authDatabaseUrl, config, 1);
    try {
      const outcome = await pool.query<{ user: string }>('select current_user as user')
        .then((result) => result.rows[0]!.user, (error: Error) => error.message);
      // Connected as that user, or refused by the server for that user: either way it was asked.
      expect(outcome === osUser || outcome.includes(`"${osUser}"`), outcome).toBe(true);
    } finally {
      await pool.end();
    }
  });
});
