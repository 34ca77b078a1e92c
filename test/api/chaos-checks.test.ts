/**
 * The end-of-run checks of `npm run chaos` (bench/chaos/checks.ts) catch what they are for:
 * an acknowledged write that is absent or in another state, a half-written day change, a file
 * without its row. (The run itself is a step of `npm test`, test/run-all.ts.)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChecks } from '../../bench/chaos/checks.js';
import { Ledger } from '../../bench/chaos/ledger.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { PDF, typeIds } from './absence-helpers.js';

let env: TestEnv;
let T: Record<string, number>;

beforeAll(async () => {
  env = await startTestEnv();
  T = await typeIds(env);
});
afterAll(async () => {
  await env?.close();
});

describe('chaos checks', () => {
  it('report lost writes, half-written items and files without rows; accept the state of a decision without answer', async () => {
    const alice = await env.login('alice');
    const absence = await env.post('/api/absences/', alice, {
      employee: env.ids.employees!.alice, type: T.FOR, date_start: '2026-12-08', date_end: '2026-12-08',
    });
    expect(absence.status).toBe(201);
    const other = await env.post('/api/absences/', alice, {
      employee: env.ids.employees!.alice, type: T.FOR, date_start: '2026-12-09', date_end: '2026-12-09',
    });
    expect(other.status).toBe(201);
    const change = await env.post('/api/shift-change-requests/', alice, { date: '2026-12-10', reason: 'urgence', is_remote: true });
    expect(change.status).toBe(201);

    const ledger = new Ledger();
    ledger.created('absence', 999_999);
    ledger.created('absence', absence.body.id);
    ledger.decided('absence', absence.body.id, 'validated'); // acknowledged, but the database says pending
    ledger.created('absence', other.body.id);
    ledger.decisionUncertain('absence', other.body.id, 'refused'); // no answer: pending or refused are both fine
    ledger.created('shift_change_request', change.body.id);
    // Half-written on purpose: validated without its day modification, behind the API's back.
    await env.db.query("update app_public.shift_change_requests set status = 'validated', version = version + 1 where id = $1", [change.body.id]);
    const orphan = 'f'.repeat(32);
    await mkdir(path.join(env.config.storageDir, 'ff'), { recursive: true });
    await writeFile(path.join(env.config.storageDir, 'ff', orphan), PDF);

    const result = await runChecks(env.config.databaseUrl, env.config.storageDir, ledger);
    expect(result.lost).toEqual([
      'absence 999999: acknowledged, absent',
      `absence ${absence.body.id}: acknowledged validated, found pending`,
      `shift_change_request ${change.body.id}: acknowledged pending, found validated`,
    ]);
    expect(result.halfWritten).toContain(`validated day change without its day modification: request ${change.body.id}`);
    expect(result.halfWritten).toContain('1 file(s) and 0 partial file(s) without a row, for 0 upload(s) without a definite answer');
    expect(result.sweptFiles).toBe(1);
  });
});
