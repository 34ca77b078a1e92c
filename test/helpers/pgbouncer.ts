/**
 * PgBouncer (Debian's `pgbouncer`) in transaction pooling mode in front of the test
 * cluster, on a port and in a temporary directory of its own: every database of the
 * cluster, logged in as wfm_authenticator (auth_type any: the server's connections carry no
 * password). As root it runs as `postgres` (PgBouncer refuses root).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { freePort } from './free-port.js';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROLES } from '../../src/db/roles.js';
import { TEST_ROOT_URL } from './settings.js';

export const PGBOUNCER_BINARY = process.env.PGBOUNCER ?? '/usr/sbin/pgbouncer';

export interface PgBouncer {
  port: number;
  /** `url` with its host and port replaced by PgBouncer's. */
  route(url: string): string;
  stop(): Promise<void>;
}


function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Routes `url` through PgBouncer on `port`. */
export function throughPgBouncer(url: string, port: number): string {
  const routed = new URL(url);
  routed.hostname = '127.0.0.1';
  routed.port = String(port);
  return routed.toString();
}

export async function startPgBouncer(options: { poolSize?: number } = {}): Promise<PgBouncer> {
  const target = new URL(TEST_ROOT_URL);
  const dir = await mkdtemp(path.join(tmpdir(), 'wfm-pgbouncer-'));
  await chmod(dir, 0o755);
  const port = await freePort();
  const config = path.join(dir, 'pgbouncer.ini');
  await writeFile(config, [
    '[databases]',
    `* = host=${target.hostname} port=${target.port || 5432} user=${ROLES.authenticator}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = any',
    'pool_mode = transaction',
    `default_pool_size = ${options.poolSize ?? 20}`,
    'max_client_conn = 2000',
    'max_db_connections = 0',
    // node-postgres sends none of the refused startup parameters now; the server pool carries
    // no `options` (src/db/pool.ts).
    'server_reset_query =',
    'log_connections = 0',
    'log_disconnections = 0',
    '',
  ].join('\n'));
  await chmod(config, 0o644);
  const args = process.getuid?.() === 0 ? ['-u', 'postgres', config] : [config];
  const child: ChildProcess = spawn(PGBOUNCER_BINARY, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.on('error', (error: NodeJS.ErrnoException) => {
    output += error.code === 'ENOENT'
      ? `${PGBOUNCER_BINARY} is missing: install Debian's pgbouncer (.ci/run does), or set PGBOUNCER to its path.`
      : `pgbouncer cannot start: ${error.message}`;
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let attempt = 0; attempt < 100 && !(await accepts(port)); attempt++) {
    if (child.exitCode !== null || child.pid === undefined) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!(await accepts(port))) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw new Error(`pgbouncer did not start on port ${port}:\n${output}`);
  }
  return {
    port,
    route: (url) => throughPgBouncer(url, port),
    async stop() {
      if (child.exitCode === null) {
        // SIGINT: PgBouncer's immediate shutdown.
        child.kill('SIGINT');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
