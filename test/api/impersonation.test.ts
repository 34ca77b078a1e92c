import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAccessToken } from '../../src/auth/jwt.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

function claims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

describe('impersonation off (default)', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  it('the route answers 404 and writes nothing', async () => {
    const res = await env.post('/api/auth/impersonate/', await env.login('root'), { account: env.ids.accounts!.alice });
    expect(res.status).toBe(404);
    expect((await env.db.query("select 1 from app_private.audit_log where verb = 'Impersonation'")).rowCount).toBe(0);
  });

  it('the end route answers 404 too', async () => {
    expect((await env.post('/api/auth/impersonate/end/', await env.login('root'))).status).toBe(404);
  });

  it('GET /api/auth/me/ offers no impersonation, even to a superuser', async () => {
    const me = await env.get('/api/auth/me/', await env.login('root'));
    expect(me.status).toBe(200);
    expect(me.body.can_impersonate).toBe(false);
  });

  it('a token carrying act is refused', async () => {
    const token = signAccessToken(env.config.jwtSecret, env.ids.accounts!.alice!, env.ids.accounts!.root!);
    const res = await env.get('/api/auth/me/', token);
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/emprunt d’identité/);
    // The same account without act is fine.
    expect((await env.get('/api/auth/me/', signAccessToken(env.config.jwtSecret, env.ids.accounts!.alice!))).status).toBe(200);
  });
});

describe('impersonation on (ALLOW_IMPERSONATION)', () => {
  let env: TestEnv;
  let ACC: Record<string, number>;
  beforeAll(async () => {
    env = await startTestEnv({ configOverrides: { allowImpersonation: true } });
    ACC = env.ids.accounts!;
  });
  afterAll(async () => {
    await env?.close();
  });

  it('a superuser obtains a token whose sub is the account and act the superuser; it is audited', async () => {
    const res = await env.post('/api/auth/impersonate/', await env.login('root'), { account: ACC.alice });
    expect(res.status).toBe(200);
    expect(res.body.account).toEqual({ id: ACC.alice, username: 'alice', employee_id: env.ids.employees!.alice });
    expect(res.body.impersonator).toEqual({ id: ACC.root, username: 'root' });
    const payload = claims(res.body.access);
    expect(payload).toMatchObject({ sub: String(ACC.alice), act: ACC.root, typ: 'access' });
    expect(Number(payload.exp) - Number(payload.iat)).toBe(21600);

    const me = await env.get('/api/auth/me/', res.body.access);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: ACC.alice, username: 'alice', role: 'Salarié' });

    const { rows } = await env.db.query(
      "select actor_username, impersonator_username, model, target_id, after from app_private.audit_log where verb = 'Impersonation'",
    );
    expect(rows).toEqual([
      {
        actor_username: 'root',
        impersonator_username: null,
        model: 'account',
        target_id: String(ACC.alice),
        after: { account: ACC.alice, username: 'alice', impersonator: ACC.root, impersonator_username: 'root' },
      },
    ]);
  });

  it('every audit line written while impersonating carries the impersonator', async () => {
    const token = (await env.post('/api/auth/impersonate/', await env.login('root'), { account: ACC.rh1 })).body.access;
    const res = await env.patch(`/api/employees/${env.ids.employees!.david}/`, token, { is_polyvalent: true });
    expect(res.status).toBe(200);
    const { rows } = await env.db.query(
      "select actor_username, impersonator_account_id, impersonator_username from app_private.audit_log where model = 'employee' and verb = 'Modification' and target_id = $1",
      [env.ids.employees!.david],
    );
    expect(rows).toEqual([{ actor_username: 'rh1', impersonator_account_id: ACC.root, impersonator_username: 'root' }]);
  });

  it('refuses other callers and other targets', async () => {
    for (const user of ['admin', 'staff', 'rh1']) {
      expect((await env.post('/api/auth/impersonate/', await env.login(user), { account: ACC.alice })).status).toBe(403);
    }
    const root = await env.login('root');
    const self = await env.post('/api/auth/impersonate/', root, { account: ACC.root });
    expect(self.status).toBe(400);
    expect(self.body.account).toEqual(['Vous ne pouvez pas emprunter votre propre identité.']);
    expect((await env.post('/api/auth/impersonate/', root, { account: 999999 })).body.account).toEqual(['Compte n° 999999 introuvable.']);
    expect((await env.post('/api/auth/impersonate/', root, {})).status).toBe(400);

    await env.db.query('update app_public.accounts set is_active = false where id = $1', [ACC.farid]);
    const closed = await env.post('/api/auth/impersonate/', root, { account: ACC.farid });
    expect(closed.status).toBe(400);
    expect(closed.body.account[0]).toMatch(/fermé/);

    await env.db.query('update app_public.accounts set is_superuser = true where id = $1', [ACC.staff]);
    expect((await env.post('/api/auth/impersonate/', root, { account: ACC.staff })).status).toBe(403);
    await env.db.query('update app_public.accounts set is_superuser = false where id = $1', [ACC.staff]);

    // No impersonation from an impersonation token.
    const token = (await env.post('/api/auth/impersonate/', root, { account: ACC.alice })).body.access;
    const again = await env.post('/api/auth/impersonate/', token, { account: ACC.bruno });
    expect(again.status).toBe(403);
  });

  it('GET /api/auth/me/ offers impersonation to superusers only, never from an impersonation token', async () => {
    const hint = async (token: string) => (await env.get('/api/auth/me/', token)).body.can_impersonate;
    expect(await hint(await env.login('root'))).toBe(true);
    for (const user of ['staff', 'admin', 'rh1', 'alice']) expect(await hint(await env.login(user)), user).toBe(false);
    const token = (await env.post('/api/auth/impersonate/', await env.login('root'), { account: ACC.rh1 })).body.access;
    expect(await hint(token)).toBe(false);
  });

  it('the end of an impersonation is one audit line by the superuser (issue 25); only an impersonation token ends one', async () => {
    const root = await env.login('root');
    const token = (await env.post('/api/auth/impersonate/', root, { account: ACC.bruno })).body.access;
    const ended = await env.post('/api/auth/impersonate/end/', token);
    expect(ended.status).toBe(200);
    expect(ended.body).toEqual({ account: ACC.bruno, impersonator: ACC.root, ended: true });
    const { rows } = await env.db.query(
      `select actor_username, impersonator_username, target_id, after ->> 'event' as event, client_address from app_private.audit_log
       where model = 'account_security' and target_id = $1`, [ACC.bruno]);
    expect(rows).toEqual([{ actor_username: 'root', impersonator_username: null, target_id: String(ACC.bruno),
      event: 'impersonation_ended', client_address: '127.0.0.1' }]);
    const own = await env.post('/api/auth/impersonate/end/', root);
    expect(own.status).toBe(400);
    expect(own.body.non_field_errors[0]).toMatch(/aucune identité/);
  });

  it('an impersonation token dies with the superuser’s sessions (a password change of the superuser)', async () => {
    const root = await env.login('root');
    const token = (await env.post('/api/auth/impersonate/', root, { account: ACC.david })).body.access;
    expect((await env.get('/api/auth/me/', token)).status).toBe(200);
    await env.db.query("update app_private.account_secrets set password_hash = 'x' || password_hash where account_id = $1", [ACC.root]);
    expect((await env.get('/api/auth/me/', token)).status).toBe(401);
    expect((await env.get('/api/auth/me/', root)).status).toBe(401);
  });

  it('a token whose act is not an active superuser is refused', async () => {
    const forged = signAccessToken(env.config.jwtSecret, ACC.alice!, ACC.admin!);
    expect((await env.get('/api/auth/me/', forged)).status).toBe(401);
  });
});
