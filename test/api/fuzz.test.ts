import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { caseArbitrary, fuzzOperations, fuzzTokens, runFuzzCase } from '../helpers/fuzz-run.js';
import { isFieldErrorEnvelope, type WriteOperation } from '../helpers/fuzz.js';

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

  // Bodies: JSON (plausible, wrong, malformed), deep JSON, odd path encodings, and multipart
  // bodies complete, truncated, cut off or over the limits (test/helpers/fuzz-bodies.ts).
  it('the process survives, never answers 5xx, keys every 400 by field, leaves no upload open, and a refused request changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(caseArbitrary(operations), async (c) => {
        const failure = await runFuzzCase(env, tokens, c);
        if (failure) throw new Error(`${failure.problem}: ${c.op.method} ${c.op.path} as ${c.account} → ${failure.status} ${failure.body} (body ${c.body.raw.slice(0, 300)})`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  }, 300_000);
});

// Cases the long run (`npm run fuzz`, seed 20261121) found: a body key that names no field.
describe('a NUL character is refused under the field that carries it', () => {
  const NUL_MESSAGE = 'Ce texte contient un caractère interdit (caractère nul).';

  it.each([
    ['POST', '/api/absences/1/documents/', 'paie', '{"":"\\u0000"}'],
    ['PUT', '/api/employees/3/honorability-certificate/', 'paie', '{"g$r%;#":null,"acB7":null,"":"\\u0000"}'],
    ['POST', '/api/absences/', 'alice', '{"":"\\u0000"}'],
  ])('%s %s as %s with an empty key holding NUL: 400 under non_field_errors', async (method, path, account, rawBody) => {
    const response = await env.request(method, path, { token: tokens.get(account), rawBody });
    expect(response.status).toBe(400);
    expect(isFieldErrorEnvelope(response.body)).toBe(true);
    expect(response.body.non_field_errors).toEqual([NUL_MESSAGE]);
    expect(Object.keys(response.body)).not.toContain('');
  });

  it('a NUL inside a known field is refused under that field', async () => {
    const response = await env.request('POST', '/api/absences/', {
      token: tokens.get('alice'),
      rawBody: '{"comment":"avant\\u0000après"}',
    });
    expect(response.status).toBe(400);
    expect(response.body.comment).toEqual([NUL_MESSAGE]);
  });
});
