/**
 * `npm run test:pgbouncer [-- files...]`: vitest files with every test server's connections
 * through PgBouncer in transaction pooling mode (test/helpers/pgbouncer.ts;
 * TEST_PGBOUNCER_PORT routes startTestEnv's pool). Without files: the HTTP files below,
 * those that start their server with startTestEnv (the command-line, browser, multi-process
 * and fuzz files start processes or browsers of their own). BENCHMARKS.md, "Past one process".
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT_DIR } from '../src/db/migrate.js';
import { startPgBouncer } from './helpers/pgbouncer.js';

export const PGBOUNCER_FILES = [
  'absence-types', 'absences', 'absences-decisions', 'access', 'account-activation', 'audit-log', 'auth-me',
  'auth-session', 'auth-token', 'authorisation-matrix', 'backoffice-absences', 'backoffice-org', 'backoffice-session',
  'body-robustness', 'counters', 'decision-panel-hints', 'divisions', 'documents', 'employees', 'employees-annexes',
  'establishments', 'events', 'graphql', 'impersonation', 'notifications', 'on-call', 'password-reset', 'payroll',
  'planning', 'rate-limit', 'reliability', 'shift-change-requests', 'teams', 'upload-race',
].map((name) => `test/api/${name}.test.ts`);

const files = process.argv.slice(2);
const bouncer = await startPgBouncer();
console.log(`PgBouncer (transaction pooling) on 127.0.0.1:${bouncer.port}`);
const code = await new Promise<number>((resolve) => {
  const child = spawn(path.join(ROOT_DIR, 'node_modules/.bin/vitest'), ['run', ...(files.length ? files : PGBOUNCER_FILES)], {
    cwd: ROOT_DIR,
    stdio: 'inherit',
    env: { ...process.env, TEST_PGBOUNCER_PORT: String(bouncer.port) },
  });
  child.on('close', (status) => resolve(status ?? 1));
});
await bouncer.stop();
process.exit(code);
