/**
 * `npm start`, `npm run worker`, `npm run job`, `npm run db:reset`, `npm run org:import` (and `npm ci`'s
 * prepare step): builds what is stale (scripts/freshness.mjs), then runs the compiled entry of the
 * command in this very process (no launcher process stays between npm and the service).
 *   node scripts/launch.mjs start            the service (dist/src/cli/start.js)
 *   node scripts/launch.mjs job NAME         one job now
 *   node scripts/launch.mjs prepare          builds the server and the web application when stale
 *   node scripts/launch.mjs build            builds both now (`npm run build`)
 * A production tree (built, then `npm ci --omit=dev`) has no build tool: it runs its builds as they are.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, build, ensureBuilt } from './freshness.mjs';

/** Each command: its compiled entry and the builds it needs. */
const COMMANDS = {
  start: { entry: 'dist/src/cli/start.js', builds: ['server', 'web'] },
  worker: { entry: 'dist/worker/run.js', builds: ['server'] },
  job: { entry: 'dist/worker/run-once.js', builds: ['server'] },
  'db:reset': { entry: 'dist/src/cli/db-reset.js', builds: ['server'] },
  'org:import': { entry: 'dist/src/cli/org-import.js', builds: ['server'] },
  prepare: { entry: null, builds: ['server', 'web'] },
  build: { entry: null, builds: ['server', 'web'], force: true },
  web: { entry: null, builds: ['web'] },
};

const [name, ...rest] = process.argv.slice(2);
const command = name ? COMMANDS[name] : undefined;
if (!command) {
  console.error(`launch: unknown command "${name ?? ''}"; one of: ${Object.keys(COMMANDS).join(', ')}.`);
  process.exit(1);
}
try {
  for (const name of command.builds) {
    if (command.force) build(name);
    else await ensureBuilt(name);
  }
} catch (error) {
  console.error(`${name}: ${error.message}`);
  process.exit(1);
}
if (command.entry) {
  const entry = path.join(ROOT, command.entry);
  // The entry sees its own arguments, as if run as `node dist/... ARGS`.
  process.argv = [process.argv[0], entry, ...rest];
  await import(pathToFileURL(entry).href);
}
