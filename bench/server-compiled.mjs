/**
 * Child process of `npm run bench -- --compiled`: bench/server.ts's service, but as `npm start` runs
 * it: the compiled build (dist/, tsc) in plain Node, without tsx's loader (which transforms each
 * module at load and names every function it creates, `__name`, at each creation).
 *   env: as bench/server.ts
 */
import { loadConfig } from '../dist/src/config.js';
import { createApp } from '../dist/src/server.js';
import { serveBenchChild } from './lib/service-child.mjs';

await serveBenchChild({ loadConfig, createApp });
