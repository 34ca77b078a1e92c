/**
 * Back-office login (SPEC, Authentication rule 3): password then second factor, the
 * 10-minute pre-authentication, enrolment with backup codes, TOTP codes accepted once,
 * backup codes used once, session fixation, CSRF, rate limit, the DEBUG-only bypass, the
 * session on the API, factor deletion by a verified superuser.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { BackofficeVisitor, enrolAs, totp } from '../helpers/backoffice.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { DEFAULT_NOW, FIXTURE_PASSWORD } from '../helpers/settings.js';

let env: TestEnv;
const T0 = Date.parse(DEFAULT_NOW) / 1000;
const at = (seconds: number) => new Date((T0 + seconds) * 1000).toISOString();

beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
});
afterAll(async () => {
  await env?.close();
});

function visitor(): BackofficeVisitor {
  return new BackofficeVisitor(env.url);
}

/** Enrols `username` afresh at T0: its secret, its backup codes and the signed-in visitor. */
function enrolled(username: string) {
  return enrolAs(env, username);
}

describe('who enters', () => {
  it('a manager and an employee are refused with a clear page, and get no session', async () => {
    for (const username of ['mgr1', 'alice']) {
      const v = visitor();
      const page = await v.login(username);
      expect(page.status).toBe(403);
      expect(page.text).toContain('n’a pas accès au back-office');
      expect(v.cookies.has('wfm_session')).toBe(false);
    }
  });

  it('a wrong password is refused without saying whether the account exists', async () => {
    const wrong = await visitor().login('rh1', 'not the password');
    const unknown = await visitor().login('nobody-here', 'not the password');
    expect([wrong.status, unknown.status]).toEqual([401, 401]);
    expect(wrong.text).toContain('Identifiant ou mot de passe incorrect');
  });

  it('pages and the API stay closed during the pre-authentication', async () => {
    const v = visitor();
    expect((await v.login('rh2')).location).toBe('/backoffice/login/enrol/');
    expect(v.cookies.has('wfm_session')).toBe(true);
    expect((await v.get('/backoffice/')).location).toBe('/backoffice/login/');
    expect((await v.get('/api/auth/me/')).status).toBe(401);
  });
});

describe('first login: enrolment', () => {
  it('shows a locally drawn QR code and the secret, then 10 backup codes once; a new session id', async () => {
    env.setNow(DEFAULT_NOW);
    const v = visitor();
    await v.login('staff');
    const preSession = v.cookies.get('wfm_session');
    const page = await v.get('/backoffice/login/enrol/');
    expect(page.text).toMatch(/<svg role="img" aria-label="QR code/);
    expect(page.text).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    const { codes, page: done } = await v.enrol(T0);
    expect(done.text).toContain('ne seront plus jamais affichés');
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    // Session fixation: the authenticated session has a new id; the pre-authentication is gone.
    const fullSession = v.cookies.get('wfm_session');
    expect(fullSession).toBeDefined();
    expect(fullSession).not.toBe(preSession);
    const stale = new BackofficeVisitor(env.url);
    stale.cookies.set('wfm_session', preSession!);
    expect((await stale.get('/backoffice/')).location).toBe('/backoffice/login/');
    expect((await v.get('/backoffice/')).status).toBe(200);
    // Stored hashed: neither the codes nor the secret appear in clear in the database.
    const { rows } = await env.db.query<{ dump: string }>(
      `select string_agg(encode(code_hash, 'escape'), ' ') || (select string_agg(secret_encrypted, ' ') from app_private.backoffice_factors) as dump
       from app_private.backoffice_backup_codes`);
    expect(rows[0]!.dump).not.toContain(codes[0]!.replace('-', ''));
  });

  it('a wrong confirmation code leaves the account not enrolled', async () => {
    env.setNow(DEFAULT_NOW);
    const v = visitor();
    await v.login('rh2');
    const page = await v.submit('/backoffice/login/enrol/', { code: '000000' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('Code incorrect');
    const { rows } = await env.db.query('select confirmed_at from app_private.backoffice_factors f join app_public.accounts a on a.id = f.account_id where a.username = $1', ['rh2']);
    expect(rows.every((r) => r.confirmed_at === null)).toBe(true);
  });
});

describe('second factor', () => {
  it('a TOTP code is accepted once: replayed, even at the next step, it is refused', async () => {
    const { secret } = await enrolled('rh1');
    // The enrolment used the step of T0: its code does not open another session.
    const replay = visitor();
    expect((await replay.login('rh1')).location).toBe('/backoffice/login/verify/');
    expect((await replay.submit('/backoffice/login/verify/', { code: await totp(secret, T0) })).status).toBe(400);

    env.setNow(at(30));
    const code = await totp(secret, T0 + 30);
    const first = visitor();
    await first.login('rh1');
    const accepted = await first.submit('/backoffice/login/verify/', { code });
    expect(accepted.status).toBe(303);
    expect(accepted.location).toBe('/backoffice/');
    expect((await first.get('/backoffice/')).text).toContain('Bienvenue');

    // Same code, still within its window of tolerance (next step): refused.
    env.setNow(at(50));
    const second = visitor();
    await second.login('rh1');
    const refused = await second.submit('/backoffice/login/verify/', { code });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Code invalide, expiré ou déjà utilisé');
  });

  it('one step of tolerance either side, not two', async () => {
    const { secret } = await enrolled('root');
    env.setNow(at(300));
    for (const [offset, status] of [[-60, 400], [-30, 303]] as const) {
      const v = visitor();
      await v.login('root');
      expect((await v.submit('/backoffice/login/verify/', { code: await totp(secret, T0 + 300 + offset) })).status).toBe(status);
    }
    env.setNow(at(600));
    const ahead = visitor();
    await ahead.login('root');
    expect((await ahead.submit('/backoffice/login/verify/', { code: await totp(secret, T0 + 630) })).status).toBe(303);
    const tooFar = visitor();
    await tooFar.login('root');
    expect((await tooFar.submit('/backoffice/login/verify/', { code: await totp(secret, T0 + 690) })).status).toBe(400);
  });

  it('a backup code opens one session, then is refused', async () => {
    const { codes } = await enrolled('admin');
    const first = visitor();
    await first.login('admin');
    expect((await first.submit('/backoffice/login/verify/', { code: codes[3]!.toUpperCase() })).location).toBe('/backoffice/');
    const again = visitor();
    await again.login('admin');
    const refused = await again.submit('/backoffice/login/verify/', { code: codes[3]! });
    expect(refused.status).toBe(400);
    const other = visitor();
    await other.login('admin');
    expect((await other.submit('/backoffice/login/verify/', { code: codes[4]! })).location).toBe('/backoffice/');
  });

  it('the pre-authentication expires after 10 minutes', async () => {
    const { secret } = await enrolled('rh1');
    env.setNow(at(3600));
    const v = visitor();
    await v.login('rh1');
    const verifyPage = await v.get('/backoffice/login/verify/');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(verifyPage.text)![1]!;
    env.setNow(at(3600 + 600));
    const late = await v.request('POST', '/backoffice/login/verify/', { form: { code: await totp(secret, T0 + 4200), csrf_token: csrf } });
    expect(late.status).toBe(303);
    expect(late.location).toBe('/backoffice/login/?expire=1');
    expect((await v.get('/backoffice/login/?expire=1')).text).toContain('Votre session a expiré');
  });
});

describe('CSRF, logout, rate limit', () => {
  it('a form without its CSRF token, or with another session’s, is refused', async () => {
    const v = visitor();
    await v.get('/backoffice/login/');
    const missing = await v.request('POST', '/backoffice/login/', { form: { username: 'rh1', password: FIXTURE_PASSWORD } });
    expect(missing.status).toBe(403);
    expect(missing.text).toContain('protection CSRF');
    const other = visitor();
    const otherPage = await other.get('/backoffice/login/');
    const foreign = /name="csrf_token" value="([^"]+)"/.exec(otherPage.text)![1]!;
    const forged = await v.request('POST', '/backoffice/login/', { form: { username: 'rh1', password: FIXTURE_PASSWORD, csrf_token: foreign } });
    expect(forged.status).toBe(403);
  });

  it('logout closes the session in the database', async () => {
    const { visitor: v } = await enrolled('rh1');
    expect((await v.get('/backoffice/')).status).toBe(200);
    const token = v.cookies.get('wfm_session')!;
    const out = await v.submit('/backoffice/logout/', {}, '/backoffice/');
    expect(out.location).toBe('/backoffice/login/');
    const again = new BackofficeVisitor(env.url);
    again.cookies.set('wfm_session', token);
    expect((await again.get('/backoffice/')).location).toBe('/backoffice/login/');
  });

  it('login attempts are rate-limited', async () => {
    const limited = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 3 } });
    try {
      const v = new BackofficeVisitor(limited.url);
      const statuses = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await v.login('rh1', 'wrong password')).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('the session on the API and its documentation', () => {
  it('reads with the session; an unsafe method needs X-CSRFToken', async () => {
    const v = (await enrolled('rh1')).visitor;
    const me = await v.get('/api/auth/me/');
    expect(me.status).toBe(200);
    expect(JSON.parse(me.text).username).toBe('rh1');
    const path = `/api/employees/${env.ids.employees!.david}/account-activation/`;
    const without = await v.request('PUT', path, { json: { is_active: true } });
    expect(without.status).toBe(403);
    expect(JSON.parse(without.text).detail).toContain('CSRF');
    const csrf = decodeURIComponent(v.cookies.get('wfm_csrftoken')!);
    const withToken = await v.request('PUT', path, { json: { is_active: true }, headers: { 'x-csrftoken': csrf } });
    expect(withToken.status).toBe(200);
    // The documentation page sends the header from the cookie.
    expect((await v.get('/api/docs/initializer.js')).text).toContain('X-CSRFToken');
  });

  it('a bearer token needs no CSRF token', async () => {
    const token = await env.login('rh1');
    const res = await env.put(`/api/employees/${env.ids.employees!.david}/account-activation/`, token, { is_active: true });
    expect(res.status).toBe(200);
  });
});

describe('factor deletion and pages', () => {
  it('a verified superuser deletes the factors of an account, which enrols again', async () => {
    await enrolled('rh2');
    const root = (await enrolled('root')).visitor;
    const list = await root.get('/backoffice/authenticators/');
    expect(list.status).toBe(200);
    expect(list.text).toContain('rh2');
    const id = String(env.ids.accounts!.rh2);
    const deleted = await root.submit(`/backoffice/authenticators/${id}/delete/`, {}, '/backoffice/authenticators/');
    expect(deleted.location).toBe(`/backoffice/authenticators/?supprime=${id}`);
    expect((await root.get(deleted.location!)).text).toContain('Les facteurs de rh2 ont été supprimés');
    expect((await visitor().login('rh2')).location).toBe('/backoffice/login/enrol/');
  });

  it('an HR account that is not a superuser does not reach the authenticators page', async () => {
    const v = (await enrolled('rh1')).visitor;
    expect((await v.get('/backoffice/')).text).not.toContain('/backoffice/authenticators/');
    expect((await v.get('/backoffice/authenticators/')).status).toBe(403);
  });

  it('pages carry a strict Content-Security-Policy and are not cached', async () => {
    const page = await visitor().get('/backoffice/login/');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.text).not.toContain('<script');
    expect((await visitor().get('/backoffice/nowhere/')).status).toBe(404);
  });
});

describe('the local bypass (password alone)', () => {
  it('is refused at start-up without DEBUG, saying why', () => {
    const env0 = { DATABASE_URL: 'postgres://x@127.0.0.1/x', JWT_SECRET: 'x'.repeat(32), BACKOFFICE_PASSWORD_ONLY: '1' };
    expect(() => loadConfig(env0)).toThrow(ConfigError);
    expect(() => loadConfig(env0)).toThrow(/requires DEBUG/);
    expect(loadConfig({ ...env0, DEBUG: '1' }).backofficePasswordOnly).toBe(true);
    expect(loadConfig({ ...env0, BACKOFFICE_PASSWORD_ONLY: '' }).backofficePasswordOnly).toBe(false);
  });

  it('with DEBUG, the password alone opens a session that is not verified by a second factor', async () => {
    const debugEnv = await startTestEnv({ configOverrides: { debug: true, backofficePasswordOnly: true, backofficeLoginAttempts: 1000 } });
    try {
      const v = new BackofficeVisitor(debugEnv.url);
      expect((await v.login('root')).location).toBe('/backoffice/');
      expect((await v.get('/backoffice/')).status).toBe(200);
      // Deleting factors needs a superuser verified by a second factor: not this session.
      expect((await v.get('/backoffice/authenticators/')).status).toBe(403);
      // Still nobody without back-office access.
      expect((await new BackofficeVisitor(debugEnv.url).login('mgr1')).status).toBe(403);
    } finally {
      await debugEnv.close();
    }
  });
});
