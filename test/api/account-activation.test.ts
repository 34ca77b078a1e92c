/**
 * PUT /api/employees/<id>/account-activation/ (SPEC permissions change_account_activation
 * and change_interim_account_activation, CONTRACT section 7): HR opens or closes any account
 * of its perimeter; DA and managers only temporary workers' accounts (holding Intérimaire);
 * nobody their own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const path = (employee: number | string) => `/api/employees/${employee}/account-activation/`;

async function isActive(account: string): Promise<boolean> {
  const { rows } = await env.db.query('select is_active from app_public.accounts where id = $1', [env.ids.accounts![account]]);
  return rows[0].is_active;
}

async function setActive(account: string, active: boolean): Promise<void> {
  await env.db.query('update app_public.accounts set is_active = $2 where id = $1', [env.ids.accounts![account], active]);
}

async function put(caller: string, employee: string | number, body: unknown) {
  const id = typeof employee === 'string' ? env.ids.employees![employee]! : employee;
  return env.put(path(id), await env.login(caller), body);
}

describe('who may open or close an account', () => {
  it('RH n1 (whole association) closes and reopens any account: 200 {"id","account_id","is_active"}', async () => {
    for (const target of ['alice', 'chloe', 'david', 'mgr2']) {
      const closed = await put('rh1', target, { is_active: false });
      expect(closed.status, target).toBe(200);
      expect(closed.body).toEqual({ id: env.ids.employees![target], account_id: env.ids.accounts![target], is_active: false });
      expect(await isActive(target)).toBe(false);
      const opened = await put('rh1', target, { is_active: true });
      expect(opened.status, target).toBe(200);
      expect(opened.body).toEqual({ id: env.ids.employees![target], account_id: env.ids.accounts![target], is_active: true });
      expect(await isActive(target)).toBe(true);
    }
  });

  it('Admin closes accounts too', async () => {
    const res = await put('admin', 'bruno', { is_active: false });
    expect(res.status).toBe(200);
    expect(await isActive('bruno')).toBe(false);
    await setActive('bruno', true);
  });

  it('closing an already closed account, or opening an open one, is idempotent', async () => {
    expect((await put('rh1', 'gaelle', { is_active: true })).status).toBe(200);
    expect(await isActive('gaelle')).toBe(true);
  });

  it('RH n2 (E2) reaches only the accounts of E2: E1 is outside its perimeter, 404, and nothing changes', async () => {
    const chloe = await put('rh2', 'chloe', { is_active: false });
    expect(chloe.status).toBe(200);
    expect(await isActive('chloe')).toBe(false);
    await setActive('chloe', true);
    // bruno has E2 as secondary workplace: inside the perimeter.
    expect((await put('rh2', 'bruno', { is_active: true })).status).toBe(200);

    const alice = await put('rh2', 'alice', { is_active: false });
    expect(alice.status).toBe(404);
    expect(alice.body).toEqual({ detail: 'Salarié introuvable dans votre périmètre.' });
    expect(await isActive('alice')).toBe(true);
  });

  it('DA and managers open or close the accounts of temporary workers of their perimeter only', async () => {
    for (const caller of ['da', 'mgr1']) {
      const closed = await put(caller, 'emma', { is_active: false });
      expect(closed.status, caller).toBe(200);
      expect(closed.body).toEqual({ id: env.ids.employees!.emma, account_id: env.ids.accounts!.emma, is_active: false });
      expect(await isActive('emma')).toBe(false);
      expect((await put(caller, 'emma', { is_active: true })).status, caller).toBe(200);
      expect(await isActive('emma')).toBe(true);

      const alice = await put(caller, 'alice', { is_active: false });
      expect(alice.status, caller).toBe(403);
      expect(alice.body).toEqual({ detail: 'Vous ne pouvez ouvrir ou fermer que les comptes des intérimaires.' });
      expect(await isActive('alice')).toBe(true);
    }
    // mgr2 (E2) may close temporary workers, but emma works in E1: outside its perimeter, 404.
    const outside = await put('mgr2', 'emma', { is_active: false });
    expect(outside.status).toBe(404);
    expect(await isActive('emma')).toBe(true);
  });

  it('an Intérimaire role that has ended no longer makes the account a temporary worker\'s', async () => {
    await env.db.query("update app_public.role_attributions set start_date = '2026-01-01', end_date = '2026-11-01' where account_id = $1 and role_id = 8",
      [env.ids.accounts!.emma]);
    try {
      const res = await put('mgr1', 'emma', { is_active: false });
      expect(res.status).toBe(403);
      expect(await isActive('emma')).toBe(true);
    } finally {
      await env.db.query('update app_public.role_attributions set start_date = null, end_date = null where account_id = $1 and role_id = 8',
        [env.ids.accounts!.emma]);
    }
  });

  it('nobody opens or closes their own account (403), HR included', async () => {
    for (const caller of ['rh1', 'admin', 'mgr1']) {
      const res = await put(caller, caller, { is_active: false });
      expect(res.status, caller).toBe(403);
      expect(res.body).toEqual({ detail: 'Vous ne pouvez pas ouvrir ou fermer votre propre compte.' });
      expect(await isActive(caller)).toBe(true);
    }
  });

  it('a Salarié and a temporary worker: 403 on their own record, 404 on a colleague\'s (SPEC Errors)', async () => {
    for (const caller of ['alice', 'emma']) {
      for (const target of ['bruno', 'emma', 'alice', 'paie']) {
        const res = await put(caller, target, { is_active: false });
        expect(res.status, `${caller} → ${target}`).toBe(target === caller ? 403 : 404);
        expect(Object.keys(res.body)).toEqual(['detail']);
      }
      expect((await put(caller, 999999, { is_active: false })).status).toBe(404);
    }
    for (const target of ['bruno', 'emma', 'alice', 'paie']) expect(await isActive(target), target).toBe(true);
  });

  it('Service Paie (payroll over the whole association) has no right: 403 on any record', async () => {
    for (const target of ['bruno', 'emma', 'alice']) {
      const res = await put('paie', target, { is_active: false });
      expect(res.status, target).toBe(403);
      expect(Object.keys(res.body)).toEqual(['detail']);
    }
    for (const target of ['bruno', 'emma', 'alice']) expect(await isActive(target), target).toBe(true);
  });

  it('staff without role and without perimeter: 404, the record is out of its reach', async () => {
    expect((await put('staff', 'alice', { is_active: false })).status).toBe(404);
    expect(await isActive('alice')).toBe(true);
  });
});

describe('what is not found', () => {
  it('an employee without an account answers 404', async () => {
    const { rows } = await env.db.query<{ id: number }>(
      `insert into app_public.employees (first_name, last_name, main_establishment_id) values ('Sans', 'Compte', $1) returning id`,
      [env.ids.establishments!.E1],
    );
    const res = await put('rh1', rows[0]!.id, { is_active: true });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Ce salarié n’a pas de compte.' });
  });

  it('an unknown employee answers 404', async () => {
    const res = await put('rh1', 999999, { is_active: true });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Salarié introuvable.' });
  });

  it('an identifier that is not a positive integer answers 404', async () => {
    const token = await env.login('rh1');
    for (const id of ['abc', '0', '-3', '1.5']) {
      const res = await env.put(path(id), token, { is_active: true });
      expect(res.status, id).toBe(404);
    }
  });
});

describe('input', () => {
  it('a missing or invalid is_active answers 400 under is_active and changes nothing', async () => {
    const token = await env.login('rh1');
    const id = env.ids.employees!.alice!;
    const missing = await env.put(path(id), token, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ is_active: ['Ce champ est obligatoire.'] });
    for (const value of ['false', 0, null, 'yes', []]) {
      const res = await env.put(path(id), token, { is_active: value });
      expect(res.status, JSON.stringify(value)).toBe(400);
      expect(res.body, JSON.stringify(value)).toEqual({ is_active: ['Un booléen (true ou false) est attendu.'] });
    }
    const noBody = await env.request('PUT', path(id), { token });
    expect(noBody.status).toBe(400);
    expect(Object.keys(noBody.body)).toEqual(['is_active']);
    const malformed = await env.request('PUT', path(id), { token, rawBody: '{"is_active": tru' });
    expect(malformed.status).toBe(400);
    expect(Object.keys(malformed.body)).toEqual(['non_field_errors']);
    expect(await isActive('alice')).toBe(true);
  });

  it('other methods answer 405 with Allow: PUT', async () => {
    const token = await env.login('rh1');
    const res = await env.post(path(env.ids.employees!.alice!), token, { is_active: false });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('PUT');
    expect(await isActive('alice')).toBe(true);
  });
});
