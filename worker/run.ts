/**
 * `npm run worker` (scripts/launch.mjs runs its build, dist/worker/run.js): checks the Node.js
 * version first, then runs the worker (worker/run-worker.ts), loaded only once the check passed.
 */
import { requireSupportedNode } from '../src/runtime.js';

requireSupportedNode();
await import('./run-worker.js');
