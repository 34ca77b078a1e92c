import type { TestProject } from 'vitest/node';
import { dropOrphanTestDatabases, ensureTemplate } from './template.js';
import { buildWeb, webBuildIsStale } from '../../web/scripts/build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

/** Builds the template database once per run (or reuses it) and hands its name to the workers; builds the web application when stale. */
export default async function setup(project: TestProject): Promise<void> {
  await dropOrphanTestDatabases();
  project.provide('templateDatabase', await ensureTemplate());
  // The browser tests (test/web) run against the built application.
  if (await webBuildIsStale()) await buildWeb();
}
