/**
 * What the decision panel asks the API (test/db/69 holds the rule): `can_decide` on the single
 * reads of an absence and of a day-change request, and the `establishment` filter of the
 * absences' queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { typeIds } from './absence-helpers.js';

let env: TestEnv;
let T: Record<string, number>;
let E: Record<string, number>;
const tokens: Record<string, string> = {};
const as = (user: string) => tokens[user]!;

beforeAll(async () => {
  env = await startTestEnv();
  T = await typeIds(env);
  E = env.ids.employees!;
  for (const user of ['alice', 'mgr1', 'mgr2', 'da', 'rh1']) tokens[user] = await env.login(user);
});
afterAll(async () => {
  await env?.close();
});

describe('can_decide on GET /api/absences/<id>/', () => {
  it('true for the deciders of the perimeter, false for the DA and the employee, false once decided', async () => {
    const filed = await env.post('/api/absences/', as('alice'), { employee: E.alice, type: T.CP, date_start: '2026-11-30', date_end: '2026-12-01' });
    expect(filed.status).toBe(201);
    const id = filed.body.id as number;
    const hint = async (user: string) => {
      const res = await env.get(`/api/absences/${id}/`, as(user));
      expect(res.status).toBe(200);
      return res.body.can_decide;
    };
    expect(await hint('mgr1')).toBe(true);
    expect(await hint('rh1')).toBe(true);
    expect(await hint('da')).toBe(false);
    expect(await hint('alice')).toBe(false);
    expect((await env.post(`/api/absences/${id}/validate/`, as('da'), { version: 1 })).status).toBe(403);
    expect((await env.post(`/api/absences/${id}/validate/`, as('mgr1'), { version: 1 })).status).toBe(200);
    expect(await hint('mgr1')).toBe(false);
  });

  it('lists carry no hint (single read only)', async () => {
    const res = await env.get('/api/absences/', as('mgr1'));
    expect(res.status).toBe(200);
    expect(res.body.results.length).toBeGreaterThan(0);
    for (const row of res.body.results) expect(row).not.toHaveProperty('can_decide');
  });
});

describe('can_decide on GET /api/shift-change-requests/<id>/', () => {
  it('true for the manager, false for the DA and the requester', async () => {
    const filed = await env.post('/api/shift-change-requests/', as('alice'), { date: '2026-11-23', reason: 'urgence', is_remote: true });
    expect(filed.status).toBe(201);
    const id = filed.body.id as number;
    const hint = async (user: string) => (await env.get(`/api/shift-change-requests/${id}/`, as(user))).body.can_decide;
    expect(await hint('mgr1')).toBe(true);
    expect(await hint('da')).toBe(false);
    expect(await hint('alice')).toBe(false);
    expect((await env.post(`/api/shift-change-requests/${id}/refuse/`, as('mgr1'), { version: 1, reason: 'Effectif insuffisant' })).status).toBe(200);
    expect(await hint('mgr1')).toBe(false);
  });
});

describe('GET /api/absences/?establishment=', () => {
  it('keeps the employees whose main or secondary workplace it is, inside the perimeter', async () => {
    const establishments = env.ids.establishments!;
    for (const [employee, date] of [['bruno', '2026-12-07'], ['chloe', '2026-12-08']] as const) {
      expect((await env.post('/api/absences/', as('rh1'), { employee: E[employee], type: T.FOR, date_start: date })).status).toBe(201);
    }
    const names = async (user: string, establishment: number) => {
      const res = await env.get(`/api/absences/?establishment=${establishment}&page_size=200`, as(user));
      expect(res.status).toBe(200);
      return [...new Set(res.body.results.map((row: { employee: number }) => row.employee))].sort();
    };
    expect(await names('rh1', establishments.E2!)).toEqual([E.bruno, E.chloe].sort());
    expect(await names('mgr2', establishments.E1!)).toEqual([E.bruno]);
    expect((await env.get('/api/absences/?establishment=abc', as('rh1'))).status).toBe(400);
  });
});
