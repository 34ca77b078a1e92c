/**
 * Login throttling (issue 25, finding 2; SECURITY.md « Login throttling »): only failures count;
 * per (username, address) strictly (429 once used up); per username a ceiling beyond which logins
 * are slowed (1 s, 2 s, 4 s… at most 10 s), never refused; a correct password (and second factor)
 * from an address that has not itself failed always gets through. Requests leave from
 * 127.0.0.1, 127.0.0.2, 127.0.0.3… (other client addresses of the loopback interface; the server
 * listens on every interface); X-Forwarded-For counts only
 * when TRUST_PROXY says so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BackofficeVisitor, enrolAs, totp } from '../helpers/backoffice.js';
import { DEFAULT_NOW, FIXTURE_PASSWORD } from '../helpers/settings.js';
import { fetchFrom } from '../helpers/client-address.js';
import { startTestEnv, type TestEnv, type TestEnvOptions } from '../helpers/server.js';

/** 3 failures per (username, address); beyond 4 failures per username, logins slow down. */
const LIMITS = { anonymousPerMinute: 100_000, authenticatedPerMinute: 100_000, passwordResetPerHour: 100_000,
  loginPerUsernamePerHour: 4, loginFailuresPerAddress: 3 };

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
  delete process.env.TRUST_PROXY;
});

async function start(options: TestEnvOptions = {}, trustProxy?: string): Promise<TestEnv> {
  if (trustProxy) process.env.TRUST_PROXY = trustProxy;
  env = await startTestEnv({ host: '0.0.0.0', rateLimits: LIMITS, configOverrides: { backofficeLoginAttempts: 3 }, ...options });
  return env;
}

/** A fetch from client address 127.0.0.<n>. */
const fetchers = new Map<number, typeof fetch>();
const clientFetch = (n: number) => {
  if (!fetchers.has(n)) fetchers.set(n, fetchFrom(`127.0.0.${n}`));
  return fetchers.get(n)!;
};
/** A back-office visitor from client address 127.0.0.<n>. */
const visitorFrom = (n: number) => new BackofficeVisitor(env!.url, clientFetch(n));

async function login(n: number, username: string, password: string, headers: Record<string, string> = {}) {
  const started = Date.now();
  const response = await clientFetch(n)(`${env!.url}/api/auth/token/`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ username, password }),
  });
  return { status: response.status, retryAfter: Number(response.headers.get('retry-after') ?? 0), ms: Date.now() - started };
}

async function windows(prefix: string) {
  const { rows } = await env!.db.query<{ bucket: string; hits: number }>(
    "select bucket, hits from app_private.rate_limit_windows where bucket like $1 || '%' order by bucket", [prefix]);
  return rows;
}

describe('API login: per (username, address) strictly', () => {
  it('the failures of one address refuse that address only; the right password from another address gets through', async () => {
    await start();
    for (let i = 0; i < 3; i += 1) expect((await login(1, 'alice', 'wrong')).status).toBe(401);
    const refused = await login(1, 'ALICE', FIXTURE_PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBeGreaterThan(800);
    expect(refused.retryAfter).toBeLessThanOrEqual(900);
    // Another address that has not failed: never refused.
    expect((await login(2, 'alice', FIXTURE_PASSWORD)).status).toBe(200);
    // Another username from the refused address: its own pair.
    expect((await login(1, 'bruno', FIXTURE_PASSWORD)).status).toBe(200);
    expect(await windows('login-fail:api:alice')).toEqual([
      { bucket: 'login-fail:api:alice', hits: 3 },
      { bucket: 'login-fail:api:alice@127.0.0.1', hits: 3 },
    ]);
  });

  it('successful logins are never counted, and a success forgives its own address’s failures', async () => {
    await start();
    for (let i = 0; i < 12; i += 1) expect((await login(1, 'bruno', FIXTURE_PASSWORD)).status).toBe(200);
    expect(await windows('login-fail:api:bruno')).toEqual([]);
    for (let i = 0; i < 2; i += 1) expect((await login(1, 'bruno', 'wrong')).status).toBe(401);
    expect((await login(1, 'bruno', FIXTURE_PASSWORD)).status).toBe(200);
    // The pair's failures are forgiven; the username's stay in its hour.
    expect(await windows('login-fail:api:bruno')).toEqual([{ bucket: 'login-fail:api:bruno', hits: 2 }]);
    for (let i = 0; i < 2; i += 1) expect((await login(1, 'bruno', 'wrong')).status).toBe(401);
  });

  it('beyond the per-username ceiling, logins from every address are slowed (progressively), never refused', async () => {
    await start();
    for (const n of [1, 1, 1, 2, 2]) expect((await login(n, 'alice', 'wrong')).status).toBe(401);
    // 5 failures, the ceiling is 4: one over, 1 s before the password is checked; the right password passes.
    const slowed = await login(3, 'alice', FIXTURE_PASSWORD);
    expect(slowed.status).toBe(200);
    expect(slowed.ms).toBeGreaterThanOrEqual(950);
    expect((await login(4, 'alice', 'wrong')).status).toBe(401);
    // Two over: 2 s.
    const slower = await login(5, 'alice', FIXTURE_PASSWORD);
    expect(slower.status).toBe(200);
    expect(slower.ms).toBeGreaterThanOrEqual(1950);
    // Other usernames are not slowed.
    expect((await login(3, 'bruno', FIXTURE_PASSWORD)).ms).toBeLessThan(900);
  }, 60_000);

  it('TRUST_PROXY off: X-Forwarded-For is ignored (one socket address, one pair)', async () => {
    await start();
    for (const forwarded of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
      expect((await login(1, 'alice', 'wrong', { 'x-forwarded-for': forwarded })).status).toBe(401);
    }
    expect((await login(1, 'alice', FIXTURE_PASSWORD, { 'x-forwarded-for': '203.0.113.4' })).status).toBe(429);
    expect((await windows('login-fail:api:alice@')).map((w) => w.bucket)).toEqual(['login-fail:api:alice@127.0.0.1']);
  });

  it('TRUST_PROXY on (loopback): the forwarded address is the client’s, each its own pair', async () => {
    await start({}, 'loopback');
    for (let i = 0; i < 3; i += 1) expect((await login(1, 'alice', 'wrong', { 'x-forwarded-for': '203.0.113.1' })).status).toBe(401);
    expect((await login(1, 'alice', FIXTURE_PASSWORD, { 'x-forwarded-for': '203.0.113.1' })).status).toBe(429);
    expect((await login(1, 'alice', FIXTURE_PASSWORD, { 'x-forwarded-for': '203.0.113.2' })).status).toBe(200);
    expect((await windows('login-fail:api:alice@')).map((w) => w.bucket)).toEqual(['login-fail:api:alice@203.0.113.1']);
  });
});

describe('back-office login: the same rule, password step and second factor', () => {
  const T0 = Date.parse(DEFAULT_NOW) / 1000;

  it('an address that failed is refused; the right password and code from another address open the session', async () => {
    await start();
    const { secret } = await enrolAs(env!, 'rh1');
    const attacker = visitorFrom(1);
    for (let i = 0; i < 3; i += 1) expect((await attacker.login('rh1', 'wrong password')).status).toBe(401);
    expect((await attacker.login('rh1')).status).toBe(429);
    // The owner, from another address: password, then the second factor.
    env!.setNow(new Date((T0 + 30) * 1000).toISOString());
    const owner = visitorFrom(2);
    const password = await owner.login('rh1');
    expect(password.location).toBe('/backoffice/login/verify/');
    const code = await owner.submit('/backoffice/login/verify/', { code: await totp(secret, T0 + 30) });
    expect(code.location).toBe('/backoffice/');
  });

  it('wrong second-factor codes refuse their own address only', async () => {
    await start();
    const { secret } = await enrolAs(env!, 'rh1');
    const stolen = visitorFrom(1);
    expect((await stolen.login('rh1')).location).toBe('/backoffice/login/verify/');
    for (let i = 0; i < 3; i += 1) expect((await stolen.submit('/backoffice/login/verify/', { code: '000000' })).status).toBe(400);
    expect((await stolen.submit('/backoffice/login/verify/', { code: '000000' })).status).toBe(429);
    env!.setNow(new Date((T0 + 30) * 1000).toISOString());
    const owner = visitorFrom(2);
    await owner.login('rh1');
    expect((await owner.submit('/backoffice/login/verify/', { code: await totp(secret, T0 + 30) })).location).toBe('/backoffice/');
  });

  it('an office behind one address: successful logins of many people are never counted', async () => {
    await start();
    const office = visitorFrom(1);
    for (let i = 0; i < 8; i += 1) {
      const page = await visitorFrom(1).login(i % 2 ? 'rh1' : 'admin');
      expect(page.status).toBe(303);
    }
    // Two mistakes of one person do not refuse the others.
    for (let i = 0; i < 2; i += 1) expect((await office.login('rh2', 'wrong password')).status).toBe(401);
    expect((await office.login('rh2')).status).toBe(303);
    expect((await visitorFrom(1).login('admin')).status).toBe(303);
  });
});
