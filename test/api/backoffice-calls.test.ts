/**
 * The back-office calls rules by name (issue 26): every list, read and write of
 * src/backoffice/resources/ is a declared call (src/backoffice/calls.ts), compared with pg_proc at
 * start-up like the routes' calls. Here: every declaration fits, each resource lists and writes
 * through a route of the manifest or a declaration, no resource holds SQL text, and a declaration
 * with a wrong argument name stops the start-up, naming it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declareCall, declaredCalls, statement } from '../../src/backoffice/calls.js';
import { RESOURCES } from '../../src/backoffice/resources/index.js';
import { callMismatches } from '../../src/http/manifest-check.js';
import { createApp } from '../../src/server.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const RESOURCE_DIR = path.join(import.meta.dirname, '../../src/backoffice/resources');

describe('the back-office declarations against pg_proc', () => {
  it('every declared call fits its function', async () => {
    expect(declaredCalls().length).toBeGreaterThan(40);
    expect(await callMismatches(env.db, declaredCalls())).toEqual([]);
  });

  it('every list, read and form of the registry goes through a manifest route or a declared call', () => {
    const declared = new Set(declaredCalls());
    for (const resource of RESOURCES) {
      const { list, detail, create } = resource;
      expect(Boolean(list.operationId) !== Boolean(list.call), `${resource.slug}: list`).toBe(true);
      if (list.call) expect(declared.has(list.call), `${resource.slug}: list`).toBe(true);
      if (detail) {
        expect(Boolean(detail.operationId) !== Boolean(detail.read), `${resource.slug}: detail`).toBe(true);
        if (detail.read) expect(declared.has(detail.read), `${resource.slug}: detail`).toBe(true);
      }
      for (const form of [create, detail?.edit, ...(detail?.actions ?? [])]) {
        if (!form) continue;
        expect(Boolean(form.operationId) !== Boolean(form.call), `${resource.slug}: ${form.title}`).toBe(true);
        if (form.call) expect(declared.has(form.call), `${resource.slug}: ${form.title}`).toBe(true);
      }
    }
  });

  it('no resource module holds SQL text or runs a query itself', () => {
    for (const file of readdirSync(RESOURCE_DIR).filter((name) => name.endsWith('.ts'))) {
      const source = readFileSync(path.join(RESOURCE_DIR, file), 'utf8');
      expect(source, file).not.toMatch(/['"`]\s*(select|insert|update|delete|with|savepoint)\s/i);
      expect(source, file).not.toMatch(/\.query\s*[<(]/);
    }
  });

  it('a call is named arguments and placeholders only: values never enter its text', () => {
    const adjust = declaredCalls().find((call) => call.fn === 'app_public.counter_adjust')!;
    expect(statement(adjust, { id: 7, body: { bucket: 'taken', quantity: 1.5, reason: "l'an dernier" } })).toEqual({
      text: 'select app_public.counter_adjust(p_id => $1::int, p_bucket => $2::text, p_quantity => $3::numeric, p_reason => $4::text) as result',
      values: [7, 'taken', 1.5, "l'an dernier"],
    });
  });
});

describe('a wrong declaration stops the start-up', () => {
  it('an argument renamed in a back-office declaration is refused by createApp, naming the declaration, the function and both lists', async () => {
    const adjust = declaredCalls().find((call) => call.fn === 'app_public.counter_adjust')!;
    const planted = declareCall('planted adjustment', adjust.fn, adjust.args.map((arg) => (arg.name === 'p_quantity' ? { ...arg, name: 'p_amount' } : arg)));
    expect(await callMismatches(env.db, [planted])).toEqual([
      'back-office planted adjustment: app_public.counter_adjust takes (p_id, p_bucket, p_quantity, p_reason), the declaration gives (p_id, p_bucket, p_amount, p_reason)',
    ]);
    const unknown = declareCall('planted choices', 'app_hidden.establishment_choice', [], { rows: true });
    expect(await callMismatches(env.db, [unknown])).toEqual(['back-office planted choices: app_hidden.establishment_choice does not exist']);
    await expect(createApp(env.config, { logger: pino({ level: 'silent' }) })).rejects.toThrow(
      /does not fit the database:\nback-office planted adjustment: app_public\.counter_adjust takes .*, the declaration gives \(p_id, p_bucket, p_amount, p_reason\)\nback-office planted choices: app_hidden\.establishment_choice does not exist$/);
  });
});
