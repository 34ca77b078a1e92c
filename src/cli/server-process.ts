/**
 * One API server process: the configuration from the environment (src/config.ts) and the
 * HTTP server on PORT; no migration, no worker, no demo data (the parent `npm start` did
 * them). `npm start` with WEB_CONCURRENCY > 1 runs N of them sharing the port
 * (src/cli/server-processes.ts); tests start it directly on PORT=0.
 *
 * Stateless: everything a request needs lives in PostgreSQL (rate-limit counters,
 * back-office sessions, second-factor replay steps), so any process may answer any request.
 * Prints one JSON line {"ready": "<url>"} once it listens; SIGTERM/SIGINT let the requests
 * in flight finish, then exit.
 */
import '../check-node.js';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../config.js';
import { createApp, type RunningServer } from '../server.js';

export interface ServerProcess {
  running: RunningServer;
  logger: Awaited<ReturnType<typeof createApp>>['logger'];
}

export async function serveFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<ServerProcess> {
  const config = loadConfig(env);
  const app = await createApp(config);
  const running = await app.listen(config.port, env.HOST || '0.0.0.0');
  return { running, logger: app.logger };
}

/** Stops the server, forcing the keep-alive connections closed after 5 s. */
export async function closeServer(running: RunningServer): Promise<void> {
  const force = setTimeout(() => running.server.closeAllConnections(), 5000);
  try {
    await running.close();
  } finally {
    clearTimeout(force);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    const { running } = await serveFromEnv();
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      void closeServer(running).then(() => process.exit(0), () => process.exit(1));
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    // A cluster worker whose parent disconnects stops too.
    process.on('disconnect', stop);
    process.stdout.write(`${JSON.stringify({ ready: running.url, pid: process.pid })}\n`);
  } catch (error) {
    console.error(`server process ${process.pid}: ${(error as Error).message}`);
    process.exit(1);
  }
}
