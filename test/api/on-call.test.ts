import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_NOW } from '../helpers/settings.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let E: Record<string, number>;
let EST: Record<string, number>;
let ACC: Record<string, number>;
let weekend: number;

beforeAll(async () => {
  env = await startTestEnv();
  E = env.ids.employees!;
  EST = env.ids.establishments!;
  ACC = env.ids.accounts!;
  const { rows } = await env.db.query<{ id: number }>('select id from app_public.on_call_periods where account_id = $1', [ACC.mgr3]);
  weekend = rows[0]!.id;
});
afterAll(async () => {
  await env?.close();
});

describe('on-call access', () => {
  it('Salarié and Intérimaire have no access', async () => {
    for (const user of ['alice', 'emma', 'farid']) {
      const token = await env.login(user);
      expect((await env.get('/api/on-call-periods/', token)).status).toBe(403);
      expect((await env.get(`/api/on-call-periods/${weekend}/`, token)).status).toBe(403);
      expect((await env.post('/api/on-call-periods/', token, { account: ACC.mgr1, start_at: '2026-12-01T18:00:00+01:00', end_at: '2026-12-02T08:00:00+01:00', establishments: [EST.E1] })).status).toBe(403);
      expect((await env.delete(`/api/on-call-periods/${weekend}/`, token)).status).toBe(403);
    }
  });

  it('Service Paie reads only', async () => {
    const token = await env.login('paie');
    const list = await env.get('/api/on-call-periods/', token);
    expect(list.status).toBe(200);
    expect(list.body.results).toEqual([
      expect.objectContaining({
        id: weekend,
        account: ACC.mgr3,
        account_name: 'Paul Fontaine',
        start_at: '2026-11-20T18:00:00+01:00',
        end_at: '2026-11-23T08:00:00+01:00',
        establishments: [EST.E1],
        establishment_names: ['Foyer Les Tilleuls'],
        comment: 'Astreinte du week-end',
        is_current: false,
      }),
    ]);
    expect((await env.patch(`/api/on-call-periods/${weekend}/`, token, { comment: 'x' })).status).toBe(403);
    expect((await env.delete(`/api/on-call-periods/${weekend}/`, token)).status).toBe(403);
    expect((await env.post('/api/on-call-periods/', token, { account: ACC.mgr1, start_at: '2026-12-01T18:00:00+01:00', end_at: '2026-12-02T08:00:00+01:00', establishments: [EST.E1] })).status).toBe(403);
  });

  it('screens follow the perimeter of Admin, RH, DA and managers', async () => {
    const ids = async (user: string) => (await env.get('/api/on-call-periods/', await env.login(user))).body.results.map((p: { id: number }) => p.id);
    for (const user of ['admin', 'rh1', 'da', 'mgr1']) expect(await ids(user)).toEqual([weekend]);
    for (const user of ['rh2', 'mgr2']) expect(await ids(user)).toEqual([]);
    // The account on call always sees its own periods, even outside their interval.
    expect(await ids('mgr3')).toEqual([weekend]);
    expect((await env.get(`/api/on-call-periods/${weekend}/`, await env.login('mgr2'))).status).toBe(404);
    expect((await env.patch(`/api/on-call-periods/${weekend}/`, await env.login('mgr2'), { comment: 'x' })).status).toBe(404);
    const filtered = await env.get(`/api/on-call-periods/?from=2026-11-24&establishment=${EST.E1}`, await env.login('admin'));
    expect(filtered.body.count).toBe(0);
    const window = await env.get(`/api/on-call-periods/?from=2026-11-23&to=2026-11-23&account=${ACC.mgr3}`, await env.login('admin'));
    expect(window.body.count).toBe(1);
  });
});

describe('on-call writes', () => {
  it('a manager creates a period of its perimeter, with validation under each field', async () => {
    const token = await env.login('mgr1');
    const created = await env.post('/api/on-call-periods/', token, {
      account: ACC.mgr1,
      start_at: '2026-11-27T18:00:00+01:00',
      end_at: '2026-11-30T08:00:00+01:00',
      establishments: [EST.E1],
      comment: 'Week-end',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ account: ACC.mgr1, account_name: 'Julien Petit', establishments: [EST.E1], is_current: false });
    expect((await env.db.query("select 1 from app_private.audit_log where model = 'on_call_period' and verb = 'Creation' and target_id = $1", [created.body.id])).rowCount).toBe(1);

    const outside = await env.post('/api/on-call-periods/', token, {
      account: ACC.mgr1, start_at: '2026-12-04T18:00:00+01:00', end_at: '2026-12-07T08:00:00+01:00', establishments: [EST.E1, EST.E2],
    });
    expect(outside.status).toBe(400);
    expect(outside.body.establishments).toEqual(['Hors de votre périmètre : IME Les Peupliers.']);

    const overlap = await env.post('/api/on-call-periods/', token, {
      account: ACC.mgr1, start_at: '2026-11-29T18:00:00+01:00', end_at: '2026-12-01T08:00:00+01:00', establishments: [EST.E1],
    });
    expect(overlap.status).toBe(400);
    expect(overlap.body.start_at[0]).toMatch(/déjà d’astreinte .* du 27\/11\/2026 18:00 au 30\/11\/2026 08:00/);

    const employee = await env.post('/api/on-call-periods/', token, {
      account: ACC.alice, start_at: '2026-12-11T18:00:00+01:00', end_at: '2026-12-14T08:00:00+01:00', establishments: [EST.E1],
    });
    expect(employee.status).toBe(400);
    expect(employee.body.account[0]).toMatch(/aucun rôle d’encadrement/);

    const bad = await env.post('/api/on-call-periods/', token, {
      account: 999999, start_at: '2026-12-11T18:00:00+01:00', end_at: '2026-12-11T08:00:00+01:00', establishments: [999999],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.account).toEqual(['Compte n° 999999 introuvable.']);
    expect(bad.body.end_at).toEqual(['La fin doit suivre le début.']);
    expect(bad.body.establishments).toEqual(['Établissement introuvable : 999999.']);
    const empty = await env.post('/api/on-call-periods/', token, {
      account: ACC.mgr1, start_at: '2026-12-11T18:00:00+01:00', end_at: '2026-12-12T08:00:00+01:00', establishments: [],
    });
    expect(empty.status).toBe(400);
    expect(empty.body.establishments).toBeDefined();
    expect((await env.db.query('select count(*)::int as n from app_public.on_call_periods')).rows[0].n).toBe(2);

    // The back-to-back period (end exclusive) is accepted.
    const next = await env.post('/api/on-call-periods/', token, {
      account: ACC.mgr1, start_at: '2026-11-30T08:00:00+01:00', end_at: '2026-11-30T18:00:00+01:00', establishments: [EST.E1],
    });
    expect(next.status).toBe(201);
    expect((await env.delete(`/api/on-call-periods/${next.body.id}/`, token)).status).toBe(204);
  });

  it('parallel creations of the same period: exactly one succeeds, the others answer 400 under start_at', async () => {
    const token = await env.login('mgr1');
    const body = { account: ACC.mgr1, start_at: '2026-12-18T18:00:00+01:00', end_at: '2026-12-21T08:00:00+01:00', establishments: [EST.E1] };
    const results = await Promise.all(Array.from({ length: 6 }, () => env.post('/api/on-call-periods/', token, body)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused.every((r) => r.status === 400 && Array.isArray(r.body.start_at))).toBe(true);
    const { rows } = await env.db.query("select count(*)::int as n from app_public.on_call_periods where start_at = '2026-12-18T18:00:00+01:00'");
    expect(rows[0].n).toBe(1);
  });

  it('a period spanning establishments outside the perimeter is read but not written', async () => {
    const wide = await env.post('/api/on-call-periods/', await env.login('admin'), {
      account: ACC.mgr2, start_at: '2026-12-05T08:00:00+01:00', end_at: '2026-12-06T08:00:00+01:00', establishments: [EST.E1, EST.E2],
    });
    expect(wide.status).toBe(201);
    const mgr1 = await env.login('mgr1');
    expect((await env.get(`/api/on-call-periods/${wide.body.id}/`, mgr1)).status).toBe(200);
    const patch = await env.patch(`/api/on-call-periods/${wide.body.id}/`, mgr1, { comment: 'x' });
    expect(patch.status).toBe(403);
    expect((await env.delete(`/api/on-call-periods/${wide.body.id}/`, await env.login('mgr2'))).status).toBe(403);
    expect((await env.patch(`/api/on-call-periods/${wide.body.id}/`, await env.login('admin'), { establishments: [EST.E2] })).body.establishments).toEqual([EST.E2]);
    // Now entirely in E2: mgr1 no longer sees it.
    expect((await env.get(`/api/on-call-periods/${wide.body.id}/`, mgr1)).status).toBe(404);
  });

  it('PUT requires every field; PATCH edits what is sent', async () => {
    const token = await env.login('mgr1');
    expect((await env.put(`/api/on-call-periods/${weekend}/`, token, { comment: 'x' })).status).toBe(400);
    const patched = await env.patch(`/api/on-call-periods/${weekend}/`, token, { comment: 'Astreinte de direction' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ comment: 'Astreinte de direction', account: ACC.mgr3, establishments: [EST.E1] });
    const put = await env.put(`/api/on-call-periods/${weekend}/`, token, {
      account: ACC.mgr3, start_at: '2026-11-20T19:00:00+01:00', end_at: '2026-11-23T08:00:00+01:00', establishments: [EST.E1], comment: null,
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ start_at: '2026-11-20T19:00:00+01:00', comment: null });
    // Back to the fixture's interval for the boundary tests below.
    await env.patch(`/api/on-call-periods/${weekend}/`, token, { start_at: '2026-11-20T18:00:00+01:00' });
  });
});

// SPEC Permissions rule 9: the period extends the queue perimeter (the directory scope follows it)
// during [start, end); emergency contacts and event participants stay outside (issue 11, finding 3).
describe('an on-call period extends the perimeter during [start, end)', () => {
  async function at(iso: string) {
    env.setNow(iso);
    const token = await env.login('mgr3');
    const employees = await env.get('/api/employees/?scope=perimeter&page_size=200', token);
    const contacts = await env.get(`/api/employees/${E.alice}/emergency-contacts/`, token);
    const options = await env.get('/api/events/participant-options/?page_size=200', token);
    const period = await env.get(`/api/on-call-periods/${weekend}/`, token);
    return {
      directory: employees.body.results.map((e: { id: number }) => e.id).includes(E.alice),
      contacts: contacts.status,
      options: options.body.results.map((o: { id: number }) => o.id).includes(E.alice),
      isCurrent: period.body.is_current,
    };
  }

  it('is not extended just before the start', async () => {
    try {
      expect(await at('2026-11-20T17:59:59+01:00')).toEqual({ directory: false, contacts: 404, options: false, isCurrent: false });
    } finally {
      env.setNow(DEFAULT_NOW);
    }
  });

  it('is extended from the start (inclusive)', async () => {
    try {
      expect(await at('2026-11-20T18:00:00+01:00')).toEqual({ directory: true, contacts: 404, options: false, isCurrent: true });
    } finally {
      env.setNow(DEFAULT_NOW);
    }
  });

  it('is still extended just before the end', async () => {
    try {
      expect(await at('2026-11-23T07:59:59+01:00')).toEqual({ directory: true, contacts: 404, options: false, isCurrent: true });
    } finally {
      env.setNow(DEFAULT_NOW);
    }
  });

  it('is no longer extended at the end (exclusive)', async () => {
    try {
      expect(await at('2026-11-23T08:00:00+01:00')).toEqual({ directory: false, contacts: 404, options: false, isCurrent: false });
    } finally {
      env.setNow(DEFAULT_NOW);
    }
  });
});
