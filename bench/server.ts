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
import { serveBenchChild } from './lib/service-child.mjs';

if (process.env.BENCH_TRANSACTION_PATH === 'round-trips') {
  // npm run bench -- --transaction-paths: connections that are not pipelined, so that a SQL
  // route's call takes the round-trip path (runRequestCall falls back to withRequestTransaction).
  Object.defineProperty(pg.Client.prototype, 'pipeline', { get: () => false, set: () => undefined, configurable: true });
}
await serveBenchChild({ loadConfig, createApp });
