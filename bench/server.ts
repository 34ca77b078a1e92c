/**
 * Child process of `npm run bench`: the service as production runs it (createApp with
 * loadConfig from the environment), without the worker. Tells the parent its port over IPC.
 *   env: DATABASE_URL, AUTH_DATABASE_URL, JWT_SECRET, LOG_LEVEL, GRAPHQL, STORAGE_DIR,
 *        RATE_LIMIT_* (raised by the parent: the bench is one client hammering the API),
 *        BENCH_TRANSACTION_PATH=round-trips (connections without pipelining: the round-trip path).
 */
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { createApp } from '../src/server.js';

if (process.env.BENCH_TRANSACTION_PATH === 'round-trips') {
  // npm run bench -- --transaction-paths: connections that are not pipelined, so that a SQL
  // route's call takes the round-trip path (runRequestCall falls back to withRequestTransaction).
  Object.defineProperty(pg.Client.prototype, 'pipeline', { get: () => false, set: () => undefined, configurable: true });
}
const config = loadConfig(process.env, { port: 0 });
const app = await createApp(config);
const running = await app.listen(0, '127.0.0.1');
process.send?.({ ready: true, url: running.url });
// The parent asks for the memory breakdown between phases (reported with the RSS).
process.on('message', (message: { memory?: boolean }) => {
  if (message?.memory) {
    if ((message as { gc?: boolean }).gc) (globalThis as { gc?: () => void }).gc?.();
    process.send?.({ memory: process.memoryUsage() });
  }
});

const stop = async () => {
  await running.close().catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The parent went away: do not outlive it.
process.on('disconnect', stop);
