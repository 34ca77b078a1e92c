import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;

beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

describe('/api/contract-types/', () => {
  it('lists the reference types to every account', async () => {
    const res = await env.get('/api/contract-types/', await env.login('emma'));
    expect(res.status).toBe(200);
    expect(res.body.results.map((t: { code: string }) => t.code)).toEqual(['CDI', 'CDD', 'Intérim', 'Apprentissage', 'Stage']);
    expect(res.body.results[2]).toMatchObject({ name: "Mission d’intérim", is_temporary_work: true });
    expect((await env.get(`/api/contract-types/${res.body.results[0].id}/`, await env.login('alice'))).body.code).toBe('CDI');
  });

  it('staff creates, renames and deletes an unused type; others get 403', async () => {
    const staff = await env.login('staff');
    const created = await env.post('/api/contract-types/', staff, { code: 'CUI', name: 'Contrat unique d’insertion' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ code: 'CUI', is_temporary_work: false });
    expect((await env.post('/api/contract-types/', await env.login('rh1'), { code: 'CAE', name: 'x' })).status).toBe(403);

    const patched = await env.patch(`/api/contract-types/${created.body.id}/`, staff, { name: 'CUI-CAE' });
    expect(patched.body).toMatchObject({ code: 'CUI', name: 'CUI-CAE' });
    const put = await env.put(`/api/contract-types/${created.body.id}/`, staff, { code: 'CUI', name: 'CUI', is_temporary_work: false });
    expect(put.status).toBe(200);
    // Renaming a reference type whose code has an accent keeps its code valid.
    const interim = (await env.get('/api/contract-types/', staff)).body.results[2];
    expect((await env.patch(`/api/contract-types/${interim.id}/`, staff, { name: 'Mission d’intérim' })).status).toBe(200);

    expect((await env.delete(`/api/contract-types/${created.body.id}/`, await env.login('mgr1'))).status).toBe(403);
    expect((await env.delete(`/api/contract-types/${created.body.id}/`, staff)).status).toBe(204);
  });

  it('validates the code and refuses to delete a type in use', async () => {
    const staff = await env.login('staff');
    const dup = await env.post('/api/contract-types/', staff, { code: 'cdi', name: 'Doublon' });
    expect(dup.status).toBe(400);
    expect(dup.body.code[0]).toMatch(/déjà utilisé/);
    const bad = await env.post('/api/contract-types/', staff, { code: '#1', name: '' });
    expect(bad.status).toBe(400);
    expect(bad.body.code[0]).toMatch(/Code invalide/);
    expect(bad.body.name).toEqual(['Le libellé est obligatoire.']);

    const cdi = (await env.get('/api/contract-types/', staff)).body.results[0];
    const used = await env.delete(`/api/contract-types/${cdi.id}/`, staff);
    expect(used.status).toBe(400);
    expect(used.body.non_field_errors[0]).toMatch(/encore utilisé \(contrats/);
  });
});
