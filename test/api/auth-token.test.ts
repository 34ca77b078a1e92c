/**
 * POST /api/auth/token/ (CONTRACT section 2, SPEC Authentication rule 1): credentials in,
 * one HS256 access token out, valid 6 hours; no refresh token anywhere.
 */
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { FIXTURE_PASSWORD } from '../helpers/settings.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const INVALID_CREDENTIALS = 'Aucun compte actif n’a été trouvé avec les identifiants fournis.';

describe('POST /api/auth/token/', () => {
  it('answers 200 {"access"} only, for valid credentials', async () => {
    const res = await env.post('/api/auth/token/', null, { username: 'alice', password: FIXTURE_PASSWORD });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['access']);
    expect(res.body).not.toHaveProperty('refresh');
    expect(typeof res.body.access).toBe('string');
    const me = await env.get('/api/auth/me/', res.body.access);
    expect(me.status).toBe(200);
    expect(me.body.username).toBe('alice');
  });

  it('compares the username case-insensitively', async () => {
    for (const username of ['ALICE', 'Alice', 'aLiCe']) {
      const res = await env.post('/api/auth/token/', null, { username, password: FIXTURE_PASSWORD });
      expect(res.status, username).toBe(200);
      const me = await env.get('/api/auth/me/', res.body.access);
      expect(me.body.id).toBe(env.ids.accounts!.alice);
    }
  });

  it('issues an HS256 JWT whose exp - iat is 21600 seconds, naming the account', async () => {
    const res = await env.post('/api/auth/token/', null, { username: 'mgr1', password: FIXTURE_PASSWORD });
    const decoded = jwt.decode(res.body.access, { complete: true })!;
    expect(decoded.header.alg).toBe('HS256');
    const payload = decoded.payload as jwt.JwtPayload;
    expect(payload.exp! - payload.iat!).toBe(21600);
    expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(60);
    expect(payload.sub).toBe(String(env.ids.accounts!.mgr1));
    // Signed with the server's secret, verifiable with it only.
    expect(() => jwt.verify(res.body.access, env.config.jwtSecret, { algorithms: ['HS256'] })).not.toThrow();
    expect(() => jwt.verify(res.body.access, 'x'.repeat(64), { algorithms: ['HS256'] })).toThrow();
  });

  it('records the login time', async () => {
    await env.db.query('update app_public.accounts set last_login_at = null where id = $1', [env.ids.accounts!.bruno]);
    await env.post('/api/auth/token/', null, { username: 'bruno', password: FIXTURE_PASSWORD });
    const { rows } = await env.db.query('select last_login_at from app_public.accounts where id = $1', [env.ids.accounts!.bruno]);
    expect(rows[0].last_login_at).not.toBeNull();
  });

  it('answers 401 {"detail"} for a wrong password', async () => {
    const res = await env.post('/api/auth/token/', null, { username: 'alice', password: 'Wrong-Passw0rd!' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: INVALID_CREDENTIALS });
  });

  it('answers the same 401 for an unknown user', async () => {
    const res = await env.post('/api/auth/token/', null, { username: 'nobody', password: FIXTURE_PASSWORD });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: INVALID_CREDENTIALS });
  });

  it('answers 401 for an inactive account, even with the right password', async () => {
    const accountId = env.ids.accounts!.chloe;
    await env.db.query('update app_public.accounts set is_active = false where id = $1', [accountId]);
    try {
      const res = await env.post('/api/auth/token/', null, { username: 'chloe', password: FIXTURE_PASSWORD });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: INVALID_CREDENTIALS });
    } finally {
      await env.db.query('update app_public.accounts set is_active = true where id = $1', [accountId]);
    }
    const again = await env.post('/api/auth/token/', null, { username: 'chloe', password: FIXTURE_PASSWORD });
    expect(again.status).toBe(200);
  });

  it('answers 401 for an account without a usable password, whatever is sent', async () => {
    await env.db.query('update app_private.account_secrets set password_hash = null where account_id = $1', [env.ids.accounts!.farid]);
    for (const password of [FIXTURE_PASSWORD, 'null', ' ']) {
      const res = await env.post('/api/auth/token/', null, { username: 'farid', password });
      expect(res.status, password).toBe(401);
      expect(res.body).toEqual({ detail: INVALID_CREDENTIALS });
    }
  });

  it('answers 401 for an account with no secrets row at all', async () => {
    await env.db.query('delete from app_private.account_secrets where account_id = $1', [env.ids.accounts!.gaelle]);
    const res = await env.post('/api/auth/token/', null, { username: 'gaelle', password: FIXTURE_PASSWORD });
    expect(res.status).toBe(401);
  });

  it('answers 400 keyed by field for missing fields', async () => {
    const empty = await env.post('/api/auth/token/', null, {});
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ username: ['Ce champ est obligatoire.'], password: ['Ce champ est obligatoire.'] });

    const noPassword = await env.post('/api/auth/token/', null, { username: 'alice' });
    expect(noPassword.status).toBe(400);
    expect(noPassword.body).toEqual({ password: ['Ce champ est obligatoire.'] });

    const blank = await env.post('/api/auth/token/', null, { username: '', password: '' });
    expect(blank.status).toBe(400);
    expect(blank.body).toEqual({ username: ['Ce champ ne peut pas être vide.'], password: ['Ce champ ne peut pas être vide.'] });

    const noBody = await env.request('POST', '/api/auth/token/');
    expect(noBody.status).toBe(400);
    expect(Object.keys(noBody.body).sort()).toEqual(['password', 'username']);
  });

  it('answers 400 keyed by field for wrong types', async () => {
    const res = await env.post('/api/auth/token/', null, { username: 42, password: ['x'] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      username: ['Une chaîne de caractères est attendue.'],
      password: ['Une chaîne de caractères est attendue.'],
    });
    const tooLong = await env.post('/api/auth/token/', null, { username: 'a'.repeat(151), password: 'x' });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toEqual({ username: ['Au plus 150 caractères.'] });
  });

  it('answers 400 under non_field_errors for malformed JSON or a body that is not an object', async () => {
    const malformed = await env.request('POST', '/api/auth/token/', { rawBody: '{"username": "alice", ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ non_field_errors: ['Corps JSON illisible.'] });

    for (const rawBody of ['[]', '"alice"', '12', 'null']) {
      const res = await env.request('POST', '/api/auth/token/', { rawBody });
      expect(res.status, rawBody).toBe(400);
      expect(Object.keys(res.body), rawBody).toEqual(['non_field_errors']);
    }
  });

  it('answers 400 under non_field_errors for a body over 1 MB, and reads the next body as before', async () => {
    const tooLarge = await env.request('POST', '/api/auth/token/',
      { rawBody: JSON.stringify({ username: 'alice', password: 'x'.repeat(1024 * 1024) }) });
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body).toEqual({ non_field_errors: ['Corps de requête trop volumineux (1 Mo au plus).'] });

    const next = await env.post('/api/auth/token/', null, { username: 'a'.repeat(151), password: 'x' });
    expect(next.status).toBe(400);
    expect(next.body).toEqual({ username: ['Au plus 150 caractères.'] });
  });

  it('has no refresh route: POST /api/auth/token/refresh/ is 404', async () => {
    const token = await env.login('alice');
    const anonymous = await env.post('/api/auth/token/refresh/', null, { refresh: token });
    expect(anonymous.status).toBe(404);
    expect(anonymous.body).toHaveProperty('detail');
    const authenticated = await env.post('/api/auth/token/refresh/', token, { refresh: token });
    expect(authenticated.status).toBe(404);
  });

  it('answers 405 with Allow for other methods on the token route', async () => {
    const res = await env.get('/api/auth/token/');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('POST');
  });
});
