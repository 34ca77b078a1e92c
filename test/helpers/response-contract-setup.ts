/**
 * Per test file: how many answers were checked against the OpenAPI document, written where
 * `npm test` sums them (test/run-all.ts prints the total); and the results of the API
 * functions that the server calls outside REST (the back-office's pages and forms, which run a
 * route's SQL call or name an API function: `select app_public.f(...) as result`), checked
 * against what their routes document (test/helpers/response-contract.ts, checkFunctionResult).
 * The server of a test runs in this process: its connections are pg.Client's.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, expect } from 'vitest';
import { ROOT_DIR } from '../../src/db/migrate.js';
import {
  checkedFunctionResults, checkedResponses, checkFunctionResult, documentedFunction, ResponseContractError,
} from './response-contract.js';

export const CONTRACT_COUNTS_DIR = path.join(ROOT_DIR, 'test-results', 'response-contract');

/** A call of one API function answering its JSON as `result` (REST's own calls cast it to text, and are checked as answers). */
const API_FUNCTION_CALL = /^\s*select\s+(app_public\.[a-z_][a-z0-9_]*)\([^()]*\)\s+as\s+result\s*$/i;

const mismatches: string[] = [];
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function observedQuery(this: pg.Client, ...args: unknown[]) {
  const answer = query.apply(this, args);
  const config = args[0] as string | { text?: unknown } | undefined;
  const text = typeof config === 'string' ? config : config?.text;
  const fn = typeof text === 'string' ? API_FUNCTION_CALL.exec(text)?.[1] : undefined;
  if (!fn || !documentedFunction(fn, /\bp_public_url\s*=>/.test(text as string))) return answer;
  if (typeof (answer as Promise<unknown> | undefined)?.then !== 'function') return answer;
  return (answer as Promise<pg.QueryResult>).then((result) => {
    const row = result.rows?.[0] as Record<string, unknown> | undefined;
    if (row && 'result' in row) {
      try {
        checkFunctionResult(fn, row.result, `a call of ${fn} outside REST (the back-office's)`);
      } catch (error) {
        // Recorded, not thrown: the server's page would only show a 500; the test fails below.
        mismatches.push((error as Error).message);
      }
    }
    return result;
  });
} as typeof pg.Client.prototype.query;

afterEach(() => {
  if (mismatches.length) throw new ResponseContractError(mismatches.splice(0).join('\n'));
});

afterAll(async () => {
  const file = expect.getState().testPath ?? 'unknown';
  const name = createHash('sha256').update(file).digest('hex').slice(0, 16);
  await mkdir(CONTRACT_COUNTS_DIR, { recursive: true });
  await writeFile(path.join(CONTRACT_COUNTS_DIR, `${name}.json`), JSON.stringify({
    file: path.relative(ROOT_DIR, file), checked: checkedResponses(), functionResults: checkedFunctionResults(),
  }));
});
