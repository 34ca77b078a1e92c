/**
 * Per test file: how many answers were checked against the OpenAPI document, written where
 * `npm test` sums them (test/run-all.ts prints the total).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, expect } from 'vitest';
import { ROOT_DIR } from '../../src/db/migrate.js';
import { checkedResponses } from './response-contract.js';

export const CONTRACT_COUNTS_DIR = path.join(ROOT_DIR, 'test-results', 'response-contract');

afterAll(async () => {
  const file = expect.getState().testPath ?? 'unknown';
  const name = createHash('sha256').update(file).digest('hex').slice(0, 16);
  await mkdir(CONTRACT_COUNTS_DIR, { recursive: true });
  await writeFile(path.join(CONTRACT_COUNTS_DIR, `${name}.json`), JSON.stringify({ file: path.relative(ROOT_DIR, file), checked: checkedResponses() }));
});
