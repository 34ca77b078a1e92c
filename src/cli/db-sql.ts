/**
 * The sql/ workflow (docs/architecture.md, "Migrations"), on the test cluster
 * (TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres):
 *   npm run db:current                 writes migrations/current.sql from the sql/ files changed
 *                                      since the last committed migration, and checks it
 *   npm run db:commit -- "message"     commits current.sql as the next migration and records
 *                                      migrations/sql-state.json
 *   npm run db:check                   the drift check of npm test
 * `--dir DIR` works on another checkout (the workflow test uses a copy).
 */
import path from 'node:path';
import { ROOT_DIR } from '../db/migrate.js';
import { commitCurrent, driftCheck, writeCurrent, type Project } from '../db/sql-source.js';
import { TEST_ROOT_URL } from '../db/test-cluster.js';
import { CliError, runCommand } from './common.js';

const args = process.argv.slice(2);
const dirAt = args.indexOf('--dir');
const root = dirAt >= 0 ? path.resolve(args.splice(dirAt, 2)[1] ?? '.') : ROOT_DIR;
const [command, ...rest] = args;
const project: Project = { root, rootUrl: TEST_ROOT_URL };
const log = (line: string) => console.log(line);

runCommand(`db:${command ?? ''}`, async () => {
  switch (command) {
    case 'current': {
      const outcome = await writeCurrent(project);
      if (!outcome.includes.length && !outcome.drops.length) {
        log('sql/ has not changed since the last committed migration: migrations/current.sql is empty.');
      } else {
        log(`migrations/current.sql: ${outcome.drops.length} drop(s); includes: ${outcome.includes.join(', ') || 'none'}.`);
      }
      if (outcome.remaining.length) {
        throw new CliError(
          ['Still different after current.sql (write the statement in a sql/ file, see docs/architecture.md):', ...outcome.remaining.map((l) => `  ${l}`)].join('\n'),
        );
      }
      log('sql/ and migrations (committed + current.sql) agree. Next: npm run db:commit -- "message".');
      return 0;
    }
    case 'commit': {
      const message = rest.join(' ').trim();
      if (!message) throw new CliError('usage: npm run db:commit -- "what the migration changes"');
      const hash = await commitCurrent(project, message);
      log(`Committed ${hash}; migrations/sql-state.json records the sql/ files it holds.`);
      return 0;
    }
    case 'check': {
      const problem = await driftCheck(project, { requireCommitted: process.env.WFM_REQUIRE_COMMITTED_MIGRATIONS === '1' });
      if (problem) throw new CliError(problem);
      log('sql/ and the migrations agree.');
      return 0;
    }
    default:
      throw new CliError('usage: tsx src/cli/db-sql.ts current | commit "message" | check [--dir DIR]');
  }
});
