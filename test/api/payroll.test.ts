import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let E: Record<string, number>;
let EST: Record<string, number>;

async function typeId(code: string): Promise<number> {
  return (await env.db.query<{ id: number }>('select id from app_public.absence_types where code = $1', [code])).rows[0]!.id;
}

beforeAll(async () => {
  env = await startTestEnv();
  E = env.ids.employees!;
  EST = env.ids.establishments!;

  // 20 more employees (E3) with a contract, and one with two contracts in November: 37 lines.
  await env.db.query(`
    with created as (
      insert into app_public.employees (first_name, last_name, main_establishment_id)
      select 'Agent', 'Zz' || lpad(g::text, 3, '0'), $1 from generate_series(1, 20) g
      returning id
    )
    insert into app_public.contracts (employee_id, contract_type_id, start_date, weekly_hours)
    select id, 1, '2025-01-01', 35 from created`, [EST.E3]);
  const { rows } = await env.db.query<{ id: number }>(
    "insert into app_public.employees (first_name, last_name, main_establishment_id) values ('Yann', 'Zed', $1) returning id", [EST.E3]);
  await env.db.query(
    `insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, weekly_hours) values
       ($1, 2, '2026-10-01', '2026-11-15', 35), ($1, 1, '2026-11-16', null, 35)`, [rows[0]!.id]);

  // Alice's absences in November 2026 (Monday to Friday, E1-J: 7.5 planned hours a day).
  const insert = `insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half,
                    start_time, end_time, status, counted_quantity, counted_unit, comment, decision_reason)
                  values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;
  const cp = await typeId('CP');
  await env.db.query(insert, [E.alice, cp, '2026-11-23', '2026-11-27', null, null, null, null, 'validated', 5, 'day', 'Vacances en famille', null]);
  await env.db.query(insert, [E.alice, cp, '2026-11-30', '2026-12-04', null, null, null, null, 'cancellation_requested', 5, 'day', null, null]);
  await env.db.query(insert, [E.alice, await typeId('MAL'), '2026-11-18', '2026-11-18', 'afternoon', 'afternoon', null, null, 'validated', 0.5, 'day', 'Rendez-vous médical', 'Certificat reçu']);
  await env.db.query(insert, [E.alice, await typeId('DLG_CSE'), '2026-11-19', '2026-11-19', null, null, '09:00', '11:00', 'validated', 2, 'hour', null, null]);
  await env.db.query(insert, [E.alice, cp, '2026-11-09', '2026-11-10', null, null, null, null, 'pending', 2, 'day', 'En attente', null]);
  await env.db.query(insert, [E.alice, cp, '2026-11-12', '2026-11-13', null, null, null, null, 'refused', 2, 'day', 'Commentaire secret', 'Motif de refus confidentiel']);

  // The CP 2026 journal: 5 days taken during November, 1 day planned in December.
  const counter = (await env.db.query<{ id: number }>("select id from app_public.counters where employee_id = $1 and code = 'CP' and year = 2026", [E.alice])).rows[0]!.id;
  await env.db.query(`insert into app_private.counter_movements (counter_id, bucket, quantity, kind, created_at) values
    ($1, 'taken', 5, 'consumption', '2026-11-20T10:00:00+01:00'), ($1, 'planned', 1, 'reservation', '2026-12-02T10:00:00+01:00')`, [counter]);
});
afterAll(async () => {
  await env?.close();
});

describe('GET /api/payroll/options/', () => {
  it('lists the establishments of the payroll perimeter', async () => {
    const paie = await env.get('/api/payroll/options/', await env.login('paie'));
    expect(paie.status).toBe(200);
    expect(paie.headers.get('cache-control')).toBe('no-store');
    expect(paie.body).toEqual({
      establishments: [
        { id: EST.E3, name: 'ESAT du Moulin' },
        { id: EST.E1, name: 'Foyer Les Tilleuls' },
        { id: EST.E2, name: 'IME Les Peupliers' },
      ],
    });
    expect((await env.get('/api/payroll/options/', await env.login('rh2'))).body).toEqual({ establishments: [{ id: EST.E2, name: 'IME Les Peupliers' }] });
  });

  it('is refused without employee.view_payroll, and read only', async () => {
    for (const user of ['mgr1', 'da', 'alice']) expect((await env.get('/api/payroll/options/', await env.login(user))).status).toBe(403);
    const post = await env.post('/api/payroll/options/', await env.login('paie'), {});
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toContain('GET');
  });
});

describe('GET /api/payroll/', () => {
  it('requires the month, under month', async () => {
    const token = await env.login('paie');
    const missing = await env.get('/api/payroll/', token);
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ month: ['Ce champ est obligatoire.'] });
    for (const month of ['2026-13', '2026-1', 'novembre', '']) {
      const res = await env.get(`/api/payroll/?month=${month}`, token);
      expect(res.status).toBe(400);
      expect(res.body.month).toHaveLength(1);
    }
  });

  it('pages 25 lines, one per contract, with no-store', async () => {
    const token = await env.login('paie');
    const first = await env.get('/api/payroll/?month=2026-11&page_size=5', token);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body.count).toBe(37);
    expect(first.body.results).toHaveLength(25);
    expect(first.body.previous).toBeNull();
    expect(first.body.next).toMatch(/\/api\/payroll\/\?month=2026-11&page_size=5&page=2$/);
    const second = await env.get('/api/payroll/?month=2026-11&page=2', token);
    expect(second.body.results).toHaveLength(12);
    expect(second.body.next).toBeNull();
    expect(second.body.previous).toMatch(/\/api\/payroll\/\?month=2026-11$/);
    expect((await env.get('/api/payroll/?month=2026-11&page=3', token)).status).toBe(404);
    // The employee with two contracts in the month has two lines.
    const yann = [...first.body.results, ...second.body.results].filter((l: { employee_name: string }) => l.employee_name === 'Yann Zed');
    expect(yann.map((l: { period: object }) => l.period)).toEqual([
      { start: '2026-11-01', end: '2026-11-15' },
      { start: '2026-11-16', end: '2026-11-30' },
    ]);
    // December: the CDD of Yann has ended, emma's mission goes on.
    expect((await env.get('/api/payroll/?month=2026-12', token)).body.count).toBe(36);
  });

  it('refuses writes (405)', async () => {
    const token = await env.login('paie');
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await env.request(method, '/api/payroll/?month=2026-11', { token, body: {} });
      expect(res.status).toBe(405);
    }
  });

  it('stays within the permission perimeter; an establishment not authorised is refused', async () => {
    const rh2 = await env.login('rh2');
    const own = await env.get('/api/payroll/?month=2026-11', rh2);
    expect(own.status).toBe(200);
    expect(own.body.results.map((l: { employee: number }) => l.employee).sort()).toEqual([E.bruno, E.chloe, E.gaelle, E.mgr2, E.rh2].sort());
    const e2 = await env.get(`/api/payroll/?month=2026-11&establishment=${EST.E2}`, rh2);
    expect(e2.body.count).toBe(5);
    const e1 = await env.get(`/api/payroll/?month=2026-11&establishment=${EST.E1}`, rh2);
    expect(e1.status).toBe(403);
    expect(e1.body.detail).toMatch(/pas autorisé/);
    expect((await env.get('/api/payroll/?month=2026-11&establishment=999999', await env.login('paie'))).status).toBe(403);
    for (const user of ['mgr1', 'alice', 'staff']) expect((await env.get('/api/payroll/?month=2026-11', await env.login(user))).status).toBe(403);

    const e3 = await env.get(`/api/payroll/?month=2026-11&establishment=${EST.E3}&search=mercier`, await env.login('paie'));
    expect(e3.body.results.map((l: { employee: number }) => l.employee)).toEqual([E.david]);
  });

  it('a line holds the contract, planned and worked hours, absences by reason and counters at month end', async () => {
    const res = await env.get('/api/payroll/?month=2026-11&search=martin', await env.login('paie'));
    expect(res.body.count).toBe(1);
    const line = res.body.results[0];
    expect(line).toMatchObject({
      employee: E.alice,
      employee_name: 'Alice Martin',
      main_establishment: EST.E1,
      main_establishment_name: 'Foyer Les Tilleuls',
      month: '2026-11',
      period: { start: '2026-11-01', end: '2026-11-30' },
      contract: { type_code: 'CDI', start_date: '2020-01-01', end_date: null, job_title: 'Éducatrice spécialisée', weekly_hours: '35.00' },
      // 21 working days of 7.5 hours.
      planned_hours: '157.50',
      // CP 23-27 (5 × 7.5) + CP 30 (7.5) + half a day of MAL (3.75) + 2 hours of delegation.
      absence_hours: '50.75',
      worked_hours: '106.75',
    });
    expect(line.absences).toEqual([
      {
        type: expect.any(Number), type_code: 'CP', type_name: 'Congés payés', unit: 'day', quantity: '6.00',
        absences: [
          { date_start: '2026-11-23', date_end: '2026-11-27', start_half: null, end_half: null, start_time: null, end_time: null, quantity: '5.00' },
          { date_start: '2026-11-30', date_end: '2026-11-30', start_half: null, end_half: null, start_time: null, end_time: null, quantity: '1.00' },
        ],
      },
      {
        type: expect.any(Number), type_code: 'DLG_CSE', type_name: expect.any(String), unit: 'hour', quantity: '2.00',
        absences: [{ date_start: '2026-11-19', date_end: '2026-11-19', start_half: null, end_half: null, start_time: '09:00', end_time: '11:00', quantity: '2.00' }],
      },
      {
        type: expect.any(Number), type_code: 'MAL', type_name: expect.any(String), unit: 'day', quantity: '0.50',
        absences: [{ date_start: '2026-11-18', date_end: '2026-11-18', start_half: 'afternoon', end_half: 'afternoon', start_time: null, end_time: null, quantity: '0.50' }],
      },
    ]);
    // Never comments, decision reasons or documents; pending and refused requests do not count.
    const text = JSON.stringify(line);
    for (const hidden of ['comment', 'decision_reason', 'documents', 'Commentaire secret', 'Motif de refus', 'Vacances', 'Certificat']) {
      expect(text).not.toContain(hidden);
    }
    const facts = { acquisition: expect.toBeOneOf([null, 'opening', 'monthly']), to_come: expect.any(String), carried_over: expect.any(String),
      carry_over_expires_on: null, carry_over_expiring: null, year_end: expect.toBeOneOf([null, expect.any(Object)]) };
    expect(line.counters).toEqual([
      { code: 'CP', name: 'Congés payés', unit: 'day', acquired: '25.00', taken: '5.00', planned: '0.00', remaining: '20.00', ...facts },
      { code: 'CT', name: expect.any(String), unit: 'day', acquired: '6.00', taken: '0.00', planned: '0.00', remaining: '6.00', ...facts },
      { code: 'RC', name: expect.any(String), unit: 'hour', acquired: '14.00', taken: '0.00', planned: '0.00', remaining: '14.00', ...facts },
      { code: 'DLG_CSE', name: expect.any(String), unit: 'hour', acquired: '20.00', taken: '0.00', planned: '0.00', remaining: '20.00', ...facts },
    ]);
    // Issue 27 point 5: each counter's year as « Mes compteurs » shows it, the same figures as GET /api/counters/.
    const mine = await env.get('/api/counters/?year=2026', await env.login('alice'));
    expect(mine.status).toBe(200);
    const yearFacts = (c: Record<string, unknown>) => ({ acquisition: c.acquisition, to_come: c.to_come, carried_over: c.carried_over,
      carry_over_expires_on: c.carry_over_expires_on, carry_over_expiring: c.carry_over_expiring, year_end: c.year_end });
    for (const counter of line.counters) expect(yearFacts(counter)).toEqual(yearFacts(mine.body[counter.code]));
    expect(line.counters[0].year_end).toEqual({ carries_over: '19.00', expires: '0.00', carry_over_until: '2027-05-31' });
    // At the end of December the reservation written on 2 December shows.
    const december = await env.get('/api/payroll/?month=2026-12&search=martin', await env.login('paie'));
    expect(december.body.results[0].counters[0]).toMatchObject({ code: 'CP', taken: '5.00', planned: '1.00', remaining: '19.00' });
    // December holds the rest of the straddling leave: 1 to 4 December (Tuesday to Friday).
    expect(december.body.results[0].absences[0]).toMatchObject({ type_code: 'CP', quantity: '4.00' });
  });

  it('a contract starting in the month counts from its first day', async () => {
    const res = await env.get('/api/payroll/?month=2026-11&search=emma', await env.login('paie'));
    expect(res.body.results[0]).toMatchObject({
      employee: E.emma,
      period: { start: '2026-11-02', end: '2026-11-30' },
      contract: { type_code: 'Intérim', end_date: '2026-12-31' },
      // 21 mornings of 7 hours (paid break).
      planned_hours: '147.00',
      worked_hours: '147.00',
      counters: [],
    });
  });
});
