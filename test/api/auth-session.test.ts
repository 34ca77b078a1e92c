/**
 * SPEC Authentication rule 1: a token is not revoked individually; every request reloads
 * the account and refuses an inactive one. Issue 25 (finding 4) changes the rest of the rule:
 * closing an account or changing its password ends every token issued before (the account's
 * token generation), so a token of a closed account stays refused once it is reopened.
 * Tokens that we did not sign, that expired or that are badly presented answer 401.
 */
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { FIXTURE_PASSWORD } from '../helpers/settings.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

async function setActive(account: string, active: boolean): Promise<void> {
  await env.db.query('update app_public.accounts set is_active = $2 where id = $1', [env.ids.accounts![account], active]);
}

function expect401(res: { status: number; body: any; headers: Headers }): void {
  expect(res.status).toBe(401);
  expect(Object.keys(res.body)).toEqual(['detail']);
  expect(typeof res.body.detail).toBe('string');
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
}

describe('every request reloads the account', () => {
  it('an account closed by the owner loses its token at the next request, for good: reopened, it logs in again', async () => {
    const token = await env.login('bruno');
    expect((await env.get('/api/auth/me/', token)).status).toBe(200);

    await setActive('bruno', false);
    const closed = await env.get('/api/auth/me/', token);
    expect401(closed);
    expect(closed.body.detail).toBe('Compte inactif ou inconnu.');
    // Every authenticated route refuses it, not only /me/.
    expect((await env.get('/api/absence-types/', token)).status).toBe(401);

    await setActive('bruno', true);
    expect401(await env.get('/api/auth/me/', token));
    const fresh = await env.post('/api/auth/token/', null, { username: 'bruno', password: FIXTURE_PASSWORD });
    const reopened = await env.get('/api/auth/me/', fresh.body.access);
    expect(reopened.status).toBe(200);
    expect(reopened.body.username).toBe('bruno');
  });

  it('an account closed through PUT /api/employees/<id>/account-activation/ loses its token for good', async () => {
    const hr = await env.login('rh1');
    const token = await env.login('david');
    expect((await env.get('/api/auth/me/', token)).status).toBe(200);

    const close = await env.put(`/api/employees/${env.ids.employees!.david}/account-activation/`, hr, { is_active: false });
    expect(close.status).toBe(200);
    expect401(await env.get('/api/auth/me/', token));
    // Logging in again is refused too.
    expect((await env.post('/api/auth/token/', null, { username: 'david', password: FIXTURE_PASSWORD })).status).toBe(401);

    const open = await env.put(`/api/employees/${env.ids.employees!.david}/account-activation/`, hr, { is_active: true });
    expect(open.status).toBe(200);
    expect401(await env.get('/api/auth/me/', token));
    expect((await env.post('/api/auth/token/', null, { username: 'david', password: FIXTURE_PASSWORD })).status).toBe(200);
  });

  it('a write by a closed account answers 401 and writes nothing (the account check and the call share one round trip)', async () => {
    const token = await env.login('chloe');
    const { rows: types } = await env.db.query<{ id: number }>("select id from app_public.absence_types where code = 'CP'");
    const request = { employee: env.ids.employees!.chloe, type: types[0]!.id, date_start: '2026-12-14' };
    const count = async () =>
      Number((await env.db.query<{ n: string }>('select count(*) as n from app_public.absences where employee_id = $1', [env.ids.employees!.chloe])).rows[0]!.n);
    const before = await count();

    await setActive('chloe', false);
    // The same token, already verified and cached by the service: the account is read again all the same.
    expect401(await env.post('/api/absences/', token, request));
    expect401(await env.post('/api/absences/', token, request));
    expect(await count()).toBe(before);

    await setActive('chloe', true);
    const fresh = (await env.post('/api/auth/token/', null, { username: 'chloe', password: FIXTURE_PASSWORD })).body.access;
    const created = await env.post('/api/absences/', fresh, request);
    expect(created.status).toBe(201);
    expect(await count()).toBe(before + 1);
  });

  it('a token of a deleted account answers 401', async () => {
    const { rows } = await env.db.query<{ id: number }>(
      "insert into app_public.accounts (username) values ('ephemeral') returning id",
    );
    const token = jwt.sign({ sub: String(rows[0]!.id), typ: 'access' }, env.config.jwtSecret, { algorithm: 'HS256', expiresIn: 600 });
    expect((await env.get('/api/auth/me/', token)).status).toBe(200);
    await env.db.query('delete from app_public.accounts where id = $1', [rows[0]!.id]);
    expect401(await env.get('/api/auth/me/', token));
  });

  it('changing the password ends every earlier token (issue 25 finding 4), whatever writes the new hash', async () => {
    const token = await env.login('gaelle');
    const newHash = await hashPassword('Another-Passw0rd!');
    await env.db.query(
      'update app_private.account_secrets set password_hash = $2, password_changed_at = now() where account_id = $1',
      [env.ids.accounts!.gaelle, newHash],
    );
    // The old password no longer logs in, the new one does, and the old token is refused.
    expect((await env.post('/api/auth/token/', null, { username: 'gaelle', password: FIXTURE_PASSWORD })).status).toBe(401);
    const fresh = await env.post('/api/auth/token/', null, { username: 'gaelle', password: 'Another-Passw0rd!' });
    expect(fresh.status).toBe(200);
    expect401(await env.get('/api/auth/me/', token));
    const me = await env.get('/api/auth/me/', fresh.body.access);
    expect(me.status).toBe(200);
    expect(me.body.username).toBe('gaelle');
  });
});

describe('tokens that are refused', () => {
  it('a token signed with another secret', async () => {
    const token = jwt.sign({ sub: String(env.ids.accounts!.admin), typ: 'access' }, 'another-secret-'.repeat(4), {
      algorithm: 'HS256',
      expiresIn: 600,
    });
    const res = await env.get('/api/auth/me/', token);
    expect401(res);
    expect(res.body.detail).toBe('Jeton invalide ou expiré.');
  });

  it('an expired token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = jwt.sign({ sub: String(env.ids.accounts!.admin), typ: 'access', iat: now - 7 * 3600, exp: now - 3600 }, env.config.jwtSecret, {
      algorithm: 'HS256',
    });
    const res = await env.get('/api/auth/me/', token);
    expect401(res);
    expect(res.body.detail).toBe('Jeton invalide ou expiré.');
  });

  it('a token with the right secret but another algorithm, or none', async () => {
    const hs512 = jwt.sign({ sub: String(env.ids.accounts!.admin), typ: 'access' }, env.config.jwtSecret, { algorithm: 'HS512', expiresIn: 600 });
    expect401(await env.get('/api/auth/me/', hs512));
    const unsigned = jwt.sign({ sub: String(env.ids.accounts!.admin), typ: 'access' }, '', { algorithm: 'none', expiresIn: 600 });
    expect401(await env.get('/api/auth/me/', unsigned));
  });

  it('a correctly signed token that is not an access token, or names no account', async () => {
    const sign = (claims: object) => jwt.sign(claims, env.config.jwtSecret, { algorithm: 'HS256', expiresIn: 600 });
    expect401(await env.get('/api/auth/me/', sign({ sub: String(env.ids.accounts!.admin), typ: 'refresh' })));
    expect401(await env.get('/api/auth/me/', sign({ sub: String(env.ids.accounts!.admin) })));
    expect401(await env.get('/api/auth/me/', sign({ sub: 'admin', typ: 'access' })));
    expect401(await env.get('/api/auth/me/', sign({ sub: '999999', typ: 'access' })));
  });

  it('a malformed Authorization header', async () => {
    const token = await env.login('alice');
    for (const header of [`Token ${token}`, 'Bearer', 'Bearer ', `Bearer ${token} extra`, `Basic ${Buffer.from('alice:x').toString('base64')}`, 'Bearer not.a.jwt', token]) {
      const res = await env.request('GET', '/api/auth/me/', { headers: { authorization: header } });
      expect401(res);
    }
  });

  it('the bearer scheme is case-insensitive and the same token keeps working', async () => {
    const token = await env.login('alice');
    const res = await env.request('GET', '/api/auth/me/', { headers: { authorization: `bearer ${token}` } });
    expect(res.status).toBe(200);
  });
});
