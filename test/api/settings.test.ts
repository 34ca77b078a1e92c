/**
 * GET /api/settings/: the limits the web application shows and checks before sending, read from
 * their one home in SQL (app_public.client_settings(), test/db/82-client-settings.sql), equal to
 * those the route schemas and the upload check apply.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INPUT_CONTRACT } from '../../src/http/input-contract.js';
import { DOCUMENT_CONTENT_TYPES } from '../../src/storage/file-type.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

describe('GET /api/settings/', () => {
  it('answers the input contract, the document formats and the longest absence', async () => {
    const res = await env.get('/api/settings/', await env.login('alice'));
    expect(res.status).toBe(200);
    for (const [name, value] of Object.entries(INPUT_CONTRACT)) expect(res.body[snakeCase(name)], name).toEqual(value);
    expect(res.body.document_max_bytes).toBe(10 * 1024 * 1024);
    expect(res.body.document_content_types).toEqual([...DOCUMENT_CONTENT_TYPES]);
    expect(res.body.absence_max_days).toBe(1096);
  });

  it('is the same for an account without employee record and for a superuser', async () => {
    const reference = (await env.get('/api/settings/', await env.login('alice'))).body;
    for (const user of ['salarie_noemp', 'root']) {
      const res = await env.get('/api/settings/', await env.login(user));
      expect(res.status, user).toBe(200);
      expect(res.body, user).toEqual(reference);
    }
  });

  it('needs an open session: 401 without token and for a closed account', async () => {
    expect((await env.get('/api/settings/')).status).toBe(401);
    const token = await env.login('bruno');
    await env.db.query('update app_public.accounts set is_active = false where username = $1', ['bruno']);
    expect((await env.get('/api/settings/', token)).status).toBe(401);
  });
});
