/**
 * GET /api/counters/ over HTTP, and the counter journal under parallel requests: twenty
 * simultaneous creations against one counter never overdraw it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { runScheduledJob } from '../../worker/jobs.js';
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
  for (const user of ['alice', 'bruno', 'mgr1', 'mgr2', 'da', 'paie', 'rh1']) tokens[user] = await env.login(user);
});
afterAll(async () => {
  await env?.close();
});

const labels = { acquired: 'Acquis', taken: 'Pris', planned: 'Planifiés', remaining: 'Restant' };

describe('GET /api/counters/', () => {
  it('own counters of the current year, keyed by code, with the labels', async () => {
    const res = await env.get('/api/counters/', as('alice'));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['CP', 'CT', 'DLG_CSE', 'RC']);
    expect(res.body.CP).toMatchObject({
      code: 'CP', name: 'Congés payés', unit: 'day', year: 2026, acquired: '25.00', taken: '0.00', planned: '0.00', remaining: '25.00', labels,
    });
    expect(res.body.RC).toMatchObject({ unit: 'hour', acquired: '14.00' });
    const next = await env.get('/api/counters/?year=2027', as('alice'));
    expect(Object.keys(next.body)).toEqual(['CP']);
  });

  it('queue holders read their perimeter; others get 404', async () => {
    expect((await env.get(`/api/counters/?employee=${E.alice}`, as('mgr1'))).body.CP.acquired).toBe('25.00');
    expect((await env.get(`/api/counters/?employee=${E.alice}`, as('da'))).status).toBe(200);
    expect((await env.get(`/api/counters/?employee=${E.alice}`, as('rh1'))).status).toBe(200);
    const outside = await env.get(`/api/counters/?employee=${E.alice}`, as('mgr2'));
    expect(outside.status).toBe(404);
    expect(outside.body).toEqual({ detail: 'Salarié introuvable.' });
    expect((await env.get(`/api/counters/?employee=${E.alice}`, as('bruno'))).status).toBe(404);
    expect((await env.get(`/api/counters/?employee=${E.alice}`, as('paie'))).status).toBe(404);
    expect((await env.get('/api/counters/?employee=999999', as('rh1'))).status).toBe(404);
    expect((await env.get('/api/counters/')).status).toBe(401);
  });

  it('bad parameters: 400 under their name', async () => {
    const res = await env.get('/api/counters/?year=19', as('alice'));
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['year']);
    expect(Object.keys((await env.get('/api/counters/?employee=abc', as('alice'))).body)).toEqual(['employee']);
  });

  it('moves with the absences: Planifiés for a future request, Restant = Acquis - Pris - Planifiés', async () => {
    const created = await env.post('/api/absences/', as('alice'), { employee: E.alice, type: T.CP, date_start: '2026-12-21', date_end: '2026-12-24' });
    expect(created.status).toBe(201);
    const declared = await env.post('/api/absences/', as('mgr1'), { employee: E.alice, type: T.CP, date_start: '2026-11-09', date_end: '2026-11-10' });
    expect(declared.status).toBe(201);
    const res = await env.get('/api/counters/', as('alice'));
    expect(res.body.CP).toMatchObject({ acquired: '25.00', taken: '2.00', planned: '4.00', remaining: '19.00' });
  });
});

describe('parallel creations against one counter', () => {
  it('20 simultaneous requests on a counter of 6 days: 6 accepted, 14 refused under counters, never overdrawn, journal = balance', async () => {
    // 20 distinct counted days of December 2026 (Monday to Saturday, without Christmas).
    const days: string[] = [];
    for (let day = 1; days.length < 20; day += 1) {
      const date = new Date(Date.UTC(2026, 11, day));
      if (date.getUTCDay() !== 0 && day !== 25) days.push(date.toISOString().slice(0, 10));
    }
    const token = as('bruno');
    const { rows } = await env.db.query(
      `insert into app_public.counters (employee_id, code, year) values ($1, 'CT', 2026) returning id`,
      [E.bruno],
    );
    const counterId = rows[0].id as number;
    await env.db.query(
      `insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment) values ($1, 'acquired', 6, 'grant', 'test')`,
      [counterId],
    );

    const responses = await Promise.all(
      days.map((date) => env.post('/api/absences/', token, { employee: E.bruno, type: T.CT, date_start: date })),
    );
    const statuses = responses.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(6);
    expect(statuses.filter((status) => status === 400)).toHaveLength(14);
    for (const res of responses.filter((r) => r.status === 400)) {
      expect(Object.keys(res.body)).toEqual(['counters']);
      expect(res.body.counters).toEqual(['Solde insuffisant sur le compteur CT 2026 : demande de 1 jour, solde disponible de 0 jour.']);
    }

    const counters = await env.get('/api/counters/', token);
    expect(counters.body.CT).toMatchObject({ acquired: '6.00', taken: '0.00', planned: '6.00', remaining: '0.00' });
    const journal = await env.db.query(
      `select sum(quantity) filter (where bucket = 'acquired') as acquired, sum(quantity) filter (where bucket = 'planned') as planned,
              count(*) filter (where kind = 'reservation')::int as reservations
       from app_private.counter_movements where counter_id = $1`,
      [counterId],
    );
    expect(journal.rows[0]).toEqual({ acquired: '6.00', planned: '6.00', reservations: 6 });
    const absences = await env.db.query(`select count(*)::int as n from app_public.absences where employee_id = $1 and type_id = $2`, [E.bruno, T.CT]);
    expect(absences.rows[0].n).toBe(6);
  }, 60_000);

  it('parallel creations on the same dates: one accepted, the others refused under date_start', async () => {
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => env.post('/api/absences/', as('alice'), { employee: E.alice, type: T.FOR, date_start: '2027-01-12' })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([201, 400, 400, 400, 400]);
    for (const res of responses.filter((r) => r.status === 400)) expect(Object.keys(res.body)).toEqual(['date_start']);
  });
});

describe('scheduled job consume_started_absences', () => {
  it('moves granted reservations that started from Planifiés to Pris, once', async () => {
    const declared = await env.post('/api/absences/', as('mgr1'), { employee: E.alice, type: T.CP, date_start: '2026-11-30', date_end: '2026-12-01' });
    expect(declared.status).toBe(201);
    const before = (await env.get('/api/counters/', as('alice'))).body.CP;
    // The job runs on the business date of the database clock (app_hidden.today()).
    const runOn = async (day: string): Promise<number> => {
      const client = await env.db.connect();
      try {
        await client.query("select set_config('app.frozen_now', $1, false)", [`${day}T00:07:00+01:00`]);
        const outcome = await runScheduledJob(client, 'consume_started_absences', null);
        if (outcome.status !== 'done') throw new Error(`job not run: ${JSON.stringify(outcome)}`);
        return outcome.result;
      } finally {
        await client.query("select set_config('app.frozen_now', '', false)");
        client.release();
      }
    };
    expect(await runOn('2026-11-29')).toBe(0);
    expect(await runOn('2026-11-30')).toBe(1);
    const after = (await env.get('/api/counters/', as('alice'))).body.CP;
    expect(Number(after.taken) - Number(before.taken)).toBe(2);
    expect(Number(before.planned) - Number(after.planned)).toBe(2);
    expect(after.remaining).toBe(before.remaining);
    expect(await runOn('2026-12-01')).toBe(0);
  });
});
