import type { TestProject } from 'vitest/node';
import { dropOrphanTestDatabases, ensureTemplate } from './template.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

/** Builds the template database once per run (or reuses it) and hands its name to the workers. */
export default async function setup(project: TestProject): Promise<void> {
  await dropOrphanTestDatabases();
  project.provide('templateDatabase', await ensureTemplate());
}
