import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let E: Record<string, number>;
let EST: Record<string, number>;
let T: Record<string, number>;

beforeAll(async () => {
  env = await startTestEnv();
  E = env.ids.employees!;
  EST = env.ids.establishments!;
  T = env.ids.teams!;
});
afterAll(async () => {
  await env?.close();
});

async function teamExists(id: number | undefined): Promise<boolean> {
  return (await env.db.query('select 1 from app_public.teams where id = $1', [id])).rowCount === 1;
}

describe('reading teams', () => {
  it('every account reads teams; scope=perimeter keeps those touching the perimeter', async () => {
    const all = await env.get('/api/teams/', await env.login('alice'));
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(3);
    expect(all.body.results[0]).toMatchObject({ id: T.T2, name: 'Équipe de nuit', establishments: [EST.E1, EST.E2] });
    const scoped = await env.get('/api/teams/?scope=perimeter', await env.login('rh2'));
    expect(scoped.body.results.map((t: { id: number }) => t.id)).toEqual([T.T2]);
    const byEst = await env.get(`/api/teams/?establishment=${EST.E3}`, await env.login('alice'));
    expect(byEst.body.results.map((t: { id: number }) => t.id)).toEqual([T.T3]);
  });

  it('a team lists the members the caller may read', async () => {
    const rh = await env.get(`/api/teams/${T.T2}/`, await env.login('rh2'));
    expect(rh.body.members.map((m: { employee: number }) => m.employee).sort()).toEqual([E.bruno, E.chloe].sort());
    const self = await env.get(`/api/teams/${T.T2}/`, await env.login('chloe'));
    expect(self.body.members.map((m: { employee: number }) => m.employee)).toEqual([E.chloe]);
    expect((await env.get('/api/teams/999999/', await env.login('chloe'))).status).toBe(404);
  });
});

describe('team writes are bounded to the perimeter', () => {
  it('a team without establishment in the perimeter answers 404 for every write', async () => {
    const token = await env.login('rh2');
    expect((await env.patch(`/api/teams/${T.T1}/`, token, { name: 'Renommée' })).status).toBe(404);
    expect((await env.put(`/api/teams/${T.T1}/`, token, { name: 'Renommée', establishments: [EST.E1] })).status).toBe(404);
    expect((await env.delete(`/api/teams/${T.T1}/`, token)).status).toBe(404);
    expect((await env.put(`/api/teams/${T.T1}/members/`, token, { members: [] })).status).toBe(404);
    expect((await env.post(`/api/teams/${T.T1}/members/`, token, { employee: E.chloe })).status).toBe(404);
    expect((await env.get(`/api/teams/${T.T1}/`, token)).body.name).toBe('Équipe éducative jour');
  });

  it('accounts without employee.change_team are refused (403)', async () => {
    for (const user of ['alice', 'emma', 'paie']) {
      const token = await env.login(user);
      expect((await env.patch(`/api/teams/${T.T1}/`, token, { name: 'x' })).status).toBe(403);
      expect((await env.post(`/api/teams/${T.T1}/members/`, token, { employee: E.alice })).status).toBe(403);
      expect((await env.post('/api/teams/', token, { name: 'x', establishments: [EST.E1] })).status).toBe(403);
    }
  });

  it('managers write the teams of their perimeter', async () => {
    const token = await env.login('mgr1');
    expect((await env.patch(`/api/teams/${T.T3}/`, token, { name: 'x' })).status).toBe(404);
    expect((await env.post(`/api/teams/${T.T3}/members/`, token, { employee: E.alice })).status).toBe(404);
    const renamed = await env.patch(`/api/teams/${T.T1}/`, token, { name: 'Équipe éducative de jour' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('Équipe éducative de jour');
    const david = await env.post(`/api/teams/${T.T1}/members/`, token, { employee: E.david });
    expect(david.status).toBe(403);
    const emma = await env.post(`/api/teams/${T.T1}/members/`, token, { employee: E.emma, end_date: '2026-12-31' });
    expect(emma.status).toBe(201);
    expect(emma.body.members.map((m: { employee: number }) => m.employee)).toEqual(expect.arrayContaining([E.alice, E.emma]));
    const overflow = await env.delete(`/api/teams/${T.T2}/`, token);
    expect(overflow.status).toBe(403);
    expect(await teamExists(T.T2)).toBe(true);
    const put = await env.put(`/api/teams/${T.T1}/`, token, { name: 'Équipe éducative jour', establishments: [EST.E1] });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: 'Équipe éducative jour', establishments: [EST.E1] });
    expect((await env.put(`/api/teams/${T.T1}/`, token, { name: 'Sans établissements' })).status).toBe(400);
    // mgr3 (E3) writes T3 only.
    expect((await env.patch(`/api/teams/${T.T1}/`, await env.login('mgr3'), { name: 'x' })).status).toBe(404);
    expect((await env.patch(`/api/teams/${T.T3}/`, await env.login('mgr3'), { name: 'Équipe technique ESAT' })).status).toBe(200);
  });

  it('a team spanning the perimeter is edited, but establishments outside it stay', async () => {
    const token = await env.login('rh2');
    const renamed = await env.patch(`/api/teams/${T.T2}/`, token, { name: 'Équipe de nuit E1-E2' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('Équipe de nuit E1-E2');
    const dropE1 = await env.patch(`/api/teams/${T.T2}/`, token, { establishments: [EST.E2] });
    expect(dropE1.status).toBe(400);
    expect(dropE1.body.establishments[0]).toMatch(/Hors de votre périmètre : Foyer Les Tilleuls/);
    const addE3 = await env.patch(`/api/teams/${T.T2}/`, token, { establishments: [EST.E1, EST.E2, EST.E3] });
    expect(addE3.status).toBe(400);
    const empty = await env.patch(`/api/teams/${T.T2}/`, token, { establishments: [] });
    expect(empty.status).toBe(400);
    expect((await env.get(`/api/teams/${T.T2}/`, token)).body.establishments).toEqual([EST.E1, EST.E2]);
  });

  it('deleting a team that overflows the perimeter is refused (403) and deletes nothing', async () => {
    const res = await env.delete(`/api/teams/${T.T2}/`, await env.login('rh2'));
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/hors de votre périmètre \(Foyer Les Tilleuls\)/);
    expect(await teamExists(T.T2)).toBe(true);
  });

  it('a restricted writer creates and deletes a team of its perimeter', async () => {
    const token = await env.login('rh2');
    const outside = await env.post('/api/teams/', token, { name: 'Équipe mixte', establishments: [EST.E1, EST.E2] });
    expect(outside.status).toBe(400);
    expect(outside.body.establishments).toBeDefined();
    const created = await env.post('/api/teams/', token, { name: 'Équipe éducative IME', establishments: [EST.E2] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Équipe éducative IME', establishments: [EST.E2], members: [] });
    const missing = await env.post('/api/teams/', token, { name: 'Sans établissement' });
    expect(missing.status).toBe(400);
    expect((await env.delete(`/api/teams/${created.body.id}/`, token)).status).toBe(204);
    expect(await teamExists(created.body.id)).toBe(false);
  });
});

describe('team members', () => {
  it('adding a member outside the perimeter is refused (403); inside, accepted once', async () => {
    const token = await env.login('rh2');
    const alice = await env.post(`/api/teams/${T.T2}/members/`, token, { employee: E.alice });
    expect(alice.status).toBe(403);
    expect(alice.body.detail).toMatch(/Alice Martin n’est pas dans votre périmètre/);
    expect((await env.db.query('select 1 from app_public.team_assignments where employee_id = $1 and team_id = $2', [E.alice, T.T2])).rowCount).toBe(0);

    const gaelle = await env.post(`/api/teams/${T.T2}/members/`, token, { employee: E.gaelle });
    expect(gaelle.status).toBe(201);
    expect(gaelle.body.members).toEqual(
      expect.arrayContaining([expect.objectContaining({ employee: E.gaelle, start_date: '2026-11-16', end_date: null })]),
    );
    const twice = await env.post(`/api/teams/${T.T2}/members/`, token, { employee: E.gaelle });
    expect(twice.status).toBe(400);
    expect(twice.body.employee[0]).toMatch(/fait déjà partie/);
    const unknown = await env.post(`/api/teams/${T.T2}/members/`, token, { employee: 999999 });
    expect(unknown.status).toBe(400);
    const dates = await env.post(`/api/teams/${T.T2}/members/`, token, { employee: E.chloe, start_date: '2027-02-01', end_date: '2027-01-01' });
    expect(dates.status).toBe(400);
  });

  it('replacing members ends the assignments left out and adds the new ones', async () => {
    const token = await env.login('rh2');
    const refused = await env.put(`/api/teams/${T.T2}/members/`, token, {
      members: [{ employee: E.chloe }, { employee: E.alice }],
    });
    expect(refused.status).toBe(403);
    expect((await env.get(`/api/teams/${T.T2}/`, token)).body.members).toHaveLength(3);

    const dup = await env.put(`/api/teams/${T.T2}/members/`, token, { members: [{ employee: E.chloe }, { employee: E.chloe }] });
    expect(dup.status).toBe(400);

    const res = await env.put(`/api/teams/${T.T2}/members/`, token, {
      members: [{ employee: E.chloe, end_date: '2027-06-30' }, { employee: E.rh2, start_date: '2026-12-01' }],
    });
    expect(res.status).toBe(200);
    expect(res.body.members.map((m: { employee: number; start_date: string | null; end_date: string | null }) => [m.employee, m.start_date, m.end_date])).toEqual([
      [E.chloe, null, '2027-06-30'],
      [E.rh2, '2026-12-01', null],
    ]);
    // Bruno leaves yesterday (his assignment had begun); Gaëlle's started today: ended too.
    const { rows } = await env.db.query('select employee_id, end_date::text from app_public.team_assignments where team_id = $1 and employee_id = any ($2) order by employee_id', [
      T.T2,
      [E.bruno, E.gaelle],
    ]);
    expect(rows).toEqual(
      expect.arrayContaining([{ employee_id: E.bruno, end_date: '2026-11-15' }]),
    );
    expect(rows.find((r: { employee_id: number }) => r.employee_id === E.gaelle)).toBeUndefined();
    expect((await env.db.query("select 1 from app_private.audit_log where model = 'team_assignment' and verb = 'Modification'")).rowCount).toBeGreaterThan(0);
  });

  it('a writer of the whole association deletes any team with its assignments', async () => {
    const res = await env.delete(`/api/teams/${T.T2}/`, await env.login('admin'));
    expect(res.status).toBe(204);
    expect(await teamExists(T.T2)).toBe(false);
    expect((await env.db.query('select 1 from app_public.team_assignments where team_id = $1', [T.T2])).rowCount).toBe(0);
    expect((await env.db.query("select 1 from app_private.audit_log where model = 'team' and verb = 'Suppression' and target_id = $1", [T.T2])).rowCount).toBe(1);
  });
});
