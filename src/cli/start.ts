/**
 * `npm start` (scripts/launch.mjs runs its build, dist/src/cli/start.js), `npm run dev` (tsx watch):
 * checks the Node.js version first, then loads the service (src/cli/start-service.ts). The import
 * is dynamic so that an older Node stops on the version check, before it loads any dependency.
 */
import { requireSupportedNode } from '../runtime.js';

requireSupportedNode();
await import('./start-service.js');
