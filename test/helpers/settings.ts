import { TEST_ROOT_URL } from '../../src/db/test-cluster.js';

/** Where tests find PostgreSQL: the system cluster (trust auth), never the embedded one (src/db/test-cluster.ts). */
export { TEST_ROOT_URL };

export function databaseUrl(database: string, user?: string): string {
  const url = new URL(TEST_ROOT_URL);
  url.pathname = `/${database}`;
  if (user) {
    url.username = user;
    url.password = '';
  }
  return url.toString();
}

/** The default frozen business clock of the test suite: Monday 16 November 2026, 10:00 in Paris. */
export const DEFAULT_NOW = '2026-11-16T10:00:00+01:00';

/** Every fixture account has this password. */
export const FIXTURE_PASSWORD = 'Fixture-Passw0rd!';
