import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

describe('smoke', () => {
  it('health', async () => {
    const res = await env.get('/api/health/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', database: 'ok' });
  });
  it('login and me', async () => {
    const token = await env.login('mgr1');
    const me = await env.get('/api/auth/me/', token);
    expect(me.status).toBe(200);
    expect(me.body.role).toBe('Manager n1');
  });
});
