import fc from 'fast-check';
import type { TestEnv } from './server.js';
import { databaseFingerprint } from './fingerprint.js';
import { bodyFor, isFieldErrorEnvelope, writeOperations, type WriteOperation } from './fuzz.js';
import { MULTIPART_CONTENT_TYPE, deepJson, multipartBytes, shapeFor, type BodyShape } from './fuzz-bodies.js';
import { ResponseContractError } from './response-contract.js';
import { eventually, openDescriptors, partFiles, rawRequest, storedFiles } from './raw-http.js';

export const FUZZ_ACCOUNTS = [null, 'root', 'admin', 'rh1', 'rh2', 'da', 'mgr1', 'mgr2', 'paie', 'alice', 'bruno', 'emma'] as const;

export interface FuzzCase {
  op: WriteOperation;
  account: (typeof FUZZ_ACCOUNTS)[number];
  ids: number[];
  body: { raw: string };
  shape: BodyShape;
}

export interface FuzzFailure {
  case: FuzzCase;
  status: number;
  problem: string;
  body: string;
}

/*
 * An error nobody handles would end a server process. The server runs inside the fuzzing
 * process: these listeners count such errors instead (each one a process exit in production)
 * and let the run go on, so that every case is checked and the count reported.
 */
const processFailures: string[] = [];
let listening = false;
function listenForProcessFailures(): void {
  if (listening) return;
  listening = true;
  process.on('uncaughtException', (error) => processFailures.push(`uncaught exception: ${error.message}`));
  process.on('unhandledRejection', (reason) => processFailures.push(`unhandled rejection: ${String(reason)}`));
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
      shape: shapeFor(op),
    }),
  );
}

/** Sends a case as its shape says; null when the client gave up before any answer (aborted upload). */
async function send(env: TestEnv, c: FuzzCase, path: string, token: string | null): Promise<{ status: number; text: string; body: unknown } | null> {
  const { shape } = c;
  if (shape.kind === 'json' || shape.kind === 'deep-json') {
    const rawBody = c.op.method === 'DELETE' ? undefined : shape.kind === 'json' ? c.body.raw : deepJson(shape.levels, shape.bracket);
    return env.request(c.op.method, path, { token, rawBody });
  }
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  let body: Buffer = Buffer.from(c.op.method === 'DELETE' ? '' : c.body.raw, 'utf8');
  let extra: { contentLength?: number; then?: 'abort' } = {};
  if (shape.kind === 'multipart') {
    body = multipartBytes(shape, c.body.raw, c.op.multipart!.files[0]!);
    headers['content-type'] = MULTIPART_CONTENT_TYPE;
    if (shape.ending === 'aborted') extra = { contentLength: body.length + 100_000, then: 'abort' };
  } else {
    headers['content-type'] = 'application/json';
  }
  const response = await rawRequest(env.url, { method: c.op.method, path, headers, body, ...extra }, 60_000);
  if (!response) return null;
  let parsed: unknown = response.text;
  try {
    parsed = JSON.parse(response.text);
  } catch {
    // not JSON: kept as text
  }
  return { ...response, body: parsed };
}

function pathOf(c: FuzzCase): string {
  let path = c.op.path;
  c.op.pathParams.forEach((name, i) => {
    const value = c.shape.kind === 'path' && i === 0 ? c.shape.segment : String(c.ids[i]);
    path = path.replace(`{${name}}`, value);
  });
  return path;
}

/**
 * Runs one generated request and checks the properties: the process survives (no error left
 * unhandled); no 5xx; a 400 is keyed by field or non_field_errors; a refused request (4xx, or
 * an upload cut off) leaves the database and the stored files exactly as they were; no
 * upload leaves a descriptor open on the storage directory or a .part file behind.
 */
export async function runFuzzCase(
  env: TestEnv, tokens: Map<string, string>, c: FuzzCase,
  // The long run passes the write journal's mark (test/helpers/fingerprint.ts), equal in what it detects.
  fingerprint: (db: TestEnv['db']) => Promise<string> = databaseFingerprint,
): Promise<FuzzFailure | null> {
  listenForProcessFailures();
  const failuresBefore = processFailures.length;
  const storage = env.config.storageDir;
  const [before, filesBefore] = await Promise.all([fingerprint(env.db), storedFiles(storage)]);
  const token = c.account ? tokens.get(c.account) ?? null : null;
  let response: Awaited<ReturnType<typeof send>>;
  try {
    response = await send(env, c, pathOf(c), token);
  } catch (error) {
    // An answer the OpenAPI document does not describe (checked by the test client).
    if (error instanceof ResponseContractError) return { case: c, status: 0, problem: 'answer not in the OpenAPI document', body: error.message };
    // The client's time limit: the server kept the request hanging.
    return { case: c, status: 0, problem: 'no answer', body: (error as Error).message };
  }
  const status = response?.status ?? 0;
  const fail = (problem: string): FuzzFailure => ({ case: c, status, problem, body: (response?.text ?? '(no answer)').slice(0, 500) });
  if (c.shape.kind === 'multipart') {
    const released = await eventually(async () =>
      (await partFiles(storage)).length === 0 && !(await openDescriptors('self')).some((target) => target.startsWith(storage)));
    if (!released) return fail('upload left a .part file or an open descriptor');
  }
  if (processFailures.length > failuresBefore) return fail(`process would have exited (${processFailures.at(-1)})`);
  if (status >= 500) return fail('server error');
  if (status === 400 && !isFieldErrorEnvelope(response!.body)) return fail('400 not keyed by field');
  if (status >= 400 || response === null) {
    const [after, filesAfter] = await Promise.all([fingerprint(env.db), storedFiles(storage)]);
    if (after !== before) return fail('refused request changed the database');
    if (filesAfter.join() !== filesBefore.join()) return fail('refused request changed the stored files');
  }
  return null;
}

/** Process-ending errors seen so far (uncaught exceptions, unhandled rejections). */
export function processFailureCount(): number {
  return processFailures.length;
}

interface FuzzAccountState {
  id: number;
  passwordHash: string | null;
}

/** The fuzz accounts as they start: active, with their fixture password. */
export async function fuzzAccountStates(env: TestEnv): Promise<FuzzAccountState[]> {
  const { rows } = await env.db.query<{ id: number; password_hash: string | null }>(
    `select a.id, s.password_hash from app_public.accounts a left join app_private.account_secrets s on s.account_id = a.id
     where a.username = any($1)`, [FUZZ_ACCOUNTS.filter(Boolean)]);
  return rows.map((row) => ({ id: row.id, passwordHash: row.password_hash }));
}

/**
 * Reopens the fuzz accounts a case closed and gives back the passwords a case changed, so
 * that later cases still test the rules as each role, not the 401 path.
 */
export async function restoreFuzzAccounts(env: TestEnv, states: FuzzAccountState[]): Promise<void> {
  for (const state of states) {
    await env.db.query('update app_public.accounts set is_active = true where id = $1 and not is_active', [state.id]);
    await env.db.query('update app_private.account_secrets set password_hash = $2 where account_id = $1 and password_hash is distinct from $2',
      [state.id, state.passwordHash]);
  }
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
