import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { caseArbitrary, fuzzOperations, fuzzTokens, runFuzzCase } from '../helpers/fuzz-run.js';
import { isFieldErrorEnvelope, type WriteOperation } from '../helpers/fuzz.js';
import { databaseFingerprint, installWriteJournal, writeJournalMark } from '../helpers/fingerprint.js';

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

// The long run tests "a refused request changes nothing" with the write journal instead of hashing
// every row (test/helpers/fingerprint.ts): both must agree on what is a change. Last in this file,
// since it leaves the journal's triggers in this test database.
describe('the long run\'s write journal sees exactly what the database fingerprint sees', () => {
  async function both(): Promise<[string, string]> {
    return [await databaseFingerprint(env.db), await writeJournalMark(env.db)];
  }
  async function changes(write: () => Promise<unknown>): Promise<{ fingerprint: boolean; journal: boolean }> {
    const [fingerprint, mark] = await both();
    await write();
    const [fingerprintAfter, markAfter] = await both();
    return { fingerprint: fingerprintAfter !== fingerprint, journal: markAfter !== mark };
  }
  async function inTransaction(sql: string, params: unknown[], end: 'commit' | 'rollback'): Promise<void> {
    const client = await env.db.connect();
    try {
      await client.query('begin');
      await client.query(sql, params);
      await client.query(end);
    } finally {
      client.release();
    }
  }

  beforeAll(async () => {
    await installWriteJournal(env.db);
  });

  it('a rolled-back write: neither sees a change', async () => {
    expect(await changes(() => inTransaction("update app_public.accounts set username = username || '-x' where username = 'alice'", [], 'rollback')))
      .toEqual({ fingerprint: false, journal: false });
  });

  it('a committed update that changes no value: neither sees a change', async () => {
    expect(await changes(() => inTransaction('update app_public.permissions set code = code', [], 'commit')))
      .toEqual({ fingerprint: false, journal: false });
  });

  it('a committed update that changes a value in a table without triggers: both see it', async () => {
    expect(await changes(() => inTransaction("update app_public.permissions set description = description || '.' where code = (select min(code) from app_public.permissions)", [], 'commit')))
      .toEqual({ fingerprint: true, journal: true });
  });

  it('a committed update, insert or delete, in a public or a private table: both see it', async () => {
    expect(await changes(() => inTransaction("update app_public.accounts set username = username || '-x' where username = 'alice'", [], 'commit')))
      .toEqual({ fingerprint: true, journal: true });
    expect(await changes(() => inTransaction("update app_public.accounts set username = regexp_replace(username, '-x$', '') where username = 'alice-x'", [], 'commit')))
      .toEqual({ fingerprint: true, journal: true });
    expect(await changes(() => inTransaction('delete from app_private.account_secrets where account_id = (select id from app_public.accounts where username = $1)', ['emma'], 'commit')))
      .toEqual({ fingerprint: true, journal: true });
  });

  it('an accepted request through the API: both see it; a refused one: neither', async () => {
    const accepted = await changes(async () => {
      const response = await env.request('POST', '/api/calendar-feeds/', { token: tokens.get('alice'), body: { kind: 'planning' } });
      expect(response.status).toBe(201);
    });
    expect(accepted).toEqual({ fingerprint: true, journal: true });
    expect(await changes(() => env.request('POST', '/api/absences/', { token: tokens.get('alice'), rawBody: '{"comment":"avant\\u0000après"}' })))
      .toEqual({ fingerprint: false, journal: false });
  });
});
