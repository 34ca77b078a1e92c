/**
 * `npm start` (scripts/launch.mjs runs its build, dist/src/cli/start.js), `npm run dev` (tsx watch):
 * checks the Node.js version first, then loads the service (src/cli/start-service.ts). The import
 * is dynamic so that an older Node stops on the version check, before it loads any dependency.
 */
import module from 'node:module';
import { requireSupportedNode } from '../runtime.js';

requireSupportedNode();
// Compiled (dist/): V8 keeps the compiled modules in a cache (NODE_COMPILE_CACHE, else the
// temporary directory) that the next start reuses; about a tenth of the modules' CPU time.
// Without a writable directory it does nothing.
if (import.meta.url.endsWith('.js')) module.enableCompileCache?.();
await import('./start-service.js');
