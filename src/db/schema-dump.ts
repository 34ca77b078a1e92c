/**
 * migrations/schema.sql: `pg_dump --schema-only` of the application schemas of a database migrated by
 * the committed migrations, written by `npm run db:commit` (graphile-migrate's afterAllMigrations
 * hook, on the shadow database: src/db/sql-source.ts) and committed with the migration, so that a
 * change to a rule is reviewed as a schema diff. The drift check compares it with a fresh dump.
 * Run as a command by the hook: `node --import tsx src/db/schema-dump.ts OUT` with GM_DBURL set.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

export const SCHEMA_FILE = 'schema.sql';
const SCHEMAS = ['app_public', 'app_hidden', 'app_private'];

/**
 * The dump, the same for the same schema: without pg_dump's version lines and its per-run
 * `\restrict` key (pg_dump 15.14 and later), so that only a change of the schema changes the file.
 */
export function normaliseDump(text: string): string {
  const lines = text
    .split('\n')
    .filter((line) => !/^-- Dumped (from database|by pg_dump) version /.test(line) && !/^\\(un)?restrict /.test(line));
  return `-- Written by \`npm run db:commit\` (pg_dump --schema-only of ${SCHEMAS.join(', ')} after the committed migrations):\n` +
    `-- never edit it; review its diff with the migration's.\n${lines.join('\n').replace(/\n{3,}/g, '\n\n').trim()}\n`;
}

/** pg_dump --schema-only of the application schemas of `url`, normalised. */
export function dumpSchema(url: string): Promise<string> {
  const args = ['--schema-only', '--no-tablespaces', ...SCHEMAS.flatMap((schema) => ['--schema', schema]), '--dbname', url];
  return new Promise((resolve, reject) => {
    const child = spawn('pg_dump', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(error.code === 'ENOENT' ? 'pg_dump is missing (PostgreSQL 15 client: postgresql-client-15)' : error.message)));
    child.on('close', (code) => {
      if (code === 0) resolve(normaliseDump(Buffer.concat(out).toString('utf8')));
      else reject(new Error(`pg_dump failed (exit ${code}): ${err.trim()}`));
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = process.argv[2];
  const url = process.env.GM_DBURL;
  if (!out || !url) {
    console.error('usage: GM_DBURL=postgres://... node --import tsx src/db/schema-dump.ts OUT');
    process.exit(1);
  }
  await writeFile(out, await dumpSchema(url));
}
