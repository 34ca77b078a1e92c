/**
 * /api/shift-change-requests/ over HTTP: every route, every error row of the SPEC that
 * concerns day-change requests, notifications (titles, levels, recipients), audit lines and
 * the planning after validation and refusal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { INJECTED } from '../helpers/response-contract.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

/** Id of a fixture key (test/fixtures/organisation.json). */
function fixture(section: string, key: string): number {
  const value = env.ids[section]?.[key];
  if (value === undefined) throw new Error(`no fixture id ${section}.${key}`);
  return value;
}

const BASE = '/api/shift-change-requests/';
const LATE_DAY = { start_time: '10:00', end_time: '18:00', break_start_time: '12:00', break_end_time: '12:30' };

async function token(username: string): Promise<string> {
  return env.login(username);
}

async function file(username: string, body: Record<string, unknown>) {
  return env.post(BASE, await token(username), body);
}

/** Files a request that must succeed and returns its record. */
async function filed(username: string, body: Record<string, unknown>) {
  const res = await file(username, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function notificationsOf(id: number) {
  const { rows } = await env.db.query<{ username: string; title: string; level: string; body: string }>(
    `select a.username, n.title, n.level, n.body
     from app_public.notifications n join app_public.accounts a on a.id = n.account_id
     where n.model = 'shift_change_request' and n.target_id = $1 order by n.id`,
    [id],
  );
  return rows;
}

async function auditOf(model: string, id: number) {
  const { rows } = await env.db.query<{ verb: string; before: any; after: any }>(
    'select verb, before, after from app_private.audit_log where model = $1 and target_id = $2 order by id',
    [model, id],
  );
  return rows;
}

async function cell(username: string, employee: number, date: string) {
  const res = await env.get(`/api/planning/?from=${date}&to=${date}&employee=${employee}`, await token(username));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.cells[0].blocks as any[];
}

describe('POST /api/shift-change-requests/', () => {
  it('creates a pending request on the requester\'s own day (201 with has_recipient)', async () => {
    const res = await file('alice', {
      date: '2026-11-20',
      reason: 'urgence',
      comment: 'Rendez-vous médical',
      employee: fixture('employees', 'chloe'),
      slots: [{ ...LATE_DAY, break_end_time: '12:15', break_paid: true }],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      employee: fixture('employees', 'alice'),
      date: '2026-11-20',
      reason: 'urgence',
      comment: 'Rendez-vous médical',
      status: 'pending',
      version: 1,
      is_remote: false,
      is_offsite: false,
      planned_description: 'J Journée 09:00-17:00',
      planned_minutes: 450,
      requested_minutes: 480,
      decided_by: null,
      decision_reason: null,
      corrected_by: null,
      granted_slots: null,
      granted_minutes: null,
      granted_gap_minutes: null,
      has_recipient: true,
    });
    expect(res.body.slots).toEqual([
      {
        start_time: '10:00', end_time: '18:00', break_start_time: '12:00', break_end_time: '12:15', break_paid: true,
        post: fixture('posts', 'E1-J'), post_code: 'J', post_label: 'Journée', establishment: fixture('establishments', 'E1'),
        is_remote: false, minutes: 480,
      },
    ]);
    expect(res.body.created_at).toBe('2026-11-16T10:00:00+01:00');

    expect(await notificationsOf(res.body.id)).toEqual([
      { username: 'mgr1', title: 'Nouvelle demande de modification', level: 'info',
        body: 'Alice Martin demande une modification de sa journée du 20/11/2026.' },
    ]);
    const audit = await auditOf('shift_change_request', res.body.id);
    expect(audit.map((line) => line.verb)).toEqual(['Creation']);
    expect(audit[0]!.after.slots).toHaveLength(1);
  });

  it('400 under date: more than 14 days back; today minus 14 days is accepted', async () => {
    const res = await file('alice', { date: '2026-11-01', reason: 'urgence', is_remote: true });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      date: ['Une demande de modification ne peut pas porter sur un jour antérieur de plus de 14 jours : au plus tôt le 02/11/2026.'],
    });
    expect((await file('alice', { date: '2026-11-02', reason: 'urgence', is_remote: true })).status).toBe(201);
  });

  it('400 under date: a second pending request on the same date', async () => {
    await filed('alice', { date: '2026-11-23', reason: 'urgence', is_remote: true });
    const res = await file('alice', { date: '2026-11-23', reason: 'demande_personnelle', slots: [LATE_DAY] });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['date']);
  });

  it('400 not keyed to a field: a request that changes nothing', async () => {
    const token = await env.login('alice');
    for (const body of [
      { date: '2026-11-24', reason: 'urgence' },
      { date: '2026-11-24', reason: 'urgence', slots: [] },
      { date: '2026-11-24', reason: 'urgence', is_remote: false, is_offsite: false },
      { date: '2026-11-24', reason: 'urgence', slots: [{ start_time: '09:00', end_time: '17:00', break_start_time: '12:00', break_end_time: '12:30' }] },
      { date: '2026-11-21', reason: 'urgence', is_remote: true },
    ]) {
      const res = await env.post(BASE, token, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body)).toEqual(['non_field_errors']);
    }
    const { rows } = await env.db.query('select count(*)::int as n from app_public.shift_change_requests where date in ($1, $2)', ['2026-11-24', '2026-11-21']);
    expect(rows[0].n).toBe(0);
  });

  it('only is_remote: accepted, requested_minutes equals planned_minutes', async () => {
    const body = await filed('alice', { date: '2026-11-25', reason: 'demande_personnelle', is_remote: true });
    expect(body.slots).toEqual([]);
    expect(body.requested_minutes).toBe(450);
    expect(body.planned_minutes).toBe(450);
  });

  it('400 under slots: incomplete, overlapping, or removing every slot; a shortened slot drops its break', async () => {
    const token = await env.login('alice');
    const cases: unknown[] = [
      [{ start_time: '09:00' }],
      [{ start_time: '08:00', end_time: '12:00' }, { start_time: '11:00', end_time: '15:00' }],
      [{ start_time: null, end_time: null }],
      [{ start_time: '09:00', end_time: '09:00' }],
      [{ start_time: '09:00', end_time: '12:00', break_start_time: '10:00' }],
      [{ start_time: '09:00', end_time: '12:00', post: 999999 }],
    ];
    for (const slots of cases) {
      const res = await env.post(BASE, token, { date: '2026-11-26', reason: 'urgence', slots });
      expect(res.status, JSON.stringify(slots)).toBe(400);
      expect(Object.keys(res.body), JSON.stringify(slots)).toEqual(['slots']);
    }
    const shortened = await filed('alice', {
      date: '2026-11-26', reason: 'urgence',
      slots: [{ start_time: '09:00', end_time: '12:00', break_start_time: '12:00', break_end_time: '12:30' }],
    });
    expect(shortened.slots[0].break_start_time).toBeNull();
    expect(shortened.requested_minutes).toBe(180);
  });

  it('400 on shapes: unknown reason, missing date, bad time format, too many slots', async () => {
    const token = await env.login('alice');
    let res = await env.post(BASE, token, { date: '2026-11-27', reason: 'caprice', is_remote: true });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ reason: ['Motif inconnu. Valeurs possibles : demande_personnelle, urgence, remplacement.'] });
    res = await env.post(BASE, token, { reason: 'urgence', is_remote: true });
    expect(res.status).toBe(400);
    expect(res.body.date).toBeDefined();
    res = await env.post(BASE, token, { date: '2026-11-27', reason: 'urgence', slots: [{ start_time: '9h', end_time: '12:00' }] });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['slots']);
    res = await env.post(BASE, token, {
      date: '2026-11-27', reason: 'urgence',
      slots: Array.from({ length: 10 }, (_, i) => ({ start_time: `0${i}:00`.slice(-5), end_time: `0${i}:30`.slice(-5) })),
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['slots']);
  });

  it('a rest day needs a slot; the post defaults to the main establishment\'s first post', async () => {
    const body = await filed('alice', { date: '2026-11-28', reason: 'remplacement', slots: [{ start_time: '08:00', end_time: '12:00' }] });
    expect(body.planned_description).toBe('Repos');
    expect(body.planned_minutes).toBe(0);
    expect(body.requested_minutes).toBe(240);
    expect(body.slots[0].post_code).toBe('J');
  });

  it('403 for an account without employee record; 401 without authentication', async () => {
    const res = await file('staff', { date: '2026-11-20', reason: 'urgence', is_remote: true });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/aucune fiche salarié/);
    expect((await env.post(BASE, null, { date: '2026-11-20', reason: 'urgence', is_remote: true })).status).toBe(401);
  });

  it('nobody able to decide: has_recipient false, the author and the fallback recipients are told', async () => {
    // Every Admin account closed (admin_noemp too), and rh1: nobody covers farid (no main
    // workplace); the fallback is then every active RH n1 and RH n2 account, whatever its perimeter.
    await env.db.query("update app_public.accounts set is_active = false where username in ('admin', 'admin_noemp', 'rh1')");
    try {
      const body = await filed('farid', { date: '2026-11-20', reason: 'urgence', is_remote: true });
      expect(body.has_recipient).toBe(false);
      const notes = await notificationsOf(body.id);
      expect(notes.map((n) => [n.username, n.title]).sort()).toEqual([
        ['farid', 'Demande de modification sans valideur'],
        ['rh1_noemp', 'Demande de modification sans valideur'],
        ['rh2', 'Demande de modification sans valideur'],
        ['rh2_noemp', 'Demande de modification sans valideur'],
      ]);
      expect(notes.find((n) => n.username === 'farid')!.body).toMatch(/Farid Benali.*20\/11\/2026.*aucun compte actif ne peut la décider/);
    } finally {
      await env.db.query("update app_public.accounts set is_active = true where username in ('admin', 'admin_noemp', 'rh1')");
    }
  });

  it('a filing whose notification fails is not created', async () => {
    await env.db.query(`create function public.refuse_notifications() returns trigger language plpgsql as $$
                        begin raise exception 'notification service down'; end; $$`);
    await env.db.query('create trigger zz_refuse before insert on app_public.notifications for each row execute function public.refuse_notifications()');
    try {
      const res = await env.post(BASE, await token('david'), { date: '2026-11-20', reason: 'urgence', is_remote: true }, { uncheckedBecause: INJECTED });
      expect(res.status).toBe(500);
    } finally {
      await env.db.query('drop trigger zz_refuse on app_public.notifications');
      await env.db.query('drop function public.refuse_notifications()');
    }
    const { rows } = await env.db.query('select count(*)::int as n from app_public.shift_change_requests where employee_id = $1', [fixture('employees', 'david')]);
    expect(rows[0].n).toBe(0);
  });

  it('two parallel filings on one date: one is created, the other answers 400 under date', async () => {
    const token = await env.login('chloe');
    const results = await Promise.all([
      env.post(BASE, token, { date: '2026-12-01', reason: 'urgence', is_remote: true }),
      env.post(BASE, token, { date: '2026-12-01', reason: 'urgence', is_offsite: true }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 400]);
    expect(Object.keys(results.find((r) => r.status === 400)!.body)).toEqual(['date']);
  });
});

describe('GET /api/shift-change-requests/ and /<id>/', () => {
  let aliceRequest: any;
  let brunoRequest: any;
  let davidRequest: any;

  beforeAll(async () => {
    aliceRequest = await filed('alice', { date: '2026-12-02', reason: 'urgence', slots: [LATE_DAY] });
    brunoRequest = await filed('bruno', { date: '2026-12-05', reason: 'demande_personnelle', is_remote: true });
    davidRequest = await filed('david', { date: '2026-12-02', reason: 'urgence', is_offsite: true });
  });

  it('the requester lists their own requests only', async () => {
    const res = await env.get(`${BASE}?from=2026-12-02&to=2026-12-05`, await token('alice'));
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: any) => r.id)).toEqual([aliceRequest.id]);
    expect(res.body).toMatchObject({ count: 1, next: null, previous: null });
    expect(res.body.results[0]).not.toHaveProperty('current_day');
  });

  it('a view_absence_queue holder lists the perimeter, filtered by status, window and employee', async () => {
    const mgr1 = await token('mgr1');
    let res = await env.get(`${BASE}?from=2026-12-02&to=2026-12-05`, mgr1);
    expect(res.body.results.map((r: any) => r.id)).toEqual([brunoRequest.id, aliceRequest.id]);
    res = await env.get(`${BASE}?from=2026-12-02&to=2026-12-02`, mgr1);
    expect(res.body.results.map((r: any) => r.id)).toEqual([aliceRequest.id]);
    res = await env.get(`${BASE}?employee=${fixture('employees', 'bruno')}`, mgr1);
    expect(res.body.results.map((r: any) => r.id)).toEqual([brunoRequest.id]);
    res = await env.get(`${BASE}?status=refused&from=2026-12-02&to=2026-12-05`, mgr1);
    expect(res.body.count).toBe(0);
    res = await env.get(`${BASE}?status=pending&from=2026-12-02&to=2026-12-05&page_size=1`, mgr1);
    expect(res.body.count).toBe(2);
    expect(res.body.results).toHaveLength(1);
    expect(res.body.next).toMatch(/page=2/);
    const da = await env.get(`${BASE}?from=2026-12-02&to=2026-12-05`, await token('da'));
    expect(da.body.count).toBe(2);
    const mgr3 = await env.get(`${BASE}?from=2026-12-02&to=2026-12-05`, await token('mgr3'));
    expect(mgr3.body.results.map((r: any) => r.id)).toEqual([davidRequest.id]);
  });

  it('400 naming the parameter: unknown status, bad date, window reversed', async () => {
    const mgr1 = await token('mgr1');
    let res = await env.get(`${BASE}?status=annulee`, mgr1);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['status']);
    res = await env.get(`${BASE}?from=2026-13-01`, mgr1);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['from']);
    res = await env.get(`${BASE}?from=2026-12-03&to=2026-12-01`, mgr1);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['to']);
  });

  it('detail with current_day and warnings; 404 outside the perimeter or for a colleague', async () => {
    const res = await env.get(`${BASE}${aliceRequest.id}/`, await token('mgr1'));
    expect(res.status).toBe(200);
    expect(res.body.current_day).toEqual({
      date: '2026-12-02', label: 'J Journée 09:00-17:00', minutes: 450, is_remote: false, is_offsite: false,
      modified: false, comment: null,
      slots: [{
        start_time: '09:00', end_time: '17:00', break_start_time: '12:00', break_end_time: '12:30', break_paid: false,
        post: fixture('posts', 'E1-J'), post_code: 'J', post_label: 'Journée', establishment: fixture('establishments', 'E1'),
        is_remote: false, minutes: 450,
      }],
    });
    expect(res.body.warnings).toBeNull();
    expect((await env.get(`${BASE}${aliceRequest.id}/`, await token('alice'))).status).toBe(200);
    for (const reader of ['chloe', 'mgr2', 'paie']) {
      const denied = await env.get(`${BASE}${aliceRequest.id}/`, await token(reader));
      expect(denied.status, reader).toBe(404);
    }
    expect((await env.get(`${BASE}999999/`, await token('mgr1'))).status).toBe(404);
    expect((await env.get(`${BASE}abc/`, await token('mgr1'))).status).toBe(404);
  });

  it('warnings: the granted absence of the day once per reason, never a pending absence, and the notice period', async () => {
    const alice = fixture('employees', 'alice');
    const request = await filed('alice', { date: '2026-11-18', reason: 'urgence', is_remote: true });
    const insert = `insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, status)
                    values ($1, (select id from app_public.absence_types where code = $2), $3, $3, $4, $4, $5)`;
    await env.db.query(insert, [alice, 'MAL', '2026-11-18', 'morning', 'validated']);
    await env.db.query(insert, [alice, 'MAL', '2026-11-18', 'afternoon', 'cancellation_requested']);
    let res = await env.get(`${BASE}${request.id}/`, await token('mgr1'));
    expect(res.body.warnings).toEqual([
      expect.stringMatching(/^Absence accordée ce jour : .* \(MAL\)\. Une absence accordée prévaut sur la modification de la journée\.$/),
      'Délai de prévenance de 7 jours non respecté : demande déposée le 16/11/2026 pour le 18/11/2026.',
    ]);

    const other = await filed('alice', { date: '2026-12-10', reason: 'urgence', is_remote: true });
    await env.db.query(insert, [alice, 'CP', '2026-12-10', null, 'pending']);
    res = await env.get(`${BASE}${other.id}/`, await token('mgr1'));
    expect(res.body.warnings).toBeNull();

    const refused = await env.post(`${BASE}${request.id}/refuse/`, await token('mgr1'), { version: 1, reason: 'Absente ce jour-là' });
    expect(refused.status).toBe(200);
    res = await env.get(`${BASE}${request.id}/`, await token('mgr1'));
    expect(res.body.warnings).toBeNull();
  });
});

describe('decisions', () => {
  it('validate: 200, version + 1, decided_by, the day modification, two audit lines, the requester told, the planning changed', async () => {
    const request = await filed('alice', { date: '2026-12-04', reason: 'urgence', slots: [LATE_DAY], is_remote: true });
    expect((await cell('alice', fixture('employees', 'alice'), '2026-12-04'))[0].pending_request).toEqual({
      kind: 'shift_change', id: request.id, is_cancellation: false,
    });
    const res = await env.post(`${BASE}${request.id}/validate/`, await token('mgr1'), { version: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'validated', version: 2, decided_by: fixture('accounts', 'mgr1'), decided_by_name: 'Julien Petit',
      decision_reason: null, granted_slots: null,
    });
    expect(res.body.decided_at).toBe('2026-11-16T10:00:00+01:00');

    const { rows } = await env.db.query(
      'select id, slots::text, is_remote, source_request_id from app_public.day_modifications where employee_id = $1 and date = $2',
      [fixture('employees', 'alice'), '2026-12-04'],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].source_request_id).toBe(request.id);
    expect(rows[0].is_remote).toBe(true);
    expect((await auditOf('shift_change_request', request.id)).map((l) => l.verb)).toEqual(['Creation', 'Validation']);
    expect((await auditOf('day_modification', rows[0].id)).map((l) => [l.verb, l.after.slots.length])).toEqual([['Creation', 1]]);
    expect(await notificationsOf(request.id)).toContainEqual({
      username: 'alice', title: 'Demande de modification validée', level: 'info',
      body: 'Votre demande de modification du 04/12/2026 a été validée.',
    });

    const blocks = await cell('alice', fixture('employees', 'alice'), '2026-12-04');
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toMatchObject({ kind: 'work', start_time: '10:00', end_time: '18:00', modified: true, is_remote: true,
                                      minutes: 450, pending_request: null, absence: null });
    const detail = await env.get(`${BASE}${request.id}/`, await token('alice'));
    expect(detail.body.current_day).toMatchObject({ label: 'J Journée 10:00-18:00', modified: true, is_remote: true });
  });

  it('refuse: 400 under reason without reason; 200 with it, the planned day unchanged, the requester told (error level)', async () => {
    const request = await filed('alice', { date: '2026-12-07', reason: 'urgence', slots: [LATE_DAY] });
    const mgr1 = await token('mgr1');
    for (const body of [{ version: 1 }, { version: 1, reason: '' }, { version: 1, reason: '   ' }, { version: 1, reason: null }]) {
      const res = await env.post(`${BASE}${request.id}/refuse/`, mgr1, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ reason: ['Indiquez le motif du refus.'] });
    }
    const res = await env.post(`${BASE}${request.id}/refuse/`, mgr1, { version: 1, reason: 'Effectif insuffisant ce jour-là' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'refused', version: 2, decision_reason: 'Effectif insuffisant ce jour-là', decided_by: fixture('accounts', 'mgr1') });
    const notes = (await notificationsOf(request.id)).filter((n) => n.username === 'alice');
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ title: 'Demande de modification refusée', level: 'error' });
    expect(notes[0]!.body.endsWith('Effectif insuffisant ce jour-là')).toBe(true);
    expect((await auditOf('shift_change_request', request.id)).map((l) => l.verb)).toEqual(['Creation', 'Refus']);

    const blocks = await cell('alice', fixture('employees', 'alice'), '2026-12-07');
    expect(blocks[0]).toMatchObject({ kind: 'work', start_time: '09:00', end_time: '17:00', modified: false, pending_request: null });
  });

  it('403 for the DA and for one\'s own request; 404 outside the perimeter; 400 when the version is missing', async () => {
    const request = await filed('alice', { date: '2026-12-08', reason: 'urgence', is_remote: true });
    for (const route of ['validate', 'refuse']) {
      const res = await env.post(`${BASE}${request.id}/${route}/`, await token('da'), { version: 1, reason: 'x' });
      expect(res.status, route).toBe(403);
      expect(res.body.detail).toBe('Votre rôle ne permet pas de décider une demande de modification de journée.');
    }
    const own = await filed('mgr1', { date: '2026-12-08', reason: 'urgence', is_remote: true });
    expect(own.has_recipient).toBe(true);
    for (const route of ['validate', 'refuse']) {
      const res = await env.post(`${BASE}${own.id}/${route}/`, await token('mgr1'), { version: 1, reason: 'x' });
      expect(res.status, route).toBe(403);
      expect(res.body.detail).toMatch(/propre demande/);
    }
    expect((await env.post(`${BASE}${request.id}/validate/`, await token('mgr2'), { version: 1 })).status).toBe(404);
    expect((await env.post(`${BASE}${request.id}/validate/`, await token('alice'), { version: 1 })).status).toBe(403);
    const missing = await env.post(`${BASE}${request.id}/validate/`, await token('mgr1'), {});
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body)).toEqual(['version']);
    // Nothing was decided by the refused calls.
    const detail = await env.get(`${BASE}${request.id}/`, await token('alice'));
    expect(detail.body).toMatchObject({ status: 'pending', version: 1 });
  });

  it('409 with a stale version (before any other check); 400 under status once decided', async () => {
    const request = await filed('alice', { date: '2026-12-09', reason: 'urgence', is_remote: true });
    const mgr1 = await token('mgr1');
    const stale = await env.post(`${BASE}${request.id}/refuse/`, mgr1, { version: 5 });
    expect(stale.status).toBe(409);
    expect(stale.body.detail).toMatch(/déjà décidé/);
    expect((await env.post(`${BASE}${request.id}/validate/`, mgr1, { version: 1 })).status).toBe(200);
    const again = await env.post(`${BASE}${request.id}/refuse/`, mgr1, { version: 2, reason: 'Trop tard' });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ status: ['Seule une demande en attente peut être décidée.'] });
    expect((await env.post(`${BASE}${request.id}/validate/`, mgr1, { version: 1 })).status).toBe(409);
  });

  it('parallel decisions: exactly one wins', async () => {
    const request = await filed('alice', { date: '2026-12-11', reason: 'urgence', slots: [LATE_DAY] });
    const [mgr1, admin] = [await token('mgr1'), await token('admin')];
    const results = await Promise.all([
      env.post(`${BASE}${request.id}/validate/`, mgr1, { version: 1 }),
      env.post(`${BASE}${request.id}/refuse/`, admin, { version: 1, reason: 'Non' }),
      env.post(`${BASE}${request.id}/validate/`, admin, { version: 1 }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    const audit = await auditOf('shift_change_request', request.id);
    expect(audit.filter((l) => l.verb !== 'Creation')).toHaveLength(1);
    const notes = (await notificationsOf(request.id)).filter((n) => n.username === 'alice');
    expect(notes).toHaveLength(1);
  });

  it('adjusted grant: needs a reason, keeps the request, stores the granted day with total and gap, notifies it', async () => {
    const request = await filed('alice', { date: '2026-12-14', reason: 'urgence', slots: [LATE_DAY] });
    await env.db.query(
      `insert into app_public.day_modifications (employee_id, date, slots, comment)
       values ($1, '2026-12-14', array[row('09:00', '17:00', '12:00', '12:30', false, $2, $3, false)::app_public.slot], 'Réunion de synthèse')`,
      [fixture('employees', 'alice'), fixture('posts', 'E1-J'), fixture('establishments', 'E1')],
    );
    const mgr1 = await token('mgr1');
    const adjusted = [{ date: '2026-12-25', start_time: '10:00', end_time: '17:00', break_start_time: '12:00', break_end_time: '12:30' }];
    const noReason = await env.post(`${BASE}${request.id}/validate/`, mgr1, { version: 1, adjusted_slots: adjusted });
    expect(noReason.status).toBe(400);
    expect(Object.keys(noReason.body)).toEqual(['reason']);

    const empty = await env.post(`${BASE}${request.id}/validate/`, mgr1, { version: 1, reason: 'x', adjusted_slots: [] });
    expect(empty.status).toBe(400);
    expect(Object.keys(empty.body)).toEqual(['adjusted_slots']);

    const res = await env.post(`${BASE}${request.id}/validate/`, mgr1, { version: 1, reason: 'Fin à 17 h pour la réunion', adjusted_slots: adjusted, date: '2026-12-25' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'validated', version: 2, requested_minutes: 450, granted_minutes: 390, granted_gap_minutes: -60,
      decision_reason: 'Fin à 17 h pour la réunion',
    });
    expect(res.body.slots[0].end_time).toBe('18:00');
    expect(res.body.granted_slots[0]).toMatchObject({ start_time: '10:00', end_time: '17:00', post_code: 'J', minutes: 390 });

    const { rows } = await env.db.query(
      "select date::text, comment, (slots[1]).end_time::text as end_time from app_public.day_modifications where employee_id = $1 and date in ('2026-12-14', '2026-12-25')",
      [fixture('employees', 'alice')],
    );
    expect(rows).toEqual([{ date: '2026-12-14', comment: 'Réunion de synthèse', end_time: '17:00:00' }]);
    const note = (await notificationsOf(request.id)).find((n) => n.username === 'alice')!;
    expect(note).toMatchObject({ title: 'Demande de modification validée', level: 'info' });
    expect(note.body).toBe(
      'Votre demande de modification du 14/12/2026 a été validée avec modification. Journée accordée : J Journée 10:00-17:00 (pause 12:00-12:30). Motif : Fin à 17 h pour la réunion',
    );
    const blocks = await cell('mgr1', fixture('employees', 'alice'), '2026-12-14');
    expect(blocks[0]).toMatchObject({ start_time: '10:00', end_time: '17:00', comment: 'Réunion de synthèse', modified: true });
  });

  it('a broken rule of the modulation answers under its own keys and writes nothing', async () => {
    const request = await filed('alice', { date: '2026-12-15', reason: 'urgence', slots: [LATE_DAY] });
    const mgr1 = await token('mgr1');
    const cases: Array<[unknown[], string[]]> = [
      [[{ start_time: '07:00', end_time: '21:00' }], ['break_required', 'daily_duration']],
      [[{ start_time: '12:00', end_time: '23:00', break_start_time: '18:00', break_end_time: '18:30' }], ['rest_period']],
      [[{ start_time: '08:00', end_time: '12:00' }, { start_time: '11:00', end_time: '14:00' }], ['slots']],
    ];
    for (const [slots, keys] of cases) {
      const res = await env.post(`${BASE}${request.id}/validate/`, mgr1, { version: 1, reason: 'Renfort', adjusted_slots: slots });
      expect(res.status, JSON.stringify(slots)).toBe(400);
      expect(Object.keys(res.body).sort(), JSON.stringify(res.body)).toEqual(keys);
    }
    const detail = await env.get(`${BASE}${request.id}/`, mgr1);
    expect(detail.body).toMatchObject({ status: 'pending', version: 1, granted_slots: null });
    const { rows } = await env.db.query('select count(*)::int as n from app_public.day_modifications where employee_id = $1 and date = $2',
      [fixture('employees', 'alice'), '2026-12-15']);
    expect(rows[0].n).toBe(0);
  });

  it('a request corrected at the back-office needs a reason to be validated', async () => {
    const request = await filed('alice', { date: '2026-12-16', reason: 'urgence', slots: [LATE_DAY] });
    // The back-office calls the SQL function as an HR account.
    const client = await env.db.connect();
    try {
      await client.query('begin');
      await client.query("select set_config('app.frozen_now', '2026-11-16T10:00:00+01:00', true), set_config('app.account_id', $1, true), set_config('role', 'wfm_visitor', true)",
        [String(fixture('accounts', 'rh1'))]);
      await client.query(`select app_public.shift_change_correct($1, 1, '[{"start_time": "09:30", "end_time": "17:30", "break_start_time": "12:00", "break_end_time": "12:30"}]')`, [request.id]);
      await client.query('commit');
    } finally {
      client.release();
    }
    const mgr1 = await token('mgr1');
    const detail = await env.get(`${BASE}${request.id}/`, mgr1);
    expect(detail.body).toMatchObject({ version: 2, corrected_by: fixture('accounts', 'rh1'), corrected_by_name: 'Claire Dubois', status: 'pending' });
    expect(detail.body.slots[0].start_time).toBe('09:30');

    const noReason = await env.post(`${BASE}${request.id}/validate/`, mgr1, { version: 2 });
    expect(noReason.status).toBe(400);
    expect(noReason.body).toEqual({ reason: ['Cette demande a été corrigée au back-office : indiquez le motif de la validation.'] });
    const ok = await env.post(`${BASE}${request.id}/validate/`, mgr1, { version: 2, reason: 'Vu avec les RH' });
    expect(ok.status).toBe(200);
    expect(ok.body.version).toBe(3);
    const note = (await notificationsOf(request.id)).find((n) => n.username === 'alice')!;
    expect(note.body).toMatch(/validée avec modification\. Journée accordée : J Journée 09:30-17:30 \(pause 12:00-12:30\)\. Motif : Vu avec les RH$/);
    expect((await auditOf('shift_change_request', request.id)).map((l) => l.verb)).toEqual(['Creation', 'Correction', 'Validation']);
  });
});

describe('DELETE /api/shift-change-requests/<id>/', () => {
  it('the requester withdraws a pending request: 204, audit line Suppression, nobody notified', async () => {
    const request = await filed('alice', { date: '2026-12-17', reason: 'urgence', is_remote: true });
    const before = await notificationsOf(request.id);
    expect((await env.delete(`${BASE}${request.id}/`, await token('mgr1'))).status).toBe(403);
    expect((await env.delete(`${BASE}${request.id}/`, await token('chloe'))).status).toBe(404);
    const res = await env.delete(`${BASE}${request.id}/`, await token('alice'));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await env.get(`${BASE}${request.id}/`, await token('alice'))).status).toBe(404);
    expect((await auditOf('shift_change_request', request.id)).map((l) => l.verb)).toEqual(['Creation', 'Suppression']);
    expect(await notificationsOf(request.id)).toEqual(before);
    expect((await cell('alice', fixture('employees', 'alice'), '2026-12-17'))[0].pending_request).toBeNull();
  });

  it('a decided request cannot be deleted: 400 under status', async () => {
    const request = await filed('alice', { date: '2026-12-18', reason: 'urgence', is_remote: true });
    expect((await env.post(`${BASE}${request.id}/refuse/`, await token('mgr1'), { version: 1, reason: 'Non' })).status).toBe(200);
    const res = await env.delete(`${BASE}${request.id}/`, await token('alice'));
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['status']);
    expect((await env.get(`${BASE}${request.id}/`, await token('alice'))).body.status).toBe('refused');
  });
});

describe('OpenAPI', () => {
  it('describes every body, filter and error of the routes', async () => {
    const res = await env.get('/api/schema/');
    expect(res.status).toBe(200);
    const paths = res.body.paths;
    const create = paths['/api/shift-change-requests/'].post;
    expect(Object.keys(create.requestBody.content['application/json'].schema.properties))
      .toEqual(['date', 'reason', 'comment', 'is_remote', 'is_offsite', 'slots']);
    expect(Object.keys(create.responses).sort()).toEqual(['201', '400', '401', '403', '415', '429', '503']);
    const list = paths['/api/shift-change-requests/'].get;
    expect(list.parameters.map((p: any) => p.name)).toEqual(['status', 'from', 'to', 'employee', 'establishment', 'page', 'page_size']);
    const validate = paths['/api/shift-change-requests/{id}/validate/'].post;
    expect(Object.keys(validate.requestBody.content['application/json'].schema.properties)).toEqual(['version', 'reason', 'adjusted_slots']);
    expect(Object.keys(validate.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '415', '429', '503']);
    expect(Object.keys(paths['/api/shift-change-requests/{id}/refuse/'].post.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '415', '429', '503']);
    expect(Object.keys(paths['/api/shift-change-requests/{id}/'].delete.responses).sort()).toEqual(['204', '400', '401', '403', '404', '415', '429', '503']);
    expect(Object.keys(paths['/api/shift-change-requests/{id}/'].get.responses).sort()).toEqual(['200', '401', '404', '429', '503']);
    expect(res.body.components.schemas.ShiftChangeRequest.properties).toHaveProperty('granted_gap_minutes');
    expect(res.body.components.schemas.SlotInput.properties).toHaveProperty('post');
  });
});
