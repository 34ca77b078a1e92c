/**
 * WEB_CONCURRENCY (docs/running.md, "Past one machine"): `npm start` runs N API server
 * processes (src/cli/server-process.ts) with node:cluster, sharing one port; the parent keeps
 * the migrations, the worker (once) and the embedded database. A process that dies is
 * replaced (after a pause that grows while replacements keep dying at start-up).
 */
import cluster, { type Worker } from 'node:cluster';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliError } from './common.js';

// server-process.ts from the sources (tsx), server-process.js from the build (dist/).
const HERE = fileURLToPath(import.meta.url);
const SERVER_PROCESS_FILE = path.join(path.dirname(HERE), `server-process${path.extname(HERE)}`);
const STOP_TIMEOUT_MS = 10_000;

/** WEB_CONCURRENCY as a process count: 1 when unset; an integer from 1 to 64 otherwise. */
export function processCount(env: NodeJS.ProcessEnv): number {
  const raw = env.WEB_CONCURRENCY;
  if (raw === undefined || raw === '') return 1;
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1 || count > 64) {
    throw new CliError(`WEB_CONCURRENCY must be a whole number of server processes between 1 and 64 (got "${raw}").`);
  }
  return count;
}

export interface ServerProcesses {
  /** The URL the processes share. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Forks `count` server processes with `env` (which carries the resolved DATABASE_URL,
 * AUTH_DATABASE_URL, JWT_SECRET, PORT...) and resolves once all of them listen.
 */
export async function startServerProcesses(count: number, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<ServerProcesses> {
  cluster.setupPrimary({ exec: SERVER_PROCESS_FILE, args: [], silent: true });
  let stopping = false;
  let restartDelay = 500;
  let url = '';

  const fork = (): Promise<Worker> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork(env);
      const startedAt = Date.now();
      worker.process.stderr?.pipe(process.stderr);
      // The ready line carries the URL; other output goes through.
      worker.process.stdout?.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString().split('\n').filter(Boolean)) {
          const ready = /^\{"ready":"([^"]+)"/.exec(line);
          if (ready) {
            url = ready[1]!;
            resolve(worker);
          } else process.stdout.write(`${line}\n`);
        }
      });
      worker.once('exit', (code, signal) => {
        reject(new CliError(`A server process stopped at start-up (${signal ?? `code ${code}`}).`));
        if (stopping) return;
        const quick = Date.now() - startedAt < 10_000;
        restartDelay = quick ? Math.min(restartDelay * 2, 30_000) : 500;
        log(`Server process ${worker.process.pid} stopped (${signal ?? `code ${code}`}): replaced in ${restartDelay} ms.`);
        setTimeout(() => {
          if (!stopping) fork().catch((error: Error) => stopping || log(error.message));
        }, restartDelay).unref();
      });
    });

  try {
    await Promise.all(Array.from({ length: count }, fork));
  } catch (error) {
    stopping = true;
    await stopAll();
    throw error;
  }

  async function stopAll(): Promise<void> {
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
    await Promise.all(workers.map((worker) => new Promise<void>((resolve) => {
      const force = setTimeout(() => worker.process.kill('SIGKILL'), STOP_TIMEOUT_MS);
      worker.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      worker.process.kill('SIGTERM');
    })));
  }

  return {
    url,
    async stop() {
      stopping = true;
      await stopAll();
    },
  };
}
