/**
 * Imported first by the command-line entry points (before their other imports are evaluated):
 * an older Node stops here with one sentence (src/runtime.ts).
 */
import { requireSupportedNode } from './runtime.js';

requireSupportedNode();
