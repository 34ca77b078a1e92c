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

const names = (body: { results: Array<{ name: string }> }) => body.results.map((e) => e.name);

describe('/api/establishments/', () => {
  it('is readable by every authenticated account, entire without scope', async () => {
    expect((await env.get('/api/establishments/', null)).status).toBe(401);
    const res = await env.get('/api/establishments/', await env.login('alice'));
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['ESAT du Moulin', 'Foyer Les Tilleuls', 'IME Les Peupliers']);
    expect(res.body.results[1]).toMatchObject({ id: EST.E1, count_base: 'ouvrables', division: null, division_name: null });
    const one = await env.get(`/api/establishments/${EST.E2}/`, await env.login('emma'));
    expect(one.body).toMatchObject({ name: 'IME Les Peupliers', count_base: 'ouvres' });
    expect((await env.get('/api/establishments/999999/', await env.login('emma'))).status).toBe(404);
  });

  it('scope=perimeter follows roles, on-call periods and, for employees, their workplaces', async () => {
    const scoped = async (user: string) => names((await env.get('/api/establishments/?scope=perimeter', await env.login(user))).body);
    expect(await scoped('mgr1')).toEqual(['Foyer Les Tilleuls']);
    expect(await scoped('rh2')).toEqual(['IME Les Peupliers']);
    expect(await scoped('rh1')).toHaveLength(3);
    expect(await scoped('paie')).toHaveLength(3);
    expect(await scoped('bruno')).toEqual(['Foyer Les Tilleuls', 'IME Les Peupliers']);
    expect(await scoped('farid')).toEqual([]);
    expect(await scoped('mgr3')).toEqual(['ESAT du Moulin']);
    env.setNow('2026-11-21T12:00:00+01:00');
    try {
      expect(await scoped('mgr3')).toEqual(['ESAT du Moulin', 'Foyer Les Tilleuls']);
    } finally {
      env.setNow('2026-11-16T10:00:00+01:00');
    }
  });

  it('POST exists for staff only, with validation under each field', async () => {
    const staff = await env.login('staff');
    const created = await env.post('/api/establishments/', staff, { name: 'MAS Les Cèdres', count_base: 'ouvres' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'MAS Les Cèdres', count_base: 'ouvres', division: null });
    const byDefault = await env.post('/api/establishments/', await env.login('admin'), { name: 'SAVS Horizon' });
    expect(byDefault.body.count_base).toBe('ouvrables');

    for (const user of ['rh1', 'mgr1', 'alice', 'paie']) {
      expect((await env.post('/api/establishments/', await env.login(user), { name: `Établissement ${user}` })).status).toBe(403);
    }
    const bad = await env.post('/api/establishments/', staff, { name: 'foyer les tilleuls', count_base: 'ouvres', division: 999999 });
    expect(bad.status).toBe(400);
    expect(bad.body.name[0]).toMatch(/s’appelle déjà/);
    expect(bad.body.division[0]).toMatch(/introuvable/);
    const base = await env.post('/api/establishments/', staff, { name: 'Autre', count_base: 'lundi-vendredi' });
    expect(base.status).toBe(400);
    expect(base.body.count_base).toBeDefined();
    expect((await env.db.query("select 1 from app_public.establishments where name = 'Autre'")).rowCount).toBe(0);
  });

  it('PUT, PATCH and DELETE are staff writes; an establishment in use is kept', async () => {
    const staff = await env.login('staff');
    const created = (await env.post('/api/establishments/', staff, { name: 'Accueil de jour' })).body;
    const patched = await env.patch(`/api/establishments/${created.id}/`, staff, { count_base: 'ouvres' });
    expect(patched.body).toMatchObject({ name: 'Accueil de jour', count_base: 'ouvres' });
    expect((await env.put(`/api/establishments/${created.id}/`, staff, { count_base: 'ouvres' })).status).toBe(400);
    expect((await env.put(`/api/establishments/${created.id}/`, staff, { name: 'Accueil de jour Les Iris' })).body.name).toBe('Accueil de jour Les Iris');
    expect((await env.patch(`/api/establishments/${created.id}/`, await env.login('rh1'), { name: 'x' })).status).toBe(403);

    const used = await env.delete(`/api/establishments/${EST.E1}/`, staff);
    expect(used.status).toBe(400);
    expect(used.body.non_field_errors[0]).toMatch(/encore utilisé \(salariés, postes, équipes, attributions de rôle, astreintes\)/);
    expect((await env.delete(`/api/establishments/${created.id}/`, await env.login('alice'))).status).toBe(403);
    expect((await env.delete(`/api/establishments/${created.id}/`, staff)).status).toBe(204);
    expect((await env.get(`/api/establishments/${created.id}/`, staff)).status).toBe(404);
  });
});
