/**
 * /api/absences/ over HTTP: list, creation, detail, preview, correction and deletion, with
 * the declaration rules and the error rows of the SPEC that concern them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { auditVerbs, balance, notifications, typeIds } from './absence-helpers.js';

let env: TestEnv;
let T: Record<string, number>;
let E: Record<string, number>;
const tokens: Record<string, string> = {};
const as = (user: string) => tokens[user]!;

beforeAll(async () => {
  env = await startTestEnv();
  T = await typeIds(env);
  E = env.ids.employees!;
  for (const user of ['alice', 'bruno', 'chloe', 'emma', 'mgr1', 'mgr2', 'rh1', 'da', 'paie', 'admin']) tokens[user] = await env.login(user);
});
afterAll(async () => {
  await env?.close();
});

const body = (employee: string, type: string, date_start: string, date_end?: string, extra: Record<string, unknown> = {}) => ({
  employee: E[employee],
  type: T[type],
  date_start,
  ...(date_end ? { date_end } : {}),
  ...extra,
});

describe('POST /api/absences/', () => {
  it('an employee files for themselves: 201 pending, warnings list, has_recipient, Planifiés', async () => {
    const res = await env.post('/api/absences/', as('alice'), body('alice', 'CP', '2026-11-23', '2026-11-25', { comment: 'Vacances', status: 'validated' }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      employee: E.alice,
      type: T.CP,
      type_code: 'CP',
      date_start: '2026-11-23',
      date_end: '2026-11-25',
      status: 'pending',
      version: 1,
      counted_quantity: '3.00',
      counted_unit: 'day',
      comment: 'Vacances',
      decided_by: null,
      decided_at: null,
      has_recipient: true,
      documents: [],
    });
    expect(res.body.warnings).toEqual([
      'Délai de prévenance de 1 mois non respecté pour le motif « Congés payés » : demande du 16/11/2026 pour le 23/11/2026.',
    ]);
    expect(res.body.submitted_at).toBe('2026-11-16T10:00:00+01:00');
    expect(await balance(env, 'alice', 'CP')).toBe('25.00/0.00/3.00');
    expect(await notifications(env, 'mgr1')).toContain(
      "Nouvelle demande d'absence | info | Alice Martin demande une absence « Congés payés » du 23/11/2026 au 25/11/2026 (3 jours).",
    );
    expect(await auditVerbs(env, res.body.id)).toEqual(['Creation']);
  });

  it('a manager declares for an employee of the perimeter: born validated, nobody notified', async () => {
    const before = (await env.db.query('select count(*)::int as n from app_public.notifications')).rows[0].n;
    const res = await env.post('/api/absences/', as('mgr1'), body('bruno', 'FOR', '2026-11-18'));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'validated', decided_by: null, decided_at: null, submitted_at: null, has_recipient: null, warnings: [] });
    expect((await env.db.query('select count(*)::int as n from app_public.notifications')).rows[0].n).toBe(before);
  });

  it('a manager for own record: pending', async () => {
    const res = await env.post('/api/absences/', as('mgr1'), body('mgr1', 'FOR', '2026-11-19'));
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('pending');
  });

  it('400 under employee: an employee naming a colleague, a manager outside the perimeter', async () => {
    const colleague = await env.post('/api/absences/', as('alice'), body('bruno', 'FOR', '2026-12-01'));
    expect(colleague.status).toBe(400);
    expect(colleague.body).toEqual({ employee: ['Vous ne pouvez déposer une absence que pour vous-même.'] });
    const outside = await env.post('/api/absences/', as('mgr2'), body('alice', 'FOR', '2026-12-01'));
    expect(outside.status).toBe(400);
    expect(outside.body.employee[0]).toMatch(/pas dans votre périmètre/);
  });

  it('400 under date_start: more than 14 days back for an employee (with the limit date); 1 December of the previous year for a manager', async () => {
    const res = await env.post('/api/absences/', as('alice'), body('alice', 'FOR', '2026-11-01'));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      date_start: ['Une demande ne peut pas remonter au-delà de 14 jours : la date de début doit être au plus tôt le 02/11/2026.'],
    });
    const temp = await env.post('/api/absences/', as('emma'), body('emma', 'FOR', '2026-11-01'));
    expect(temp.status).toBe(400);
    expect(Object.keys(temp.body)).toEqual(['date_start']);
    const manager = await env.post('/api/absences/', as('mgr1'), body('alice', 'FOR', '2025-12-01'));
    expect(manager.status).toBe(201);
    const tooOld = await env.post('/api/absences/', as('mgr1'), body('alice', 'FOR', '2025-11-29'));
    expect(tooOld.status).toBe(400);
    expect(tooOld.body.date_start[0]).toMatch(/01\/12\/2025/);
  });

  it('400 on overlap, naming the existing absence and its number', async () => {
    const first = await env.post('/api/absences/', as('alice'), body('alice', 'FOR', '2026-12-07', '2026-12-08'));
    expect(first.status).toBe(201);
    const res = await env.post('/api/absences/', as('alice'), body('alice', 'CP', '2026-12-08', '2026-12-09'));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      date_start: [`Cette période chevauche l’absence n° ${first.body.id} (Formation, du 07/12/2026 au 08/12/2026).`],
    });
  });

  it('half-days: count half; a morning and an afternoon of different types do not overlap; a whole-day type refuses them', async () => {
    const morning = await env.post('/api/absences/', as('alice'), body('alice', 'MAL', '2026-11-16', '2026-11-16', { start_half: 'morning', end_half: 'morning' }));
    expect(morning.status).toBe(201);
    expect(morning.body.counted_quantity).toBe('0.50');
    const afternoon = await env.post('/api/absences/', as('alice'), body('alice', 'FOR', '2026-11-16', '2026-11-16', { start_half: 'afternoon', end_half: 'afternoon' }));
    expect(afternoon.status).toBe(201);
    const wrongWay = await env.post('/api/absences/', as('alice'), body('alice', 'MAL', '2026-11-17', '2026-11-17', { start_half: 'afternoon', end_half: 'morning' }));
    expect(wrongWay.status).toBe(400);
    expect(Object.keys(wrongWay.body)).toEqual(['start_half']);
    const whole = await env.post('/api/absences/', as('alice'), body('alice', 'CP', '2026-12-14', '2026-12-15', { end_half: 'morning' }));
    expect(whole.status).toBe(400);
    expect(whole.body).toEqual({ start_half: ['Le motif « Congés payés » se pose par journées entières : pas de demi-journée.'] });
    const badValue = await env.post('/api/absences/', as('alice'), body('alice', 'MAL', '2026-12-14', undefined, { start_half: 'evening' }));
    expect(badValue.status).toBe(400);
    expect(Object.keys(badValue.body)).toEqual(['start_half']);
  });

  it('hourly types: hours needed, end after start, one date; the quantity is the hours', async () => {
    const missing = await env.post('/api/absences/', as('alice'), body('alice', 'RC', '2026-12-02'));
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ start_time: ['Un motif en heures demande une heure de début et une heure de fin.'] });
    const twoDates = await env.post('/api/absences/', as('alice'), body('alice', 'RC', '2026-12-02', '2026-12-03', { start_time: '09:00', end_time: '11:00' }));
    expect(twoDates.status).toBe(400);
    expect(Object.keys(twoDates.body)).toEqual(['date_end']);
    const reversed = await env.post('/api/absences/', as('alice'), body('alice', 'RC', '2026-12-02', undefined, { start_time: '11:00', end_time: '09:00' }));
    expect(reversed.status).toBe(400);
    expect(Object.keys(reversed.body)).toEqual(['end_time']);
    const badTime = await env.post('/api/absences/', as('alice'), body('alice', 'RC', '2026-12-02', undefined, { start_time: '9h', end_time: '11:00' }));
    expect(badTime.status).toBe(400);
    expect(badTime.body.start_time).toEqual(['Heure invalide : format attendu HH:MM.']);
    const ok = await env.post('/api/absences/', as('alice'), body('alice', 'RC', '2026-12-02', undefined, { start_time: '09:00', end_time: '11:30' }));
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ counted_quantity: '2.50', counted_unit: 'hour', start_time: '09:00', end_time: '11:30', date_end: '2026-12-02' });
    expect(await balance(env, 'alice', 'RC')).toBe('14.00/0.00/2.50');
  });

  it('annual cap with Refuser: the requested days, the year total and the cap', async () => {
    expect((await env.post('/api/absences/', as('mgr1'), body('chloe', 'SYN_ELU', '2026-11-02', '2026-11-12'))).status).toBe(201); // 8 days on ouvrés
    const res = await env.post('/api/absences/', as('mgr1'), body('chloe', 'SYN_ELU', '2026-11-23', '2026-11-25'));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      date_end: [
        "Plafond annuel dépassé pour le motif « Mandat électif syndical » sur l’année 2026 : demande de 3 jours, total de 11 jours avec cette demande, pour un plafond de 10 jours.",
      ],
    });
  }, 30_000);

  it('contract types: refused naming the contract held', async () => {
    const res = await env.post('/api/absences/', as('bruno'), body('bruno', 'CET', '2026-12-01'));
    expect(res.status).toBe(400);
    expect(res.body.type).toEqual(['Le motif « Congé épargne-temps » est réservé aux contrats CDI ; le contrat en vigueur le 01/12/2026 est : CDD.']);
  });

  it('counters: no open counter, a duration above the remaining, each under counters, with nothing written', async () => {
    const journal = async () => (await env.db.query('select count(*)::int as n from app_private.counter_movements')).rows[0].n as number;
    const before = await journal();
    const none = await env.post('/api/absences/', as('bruno'), body('bruno', 'RTT', '2026-12-01'));
    expect(none.status).toBe(400);
    expect(none.body.counters[0]).toMatch(/^Aucun compteur RTT ouvert pour 2026/);
    const above = await env.post('/api/absences/', as('alice'), body('alice', 'CT', '2026-12-21', '2026-12-31'));
    expect(above.status).toBe(400);
    expect(above.body).toEqual({ counters: ['Solde insuffisant sur le compteur CT 2026 : demande de 9 jours, solde disponible de 6 jours.'] });
    expect(await journal()).toBe(before);
    expect(await balance(env, 'alice', 'CT')).toBe('6.00/0.00/0.00');
  });

  it('an unreadable body: 400 with field messages', async () => {
    const res = await env.post('/api/absences/', as('alice'), { employee: 'x', date_start: '2026-13-45' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ employee: ['Un nombre entier est attendu.'], type: ['Ce champ est obligatoire.'] });
    expect(res.body.date_start).toEqual(['Date invalide : format attendu AAAA-MM-JJ.']);
  });

  it('401 without authentication', async () => {
    expect((await env.post('/api/absences/', null, body('alice', 'FOR', '2026-12-01'))).status).toBe(401);
    expect((await env.get('/api/absences/')).status).toBe(401);
  });
});

describe('GET /api/absences/', () => {
  it('lists with the envelope, warnings null per row, filters on status, employee and window', async () => {
    const res = await env.get('/api/absences/?page_size=200', as('mgr1'));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['count', 'next', 'previous', 'results']);
    expect(res.body.count).toBeGreaterThan(3);
    for (const row of res.body.results) expect(row.warnings).toBeNull();
    const pending = await env.get(`/api/absences/?status=pending&employee=${E.alice}`, as('mgr1'));
    expect(pending.body.results.length).toBeGreaterThan(0);
    for (const row of pending.body.results) expect(row).toMatchObject({ status: 'pending', employee: E.alice });
    const window = await env.get(`/api/absences/?from=2026-12-08&to=2026-12-08&employee=${E.alice}`, as('mgr1'));
    expect(window.body.results.map((row: any) => [row.type_code, row.date_start])).toEqual([['FOR', '2026-12-07']]);
    const paged = await env.get('/api/absences/?page_size=2', as('mgr1'));
    expect(paged.body.results).toHaveLength(2);
    expect(paged.body.next).toMatch(/page=2/);
  });

  it('an unknown status: 400 naming the parameter', async () => {
    const res = await env.get('/api/absences/?status=archived', as('mgr1'));
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['status']);
    expect(res.body.status[0]).toMatch(/pending, validated, refused, cancellation_requested, cancelled/);
  });

  it('an employee lists only their own; a manager only the perimeter; Service Paie only its own', async () => {
    const own = await env.get('/api/absences/?page_size=200', as('alice'));
    expect(new Set(own.body.results.map((row: any) => row.employee))).toEqual(new Set([E.alice]));
    const e2 = await env.get('/api/absences/?page_size=200', as('mgr2'));
    expect(e2.body.results.map((row: any) => row.employee)).not.toContain(E.alice);
    const paie = await env.get('/api/absences/', as('paie'));
    expect(paie.body.count).toBe(0);
  });
});

describe('GET /api/absences/<id>/', () => {
  it('the record with documents and the planned day of the first day', async () => {
    const created = await env.post('/api/absences/', as('alice'), body('alice', 'FOR', '2026-12-16'));
    const res = await env.get(`/api/absences/${created.body.id}/`, as('mgr1'));
    expect(res.status).toBe(200);
    expect(res.body.documents).toEqual([]);
    expect(res.body.warnings).toEqual([]);
    expect(res.body.planned_day).toMatchObject({ date: '2026-12-16', description: 'J Journée 09:00-17:00', minutes: 450, is_rest_day: false });
    expect(res.body.planned_day.slots[0]).toMatchObject({ start_time: '09:00', end_time: '17:00', post_code: 'J' });
  });

  it('a colleague’s row, a row outside the perimeter, an unknown id: 404', async () => {
    const created = await env.post('/api/absences/', as('alice'), body('alice', 'FOR', '2026-12-17'));
    expect((await env.get(`/api/absences/${created.body.id}/`, as('bruno'))).status).toBe(404);
    expect((await env.get(`/api/absences/${created.body.id}/`, as('mgr2'))).status).toBe(404);
    const unknown = await env.get('/api/absences/999999/', as('mgr1'));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: 'Absence introuvable.' });
    expect((await env.get('/api/absences/abc/', as('mgr1'))).status).toBe(404);
  });
});

describe('POST /api/absences/preview/ and /<id>/preview/', () => {
  it('200 with quantity, unit, counter effects, warnings and errors; writes nothing', async () => {
    const journal = async () => (await env.db.query('select count(*)::int as n from app_private.counter_movements')).rows[0].n as number;
    const before = await journal();
    const res = await env.post('/api/absences/preview/', as('alice'), body('alice', 'CP', '2027-01-11', '2027-01-13'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      quantity: '3.00',
      unit: 'day',
      counter_effects: [{ counter: 'CP', year: 2027, direction: 'debit', quantity: '3.00', column: 'planned' }],
      warnings: [],
      errors: {},
    });
    expect(await journal()).toBe(before);
  });

  it('rule refusals are in errors with a null quantity; a counters error alone keeps it', async () => {
    const overlap = await env.post('/api/absences/preview/', as('alice'), body('alice', 'FOR', '2026-12-07'));
    expect(overlap.status).toBe(200);
    expect(overlap.body.quantity).toBeNull();
    expect(Object.keys(overlap.body.errors)).toEqual(['date_start']);
    const counters = await env.post('/api/absences/preview/', as('bruno'), body('bruno', 'RTT', '2026-12-01'));
    expect(counters.status).toBe(200);
    expect(counters.body.quantity).toBe('1.00');
    expect(Object.keys(counters.body.errors)).toEqual(['counters']);
    const colleague = await env.post('/api/absences/preview/', as('alice'), body('bruno', 'FOR', '2026-12-01'));
    expect(colleague.status).toBe(200);
    expect(colleague.body.errors).toEqual({ employee: ['Vous ne pouvez déposer une absence que pour vous-même.'] });
  });

  it('without employee: the caller’s own record; without type: 400', async () => {
    const own = await env.post('/api/absences/preview/', as('alice'), { type: T.FOR, date_start: '2027-02-01' });
    expect(own.status).toBe(200);
    expect(own.body.quantity).toBe('1.00');
    const noType = await env.post('/api/absences/preview/', as('alice'), { employee: E.alice, date_start: '2027-02-01' });
    expect(noType.status).toBe(400);
    expect(noType.body).toEqual({ type: ['Ce champ est obligatoire.'] });
  });

  it('a row preview (manager side) excludes the row from overlap and gives the difference of counters', async () => {
    const created = await env.post('/api/absences/', as('alice'), body('alice', 'CP', '2027-01-18', '2027-01-20'));
    const res = await env.post(`/api/absences/${created.body.id}/preview/`, as('mgr1'), body('alice', 'CP', '2027-01-18', '2027-01-22'));
    expect(res.status).toBe(200);
    expect(res.body.errors).toEqual({});
    expect(res.body.counter_effects).toEqual([{ counter: 'CP', year: 2027, direction: 'debit', quantity: '2.00', column: 'planned' }]);
    const employee = await env.post(`/api/absences/${created.body.id}/preview/`, as('alice'), body('alice', 'CP', '2027-01-18'));
    expect(employee.status).toBe(403);
  });
});

describe('PATCH /api/absences/<id>/', () => {
  it('an employee gets 403; a manager correcting their own absence gets 403 with the advice', async () => {
    const mine = await env.post('/api/absences/', as('alice'), body('alice', 'FOR', '2027-02-08'));
    const employee = await env.patch(`/api/absences/${mine.body.id}/`, as('alice'), { date_end: '2027-02-09' });
    expect(employee.status).toBe(403);
    expect(employee.body.detail).toMatch(/réservée à l’encadrement|réservée à l’encadrement/);
    const own = await env.post('/api/absences/', as('mgr1'), body('mgr1', 'FOR', '2027-02-08'));
    const manager = await env.patch(`/api/absences/${own.body.id}/`, as('mgr1'), { date_end: '2027-02-09' });
    expect(manager.status).toBe(403);
    expect(manager.body.detail).toBe('Vous ne pouvez pas corriger votre propre absence : retirez-la et déposez une nouvelle demande.');
  });

  it('a manager corrects: rules rerun, counters compensated, version + 1, audited as a correction', async () => {
    const created = await env.post('/api/absences/', as('chloe'), body('chloe', 'RTT', '2027-01-04', '2027-01-05'));
    expect(created.status).toBe(400); // chloe has no RTT counter for 2027
    const ok = await env.post('/api/absences/', as('chloe'), body('chloe', 'RTT', '2026-12-14', '2026-12-15'));
    expect(await balance(env, 'chloe', 'RTT')).toBe('10.00/0.00/2.00');
    const res = await env.patch(`/api/absences/${ok.body.id}/`, as('mgr2'), { date_end: '2026-12-17', version: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ date_end: '2026-12-17', counted_quantity: '4.00', version: 2, corrected_by: env.ids.accounts!.mgr2, status: 'pending' });
    expect(Array.isArray(res.body.warnings)).toBe(true);
    expect(await balance(env, 'chloe', 'RTT')).toBe('10.00/0.00/4.00');
    expect(await auditVerbs(env, ok.body.id)).toEqual(['Creation', 'Correction']);
    const stale = await env.patch(`/api/absences/${ok.body.id}/`, as('mgr2'), { date_end: '2026-12-16', version: 1 });
    expect(stale.status).toBe(409);
    const invalid = await env.patch(`/api/absences/${ok.body.id}/`, as('mgr2'), { date_end: '2026-12-13' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.date_end).toEqual(['La date de fin ne peut pas précéder la date de début.']);
    const over = await env.patch(`/api/absences/${ok.body.id}/`, as('mgr2'), { date_end: '2026-12-31' });
    expect(over.status).toBe(400);
    expect(Object.keys(over.body)).toEqual(['counters']);
    expect(await balance(env, 'chloe', 'RTT')).toBe('10.00/0.00/4.00');
  });

  it('the DA deposits documents but does not correct', async () => {
    const created = await env.post('/api/absences/', as('alice'), body('alice', 'FOR', '2027-02-15'));
    const res = await env.patch(`/api/absences/${created.body.id}/`, as('da'), { date_end: '2027-02-16' });
    expect(res.status).toBe(403);
  });
});

describe('DELETE /api/absences/<id>/', () => {
  it('the owner withdraws a pending request: 204, reservation released, row erased, lines Creation and Suppression', async () => {
    const before = await balance(env, 'alice', 'CP', 2027);
    const created = await env.post('/api/absences/', as('alice'), body('alice', 'CP', '2027-03-01', '2027-03-03'));
    expect(await balance(env, 'alice', 'CP', 2027)).not.toBe(before);
    const res = await env.delete(`/api/absences/${created.body.id}/`, as('alice'));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await balance(env, 'alice', 'CP', 2027)).toBe(before);
    expect((await env.get(`/api/absences/${created.body.id}/`, as('alice'))).status).toBe(404);
    expect(await auditVerbs(env, created.body.id)).toEqual(['Creation', 'Suppression']);
  });

  it('any other state: 400 under status; a colleague’s row: 404; a manager on a pending request: 403', async () => {
    const created = await env.post('/api/absences/', as('alice'), body('alice', 'FOR', '2027-03-08'));
    expect((await env.delete(`/api/absences/${created.body.id}/`, as('bruno'))).status).toBe(404);
    expect((await env.delete(`/api/absences/${created.body.id}/`, as('mgr1'))).status).toBe(403);
    const refused = await env.post(`/api/absences/${created.body.id}/refuse/`, as('mgr1'), { version: 1, reason: 'Non' });
    expect(refused.status).toBe(200);
    const res = await env.delete(`/api/absences/${created.body.id}/`, as('alice'));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: ['Seule une demande en attente peut être retirée : une demande refusée reste au dossier.'] });
    const declared = await env.post('/api/absences/', as('mgr1'), body('alice', 'FOR', '2027-03-09'));
    const granted = await env.delete(`/api/absences/${declared.body.id}/`, as('alice'));
    expect(granted.status).toBe(400);
    expect(Object.keys(granted.body)).toEqual(['status']);
  });

  it('a decider deletes a granted absence: 204, the row stays cancelled, counters recredited, the employee told who cancelled', async () => {
    const before = await balance(env, 'alice', 'CP', 2027);
    const declared = await env.post('/api/absences/', as('mgr1'), body('alice', 'CP', '2027-03-15', '2027-03-16'));
    expect(await balance(env, 'alice', 'CP', 2027)).not.toBe(before);
    const res = await env.delete(`/api/absences/${declared.body.id}/`, as('mgr1'));
    expect(res.status).toBe(204);
    const read = await env.get(`/api/absences/${declared.body.id}/`, as('alice'));
    expect(read.body).toMatchObject({ status: 'cancelled', status_label: 'Annulée', cancelled_by: env.ids.accounts!.mgr1 });
    expect(await balance(env, 'alice', 'CP', 2027)).toBe(before);
    expect((await notifications(env, 'alice')).at(-1)).toBe(
      "Absence annulée | warning | Votre absence « Congés payés » du 15/03/2027 au 16/03/2027 a été annulée par Julien Petit.",
    );
    const again = await env.delete(`/api/absences/${declared.body.id}/`, as('mgr1'));
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ status: ['Cette absence est déjà annulée.'] });
  });
});
