import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/api/**/*.test.ts', 'test/web/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/response-contract-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    fileParallelism: true,
    maxWorkers: 3,
  },
});
