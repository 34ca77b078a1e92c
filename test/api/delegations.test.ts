/**
 * Dated delegations of decisions over HTTP (issue 30): create, list given / received, end early;
 * a delegate reads the queue and decides for the delegator, the decision carrying both names
 * (decided_by, on_behalf_of, the requester's notification « X, par délégation de Y »); the
 * filing's notification reaches the delegate; bad input answers under its field and writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let E: Record<string, number>;
let EST: Record<string, number>;
let ACC: Record<string, number>;
let CP: number;

beforeAll(async () => {
  env = await startTestEnv();
  E = env.ids.employees!;
  EST = env.ids.establishments!;
  ACC = env.ids.accounts!;
  CP = (await env.db.query<{ id: number }>("select id from app_public.absence_types where code = 'CP'")).rows[0]!.id;
});
afterAll(async () => {
  await env?.close();
});

const count = async () => Number((await env.db.query('select count(*) from app_public.delegations')).rows[0].count);

describe('delegations', () => {
  it('refuses bad input under its field and writes nothing', async () => {
    const token = await env.login('mgr1');
    const bad = await env.post('/api/delegations/', token, {
      delegate: ACC.mgr1, start_date: '2026-11-20', end_date: '2026-11-16', kinds: 'absences', establishments: [EST.E2],
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      delegate: ['On ne se délègue pas ses propres décisions.'],
      end_date: ['La date de fin précède la date de début.'],
      establishments: ['Hors du périmètre de décision du délégant : IME Les Peupliers.'],
    });
    const shape = await env.post('/api/delegations/', token, { delegate: ACC.bruno, start_date: '2026-11-16', end_date: '2026-11-20', kinds: 'tout' });
    expect(shape.status).toBe(400);
    expect(Object.keys(shape.body)).toEqual(['kinds']);
    expect(await count()).toBe(0);
  });

  it('only a decider delegates; a delegate does not re-delegate', async () => {
    for (const user of ['alice', 'da', 'paie', 'farid']) {
      const res = await env.post('/api/delegations/', await env.login(user), { delegate: ACC.bruno, start_date: '2026-11-16', end_date: '2026-11-20', kinds: 'absences' });
      expect(res.status, user).toBe(403);
    }
    expect(await count()).toBe(0);
  });

  it('a delegate receives the filing, decides for the delegator and the requester reads both names', async () => {
    const mgr1 = await env.login('mgr1');
    const created = await env.post('/api/delegations/', mgr1, {
      delegate: ACC.bruno, start_date: '2026-11-16', end_date: '2026-11-20', kinds: 'absences', comment: 'Congés',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      delegator: ACC.mgr1, delegator_name: 'Julien Petit', delegate: ACC.bruno, delegate_name: 'Bruno Lambert',
      start_date: '2026-11-16', end_date: '2026-11-20', kinds: 'absences', all_establishments: true, establishments: [],
      is_active: true, is_over: false, ended_at: null,
    });
    const bruno = await env.login('bruno');
    expect((await env.post('/api/delegations/', bruno, { delegate: ACC.chloe, start_date: '2026-11-16', end_date: '2026-11-20', kinds: 'absences' })).status).toBe(403);

    const given = await env.get('/api/delegations/?role=given', mgr1);
    expect(given.body.results.map((d: { id: number }) => d.id)).toEqual([created.body.id]);
    const received = await env.get('/api/delegations/?role=received&active=true', bruno);
    expect(received.body.results.map((d: { id: number }) => d.id)).toEqual([created.body.id]);
    expect((await env.get('/api/delegations/', await env.login('chloe'))).body.count).toBe(0);

    const me = await env.get('/api/auth/me/', bruno);
    expect(me.body).toMatchObject({
      can_view_absence_queue: true, can_decide_absences: true, can_decide_shift_changes: false,
      // decides by delegation, never delegates what it received
      can_delegate_absences: false, can_delegate_shift_changes: false,
    });

    const alice = await env.login('alice');
    const filed = await env.post('/api/absences/', alice, { employee: E.alice, type: CP, date_start: '2026-11-30', date_end: '2026-11-30' });
    expect(filed.status).toBe(201);
    expect(filed.body.has_recipient).toBe(true);
    const told = await env.get('/api/notifications/', bruno);
    expect(told.body.results.map((n: { title: string }) => n.title)).toContain("Nouvelle demande d'absence");

    const queue = await env.get('/api/absences/?status=pending', bruno);
    expect(queue.body.results.map((a: { id: number }) => a.id)).toContain(filed.body.id);
    const decided = await env.post(`/api/absences/${filed.body.id}/validate/`, bruno, { version: filed.body.version });
    expect(decided.status).toBe(200);
    const row = (await env.db.query('select decided_by, on_behalf_of from app_public.absences where id = $1', [filed.body.id])).rows[0];
    expect(row).toEqual({ decided_by: ACC.bruno, on_behalf_of: ACC.mgr1 });
    const notes = await env.get('/api/notifications/', alice);
    expect(notes.body.results[0].body).toContain('Décision de Bruno Lambert, par délégation de Julien Petit.');

    // Ended early: the delegate decides no more.
    expect((await env.post(`/api/delegations/${created.body.id}/end/`, bruno)).status).toBe(403);
    const ended = await env.post(`/api/delegations/${created.body.id}/end/`, mgr1);
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ is_active: false, is_over: true, ended_by: ACC.mgr1 });
    expect((await env.post(`/api/delegations/${created.body.id}/end/`, mgr1)).status).toBe(400);
    expect((await env.post(`/api/delegations/${created.body.id}/end/`, await env.login('chloe'))).status).toBe(404);
    const again = await env.post('/api/absences/', alice, { employee: E.alice, type: CP, date_start: '2026-12-07', date_end: '2026-12-07' });
    const late = await env.post(`/api/absences/${again.body.id}/validate/`, bruno, { version: again.body.version });
    expect([403, 404]).toContain(late.status);
  });

  it('RH n2 names a delegate for an absent decider of its perimeter', async () => {
    const rh2 = await env.login('rh2');
    const body = { delegate: ACC.gaelle, delegator: ACC.mgr2, start_date: '2026-11-17', end_date: '2026-11-18', kinds: 'both' };
    const notAway = await env.post('/api/delegations/', rh2, body);
    expect(notAway.status).toBe(400);
    expect(Object.keys(notAway.body)).toEqual(['delegator']);
    const away = await env.post('/api/absences/', rh2, { employee: E.mgr2, type: CP, date_start: '2026-11-17', date_end: '2026-11-18' });
    expect(away.body.status).toBe('validated');
    const created = await env.post('/api/delegations/', rh2, body);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ delegator: ACC.mgr2, delegate: ACC.gaelle, created_by: ACC.rh2 });
    expect((await env.post('/api/delegations/', await env.login('mgr1'), body)).status).toBe(403);
  });

  it('the matrix of a delegate: decisions within the delegator\'s rights only', async () => {
    // mgr2 (Manager n2, E2) delegates its absence decisions to emma (Intérimaire, E1), today only.
    await env.db.query(
      `insert into app_public.delegations (delegator_account_id, delegate_account_id, start_date, end_date, kinds, created_by)
       values ($1, $2, '2026-11-16', '2026-11-16', 'absences', $1)`, [ACC.mgr2, ACC.emma]);
    const pending = async (employee: string, date: string) => (await env.db.query<{ id: number }>(
      `insert into app_public.absences (employee_id, type_id, date_start, date_end, status, author_account_id)
       values ($1, $2, $3, $3, 'pending', $4) returning id`, [E[employee], CP, date, ACC[employee]])).rows[0]!.id;
    const emma = await env.login('emma');
    const cases: Array<[string, string, number[]]> = [
      ['gaelle', 'in the delegator\'s perimeter (E2)', [200]],
      ['alice', 'outside it (E1 only)', [404]],
      ['emma', 'the delegate\'s own request', [403]],
      ['mgr2', 'the delegator\'s own request', [403]],
    ];
    for (const [employee, label, statuses] of cases) {
      const id = await pending(employee, '2026-12-21');
      const res = await env.post(`/api/absences/${id}/validate/`, emma, { version: 1 });
      expect(statuses, `${label}: ${res.status} ${res.text}`).toContain(res.status);
    }
    // Day changes were not delegated; nor are documents, records or payroll.
    const shift = await env.post('/api/shift-change-requests/', await env.login('gaelle'), {
      date: '2026-11-18', reason: 'urgence', slots: [{ start_time: '07:15', end_time: '11:45' }],
    });
    expect(shift.status).toBe(201);
    expect((await env.post(`/api/shift-change-requests/${shift.body.id}/validate/`, emma, { version: 1 })).status).toBe(403);
    // The delegate reads the employees it decides for (their names in the queue), never writes them
    // nor reads their social security number.
    const record = await env.get(`/api/employees/${E.gaelle}/`, emma);
    expect(record.status).toBe(200);
    expect(record.body).not.toHaveProperty('social_security_number');
    expect((await env.patch(`/api/employees/${E.gaelle}/`, emma, { first_name: 'G' })).status).toBe(403);
    expect((await env.get(`/api/employees/${E.david}/`, emma)).status).toBe(404);
    expect((await env.get('/api/payroll/options/', emma)).status).toBe(403);
  });
});

describe('back-office « Délégations de décision »', () => {
  it('RH lists the delegations of its perimeter with filters, reads one and ends it; others do not reach it', async () => {
    const { enrolAs } = await import('../helpers/backoffice.js');
    const { rows: [row] } = await env.db.query<{ id: number }>(
      `insert into app_public.delegations (delegator_account_id, delegate_account_id, start_date, end_date, kinds, created_by)
       values ($1, $2, '2026-11-16', '2026-11-27', 'both', $1) returning id`, [ACC.mgr3, ACC.david]);
    const rh1 = (await enrolAs(env, 'rh1')).visitor;
    const list = await rh1.get('/backoffice/delegations/');
    expect(list.status).toBe(200);
    expect(list.text).toContain(`href="/backoffice/delegations/${row!.id}/"`);
    expect(list.text).toContain('absences et modifications de journée');
    const filtered = await rh1.get(`/backoffice/delegations/?account=${ACC.david}&active=true`);
    expect(filtered.text).toContain(`href="/backoffice/delegations/${row!.id}/"`);
    const none = await rh1.get(`/backoffice/delegations/?account=${ACC.alice}`);
    expect(none.text).not.toContain(`href="/backoffice/delegations/${row!.id}/"`);
    expect((await rh1.get('/backoffice/delegations/?active=peut-etre')).status).toBe(400);

    const detail = await rh1.get(`/backoffice/delegations/${row!.id}/`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain('Paul Fontaine');
    expect(detail.text).toContain('David Mercier');
    const ended = await rh1.submit(`/backoffice/delegations/${row!.id}/terminer/`, {}, `/backoffice/delegations/${row!.id}/`);
    expect(ended.status).toBeLessThan(400);
    const { rows: [after] } = await env.db.query('select ended_at, ended_by from app_public.delegations where id = $1', [row!.id]);
    expect(after.ended_by).toBe(ACC.rh1);
    expect(after.ended_at).not.toBeNull();
    expect((await env.db.query("select count(*) from app_private.audit_log where model = 'delegation' and target_id = $1", [row!.id])).rows[0].count).toBe('2');

    // RH n2 (E2) does not read a delegation of mgr3 (E3).
    const rh2 = (await enrolAs(env, 'rh2')).visitor;
    expect((await rh2.get(`/backoffice/delegations/${row!.id}/`)).status).toBe(404);
  });
});
