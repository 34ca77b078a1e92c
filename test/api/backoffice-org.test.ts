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
let admin: BackofficeVisitor;

beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
  rh1 = (await enrolAs(env, 'rh1')).visitor;
  rh2 = (await enrolAs(env, 'rh2')).visitor;
  admin = (await enrolAs(env, 'admin')).visitor;
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

/** The text of the error paragraph under the field `id` of a page. */
function errorUnder(text: string, id: string): string | undefined {
  return new RegExp(`<p class="field-error" id="${id}-erreur">([^<]*)</p>`).exec(text)?.[1];
}

const count = async (sql: string, values: unknown[] = []) => Number((await env.db.query<{ n: string }>(sql, values)).rows[0]!.n);

describe('referential forms (staff only)', () => {
  it('creates an establishment with its count base; a name already used comes back under name, nothing written', async () => {
    const form = await admin.get('/backoffice/establishments/nouveau/');
    expect(form.status).toBe(200);
    expect(form.text).toContain('<option value="ouvres">Jours ouvrés (lundi au vendredi)</option>');
    const before = await count('select count(*) as n from app_public.establishments');
    const taken = (await env.db.query<{ name: string }>('select name from app_public.establishments where id = $1', [env.ids.establishments!.E1])).rows[0]!.name;
    const refused = await admin.submit('/backoffice/establishments/nouveau/', { name: taken.toUpperCase(), count_base: 'ouvres', division: '' });
    expect(refused.status).toBe(400);
    expect(errorUnder(refused.text, 'c-name')).toContain('s’appelle déjà');
    const empty = await admin.submit('/backoffice/establishments/nouveau/', { name: '', count_base: 'ouvres', division: '' });
    expect(empty.status).toBe(400);
    expect(errorUnder(empty.text, 'c-name')).toBeDefined();
    expect(await count('select count(*) as n from app_public.establishments')).toBe(before);
    const created = await admin.submit('/backoffice/establishments/nouveau/', { name: 'MAS Les Peupliers', count_base: 'ouvres', division: '' });
    expect(created.status).toBe(303);
    const row = (await env.db.query('select id, count_base from app_public.establishments where name = $1', ['MAS Les Peupliers'])).rows[0]!;
    expect(row.count_base).toBe('ouvres');
    expect(created.location).toBe(`/backoffice/establishments/${row.id}/?fait=cree`);
    // Edited, then deleted (unused).
    const edited = await admin.submit(`/backoffice/establishments/${row.id}/modifier/`, { name: 'MAS Les Peupliers', count_base: 'ouvrables', division: '' });
    expect(edited.status).toBe(303);
    expect((await env.db.query('select count_base from app_public.establishments where id = $1', [row.id])).rows[0]!.count_base).toBe('ouvrables');
    const deleted = await admin.submit(`/backoffice/establishments/${row.id}/supprimer/`, {}, `/backoffice/establishments/${row.id}/`);
    expect(deleted.status).toBe(303);
    expect(await count('select count(*) as n from app_public.establishments where id = $1', [row.id])).toBe(0);
  });

  it('an establishment in use is not deleted: the refusal is shown, nothing written', async () => {
    const e1 = env.ids.establishments!.E1!;
    const refused = await admin.submit(`/backoffice/establishments/${e1}/supprimer/`, {}, `/backoffice/establishments/${e1}/`);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('encore utilisé');
    expect(await count('select count(*) as n from app_public.establishments where id = $1', [e1])).toBe(1);
  });

  it('divisions and contract types: created by staff; a contract type code already used under code', async () => {
    expect((await admin.submit('/backoffice/divisions/nouveau/', { name: 'Pôle adultes' })).status).toBe(303);
    const refused = await admin.submit('/backoffice/contract-types/nouveau/', { code: 'CDI', name: 'Doublon' });
    expect(refused.status).toBe(400);
    expect(errorUnder(refused.text, 'c-code')).toBeDefined();
    const created = await admin.submit('/backoffice/contract-types/nouveau/', { code: 'CUI', name: 'Contrat unique d’insertion' });
    expect(created.status).toBe(303);
    expect(await count("select count(*) as n from app_public.contract_types where code = 'CUI'")).toBe(1);
  });

  it('an HR account without staff status is offered no form, and a forged post is refused by SQL', async () => {
    const list = await rh1.get('/backoffice/establishments/');
    expect(list.text).not.toContain('/backoffice/establishments/nouveau/');
    const before = await count('select count(*) as n from app_public.establishments');
    const forged = await rh1.submit('/backoffice/establishments/nouveau/', { name: 'Forgé', count_base: 'ouvres', division: '' }, '/backoffice/establishments/');
    expect(forged.status).toBe(403);
    expect(await count('select count(*) as n from app_public.establishments')).toBe(before);
  });
});

describe('role attributions', () => {
  const alice = () => env.ids.accounts!.alice!;

  it('a staff Admin grants Manager n1 on an establishment; the employee record shows it; the line is audited', async () => {
    const form = await admin.get('/backoffice/role-attributions/nouveau/');
    expect(form.status).toBe(200);
    expect(form.text).toContain('<option value="Manager n1">Manager n1</option>');
    const created = await admin.submit('/backoffice/role-attributions/nouveau/', {
      account: String(alice()), role: 'Manager n1', start_date: '2026-12-01', end_date: '', establishments: String(env.ids.establishments!.E2),
    });
    expect(created.status).toBe(303);
    const row = (await env.db.query(`select ra.id, ra.start_date::text as start, array(select establishment_id from app_public.role_attribution_establishments x where x.attribution_id = ra.id) as est
      from app_public.role_attributions ra where ra.account_id = $1 and ra.role_id = 5`, [alice()])).rows[0]!;
    expect(row.start).toBe('2026-12-01');
    expect(row.est).toEqual([env.ids.establishments!.E2]);
    expect(created.location).toBe(`/backoffice/role-attributions/${row.id}/?fait=cree`);
    const record = await admin.get(`/backoffice/employees/${env.ids.employees!.alice}/`);
    expect(record.text).toContain('Manager n1');
    expect(await count("select count(*) as n from app_private.audit_log where model = 'role_attribution' and target_id = $1", [row.id])).toBe(1);
  });

  it('errors under their field, nothing written: end before start, establishments on Salarié, a rank above the editor', async () => {
    const before = await count('select count(*) as n from app_public.role_attributions');
    const dates = await admin.submit('/backoffice/role-attributions/nouveau/', {
      account: String(alice()), role: 'Manager n2', start_date: '2026-12-01', end_date: '2026-11-01',
    });
    expect(dates.status).toBe(400);
    expect(errorUnder(dates.text, 'c-end_date')).toContain('La fin doit être');
    const salarie = await admin.submit('/backoffice/role-attributions/nouveau/', {
      account: String(env.ids.accounts!.emma), role: 'Salarié', start_date: '2027-01-01', establishments: String(env.ids.establishments!.E1),
    });
    expect(salarie.status).toBe(400);
    expect(errorUnder(salarie.text, 'c-establishments')).toContain('ne se restreint pas par établissement');
    const own = await admin.submit('/backoffice/role-attributions/nouveau/', { account: String(env.ids.accounts!.admin), role: 'Manager n2' });
    expect(own.status).toBe(403);
    expect(own.text).toContain('vos propres rôles');
    expect(await count('select count(*) as n from app_public.role_attributions')).toBe(before);
  });

  it('changes the dates, then deletes; an HR account without staff status is offered neither', async () => {
    const id = (await env.db.query('select id from app_public.role_attributions where account_id = $1 and role_id = 5', [alice()])).rows[0]!.id as number;
    const asHr = await rh1.get(`/backoffice/role-attributions/${id}/`);
    expect(asHr.status).toBe(200);
    expect(asHr.text).not.toContain(`/backoffice/role-attributions/${id}/modifier/`);
    expect(asHr.text).not.toContain(`/backoffice/role-attributions/${id}/supprimer/`);
    const changed = await admin.submit(`/backoffice/role-attributions/${id}/modifier/`, {
      start_date: '2026-12-01', end_date: '2027-06-30', establishments: String(env.ids.establishments!.E2),
    });
    expect(changed.status).toBe(303);
    expect((await env.db.query('select end_date::text as d from app_public.role_attributions where id = $1', [id])).rows[0]!.d).toBe('2027-06-30');
    const deleted = await admin.submit(`/backoffice/role-attributions/${id}/supprimer/`, {}, `/backoffice/role-attributions/${id}/`);
    expect(deleted.status).toBe(303);
    expect(await count('select count(*) as n from app_public.role_attributions where id = $1', [id])).toBe(0);
  });

  it('an HR account restricted to E2 lists the attributions; one outside its reach cannot be written', async () => {
    const list = await rh2.get(`/backoffice/role-attributions/?account=${alice()}`);
    expect(list.status).toBe(200);
    expect(list.text).toContain('Salarié');
    expect(list.text).not.toContain('/backoffice/role-attributions/nouveau/');
  });
});

describe('teams and employee records (the API’s rules: perimeter writers, not staff only)', () => {
  it('HR creates a team in its perimeter; an establishment outside it comes back under establishments, nothing written', async () => {
    const before = await count('select count(*) as n from app_public.teams');
    const refused = await rh2.submit('/backoffice/teams/nouveau/', { name: 'Équipe mixte', establishments: String(env.ids.establishments!.E1) });
    expect(refused.status).toBe(400);
    expect(errorUnder(refused.text, 'c-establishments')).toBeDefined();
    expect(await count('select count(*) as n from app_public.teams')).toBe(before);
    const created = await rh2.submit('/backoffice/teams/nouveau/', { name: 'Équipe du week-end', establishments: String(env.ids.establishments!.E2) });
    expect(created.status).toBe(303);
    const team = (await env.db.query("select id from app_public.teams where name = 'Équipe du week-end'")).rows[0]!.id as number;
    const added = await rh2.submit(`/backoffice/teams/${team}/ajouter-membre/`, { employee: String(env.ids.employees!.chloe), start_date: '', end_date: '' },
      `/backoffice/teams/${team}/`);
    expect(added.status).toBe(303);
    expect(await count('select count(*) as n from app_public.team_assignments where team_id = $1', [team])).toBe(1);
    // A team of E1 only: not offered to RH n2 of E2.
    const t1 = await rh2.get(`/backoffice/teams/${env.ids.teams!.T1}/`);
    expect(t1.text).not.toContain(`/backoffice/teams/${env.ids.teams!.T1}/modifier/`);
  });

  it('HR edits an employee record of its perimeter; a bad e-mail comes back under its field, nothing written', async () => {
    const chloe = env.ids.employees!.chloe!;
    const form = await rh2.get(`/backoffice/employees/${chloe}/modifier/`);
    expect(form.status).toBe(200);
    const fields = { last_name: 'Bernard', first_name: 'Chloé', professional_email: 'pas-une-adresse', birth_date: '', main_establishment: String(env.ids.establishments!.E2) };
    const refused = await rh2.submit(`/backoffice/employees/${chloe}/modifier/`, fields);
    expect(refused.status).toBe(400);
    expect(errorUnder(refused.text, 'e-professional_email')).toBeDefined();
    const saved = await rh2.submit(`/backoffice/employees/${chloe}/modifier/`, { ...fields, professional_email: 'chloe.b@peupliers.example', is_polyvalent: '1' });
    expect(saved.status).toBe(303);
    const row = (await env.db.query('select professional_email, is_polyvalent from app_public.employees where id = $1', [chloe])).rows[0]!;
    expect(row).toEqual({ professional_email: 'chloe.b@peupliers.example', is_polyvalent: true });
    // Outside its perimeter: no edit link, and the form is refused.
    const alice = env.ids.employees!.alice!;
    expect((await rh2.get(`/backoffice/employees/${alice}/`)).text).not.toContain(`/backoffice/employees/${alice}/modifier/`);
    expect((await rh2.get(`/backoffice/employees/${alice}/modifier/`)).status).toBe(403);
  });

  it('HR creates an employee record and its account', async () => {
    const created = await rh1.submit('/backoffice/employees/nouveau/', {
      last_name: 'Nouvelle', first_name: 'Inès', professional_email: '', birth_date: '', main_establishment: String(env.ids.establishments!.E1),
    });
    expect(created.status).toBe(303);
    const row = (await env.db.query(`select e.id, a.username from app_public.employees e join app_public.accounts a on a.employee_id = e.id
      where e.last_name = 'Nouvelle'`)).rows[0]!;
    expect(row.username).toBe('ines.nouvelle');
    expect(created.location).toBe(`/backoffice/employees/${row.id}/?fait=cree`);
  });
});

describe('contracts of an employee record', () => {
  it('HR adds a contract through employee_update; an overlap comes back on the form, nothing written', async () => {
    const alice = env.ids.employees!.alice!;
    const cdd = (await env.db.query("select id from app_public.contract_types where code = 'CDD'")).rows[0]!.id as number;
    const contracts = async () => count('select count(*) as n from app_public.contracts where employee_id = $1', [alice]);
    const before = await contracts();
    const action = `/backoffice/employees/${alice}/ajouter-contrat/`;
    const overlap = await rh1.submit(action, { type: String(cdd), start_date: '2027-01-01', end_date: '', trial_end_date: '', job_title: '', weekly_hours: '' },
      `/backoffice/employees/${alice}/`);
    expect(overlap.status).toBe(400);
    expect(overlap.text).toMatch(/role="alert">[^<]*chevauch/);
    const hours = await rh1.submit(action, { type: String(cdd), start_date: '2027-01-01', weekly_hours: 'beaucoup' }, `/backoffice/employees/${alice}/`);
    expect(hours.status).toBe(400);
    expect(errorUnder(hours.text, 'a-ajouter-contrat-weekly_hours')).toBeDefined();
    expect(await contracts()).toBe(before);
    await env.db.query("update app_public.contracts set end_date = '2026-12-31' where employee_id = $1", [alice]);
    const added = await rh1.submit(action, { type: String(cdd), start_date: '2027-01-01', end_date: '2027-06-30', job_title: 'Éducatrice', weekly_hours: '28,5' },
      `/backoffice/employees/${alice}/`);
    expect(added.status).toBe(303);
    const row = (await env.db.query("select weekly_hours::text as h from app_public.contracts where employee_id = $1 and start_date = '2027-01-01'", [alice])).rows[0]!;
    expect(row.h).toBe('28.50');
    expect(await contracts()).toBe(before + 1);
  });
});

describe('changing and removing a contract, removing a team member', () => {
  /** The chosen contract and the version carried by the form `slug` of an employee's page. */
  async function contractForm(visitor: BackofficeVisitor, employee: number, slug: string) {
    const { form } = await formOf(visitor, `/backoffice/employees/${employee}/`, `/backoffice/employees/${employee}/${slug}/`);
    expect(form).toBeDefined();
    return {
      contract: /<option value="(\d+)" selected>/.exec(form!)![1]!,
      version: /name="version" value="([0-9a-f]+)"/.exec(form!)![1]!,
    };
  }
  const contractRow = async (id: string | number) => (await env.db.query(
    'select contract_type_id as type, start_date::text as start, end_date::text as end, job_title, weekly_hours::text as hours from app_public.contracts where id = $1',
    [id])).rows[0];

  it('HR changes a contract through employee_update: an error under its field, a stale form refused, nothing written', async () => {
    const bruno = env.ids.employees!.bruno!;
    const page = `/backoffice/employees/${bruno}/`;
    const action = `${page}modifier-contrat/`;
    const { contract, version } = await contractForm(rh1, bruno, 'modifier-contrat');
    const before = await contractRow(contract);
    const fields = { contract, version, type: String(before.type), start_date: before.start, end_date: '2027-03-31', trial_end_date: '',
      job_title: 'Moniteur éducateur', weekly_hours: '35' };

    const backwards = await rh1.submit(action, { ...fields, end_date: '2020-01-31' }, page);
    expect(backwards.status).toBe(400);
    expect(errorUnder(backwards.text, 'a-modifier-contrat-end_date')).toBe('La date de fin précède la date de début.');
    const trial = await rh1.submit(action, { ...fields, trial_end_date: '2027-04-30' }, page);
    expect(trial.status).toBe(400);
    expect(errorUnder(trial.text, 'a-modifier-contrat-trial_end_date')).toBe('La fin de période d’essai dépasse la fin du contrat.');
    expect(await contractRow(contract)).toEqual(before);

    const saved = await rh1.submit(action, fields, page);
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`${page}?fait=modifier-contrat`);
    expect(await contractRow(contract)).toEqual({ ...before, end: '2027-03-31', job_title: 'Moniteur éducateur', hours: '35.00' });

    // The same form again: drawn from the list before the change, refused on top, nothing written.
    const stale = await rh1.submit(action, { ...fields, end_date: '2027-12-31' }, page);
    expect(stale.status).toBe(409);
    expect(stale.text).toMatch(/role="alert">[^<]*ont changé depuis l’affichage du formulaire/);
    expect((await contractRow(contract)).end).toBe('2027-03-31');
    // Outside its perimeter (RH n2 of E2, Alice is of E1 only): the form is not offered, its post answers 404.
    const alice = env.ids.employees!.alice!;
    const alicePage = `/backoffice/employees/${alice}/`;
    expect((await rh2.get(alicePage)).text).not.toContain(`${alicePage}modifier-contrat/`);
    const aliceContract = (await env.db.query('select min(id) as id from app_public.contracts where employee_id = $1', [alice])).rows[0]!.id as number;
    const aliceBefore = await contractRow(aliceContract);
    const outside = await rh2.submit(`${alicePage}modifier-contrat/`, { ...fields, contract: String(aliceContract), version }, alicePage);
    expect(outside.status).toBe(404);
    expect(await contractRow(aliceContract)).toEqual(aliceBefore);
  });

  it('HR removes a contract; another employee’s contract comes back under the contract field, nothing written', async () => {
    const bruno = env.ids.employees!.bruno!;
    const page = `/backoffice/employees/${bruno}/`;
    const contracts = async () => count('select count(*) as n from app_public.contracts where employee_id = $1', [bruno]);
    const cddType = (await env.db.query("select id from app_public.contract_types where code = 'CDD'")).rows[0]!.id as number;
    const added = await rh1.submit(`${page}ajouter-contrat/`, { type: String(cddType), start_date: '2027-04-01', end_date: '2027-09-30' }, page);
    expect(added.status).toBe(303);
    const before = await contracts();
    const { version } = await contractForm(rh1, bruno, 'supprimer-contrat');
    const future = (await env.db.query("select id from app_public.contracts where employee_id = $1 and start_date = '2027-04-01'", [bruno])).rows[0]!.id as number;
    const other = (await env.db.query('select min(id) as id from app_public.contracts where employee_id <> $1', [bruno])).rows[0]!.id as number;

    const refused = await rh1.submit(`${page}supprimer-contrat/`, { contract: String(other), version }, page);
    expect(refused.status).toBe(400);
    expect(errorUnder(refused.text, 'a-supprimer-contrat-contract')).toBe('Ce contrat n’appartient pas à ce salarié.');
    expect(await contracts()).toBe(before);

    const removed = await rh1.submit(`${page}supprimer-contrat/`, { contract: String(future), version }, page);
    expect(removed.status).toBe(303);
    expect(await contracts()).toBe(before - 1);
    expect(await contractRow(future)).toBeUndefined();
  });

  it('HR removes a team member through team_members_replace; someone who is no member comes back under the field, nothing written', async () => {
    const team = env.ids.teams!.T2!;
    const page = `/backoffice/teams/${team}/`;
    const { chloe, bruno, david } = env.ids.employees!;
    const assignments = async () => (await env.db.query(
      'select employee_id, start_date::text, end_date::text from app_public.team_assignments where team_id = $1 order by id', [team])).rows;
    const before = await assignments();

    const refused = await rh1.submit(`${page}retirer-membre/`, { employee: String(david) }, page);
    expect(refused.status).toBe(400);
    expect(errorUnder(refused.text, 'a-retirer-membre-employee')).toMatch(/ne fait pas partie de cette équipe/);
    expect(await assignments()).toEqual(before);

    const removed = await rh1.submit(`${page}retirer-membre/`, { employee: String(chloe) }, page);
    expect(removed.status).toBe(303);
    expect(removed.location).toBe(`${page}?fait=retirer-membre`);
    const after = await rh1.get(removed.location!);
    expect(after.text).toContain('Le membre a été retiré de l’équipe.');
    expect(after.text).not.toContain(`href="/backoffice/employees/${chloe}/"`);
    expect(after.text).toContain(`href="/backoffice/employees/${bruno}/"`);
    expect((await assignments()).filter((a) => a.employee_id === bruno)).toEqual(before.filter((a) => a.employee_id === bruno));
  });
});
