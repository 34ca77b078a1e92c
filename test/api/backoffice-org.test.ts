/**
 * Reference administration in the back-office (issue 13, point 4): establishments, divisions,
 * contract types, teams and employees listed and read through the API's SQL functions; the
 * account activation ("Compte actif") and the honorability certificate of a record; the role
 * attributions of an account. Writes by staff only, errors under their field, nothing written
 * on an error, an HR account limited to what the SPEC lets it read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrolAs, type BackofficeVisitor } from '../helpers/backoffice.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let rh1: BackofficeVisitor;
let rh2: BackofficeVisitor;

beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
  rh1 = (await enrolAs(env, 'rh1')).visitor;
  rh2 = (await enrolAs(env, 'rh2')).visitor;
});
afterAll(async () => {
  await env?.close();
});

/** The CSRF token of the form posting to `action` on the page `from`. */
async function formOf(visitor: BackofficeVisitor, from: string, action: string) {
  const page = await visitor.get(from);
  const form = new RegExp(`<form method="post" action="${action.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[\\s\\S]*?</form>`).exec(page.text)?.[0];
  return { page, form, csrf: form ? /name="csrf_token" value="([^"]+)"/.exec(form)![1]! : null };
}

describe('referentials, teams and employees: lists and details', () => {
  it('lists establishments with their count base and a division filter, and reads one', async () => {
    const list = await rh1.get('/backoffice/establishments/');
    expect(list.status).toBe(200);
    const e1 = env.ids.establishments!.E1!;
    expect(list.text).toContain(`href="/backoffice/establishments/${e1}/"`);
    expect(list.text).toMatch(/Jours ouvr(és|ables)/);
    expect(list.text).toMatch(/<select id="f-division" name="division">/);
    const detail = await rh1.get(`/backoffice/establishments/${e1}/`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain('Base de décompte des congés');
    expect((await rh1.get('/backoffice/establishments/?division=abc')).status).toBe(400);
  });

  it('lists divisions and contract types (a list without query parameters)', async () => {
    expect((await rh1.get('/backoffice/divisions/')).status).toBe(200);
    const types = await rh1.get('/backoffice/contract-types/');
    expect(types.status).toBe(200);
    expect(types.text).toContain('CDI');
    expect(types.text).toContain('Intérim');
  });

  it('lists teams and employees; an employee record shows contracts, teams, account and roles', async () => {
    const teams = await rh1.get('/backoffice/teams/');
    expect(teams.text).toContain(`href="/backoffice/teams/${env.ids.teams!.T1}/"`);
    const team = await rh1.get(`/backoffice/teams/${env.ids.teams!.T1}/`);
    expect(team.text).toContain(`href="/backoffice/employees/${env.ids.employees!.alice}/"`);
    const employees = await rh1.get('/backoffice/employees/?search=martin');
    expect(employees.status).toBe(200);
    const alice = await rh1.get(`/backoffice/employees/${env.ids.employees!.alice}/`);
    expect(alice.status).toBe(200);
    expect(alice.text).toContain('<caption>Contrats</caption>');
    expect(alice.text).toContain('<caption>Rôles attribués</caption>');
    expect(alice.text).toContain('Salarié');
    expect(alice.text).toContain('Aucune attestation déposée.');
  });

  it('an HR account restricted to E2 reads the directory but no honorability certificate outside its perimeter', async () => {
    const alice = await rh2.get(`/backoffice/employees/${env.ids.employees!.alice}/`);
    expect(alice.status).toBe(200);
    expect(alice.text).not.toContain('action="/backoffice/employees/');
  });
});

describe('account activation ("Compte actif")', () => {
  it('HR closes and reopens an account of its perimeter, through the API’s SQL function', async () => {
    const id = env.ids.employees!.bruno!;
    const { form, csrf } = await formOf(rh1, `/backoffice/employees/${id}/`, `/backoffice/employees/${id}/account-activation/`);
    expect(form).toContain('Compte actif');
    const closed = await rh1.request('POST', `/backoffice/employees/${id}/account-activation/`, { form: { csrf_token: csrf! } });
    expect(closed.status).toBe(303);
    const row = await env.db.query<{ is_active: boolean }>('select is_active from app_public.accounts where employee_id = $1', [id]);
    expect(row.rows[0]!.is_active).toBe(false);
    const again = await formOf(rh1, `/backoffice/employees/${id}/`, `/backoffice/employees/${id}/account-activation/`);
    expect(again.page.text).toContain('fermé');
    await rh1.request('POST', `/backoffice/employees/${id}/account-activation/`, { form: { csrf_token: again.csrf!, is_active: '1' } });
    const reopened = await env.db.query<{ is_active: boolean }>('select is_active from app_public.accounts where employee_id = $1', [id]);
    expect(reopened.rows[0]!.is_active).toBe(true);
  });

  it('is not offered on one’s own record, and a forged post is refused with nothing written', async () => {
    const own = env.ids.employees!.rh1!;
    const { page, form } = await formOf(rh1, `/backoffice/employees/${own}/`, `/backoffice/employees/${own}/account-activation/`);
    expect(page.status).toBe(200);
    expect(form).toBeUndefined();
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!;
    const forged = await rh1.request('POST', `/backoffice/employees/${own}/account-activation/`, { form: { csrf_token: csrf } });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('propre compte');
    const row = await env.db.query<{ is_active: boolean }>('select is_active from app_public.accounts where employee_id = $1', [own]);
    expect(row.rows[0]!.is_active).toBe(true);
  });
});

describe('honorability certificate', () => {
  const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

  /** Posts the deposit form as a browser would (multipart), with the page's CSRF token unless told otherwise. */
  async function deposit(visitor: BackofficeVisitor, employee: number, file: { name: string; type: string; bytes: Buffer }, csrf?: string) {
    const page = await visitor.get(`/backoffice/employees/${employee}/honorability/`);
    const form = new FormData();
    form.set('csrf_token', csrf ?? /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!);
    form.set('file', new Blob([file.bytes], { type: file.type }), file.name);
    const response = await fetch(`${env.url}/backoffice/employees/${employee}/honorability/`, {
      method: 'POST', body: form, redirect: 'manual', headers: { cookie: visitor.cookieHeader() },
    });
    return { status: response.status, location: response.headers.get('location'), text: await response.text() };
  }

  const certificates = async (employee: number) =>
    (await env.db.query('select filename from app_public.honorability_certificates where employee_id = $1', [employee])).rows;

  it('HR deposits a PDF through the API’s SQL function, downloads it with its session, then removes it', async () => {
    const alice = env.ids.employees!.alice!;
    const done = await deposit(rh1, alice, { name: 'casier-alice.pdf', type: 'application/pdf', bytes: PDF });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/backoffice/employees/${alice}/`);
    expect(await certificates(alice)).toEqual([{ filename: 'casier-alice.pdf' }]);
    const detail = await rh1.get(`/backoffice/employees/${alice}/`);
    expect(detail.text).toContain('casier-alice.pdf');
    const link = /href="([^"]*\/honorability-certificate\/file\/)"/.exec(detail.text)![1]!;
    const file = await rh1.get(link.replace(env.url, ''));
    expect(file.status).toBe(200);
    expect(file.headers.get('cache-control')).toBe('private, no-store');
    expect(file.text.startsWith('%PDF')).toBe(true);

    const { csrf } = await formOf(rh1, `/backoffice/employees/${alice}/`, `/backoffice/employees/${alice}/remove-certificate/`);
    const removed = await rh1.request('POST', `/backoffice/employees/${alice}/remove-certificate/`, { form: { csrf_token: csrf! } });
    expect(removed.status).toBe(303);
    expect(await certificates(alice)).toEqual([]);
  });

  it('a file that is not a PDF, JPG or PNG: 400 under the file field, nothing written', async () => {
    const bruno = env.ids.employees!.bruno!;
    const refused = await deposit(rh1, bruno, { name: 'casier.txt', type: 'application/pdf', bytes: Buffer.from('pas un PDF') });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/<p class="field-error" id="attestation-erreur">Format de fichier non accepté/);
    expect(refused.text).toContain('aria-invalid="true"');
    expect(await certificates(bruno)).toEqual([]);
  });

  it('a forged token: 403, nothing written; outside the perimeter: 404, inside: deposited', async () => {
    const bruno = env.ids.employees!.bruno!;
    const forged = await deposit(rh1, bruno, { name: 'casier.pdf', type: 'application/pdf', bytes: PDF }, 'faux-jeton');
    expect(forged.status).toBe(403);
    expect(await certificates(bruno)).toEqual([]);
    // RH n2 of E2 reads the directory, but deposits only inside its perimeter.
    const david = env.ids.employees!.david!;
    const form = await rh2.get(`/backoffice/employees/${david}/honorability/`);
    expect(form.text).toContain('Vous ne pouvez pas déposer l’attestation de ce salarié.');
    expect(form.text).not.toContain('type="file"');
    const outside = await deposit(rh2, david, { name: 'casier.pdf', type: 'application/pdf', bytes: PDF });
    expect(outside.status).toBe(404);
    expect(await certificates(david)).toEqual([]);
    const inside = await deposit(rh2, env.ids.employees!.chloe!, { name: 'casier.pdf', type: 'application/pdf', bytes: PDF });
    expect(inside.status).toBe(303);
  });
});
