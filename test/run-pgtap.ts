/**
 * Runs the pgTAP files (test/db/*.sql) with pg_prove against a clone of the template
 * database (migrated schema + fixture organisation) on the system cluster.
 * Prints pg_prove's output and, last, "pgTAP: N passed, N failed" (assertions).
 */
import { spawn } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { ROOT_DIR } from '../src/db/migrate.js';
import { cloneTemplate, dropOrphanTestDatabases, ensureTemplate } from './helpers/template.js';
import { databaseUrl } from './helpers/settings.js';

export interface PgTapSummary {
  passed: number;
  failed: number;
  ok: boolean;
}

const MISSING: PgTapSummary = { passed: 0, failed: 1, ok: false };

/** Null when pg_prove runs, else what is missing and how to install it. */
function pgProveProblem(): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn('pg_prove', ['--version'], { stdio: 'ignore' });
    child.on('error', (error: NodeJS.ErrnoException) =>
      resolve(
        error.code === 'ENOENT'
          ? 'pg_prove is missing (not on PATH): install libtap-parser-sourcehandler-pgtap-perl and postgresql-15-pgtap (.ci/run does).'
          : `pg_prove cannot start: ${error.message}`,
      ),
    );
    child.on('close', () => resolve(null));
  });
}

export async function runPgTap(files?: string[]): Promise<PgTapSummary> {
  const problem = await pgProveProblem();
  if (problem) {
    console.error(`pgTAP: ${problem}`);
    console.log('pgTAP: 0 passed, 1 failed');
    return MISSING;
  }
  await dropOrphanTestDatabases();
  const template = await ensureTemplate();
  const database = await cloneTemplate(template, 'wfm_pgtap');
  try {
    const client = new pg.Client({ connectionString: databaseUrl(database.name) });
    client.on('error', () => {});
    await client.connect();
    try {
      await client.query('create extension if not exists pgtap with schema public');
      await client.query(await readFile(path.join(ROOT_DIR, 'test/db/setup/helpers.sql'), 'utf8'));
    } catch (error) {
      console.error(`pgTAP: the test database could not be prepared (is the pgtap extension installed? postgresql-15-pgtap): ${(error as Error).message}`);
      console.log('pgTAP: 0 passed, 1 failed');
      return MISSING;
    } finally {
      await client.end();
    }

    const dir = path.join(ROOT_DIR, 'test/db');
    const selected = files?.length
      ? files
      : (await readdir(dir)).filter((name) => name.endsWith('.sql')).sort().map((name) => path.join(dir, name));
    const url = new URL(databaseUrl(database.name));
    const output = await new Promise<{ code: number; text: string }>((resolve) => {
      const child = spawn('pg_prove', ['--verbose', '--failures', '--ext', '.sql', ...selected], {
        env: {
          ...process.env,
          PGHOST: url.hostname,
          PGPORT: url.port || '5432',
          PGUSER: decodeURIComponent(url.username) || 'postgres',
          PGDATABASE: database.name,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (chunk) => {
        text += chunk;
        process.stdout.write(chunk);
      });
      child.stderr.on('data', (chunk) => {
        text += chunk;
        process.stderr.write(chunk);
      });
      child.on('error', (error) => {
        console.error(`pgTAP: pg_prove cannot start: ${error.message}`);
        resolve({ code: 1, text });
      });
      child.on('close', (code) => resolve({ code: code ?? 1, text }));
    });
    // Assertion counts: "ok N" / "not ok N" lines of the verbose TAP stream.
    const passed = (output.text.match(/^\s*ok \d+/gm) ?? []).length;
    const failed = (output.text.match(/^\s*not ok \d+/gm) ?? []).length;
    const ok = output.code === 0 && failed === 0;
    console.log(`pgTAP: ${passed} passed, ${failed + (ok || failed ? 0 : 1)} failed`);
    return { passed, failed: failed + (ok || failed ? 0 : 1), ok };
  } finally {
    await database.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const summary = await runPgTap(process.argv.slice(2).map((file) => path.resolve(file)));
  process.exit(summary.ok ? 0 : 1);
}
