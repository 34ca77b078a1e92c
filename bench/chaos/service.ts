/**
 * The service under test: the real `npm start` entry, compiled (dist/src/cli/start.js, HTTP
 * server and worker in one process, built first when stale), against the chaos cluster, run by
 * Node's own executable as production runs it (the pid is the server's: SIGKILL reaches it,
 * /proc gives its RSS). Its output goes to a log file of the run's directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { BUILDS } from '../../scripts/freshness.mjs';
import { ROOT_DIR } from '../../src/db/migrate.js';

export interface ServiceSettings {
  port: number;
  ownerUrl: string;
  authUrl: string;
  storageDir: string;
  jwtSecret: string;
  logFile: string;
}

export class Service {
  private child: ChildProcess | null = null;
  private log: WriteStream;
  /** Exits nobody asked for (a crash): the run fails on any. */
  readonly unexpectedExits: string[] = [];
  private expectingExit = false;

  constructor(private readonly settings: ServiceSettings) {
    this.log = createWriteStream(settings.logFile, { flags: 'a' });
  }

  get url(): string {
    return `http://127.0.0.1:${this.settings.port}`;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** Spawns the process; `waitReady` then polls the health route. */
  spawn(): void {
    const { settings } = this;
    const child = spawn(process.execPath, [
      '--max-old-space-size=160', '--max-semi-space-size=8',
      // CHAOS_ENTRY=source: the sources through tsx's loader, as `npm start` ran before the build
      // (BENCHMARKS.md, "Start-up": the before/after of the respawn).
      ...(process.env.CHAOS_ENTRY === 'source' ? ['--import', 'tsx', path.join(ROOT_DIR, 'src/cli/start.ts')] : [path.join(ROOT_DIR, BUILDS.server.output)]),
    ], {
      cwd: ROOT_DIR,
      env: {
        ...process.env,
        MALLOC_ARENA_MAX: '2',
        MALLOC_MMAP_THRESHOLD_: '131072',
        DATABASE_URL: settings.ownerUrl,
        AUTH_DATABASE_URL: settings.authUrl,
        JWT_SECRET: settings.jwtSecret,
        PORT: String(settings.port),
        HOST: '127.0.0.1',
        PUBLIC_URL: `http://127.0.0.1:${settings.port}`,
        STORAGE_DIR: settings.storageDir,
        LOG_LEVEL: 'warn',
        // One client drives many accounts from one address: the limits are not under test.
        RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000',
        RATE_LIMIT_AUTHENTICATED_PER_MINUTE: '1000000',
        RATE_LIMIT_LOGIN_PER_USERNAME_PER_HOUR: '100000',
        RATE_LIMIT_LOGIN_FAILURES_PER_ADDRESS: '100000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(this.log, { end: false });
    child.stderr!.pipe(this.log, { end: false });
    child.once('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      if (!this.expectingExit) this.unexpectedExits.push(`exit code ${code}, signal ${signal}`);
    });
    this.expectingExit = false;
    this.child = child;
  }

  /** Polls /api/health/ until 200 (the database answers too); returns the milliseconds waited. */
  async waitReady(timeoutMs = 120_000): Promise<number> {
    const started = Date.now();
    for (;;) {
      if (!this.child) throw new Error(`the service exited before it was ready (log: ${this.settings.logFile})`);
      try {
        const res = await fetch(`${this.url}/api/health/`, { signal: AbortSignal.timeout(2000) });
        await res.arrayBuffer();
        if (res.status === 200) return Date.now() - started;
      } catch {
        // not listening yet
      }
      if (Date.now() - started > timeoutMs) throw new Error(`the service was not ready within ${timeoutMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** SIGKILL, as a crash or an OOM kill would: no shutdown step runs. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.expectingExit = true;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  /** Resident memory of the server process (kB → bytes), null when it is not running. */
  async rss(): Promise<number | null> {
    if (!this.child?.pid) return null;
    const status = await readFile(`/proc/${this.child.pid}/status`, 'utf8').catch(() => '');
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child) {
      this.expectingExit = true;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await new Promise<void>((resolve) => this.log.end(resolve));
  }
}
