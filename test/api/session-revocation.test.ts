/**
 * Issue 25, findings 3, 4 and 6, over HTTP: a password reset, closing an account and removing
 * its second factor end every back-office session and every earlier API token of that account
 * (app_public.accounts.token_generation, checked by each request's prelude); the removal of a
 * factor is audited and told to the account; a session opened through the DEBUG-only
 * password bypass is refused by an instance that does not allow the bypass.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server.js';
import { BackofficeVisitor, enrolAs } from '../helpers/backoffice.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { DEFAULT_NOW, FIXTURE_PASSWORD } from '../helpers/settings.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
});
afterAll(async () => {
  await env?.close();
});

const LINK = /\/password-reset\/confirm\/\?token=([0-9a-f]{64})/;
const NEW_PASSWORD = 'Un-Nouveau-Secret-2026';

/** Resets `username`'s password through the e-mailed link, as its owner would. */
async function resetPassword(username: string, password = NEW_PASSWORD): Promise<void> {
  expect((await env.post('/api/auth/password/reset/', null, { login: username })).status).toBe(200);
  const { rows } = await env.db.query<{ body_text: string }>(
    "select body_text from app_private.email_outbox where kind = 'password_reset' and account_id = $1 order by id desc limit 1",
    [env.ids.accounts![username]]);
  const token = LINK.exec(rows[0]!.body_text)![1]!;
  const confirmed = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: password });
  expect(confirmed.status).toBe(200);
}

async function freshToken(username: string, password = FIXTURE_PASSWORD): Promise<string> {
  const res = await env.post('/api/auth/token/', null, { username, password });
  expect(res.status, `${username} logs in`).toBe(200);
  return res.body.access as string;
}

/** The security lines of an account, oldest first (owner connection). */
async function securityLines(username: string) {
  const { rows } = await env.db.query<{ event: string; actor_username: string | null; client_address: string | null; after: Record<string, unknown> }>(
    `select after ->> 'event' as event, actor_username, client_address, after from app_private.audit_log
     where model = 'account_security' and target_id = $1 order by id`, [env.ids.accounts![username]]);
  return rows;
}

describe('a password reset ends the sessions of the account (finding 4)', () => {
  it('an API token issued before the reset answers 401 after it; a token issued after works', async () => {
    const before = await freshToken('alice');
    expect((await env.get('/api/auth/me/', before)).status).toBe(200);
    await resetPassword('alice');
    expect((await env.get('/api/auth/me/', before)).status).toBe(401);
    expect((await env.get('/api/absences/', before)).status).toBe(401);
    const after = await freshToken('alice', NEW_PASSWORD);
    expect((await env.get('/api/auth/me/', after)).status).toBe(200);
    const events = (await securityLines('alice')).map((line) => line.event);
    expect(events).toEqual(['password_reset', 'sessions_ended']);
    const [reset] = await securityLines('alice');
    expect(reset!.actor_username).toBe('alice');
    expect(reset!.client_address).toBe('127.0.0.1');
    expect(JSON.stringify(reset!.after)).not.toContain(NEW_PASSWORD);
  });

  it('a back-office session goes back to the login page after the reset, and its cookie no longer reaches the API', async () => {
    const { visitor } = await enrolAs(env, 'rh1');
    expect((await visitor.get('/backoffice/')).status).toBe(200);
    expect((await visitor.get('/api/auth/me/')).status).toBe(200);
    await resetPassword('rh1');
    expect((await visitor.get('/backoffice/')).location).toBe('/backoffice/login/');
    expect((await visitor.get('/api/auth/me/')).status).toBe(401);
    const { rows } = await env.db.query('select count(*)::int as n from app_private.backoffice_sessions where account_id = $1',
      [env.ids.accounts!.rh1]);
    expect(rows[0].n).toBe(0);
  });
});

describe('closing an account ends its sessions for good (finding 4)', () => {
  it('a token of a closed account stays refused once the account is opened again', async () => {
    const bruno = await freshToken('bruno');
    const rh = await freshToken('rh2');
    const path = `/api/employees/${env.ids.employees!.bruno}/account-activation/`;
    const hr = await freshToken('admin');
    expect((await env.put(path, hr, { is_active: false })).status).toBe(200);
    expect((await env.get('/api/auth/me/', bruno)).status).toBe(401);
    expect((await env.put(path, hr, { is_active: true })).status).toBe(200);
    expect((await env.get('/api/auth/me/', bruno)).status).toBe(401);
    expect((await env.get('/api/auth/me/', await freshToken('bruno'))).status).toBe(200);
    // Other accounts are untouched.
    expect((await env.get('/api/auth/me/', rh)).status).toBe(200);
    const ended = (await securityLines('bruno')).filter((line) => line.event === 'sessions_ended');
    expect(ended).toHaveLength(1);
    expect(ended[0]!.after).toMatchObject({ cause: 'account_closed' });
    expect(ended[0]!.actor_username).toBe('admin');
  });

  it('the right password of a closed account is refused as a wrong one, and audited', async () => {
    const path = `/api/employees/${env.ids.employees!.gaelle}/account-activation/`;
    expect((await env.put(path, await freshToken('admin'), { is_active: false })).status).toBe(200);
    const refused = await env.post('/api/auth/token/', null, { username: 'gaelle', password: FIXTURE_PASSWORD });
    const wrong = await env.post('/api/auth/token/', null, { username: 'gaelle', password: 'not the password' });
    expect([refused.status, refused.body]).toEqual([wrong.status, wrong.body]);
    const refusals = (await securityLines('gaelle')).filter((line) => line.event === 'login_refused');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]!.after).toMatchObject({ reason: 'account_closed', surface: 'api' });
  });
});

describe('removing a second factor (findings 3 and 4)', () => {
  it('ends the account’s sessions and tokens, is audited by who removed it, and tells the account', async () => {
    const { visitor: target } = await enrolAs(env, 'rh2');
    const rh2Token = await freshToken('rh2');
    const { visitor: root } = await enrolAs(env, 'root');
    expect((await target.get('/backoffice/')).status).toBe(200);
    await env.db.query('delete from app_private.email_outbox');
    const deleted = await root.submit(`/backoffice/authenticators/${env.ids.accounts!.rh2}/delete/`, {}, '/backoffice/authenticators/');
    expect(deleted.status).toBe(303);
    expect((await target.get('/backoffice/')).location).toBe('/backoffice/login/');
    expect((await env.get('/api/auth/me/', rh2Token)).status).toBe(401);
    // The superuser's own session goes on.
    expect((await root.get('/backoffice/authenticators/')).status).toBe(200);

    const removal = (await securityLines('rh2')).filter((line) => line.event === 'factor_removed');
    expect(removal).toHaveLength(1);
    expect(removal[0]!.actor_username).toBe('root');
    expect(removal[0]!.client_address).toBe('127.0.0.1');
    expect((await securityLines('rh2')).filter((line) => line.event === 'sessions_ended').at(-1)!.after)
      .toMatchObject({ cause: 'factor_removed', backoffice_sessions: 1 });
    // No secret in any security line.
    const { rows: secrets } = await env.db.query<{ secret_encrypted: string }>(
      'select secret_encrypted from app_private.backoffice_factors where account_id = $1', [env.ids.accounts!.root]);
    const { rows: all } = await env.db.query<{ line: string }>("select after::text as line from app_private.audit_log where model = 'account_security'");
    for (const { line } of all) {
      expect(line).not.toContain(secrets[0]!.secret_encrypted);
      expect(line).not.toContain(FIXTURE_PASSWORD);
    }

    // Told: in the application, and by e-mail (rh2 has a professional address).
    const notes = await env.get('/api/notifications/', await freshToken('rh2'));
    expect(notes.body.results[0]).toMatchObject({ title: 'Second facteur supprimé', level: 'warning' });
    const { rows: mails } = await env.db.query("select to_address, subject, body_text from app_private.email_outbox where kind = 'security_notice'");
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ to_address: 'sophie.lefevre@peupliers.example', subject: 'Second facteur supprimé' });
  });
});

describe('the second-factor lifecycle is audited (finding 3)', () => {
  it('an enrolment and a backup code used at a login are one line each, by the account, from its address, without a secret', async () => {
    await env.db.query('delete from app_private.email_outbox');
    const { secret, codes } = await enrolAs(env, 'admin');
    const v = new BackofficeVisitor(env.url);
    expect((await v.login('admin')).location).toBe('/backoffice/login/verify/');
    const used = await v.submit('/backoffice/login/verify/', { code: codes[0]! });
    expect(used.location).toBe('/backoffice/');

    const lines = await securityLines('admin');
    const enrolled = lines.filter((line) => line.event === 'factor_enrolled');
    const backup = lines.filter((line) => line.event === 'backup_code_used');
    expect(enrolled).toHaveLength(1);
    expect(backup).toHaveLength(1);
    for (const line of [...enrolled, ...backup]) {
      expect(line.actor_username).toBe('admin');
      expect(line.client_address).toBe('127.0.0.1');
      const text = JSON.stringify(line.after);
      expect(text).not.toContain(secret);
      for (const code of codes) expect(text).not.toContain(code);
    }
    expect(backup[0]!.after).toMatchObject({ backup_codes_left: codes.length - 1 });
    // The owner is told of the enrolment (e-mail: admin has a professional address).
    const { rows } = await env.db.query("select subject from app_private.email_outbox where kind = 'security_notice' and account_id = $1",
      [env.ids.accounts!.admin]);
    expect(rows.map((row) => row.subject)).toEqual(['Nouvel authentificateur enregistré']);
  });

  it('regenerating the backup codes: 10 new codes shown once, the old ones dead, one audit line without a code', async () => {
    const { visitor, codes: old } = await enrolAs(env, 'staff');
    const page = await visitor.get('/backoffice/backup-codes/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Il vous reste <strong>10</strong> codes de secours');
    const renewed = await visitor.submit('/backoffice/backup-codes/', {});
    expect(renewed.status).toBe(200);
    const codes = [...renewed.text.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!);
    expect(codes).toHaveLength(10);
    expect(codes.filter((code) => old.includes(code))).toEqual([]);

    // An old code no longer signs in; a new one does.
    const first = new BackofficeVisitor(env.url);
    await first.login('staff');
    expect((await first.submit('/backoffice/login/verify/', { code: old[1]! })).status).toBe(400);
    expect((await first.submit('/backoffice/login/verify/', { code: codes[0]! })).location).toBe('/backoffice/');

    const lines = (await securityLines('staff')).filter((line) => line.event === 'backup_codes_regenerated');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.actor_username).toBe('staff');
    expect(lines[0]!.after).toMatchObject({ backup_codes: 10, unused_codes_replaced: 10 });
    for (const code of [...old, ...codes]) expect(JSON.stringify(lines[0]!.after)).not.toContain(code);
  });

  it('the events are readable in the audit log and its export, by its readers', async () => {
    const reader = await freshToken('root');
    const list = await env.get(`/api/audit-log/?model=account_security&target_id=${env.ids.accounts!.admin}`, reader);
    expect(list.status).toBe(200);
    const events = list.body.results.map((line: { after: { event: string } }) => line.after.event);
    expect(events).toEqual(expect.arrayContaining(['factor_enrolled', 'backup_code_used']));
    expect(list.body.results.every((line: { verb: string; client_address: string }) => line.verb === 'Securite' && line.client_address === '127.0.0.1')).toBe(true);
    const csv = await env.get(`/api/audit-log/export/?format=csv&model=account_security&target_id=${env.ids.accounts!.admin}`, reader);
    expect(csv.status).toBe(200);
    expect(csv.text).toContain('factor_enrolled');
    expect(csv.text).toContain('backup_code_used');
    // Not to others.
    expect((await env.get('/api/audit-log/?model=account_security', await freshToken('mgr1'))).status).toBe(403);
  });
});

describe('a session opened through the DEBUG bypass (finding 6)', () => {
  it('is refused by an instance without the bypass sharing the database, and kept by the one that allows it', async () => {
    const debugApp = await createApp({ ...env.config, debug: true, backofficePasswordOnly: true }, { logger: pino({ level: 'silent' }) });
    const debug = await debugApp.listen(0, '127.0.0.1');
    try {
      const onDebug = new BackofficeVisitor(debug.url);
      env.setNow(DEFAULT_NOW);
      expect((await onDebug.login('admin')).location).toBe('/backoffice/');
      expect((await onDebug.get('/backoffice/')).status).toBe(200);
      const { rows } = await env.db.query("select method from app_private.backoffice_sessions where account_id = $1 and stage = 'full'",
        [env.ids.accounts!.admin]);
      expect(rows.map((row) => row.method)).toContain('password');

      // The same cookie on the normal instance (env: no DEBUG, no bypass).
      const onNormal = new BackofficeVisitor(env.url);
      for (const [name, value] of onDebug.cookies) onNormal.cookies.set(name, value);
      expect((await onNormal.get('/backoffice/')).location).toBe('/backoffice/login/');
      expect((await onNormal.get('/api/auth/me/')).status).toBe(401);
      // The debug instance still honours it, but such a session passed no second factor: it
      // renews no backup code.
      expect((await onDebug.get('/backoffice/')).status).toBe(200);
      expect((await onDebug.get('/backoffice/backup-codes/')).text).toContain('n’a pas vérifié de second facteur');
      expect((await onDebug.submit('/backoffice/backup-codes/', {}, '/backoffice/')).status).toBe(403);
    } finally {
      await debug.close();
    }
  });
});
