import fc from 'fast-check';
import type { TestEnv } from './server.js';
import { databaseFingerprint } from './fingerprint.js';
import { bodyFor, isFieldErrorEnvelope, writeOperations, type WriteOperation } from './fuzz.js';

export const FUZZ_ACCOUNTS = [null, 'root', 'admin', 'rh1', 'rh2', 'da', 'mgr1', 'mgr2', 'paie', 'alice', 'bruno', 'emma'] as const;

export interface FuzzCase {
  op: WriteOperation;
  account: (typeof FUZZ_ACCOUNTS)[number];
  ids: number[];
  body: { raw: string };
}

export interface FuzzFailure {
  case: FuzzCase;
  status: number;
  problem: string;
  body: string;
}

function caseArbitrary(operations: WriteOperation[]): fc.Arbitrary<FuzzCase> {
  return fc.constantFrom(...operations).chain((op) =>
    fc.record({
      op: fc.constant(op),
      account: fc.constantFrom(...FUZZ_ACCOUNTS),
      ids: fc.array(fc.oneof({ arbitrary: fc.integer({ min: 1, max: 30 }), weight: 9 }, { arbitrary: fc.constantFrom(0, 2147483647, 99999999999), weight: 1 }), {
        minLength: op.pathParams.length,
        maxLength: op.pathParams.length,
      }),
      body: bodyFor(op.bodySchema),
    }),
  );
}

/**
 * Runs one generated request and checks the properties: no 5xx; a 400 is keyed by field or
 * non_field_errors; a refused request (4xx) leaves the database exactly as it was.
 */
export async function runFuzzCase(env: TestEnv, tokens: Map<string, string>, c: FuzzCase): Promise<FuzzFailure | null> {
  let path = c.op.path;
  c.op.pathParams.forEach((name, i) => {
    path = path.replace(`{${name}}`, String(c.ids[i]));
  });
  const before = await databaseFingerprint(env.db);
  const token = c.account ? tokens.get(c.account) ?? null : null;
  const response = await env.request(c.op.method, path, { token, rawBody: c.op.method === 'DELETE' ? undefined : c.body.raw });
  const fail = (problem: string): FuzzFailure => ({ case: c, status: response.status, problem, body: response.text.slice(0, 500) });
  if (response.status >= 500) return fail('server error');
  if (response.status === 400 && !isFieldErrorEnvelope(response.body)) return fail('400 not keyed by field');
  if (response.status >= 400) {
    const after = await databaseFingerprint(env.db);
    if (after !== before) return fail('refused request changed the database');
  }
  return null;
}

/** Logs in the fuzz accounts once (tokens stay valid unless a case closes an account). */
export async function fuzzTokens(env: TestEnv): Promise<Map<string, string>> {
  const tokens = new Map<string, string>();
  for (const account of FUZZ_ACCOUNTS) if (account) tokens.set(account, await env.login(account));
  return tokens;
}

export async function fuzzOperations(env: TestEnv): Promise<WriteOperation[]> {
  const schema = await env.get('/api/schema/');
  return writeOperations(schema.body);
}

export { caseArbitrary };
