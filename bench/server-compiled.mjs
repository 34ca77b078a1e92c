/**
 * Child process of `npm run bench -- --compiled`: bench/server.ts's service, but as `npm start` runs
 * it: the compiled build (dist/, tsc) in plain Node, without tsx's loader (which transforms each
 * module at load and names every function it creates, `__name`, at each creation).
 *   env: as bench/server.ts
 */
import { loadConfig } from '../dist/src/config.js';
import { createApp } from '../dist/src/server.js';

const config = loadConfig(process.env, { port: 0 });
const app = await createApp(config);
const running = await app.listen(0, '127.0.0.1');
process.send?.({ ready: true, url: running.url });
process.on('message', (message) => {
  if (message?.memory) {
    if (message.gc) globalThis.gc?.();
    process.send?.({ memory: process.memoryUsage() });
  }
});
const stop = async () => {
  await running.close().catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('disconnect', stop);
