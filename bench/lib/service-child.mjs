/**
 * The life of a bench service child (bench/server.ts from the sources, bench/server-compiled.mjs from
 * dist/): loads its configuration from the environment, listens on a free port and tells the parent
 * its URL over IPC, answers the parent's memory questions between phases (reported with the RSS),
 * and stops with its parent. Plain JavaScript: the compiled child runs without tsx.
 */
export async function serveBenchChild({ loadConfig, createApp }) {
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
  // The parent went away: do not outlive it.
  process.on('disconnect', stop);
}
