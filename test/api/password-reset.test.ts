/**
 * Password reset and set-password invitations (SPEC Authentication rule 4, Limits: the
 * link lives one hour). The request answers the same whatever the login; an e-mail is
 * queued in app_private.email_outbox only for an active account with an e-mail.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { importOrganisation } from '../../src/org/import.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { DEFAULT_NOW, FIXTURE_PASSWORD } from '../helpers/settings.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});
beforeEach(() => {
  env.setNow(DEFAULT_NOW);
});

const RESET_ANSWER = { detail: 'Si un compte actif correspond, un e-mail contenant un lien de réinitialisation a été envoyé.' };
const LINK = /http:\/\/wfm\.test\/password-reset\/confirm\/\?token=([0-9a-f]{64})/;

interface OutboxRow {
  id: number;
  kind: string;
  to_address: string;
  subject: string;
  body_text: string;
  account_id: number | null;
}

async function outbox(): Promise<OutboxRow[]> {
  const { rows } = await env.db.query<OutboxRow>('select id, kind, to_address, subject, body_text, account_id from app_private.email_outbox order by id');
  return rows;
}

/** Requests a reset for `login` and returns the token of the e-mail it queued. */
async function requestToken(login: string): Promise<string> {
  const before = (await outbox()).length;
  const res = await env.post('/api/auth/password/reset/', null, { login });
  expect(res.status).toBe(200);
  const rows = await outbox();
  expect(rows.length).toBe(before + 1);
  const match = LINK.exec(rows.at(-1)!.body_text);
  expect(match).not.toBeNull();
  return match![1]!;
}

async function loginStatus(username: string, password: string): Promise<number> {
  return (await env.post('/api/auth/token/', null, { username, password })).status;
}

describe('POST /api/auth/password/reset/', () => {
  it('answers the same 200 for an existing account, an unknown login and an account without e-mail', async () => {
    await env.db.query('delete from app_private.email_outbox');
    // emma has no professional e-mail; root has no employee record at all.
    for (const login of ['alice', 'no-such-user', 'emma', 'root', 'nobody@nowhere.example']) {
      const res = await env.post('/api/auth/password/reset/', null, { login });
      expect(res.status, login).toBe(200);
      expect(res.body, login).toEqual(RESET_ANSWER);
    }
    // Only the existing account with an e-mail got one, with the link to the public URL.
    const rows = await outbox();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      kind: 'password_reset',
      to_address: 'alice.martin@tilleuls.example',
      subject: 'Réinitialisation de votre mot de passe',
      account_id: env.ids.accounts!.alice,
    });
    expect(rows[0]!.body_text).toMatch(LINK);
    // Only a hash of the token is stored.
    const token = LINK.exec(rows[0]!.body_text)![1]!;
    const { rows: stored } = await env.db.query(
      "select count(*)::int as n from app_private.password_tokens where token_hash = public.digest($1, 'sha256') and purpose = 'reset'",
      [token],
    );
    expect(stored[0].n).toBe(1);
    const { rows: clear } = await env.db.query(
      "select count(*)::int as n from app_private.password_tokens where encode(token_hash, 'hex') = $1",
      [token],
    );
    expect(clear[0].n).toBe(0);
  });

  it('accepts the professional e-mail as login, case-insensitively', async () => {
    await env.db.query('delete from app_private.email_outbox');
    await env.post('/api/auth/password/reset/', null, { login: ' Alice.Martin@Tilleuls.example ' });
    const rows = await outbox();
    expect(rows.map((r) => r.account_id)).toEqual([env.ids.accounts!.alice]);
  });

  it('queues nothing for an inactive account', async () => {
    await env.db.query('delete from app_private.email_outbox');
    await env.db.query('update app_public.accounts set is_active = false where id = $1', [env.ids.accounts!.david]);
    try {
      const res = await env.post('/api/auth/password/reset/', null, { login: 'david' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(RESET_ANSWER);
      expect(await outbox()).toEqual([]);
    } finally {
      await env.db.query('update app_public.accounts set is_active = true where id = $1', [env.ids.accounts!.david]);
    }
  });

  it('answers 400 under login for a missing or empty login', async () => {
    const missing = await env.post('/api/auth/password/reset/', null, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ login: ['Ce champ est obligatoire.'] });
    const empty = await env.post('/api/auth/password/reset/', null, { login: '' });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ login: ['Ce champ ne peut pas être vide.'] });
    const wrongType = await env.post('/api/auth/password/reset/', null, { login: 7 });
    expect(wrongType.status).toBe(400);
    expect(Object.keys(wrongType.body)).toEqual(['login']);
  });
});

describe('POST /api/auth/password/reset/confirm/', () => {
  it('sets the password: the new one logs in, the old one no longer does', async () => {
    const token = await requestToken('bruno');
    const res = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: 'Nouvelle-Phrase-2026' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['detail']);
    expect(await loginStatus('bruno', 'Nouvelle-Phrase-2026')).toBe(200);
    expect(await loginStatus('bruno', FIXTURE_PASSWORD)).toBe(401);
  });

  it('a token serves once: the second confirmation answers 400 under token', async () => {
    const token = await requestToken('chloe');
    const first = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: 'Premiere-Phrase-2026' });
    expect(first.status).toBe(200);
    const second = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: 'Seconde-Phrase-2026' });
    expect(second.status).toBe(400);
    expect(second.body).toEqual({ token: ['Ce lien n’est plus valide : il a expiré ou a déjà servi. Demandez un nouveau lien.'] });
    expect(await loginStatus('chloe', 'Premiere-Phrase-2026')).toBe(200);
    expect(await loginStatus('chloe', 'Seconde-Phrase-2026')).toBe(401);
  });

  it('using one token kills the other open tokens of the account', async () => {
    const older = await requestToken('gaelle');
    const newer = await requestToken('gaelle');
    expect((await env.post('/api/auth/password/reset/confirm/', null, { token: newer, new_password: 'Nouvelle-Phrase-G-2026' })).status).toBe(200);
    const res = await env.post('/api/auth/password/reset/confirm/', null, { token: older, new_password: 'Autre-Phrase-2026' });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['token']);
  });

  it('a token expires after one hour', async () => {
    const token = await requestToken('david');
    env.setNow('2026-11-16T11:00:01+01:00');
    const late = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: 'Trop-Tard-Phrase-2026' });
    expect(late.status).toBe(400);
    expect(Object.keys(late.body)).toEqual(['token']);
    expect(await loginStatus('david', FIXTURE_PASSWORD)).toBe(200);
    // Within the hour it still works.
    env.setNow('2026-11-16T10:59:00+01:00');
    const inTime = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: 'A-Temps-Phrase-2026' });
    expect(inTime.status).toBe(200);
    expect(await loginStatus('david', 'A-Temps-Phrase-2026')).toBe(200);
  });

  it('a weak password answers 400 under new_password with messages, and changes nothing', async () => {
    const token = await requestToken('alice');
    const hashBefore = (await env.db.query('select password_hash from app_private.account_secrets where account_id = $1', [env.ids.accounts!.alice])).rows[0].password_hash;

    const short = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: 'court' });
    expect(short.status).toBe(400);
    expect(short.body).toEqual({ new_password: ['Le mot de passe doit contenir au moins 10 caractères.'] });

    const numeric = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: '12345678901' });
    expect(numeric.status).toBe(400);
    expect(numeric.body.new_password).toContain('Le mot de passe ne peut pas être entièrement numérique.');

    const common = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: 'azertyuiop' });
    expect(common.status).toBe(400);
    expect(common.body.new_password).toEqual(['Ce mot de passe est trop courant.']);

    const withUsername = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: 'xx-alice-2026-yy' });
    expect(withUsername.status).toBe(400);
    expect(withUsername.body.new_password).toEqual(['Le mot de passe ne doit pas contenir l’identifiant.']);

    // Nothing changed: same hash, the old password logs in, the token is still usable.
    const hashAfter = (await env.db.query('select password_hash from app_private.account_secrets where account_id = $1', [env.ids.accounts!.alice])).rows[0].password_hash;
    expect(hashAfter).toBe(hashBefore);
    expect(await loginStatus('alice', FIXTURE_PASSWORD)).toBe(200);
    const { rows } = await env.db.query("select count(*)::int as n from app_private.password_tokens where account_id = $1 and used_at is null and purpose = 'reset'", [env.ids.accounts!.alice]);
    expect(rows[0].n).toBeGreaterThanOrEqual(1);
    const good = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: 'Une-Bonne-Phrase-2026' });
    expect(good.status).toBe(200);
  });

  it('an unknown token, and missing fields, answer 400 keyed by field', async () => {
    const unknown = await env.post('/api/auth/password/reset/confirm/', null, { token: 'f'.repeat(64), new_password: 'Une-Bonne-Phrase-2026' });
    expect(unknown.status).toBe(400);
    expect(Object.keys(unknown.body)).toEqual(['token']);
    const missing = await env.post('/api/auth/password/reset/confirm/', null, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ token: ['Ce champ est obligatoire.'], new_password: ['Ce champ est obligatoire.'] });
  });

  it('a token of an account closed in the meantime is refused', async () => {
    const token = await requestToken('mgr2');
    await env.db.query('update app_public.accounts set is_active = false where id = $1', [env.ids.accounts!.mgr2]);
    try {
      const res = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: 'Une-Bonne-Phrase-2026' });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['token']);
    } finally {
      await env.db.query('update app_public.accounts set is_active = true where id = $1', [env.ids.accounts!.mgr2]);
    }
    expect(await loginStatus('mgr2', FIXTURE_PASSWORD)).toBe(200);
  });
});

describe('invitations', () => {
  async function importAccounts(doc: Record<string, unknown>): Promise<Record<string, Record<string, number>>> {
    const client = await env.db.connect();
    try {
      await client.query('begin');
      // As the server's connections do (src/db/pool.ts): the clock and the public URL of links.
      await client.query("select set_config('app.frozen_now', $1, true), set_config('app.public_url', $2, true)", [DEFAULT_NOW, env.config.publicUrl]);
      const ids = await importOrganisation(client, doc);
      await client.query('commit');
      return ids;
    } catch (error) {
      await client.query('rollback');
      throw error;
    } finally {
      client.release();
    }
  }

  it('an account created without a password and with a professional e-mail is invited, and sets its password with the invitation token', async () => {
    await env.db.query('delete from app_private.email_outbox');
    const ids = await importAccounts({
      employees: [
        { key: 'zoe', first_name: 'Zoé', last_name: 'Renard', professional_email: 'zoe.renard@tilleuls.example' },
        { key: 'yann', first_name: 'Yann', last_name: 'Leroy', professional_email: null },
      ],
      accounts: [
        { key: 'zoe', username: 'zoe', employee: 'zoe' },
        { key: 'yann', username: 'yann', employee: 'yann' },
      ],
    });
    const rows = await outbox();
    // yann has no e-mail: no invitation (he will use password reset later).
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: 'invitation', to_address: 'zoe.renard@tilleuls.example', account_id: ids.accounts!.zoe });
    expect(rows[0]!.body_text).toContain('zoe');
    const token = LINK.exec(rows[0]!.body_text)![1]!;

    // No usable password yet.
    expect(await loginStatus('zoe', FIXTURE_PASSWORD)).toBe(401);
    // The invitation lives longer than a reset link: still valid two days later.
    env.setNow('2026-11-18T10:00:00+01:00');
    const res = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: 'Nouveau-Compte-2026' });
    expect(res.status).toBe(200);
    expect(await loginStatus('zoe', 'Nouveau-Compte-2026')).toBe(200);
    const again = await env.post('/api/auth/password/reset/confirm/', null, { token, new_password: 'Encore-Compte-2026' });
    expect(again.status).toBe(400);
    expect(Object.keys(again.body)).toEqual(['token']);
  });

  it('an account created with a password is not invited', async () => {
    await env.db.query('delete from app_private.email_outbox');
    await importAccounts({
      employees: [{ key: 'xavier', first_name: 'Xavier', last_name: 'Noel', professional_email: 'xavier.noel@tilleuls.example' }],
      accounts: [{ key: 'xavier', username: 'xavier', employee: 'xavier', password: FIXTURE_PASSWORD }],
    });
    expect(await outbox()).toEqual([]);
    expect(await loginStatus('xavier', FIXTURE_PASSWORD)).toBe(200);
  });
});
