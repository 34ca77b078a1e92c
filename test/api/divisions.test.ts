import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let EST: Record<string, number>;

beforeAll(async () => {
  env = await startTestEnv();
  EST = env.ids.establishments!;
});
afterAll(async () => {
  await env?.close();
});

describe('/api/divisions/', () => {
  let north: { id: number };
  let south: { id: number };

  it('staff creates divisions; other accounts are refused with 403', async () => {
    const staff = await env.login('staff');
    const created = await env.post('/api/divisions/', staff, { name: 'Pôle hébergement' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Pôle hébergement', establishments: [] });
    north = created.body;
    south = (await env.post('/api/divisions/', await env.login('root'), { name: 'Pôle enfance' })).body;

    for (const user of ['rh1', 'mgr1', 'alice']) {
      const res = await env.post('/api/divisions/', await env.login(user), { name: `Pôle ${user}` });
      expect(res.status).toBe(403);
      expect(res.body.detail).toBeTruthy();
    }
    expect((await env.db.query('select count(*)::int as n from app_public.divisions')).rows[0].n).toBe(2);
    expect((await env.db.query("select 1 from app_private.audit_log where model = 'division' and verb = 'Creation'")).rowCount).toBe(2);
  });

  it('refuses an empty or duplicate name under name', async () => {
    const staff = await env.login('staff');
    const empty = await env.post('/api/divisions/', staff, { name: '  ' });
    expect(empty.status).toBe(400);
    expect(empty.body.name).toEqual(['Le nom est obligatoire.']);
    const dup = await env.post('/api/divisions/', staff, { name: 'pôle HÉBERGEMENT' });
    expect(dup.status).toBe(400);
    expect(dup.body.name[0]).toMatch(/s’appelle déjà/);
    const missing = await env.post('/api/divisions/', staff, {});
    expect(missing.status).toBe(400);
    expect(missing.body.name).toEqual(['Ce champ est obligatoire.']);
  });

  it('is readable by every account; scope=perimeter keeps divisions with an establishment of the perimeter', async () => {
    const staff = await env.login('staff');
    expect((await env.patch(`/api/establishments/${EST.E1}/`, staff, { division: north.id })).status).toBe(200);
    expect((await env.patch(`/api/establishments/${EST.E2}/`, staff, { division: south.id })).status).toBe(200);

    const all = await env.get('/api/divisions/', await env.login('alice'));
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(2);
    const read = await env.get(`/api/divisions/${north.id}/`, await env.login('alice'));
    expect(read.body).toMatchObject({ id: north.id, establishments: [EST.E1] });

    const names = async (user: string) =>
      (await env.get('/api/divisions/?scope=perimeter', await env.login(user))).body.results.map((d: { name: string }) => d.name);
    expect(await names('mgr1')).toEqual(['Pôle hébergement']);
    expect(await names('mgr2')).toEqual(['Pôle enfance']);
    expect(await names('mgr3')).toEqual([]);
    expect(await names('admin')).toEqual(['Pôle enfance', 'Pôle hébergement']);
    // An employee's perimeter is their own workplaces (bruno: E1 and E2).
    expect(await names('alice')).toEqual(['Pôle hébergement']);
    expect(await names('bruno')).toEqual(['Pôle enfance', 'Pôle hébergement']);
  });

  it('PUT and PATCH rename; DELETE detaches the establishments', async () => {
    const staff = await env.login('staff');
    expect((await env.put(`/api/divisions/${north.id}/`, staff, {})).status).toBe(400);
    const put = await env.put(`/api/divisions/${north.id}/`, staff, { name: 'Pôle adultes' });
    expect(put.status).toBe(200);
    expect(put.body.name).toBe('Pôle adultes');
    const patch = await env.patch(`/api/divisions/${north.id}/`, staff, { name: 'Pôle adultes et hébergement' });
    expect(patch.body).toMatchObject({ id: north.id, name: 'Pôle adultes et hébergement', establishments: [EST.E1] });
    expect((await env.patch(`/api/divisions/${north.id}/`, staff, {})).body.name).toBe('Pôle adultes et hébergement');
    expect((await env.patch(`/api/divisions/${north.id}/`, await env.login('rh1'), { name: 'x' })).status).toBe(403);
    expect((await env.delete(`/api/divisions/${north.id}/`, await env.login('mgr1'))).status).toBe(403);
    expect((await env.delete(`/api/divisions/${north.id}/`, staff)).status).toBe(204);
    expect((await env.get(`/api/divisions/${north.id}/`, staff)).status).toBe(404);
    expect((await env.get(`/api/establishments/${EST.E1}/`, staff)).body.division).toBeNull();
    expect((await env.delete(`/api/divisions/${north.id}/`, staff)).status).toBe(404);
  });
});
