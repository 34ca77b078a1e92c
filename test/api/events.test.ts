import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let E: Record<string, number>;
let EST: Record<string, number>;
let ACC: Record<string, number>;

beforeAll(async () => {
  env = await startTestEnv();
  E = env.ids.employees!;
  EST = env.ids.establishments!;
  ACC = env.ids.accounts!;
});
afterAll(async () => {
  await env?.close();
});

async function conflictAlerts(): Promise<Array<{ account_id: number; body: string }>> {
  const { rows } = await env.db.query(
    "select account_id, body from app_public.notifications where title = 'Conflit entre un événement et une absence' order by id",
  );
  return rows;
}

describe('events', () => {
  let meeting: { id: number };

  it('a manager creates an event of its perimeter; warnings is an empty list without conflict', async () => {
    const res = await env.post('/api/events/', await env.login('mgr1'), {
      title: 'Réunion d’équipe',
      description: 'Projet personnalisé',
      establishment: EST.E1,
      start_at: '2026-11-18T14:00:00+01:00',
      end_at: '2026-11-18T16:00:00+01:00',
      participants: [E.alice, E.emma],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      title: 'Réunion d’équipe',
      establishment: EST.E1,
      establishment_name: 'Foyer Les Tilleuls',
      start_at: '2026-11-18T14:00:00+01:00',
      created_by: ACC.mgr1,
      created_by_name: 'Julien Petit',
      warnings: [],
    });
    expect(res.body.participants.map((p: { employee: number }) => p.employee).sort()).toEqual([E.alice, E.emma].sort());
    meeting = res.body;
    expect((await env.db.query("select 1 from app_private.audit_log where model = 'event' and verb = 'Creation'")).rowCount).toBe(1);
  });

  it('lists are restricted to the perimeter without a parameter', async () => {
    const ids = async (user: string, query = '') =>
      (await env.get(`/api/events/${query}`, await env.login(user))).body.results.map((e: { id: number }) => e.id);
    expect(await ids('mgr1')).toEqual([meeting.id]);
    expect(await ids('da')).toEqual([meeting.id]);
    expect(await ids('mgr2')).toEqual([]);
    expect(await ids('mgr3')).toEqual([]);
    expect(await ids('mgr2', '?scope=all')).toEqual([meeting.id]);
    // Participants read their events; others do not.
    expect(await ids('alice')).toEqual([meeting.id]);
    expect(await ids('emma')).toEqual([meeting.id]);
    expect(await ids('bruno')).toEqual([]);
    expect(await ids('bruno', '?scope=all')).toEqual([]);
    expect((await env.get(`/api/events/${meeting.id}/`, await env.login('bruno'))).status).toBe(404);
    expect((await env.get(`/api/events/${meeting.id}/`, await env.login('alice'))).body.warnings).toBeNull();
    // Window and participant filters.
    expect(await ids('mgr1', '?from=2026-11-19')).toEqual([]);
    expect(await ids('mgr1', '?from=2026-11-18&to=2026-11-18')).toEqual([meeting.id]);
    expect(await ids('mgr1', '?to=2026-11-17')).toEqual([]);
    expect(await ids('mgr1', `?employee=${E.chloe}`)).toEqual([]);
    expect(await ids('mgr1', `?employee=${E.alice}`)).toEqual([meeting.id]);
    expect((await env.get('/api/events/?scope=mine', await env.login('mgr1'))).status).toBe(400);
  });

  it('participant options follow the perimeter; scope=all opens the directory', async () => {
    const token = await env.login('mgr1');
    const own = await env.get('/api/events/participant-options/?page_size=200', token);
    expect(own.status).toBe(200);
    const ids = own.body.results.map((o: { id: number }) => o.id);
    expect(ids).toEqual(expect.arrayContaining([E.alice, E.bruno, E.emma, E.chloe]));
    expect(ids).not.toContain(E.david);
    expect(own.body.results[0]).toEqual({ id: expect.any(Number), name: expect.any(String), main_establishment: expect.anything(), main_establishment_name: expect.anything() });
    const all = await env.get('/api/events/participant-options/?scope=all&page_size=200', token);
    expect(all.body.count).toBe(15);
    const search = await env.get('/api/events/participant-options/?search=merc&scope=all', token);
    expect(search.body.results.map((o: { id: number }) => o.id)).toEqual([E.david]);
    expect((await env.get('/api/events/participant-options/', await env.login('alice'))).status).toBe(403);
    expect((await env.get('/api/events/participant-options/', await env.login('paie'))).status).toBe(403);
  });

  it('validates the body under the fields to correct and writes nothing', async () => {
    const token = await env.login('mgr1');
    const res = await env.post('/api/events/', token, {
      title: ' ',
      establishment: EST.E2,
      start_at: '2026-11-18T16:00:00+01:00',
      end_at: '2026-11-18T14:00:00+01:00',
      participants: [E.alice, 999999],
    });
    expect(res.status).toBe(400);
    expect(res.body.title).toEqual(['Le titre est obligatoire.']);
    expect(res.body.end_at).toEqual(['La fin doit suivre le début.']);
    expect(res.body.establishment).toEqual(["Cet établissement n’est pas dans votre périmètre."]);
    expect(res.body.participants).toEqual(['Salarié introuvable : 999999.']);
    const shape = await env.post('/api/events/', token, { title: 'x', start_at: 'mardi', end_at: '2026-11-18T14:00:00+01:00' });
    expect(shape.status).toBe(400);
    expect(shape.body.start_at).toBeDefined();
    const dup = await env.post('/api/events/', token, { title: 'x', start_at: '2026-11-18T14:00:00+01:00', end_at: '2026-11-18T15:00:00+01:00', participants: [E.alice, E.alice] });
    expect(dup.status).toBe(400);
    expect(dup.body.participants).toEqual(['La liste contient des doublons.']);
    expect((await env.db.query('select count(*)::int as n from app_public.events')).rows[0].n).toBe(1);
  });

  it('writes need events.change_event and an event of the caller or of its perimeter', async () => {
    const url = `/api/events/${meeting.id}/`;
    expect((await env.post('/api/events/', await env.login('alice'), { title: 'x', start_at: '2026-11-18T14:00:00+01:00', end_at: '2026-11-18T15:00:00+01:00' })).status).toBe(403);
    expect((await env.patch(url, await env.login('alice'), { title: 'x' })).status).toBe(403);
    expect((await env.patch(url, await env.login('mgr2'), { title: 'x' })).status).toBe(403);
    expect((await env.delete(url, await env.login('mgr2'))).status).toBe(403);
    expect((await env.patch(url, await env.login('bruno'), { title: 'x' })).status).toBe(404);
    expect((await env.patch(url, await env.login('emma'), { title: 'x' })).status).toBe(403);
    // The DA of E1 edits an E1 event it did not create.
    const da = await env.patch(url, await env.login('da'), { description: 'Ordre du jour joint' });
    expect(da.status).toBe(200);
    expect(da.body).toMatchObject({ title: 'Réunion d’équipe', description: 'Ordre du jour joint', warnings: [] });
    expect((await env.put(url, await env.login('mgr1'), { title: 'Sans dates' })).status).toBe(400);
  });
});

describe('event-versus-absence conflict alert', () => {
  let absenceId: number;
  let training: { id: number };

  beforeAll(async () => {
    const { rows } = await env.db.query<{ id: number }>(
      `insert into app_public.absences (employee_id, type_id, date_start, date_end, status, counted_quantity, counted_unit)
       select $1, t.id, '2026-11-23', '2026-11-27', 'validated', 5, 'day' from app_public.absence_types t where t.code = 'CP'
       returning id`,
      [E.alice],
    );
    absenceId = rows[0]!.id;
    await env.db.query(
      `insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, status, counted_quantity, counted_unit)
       select $1, t.id, '2026-11-30', '2026-11-30', 'morning', 'morning', 'pending', 0.5, 'day' from app_public.absence_types t where t.code = 'MAL'`,
      [E.bruno],
    );
  });

  it('creating an event over a validated absence answers a warning and alerts the author and the deciders', async () => {
    const res = await env.post('/api/events/', await env.login('mgr1'), {
      title: 'Formation incendie',
      establishment: EST.E1,
      start_at: '2026-11-24T09:00:00+01:00',
      end_at: '2026-11-24T12:00:00+01:00',
      participants: [E.alice, E.emma],
    });
    expect(res.status).toBe(201);
    expect(res.body.warnings).toEqual(['Alice Martin a une absence validée du 23/11/2026 au 27/11/2026 qui chevauche cet événement.']);
    training = res.body;
    const alerts = await conflictAlerts();
    // The author (mgr1) and the deciders of alice's absences (none attached to E1 besides the
    // author: the whole-association deciders admin and rh1); never alice herself.
    expect(alerts.map((a) => a.account_id).sort()).toEqual([ACC.admin, ACC.rh1, ACC.mgr1].sort());
    expect(alerts[0]!.body).toBe(
      'Alice Martin a une absence validée du 23/11/2026 au 27/11/2026 qui chevauche l’événement « Formation incendie » du 24/11/2026.',
    );
    const levels = await env.db.query("select distinct level, model, target_id from app_public.notifications where title = 'Conflit entre un événement et une absence'");
    expect(levels.rows).toEqual([{ level: 'warning', model: 'event', target_id: String(training.id) }]);
  });

  it('an update warns again but alerts only the conflicts it creates', async () => {
    const token = await env.login('mgr1');
    const rename = await env.patch(`/api/events/${training.id}/`, token, { title: 'Formation incendie (SSIAP)' });
    expect(rename.status).toBe(200);
    expect(rename.body.warnings).toHaveLength(1);
    expect(await conflictAlerts()).toHaveLength(3);

    // Bruno's pending half-day absence on the 30th (morning): moving the event there with him
    // creates a new conflict.
    const moved = await env.patch(`/api/events/${training.id}/`, token, {
      start_at: '2026-11-30T09:00:00+01:00',
      end_at: '2026-11-30T11:00:00+01:00',
      participants: [E.alice, E.bruno],
    });
    expect(moved.body.warnings).toEqual(['Bruno Lambert a une absence en attente de décision le 30/11/2026 qui chevauche cet événement.']);
    expect(await conflictAlerts()).toHaveLength(6);

    // The afternoon of the same day does not overlap the morning absence.
    const afternoon = await env.patch(`/api/events/${training.id}/`, token, {
      start_at: '2026-11-30T14:00:00+01:00',
      end_at: '2026-11-30T16:00:00+01:00',
    });
    expect(afternoon.body.warnings).toEqual([]);
  });

  it('refused and cancelled absences raise no conflict', async () => {
    await env.db.query("update app_public.absences set status = 'cancelled', version = version + 1 where id = $1", [absenceId]);
    const res = await env.post('/api/events/', await env.login('mgr1'), {
      title: 'Sortie au musée',
      start_at: '2026-11-25T13:00:00+01:00',
      end_at: '2026-11-25T17:00:00+01:00',
      participants: [E.alice],
    });
    expect(res.body.warnings).toEqual([]);
    expect((await env.delete(`/api/events/${res.body.id}/`, await env.login('mgr1'))).status).toBe(204);
    expect((await env.get(`/api/events/${res.body.id}/`, await env.login('mgr1'))).status).toBe(404);
  });
});
