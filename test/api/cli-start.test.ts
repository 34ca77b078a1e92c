/**
 * `npm start` (CONTRACT section 1), spawned for real: with DATABASE_URL (JWT_SECRET
 * required, demo data only on request into an empty database) and embedded (a private
 * PostgreSQL in DATA_DIR, demo organisation, printed logins and e-mails, clean stop, reuse).
 */
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { makeClient } from '../helpers/http.js';
import { databaseUrl } from '../helpers/settings.js';
import { RunningCommand, SCRIPTS, commandEnv, createEmptyDatabase, freePort, runCommand } from './cli-helpers.js';

const READY = /Press Ctrl\+C to stop\./;
const running: RunningCommand[] = [];
const cleanups: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const command of running) await command.stop().catch(() => undefined);
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

function start(env: NodeJS.ProcessEnv): RunningCommand {
  const command = new RunningCommand(SCRIPTS.start, [], env);
  running.push(command);
  return command;
}

function printedUrl(command: RunningCommand): string {
  const match = /URL:\s+(http:\/\/\S+)\//.exec(command.stdout);
  if (!match) throw new Error(`no URL printed\n${command.output}`);
  return match[1]!;
}

/** The demo logins table: username → [role, password]. */
function printedLogins(command: RunningCommand): Map<string, { role: string; password: string }> {
  const table = command.stdout.split('Demo logins:')[1];
  const logins = new Map<string, { role: string; password: string }>();
  if (!table) return logins;
  for (const line of table.split('\n').slice(2)) {
    const match = /^ {4}(\S+)\s{2,}(.+?)\s{2,}(\S+)$/.exec(line);
    if (!match) break;
    logins.set(match[1]!, { role: match[2]!, password: match[3]! });
  }
  return logins;
}

async function me(url: string, username: string, password: string) {
  const client = makeClient(url);
  const token = await client.post('/api/auth/token/', null, { username, password });
  expect(token.status, `${username}: ${token.text}`).toBe(200);
  return client.get('/api/auth/me/', token.body.access as string);
}

describe('npm start with DATABASE_URL', () => {
  it('refuses to start without JWT_SECRET, saying so', async () => {
    const result = await runCommand(SCRIPTS.start, [], commandEnv({ DATABASE_URL: databaseUrl('wfm_not_used') }));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('JWT_SECRET is required when DATABASE_URL is set');
  });

  it('migrates and serves; loads demo data only with DEMO_DATA=1 into a database without organisation', async () => {
    const database = await createEmptyDatabase();
    cleanups.push(database.drop);
    const dataDir = await mkdtemp(path.join(tmpdir(), 'wfm-start-url-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const db = new pg.Pool({ connectionString: database.url, max: 1 });
    cleanups.push(() => db.end());
    const env = async (extra: Record<string, string> = {}) =>
      commandEnv({
        DATABASE_URL: database.url,
        JWT_SECRET: 'a-test-secret-of-at-least-thirty-two-characters',
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        GRAPHQL: 'off',
        ...extra,
      });

    // 1. No DEMO_DATA: migrated, served, empty.
    const first = start(await env());
    await first.waitFor(READY);
    const health = await makeClient(printedUrl(first)).get('/api/health/');
    expect(health.status).toBe(200);
    expect(first.stdout).not.toContain('Demo logins');
    expect((await db.query('select count(*)::int as n from app_public.absence_types')).rows[0].n).toBe(52);
    expect((await db.query('select count(*)::int as n from app_public.establishments')).rows[0].n).toBe(0);
    expect((await first.stop()).code, first.output).toBe(0);

    // 2. DEMO_DATA=1 on a database without organisation: the demo is loaded and its logins printed.
    const second = start(await env({ DEMO_DATA: '1' }));
    await second.waitFor(READY);
    expect(second.stdout).toContain('Demo organisation loaded.');
    // With its year of history, replayed through the API's functions (test/api/demo-history.test.ts).
    expect(second.stdout).toMatch(/Demo history: \d{3} steps in \d+\.\d s \(\d+ absences, \d+ day-change requests, \d+ documents/);
    expect((await db.query("select count(*)::int as n from app_public.absences where status = 'pending'")).rows[0].n).toBeGreaterThan(5);
    const logins = printedLogins(second);
    expect(logins.get('manager1')?.role).toBe('Manager n1');
    const answer = await me(printedUrl(second), 'manager1', logins.get('manager1')!.password);
    expect(answer.body.role).toBe('Manager n1');
    expect((await second.stop()).code, second.output).toBe(0);

    // 3. DEMO_DATA=1 again: the database holds an organisation, nothing more is loaded.
    const third = start(await env({ DEMO_DATA: '1' }));
    await third.waitFor(READY);
    expect(third.stdout).toContain('already holds an organisation: no demo data loaded');
    expect(third.stdout).not.toContain('Demo logins');
    expect((await db.query('select count(*)::int as n from app_public.establishments')).rows[0].n).toBe(3);
    expect((await third.stop()).code, third.output).toBe(0);
    // Three starts, the second loading the demo and its history: minutes on a loaded machine.
  }, 180_000);
});

/** The server processes (src/cli/server-process.ts) among the descendants of `pid`. */
function serverProcessesUnder(pid: number): number[] {
  const table = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n').map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line)).filter((m): m is RegExpExecArray => !!m)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }));
  const descendants = new Set([pid]);
  for (let grown = true; grown;) {
    grown = false;
    for (const row of table) {
      if (descendants.has(row.ppid) && !descendants.has(row.pid)) {
        descendants.add(row.pid);
        grown = true;
      }
    }
  }
  return table.filter((row) => descendants.has(row.pid) && row.args.includes('src/cli/server-process.ts')).map((row) => row.pid);
}

describe('npm start with WEB_CONCURRENCY', () => {
  it('runs two server processes on one port, replaces one that dies, and stops them all', async () => {
    const database = await createEmptyDatabase();
    cleanups.push(database.drop);
    const dataDir = await mkdtemp(path.join(tmpdir(), 'wfm-start-processes-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const command = start(commandEnv({
      DATABASE_URL: database.url,
      JWT_SECRET: 'a-test-secret-of-at-least-thirty-two-characters',
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      GRAPHQL: 'off',
      WORKER: 'off',
      WEB_CONCURRENCY: '2',
    }));
    await command.waitFor(READY, 180_000);
    expect(command.stdout).toContain('Server processes: 2 (WEB_CONCURRENCY), one worker.');
    const url = printedUrl(command);
    const first = serverProcessesUnder(command.child.pid!);
    expect(first).toHaveLength(2);
    for (let i = 0; i < 4; i++) expect((await makeClient(url).get('/api/health/')).status).toBe(200);

    // One dies: it is replaced, the port keeps answering.
    process.kill(first[0]!, 'SIGKILL');
    await command.waitFor(new RegExp(`Server process ${first[0]} stopped \\(SIGKILL\\): replaced`), 30_000);
    for (let attempt = 0; attempt < 240 && serverProcessesUnder(command.child.pid!).length < 2; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const second = serverProcessesUnder(command.child.pid!);
    expect(second).toHaveLength(2);
    expect(second).toContain(first[1]);
    expect((await makeClient(url).get('/api/health/')).status).toBe(200);

    const stopped = await command.stop();
    expect(stopped.code).toBe(0);
    expect(serverProcessesUnder(command.child.pid!)).toEqual([]);
    for (const pid of second) expect(() => process.kill(pid, 0)).toThrow();
  }, 300_000);
});

describe('npm start without DATABASE_URL (embedded PostgreSQL)', () => {
  it('creates its database, loads the demo, serves, prints e-mails, stops cleanly and reuses everything', async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'wfm-start-embedded-'));
    cleanups.push(() => rm(parent, { recursive: true, force: true }));
    // As root the cluster runs as the system user "postgres", which must traverse this directory.
    await chmod(parent, 0o711);
    const dataDir = path.join(parent, 'data');
    const env = async () =>
      commandEnv({ DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(await freePort()), PORT: String(await freePort()) });

    const first = start(await env());
    await first.waitFor(READY, 180_000);
    expect(first.stdout).toContain('Created a new embedded database cluster.');
    expect(first.stdout).toContain('Demo organisation loaded.');
    expect(first.stdout).toMatch(/Demo history: \d{3} steps in /);
    const url = printedUrl(first);
    expect(first.stdout).toContain(`API docs: ${url}/api/docs/`);

    const health = await makeClient(url).get('/api/health/');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok', database: 'ok' });

    // Every printed login works; /api/auth/me/ shows the role (by display precedence).
    const logins = printedLogins(first);
    expect([...logins.keys()]).toEqual(['admin', 'rh1', 'rh2', 'da', 'manager1', 'manager2', 'salarie', 'interimaire', 'paie', 'superadmin']);
    const password = logins.get('admin')!.password;
    expect(new Set([...logins.values()].map((login) => login.password))).toEqual(new Set([password]));
    for (const [username, login] of logins) {
      const answer = await me(url, username, login.password);
      expect(answer.status).toBe(200);
      if (username === 'superadmin') expect(answer.body.role).toBeUndefined();
      // Every employee account holds Salarié, which precedes Intérimaire and Service Paie in
      // the display order (CONTRACT section 2); the permissions tell them apart.
      else if (username === 'interimaire' || username === 'paie') expect(answer.body.role, username).toBe('Salarié');
      else expect(answer.body.role, username).toBe(login.role);
      if (username === 'paie') expect(answer.body.can_view_payroll).toBe(true);
      if (username === 'interimaire' || username === 'salarie') expect(answer.body.can_view_absence_queue).toBe(false);
    }

    // Secrets kept in the data directory, readable by the owner only.
    const secretsFile = path.join(dataDir, 'secrets.json');
    expect((await stat(secretsFile)).mode & 0o777).toBe(0o600);
    const secrets = JSON.parse(await readFile(secretsFile, 'utf8')) as Record<string, string>;
    expect(secrets.demo_password).toBe(password);
    expect(secrets.jwt_secret!.length).toBeGreaterThanOrEqual(32);

    // An e-mail queued after startup is printed; the demo's invitations (queued at startup) are not.
    const reset = await makeClient(url).post('/api/auth/password/reset/', null, { login: 'salarie' });
    expect(reset.status).toBe(200);
    const printed = await first.waitFor(/To: (\S+)\nSubject: (.+)\n\n([\s\S]*?)\n─{60}/, 15_000);
    expect(printed[1]).toBe('julie.caron@horizons-solidaires.example');
    expect(printed[2]).toBe('Réinitialisation de votre mot de passe');
    expect(printed[3]).toMatch(new RegExp(`${url}/password-reset/confirm/\\?token=[0-9a-f]{64}`));
    expect(first.stdout).not.toContain('Votre compte a été créé');

    const stopped = await first.stop();
    expect(stopped.code, first.output).toBe(0);
    expect(first.stdout).toContain('Stopped.');
    // The cluster is shut down (no postmaster.pid left behind).
    await expect(stat(path.join(dataDir, 'pg', 'postmaster.pid'))).rejects.toThrow();

    // Second start on the same data directory: same cluster, no second demo, same password.
    const second = start(await env());
    await second.waitFor(READY, 120_000);
    expect(second.stdout).toContain('Reusing the embedded database cluster.');
    expect(second.stdout).toContain('The database already holds an organisation: demo data not loaded.');
    expect(second.stdout).not.toContain('Loading the demo organisation');
    expect(printedLogins(second).get('manager1')?.password).toBe(password);
    const secondUrl = printedUrl(second);
    expect((await me(secondUrl, 'manager1', password)).body.role).toBe('Manager n1');
    const port = /127\.0\.0\.1:(\d+), log/.exec(second.stdout)![1];
    const embedded = new pg.Client({ connectionString: `postgres://postgres:${encodeURIComponent(secrets.postgres_password!)}@127.0.0.1:${port}/wfm` });
    await embedded.connect();
    try {
      const { rows } = await embedded.query('select count(*)::int as n from app_public.establishments');
      expect(rows[0].n).toBe(3);
    } finally {
      await embedded.end();
    }
    // A new e-mail is printed; those of the previous run (older rows, printed first if at all) are not.
    expect((await makeClient(secondUrl).post('/api/auth/password/reset/', null, { login: 'rh1' })).status).toBe(200);
    await second.waitFor(/To: catherine\.mercier@horizons-solidaires\.example\n/, 15_000);
    expect(second.stdout).not.toContain('julie.caron@');
    expect((await second.stop()).code, second.output).toBe(0);
  }, 300_000);
});
