import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { caseArbitrary, fuzzOperations, fuzzTokens, runFuzzCase } from '../helpers/fuzz-run.js';
import type { WriteOperation } from '../helpers/fuzz.js';

// Deterministic: a fixed seed, a bounded number of cases. `npm run fuzz` runs 100 000.
const SEED = 20261121;
const RUNS = 400;

let env: TestEnv;
let tokens: Map<string, string>;
let operations: WriteOperation[];

beforeAll(async () => {
  env = await startTestEnv();
  tokens = await fuzzTokens(env);
  operations = await fuzzOperations(env);
});
afterAll(async () => {
  await env?.close();
});

describe('fuzzing every write route from the OpenAPI schema', () => {
  it('finds write routes to fuzz', () => {
    expect(operations.length).toBeGreaterThan(0);
  });

  it('never answers 5xx, keys every 400 by field, and a refused request changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(caseArbitrary(operations), async (c) => {
        const failure = await runFuzzCase(env, tokens, c);
        if (failure) throw new Error(`${failure.problem}: ${c.op.method} ${c.op.path} as ${c.account} → ${failure.status} ${failure.body} (body ${c.body.raw.slice(0, 300)})`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});
