/**
 * Issue 27 point 5 over HTTP: GET /api/counters/ tells each counter's year — how it acquires,
 * what is still to come, what was carried over and until when, what the year's end carries over
 * and loses — for the employee and for a manager of the perimeter; another employee gets 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;

beforeAll(async () => {
  env = await startTestEnv();
  // The opening of 2027 on 16 November 2026 (what the job and the back-office run).
  await env.db.query("select app_private.counters_open_year(2027, null, '2026-11-16')");
});
afterAll(async () => {
  await env?.close();
});

describe('GET /api/counters/ and the leave year', () => {
  it('next year: acquired so far, to come, and what the year end would carry over', async () => {
    const chloe = await env.login('chloe');
    const res = await env.get('/api/counters/?year=2027', chloe);
    expect(res.status).toBe(200);
    expect(res.body.CP).toMatchObject({
      year: 2027, acquisition: 'monthly', acquired: '20.83', to_come: '4.17', carried_over: '0.00',
      carry_over_expires_on: null, carry_over_expiring: null,
      year_end: { carries_over: '20.83', expires: '0.00', carry_over_until: '2028-05-31' },
    });
    expect(res.body.CT).toMatchObject({ acquisition: 'opening', acquired: '9.00', to_come: '0.00', year_end: { carries_over: '0.00', expires: '9.00', carry_over_until: null } });
  });

  it('this year: what carries over and what is lost on 31 December, by the rules', async () => {
    const chloe = await env.login('chloe');
    const res = await env.get('/api/counters/', chloe);
    const cp = res.body.CP;
    expect(cp.acquisition).toBeNull();
    expect(cp.year_end).toEqual({ carries_over: cp.remaining, expires: '0.00', carry_over_until: '2027-05-31' });
    expect(res.body.RTT.year_end).toEqual({ carries_over: '0.00', expires: res.body.RTT.remaining, carry_over_until: null });
  });

  it('after the year end: carried over into next year, until 31 May, and what expires then if not taken', async () => {
    const remaining = (await env.get('/api/counters/', await env.login('chloe'))).body.CP.remaining as string;
    await env.db.query("select app_private.counters_close_year(2026, '2027-01-02')");
    env.setNow('2027-02-01T10:00:00+01:00');
    try {
      const res = await env.get('/api/counters/', await env.login('chloe'));
      expect(res.body.CP).toMatchObject({ year: 2027, carried_over: remaining, carry_over_expires_on: '2027-05-31', carry_over_expiring: remaining });
      const manager = await env.get(`/api/counters/?employee=${env.ids.employees!.chloe}`, await env.login('mgr2'));
      expect(manager.status).toBe(200);
      expect(manager.body.CP.carried_over).toBe(remaining);
      const other = await env.get(`/api/counters/?employee=${env.ids.employees!.chloe}`, await env.login('alice'));
      expect(other.status).toBe(404);
    } finally {
      env.setNow(null);
    }
  });
});
