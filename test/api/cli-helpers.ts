/**
 * Helpers of the command-line tests (test/api/cli-*.test.ts): the real commands are
 * spawned with tsx from node_modules/.bin (Node 22 first on PATH), as `npm run` does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { ROOT_DIR } from '../../src/db/migrate.js';
import { TEST_ROOT_URL, databaseUrl } from '../helpers/settings.js';

export const BIN_DIR = path.join(ROOT_DIR, 'node_modules/.bin');

export const SCRIPTS = {
  start: path.join(ROOT_DIR, 'src/cli/start.ts'),
  dbReset: path.join(ROOT_DIR, 'src/cli/db-reset.ts'),
  orgImport: path.join(ROOT_DIR, 'src/cli/org-import.ts'),
  dbSql: path.join(ROOT_DIR, 'src/cli/db-sql.ts'),
} as const;

/** Variables of the commands that must not leak from the developer's shell into a test. */
const COMMAND_VARIABLES = [
  'DATABASE_URL', 'AUTH_DATABASE_URL', 'JWT_SECRET', 'DATA_DIR', 'STORAGE_DIR', 'PORT', 'HOST', 'PUBLIC_URL',
  'EMBEDDED_PG_PORT', 'DEMO_DATA', 'DEBUG', 'TZ_BUSINESS', 'BACKOFFICE_PASSWORD_ONLY', 'ALLOW_IMPERSONATION',
];

export function commandEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of COMMAND_VARIABLES) delete env[name];
  env.PATH = `${BIN_DIR}${path.delimiter}${process.env.PATH ?? ''}`;
  env.LOG_LEVEL = 'warn';
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end. */
export function runCommand(script: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(BIN_DIR, 'tsx'), [script, ...args], { cwd: ROOT_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`${path.basename(script)} did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A long-running command (npm start) whose output is watched. */
export class RunningCommand {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  constructor(script: string, args: string[], env: NodeJS.ProcessEnv) {
    // Node itself with tsx as its loader, not the tsx command: the tsx command relays a signal to
    // its child and SIGKILLs it (exit 143) when the child has not acknowledged it within 30 ms,
    // which a loaded machine misses; stop() must test our own SIGTERM handling.
    this.child = spawn(path.join(BIN_DIR, 'node'), ['--import', 'tsx', script, ...args], { cwd: ROOT_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (chunk: Buffer) => (this.stdout += chunk.toString('utf8')));
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
  }

  get output(): string {
    return `stdout:\n${this.stdout}\nstderr:\n${this.stderr}`;
  }

  /** Resolves with the first match of `pattern` in stdout; rejects if the command ends or time runs out. */
  waitFor(pattern: RegExp, timeoutMs = 120_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = this.stdout.match(pattern);
        if (match) {
          cleanup();
          resolve(match);
        } else if (this.exitInfo) {
          cleanup();
          reject(new Error(`command ended (code ${this.exitInfo.code}) before printing ${pattern}\n${this.output}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no ${pattern} within ${timeoutMs} ms\n${this.output}`));
      }, timeoutMs);
      const onData = () => check();
      const cleanup = () => {
        clearTimeout(timer);
        this.child.stdout!.off('data', onData);
        this.child.off('close', onData);
      };
      this.child.stdout!.on('data', onData);
      this.child.on('close', onData);
      check();
    });
  }

  /** Sends SIGTERM to the process we started and waits for its end. */
  async stop(timeoutMs = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.exitInfo) return this.exitInfo;
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      this.exited,
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (outcome) return outcome;
    this.child.kill('SIGKILL');
    throw new Error(`command did not stop within ${timeoutMs} ms\n${this.output}`);
  }
}

export { freePort } from '../helpers/free-port.js';

let counter = 0;

/** An empty database (no schema of ours), and a function that drops it. */
export async function createEmptyDatabase(): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `wfm_test_${process.pid}_cli${Date.now().toString(36)}${(counter++).toString(36)}`;
  const root = new pg.Client({ connectionString: TEST_ROOT_URL });
  await root.connect();
  try {
    await root.query(`create database ${name}`);
  } finally {
    await root.end();
  }
  return {
    name,
    url: databaseUrl(name),
    drop: async () => {
      const client = new pg.Client({ connectionString: TEST_ROOT_URL });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Row counts of every table of the application schemas: "nothing changed" means equal snapshots. */
export async function tableCounts(db: pg.Pool | pg.Client): Promise<Record<string, number>> {
  const { rows } = await db.query<{ name: string; count: number }>(`
    select format('%I.%I', table_schema, table_name) as name,
           (xpath('/row/c/text()', query_to_xml(format('select count(*) as c from %I.%I', table_schema, table_name),
                                                 false, true, '')))[1]::text::int as count
    from information_schema.tables
    where table_schema in ('app_public', 'app_private') and table_type = 'BASE TABLE'
    order by 1`);
  return Object.fromEntries(rows.map((row) => [row.name, row.count]));
}
