/**
 * The registry's generic create and edit forms, over HTTP with a signed-in visitor, on the
 * absence categories: inputs drawn from the JSON Schema, a select whose options are read
 * from the database, SQL errors under their field with nothing written, the success
 * redirect and its message, related rows on the detail page, a delete action back to the
 * list, CSRF, and a non-staff account offered nothing and refused by SQL anyway. The
 * schema-driven inputs and the form-to-body conversion (multi-select, decimals) are checked
 * on their own at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formBody, formFields } from '../../src/backoffice/forms.js';
import { s } from '../../src/http/schema.js';
import { enrolAs, type BackofficeVisitor } from '../helpers/backoffice.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let admin: BackofficeVisitor;
let rh1: BackofficeVisitor;

beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
  admin = (await enrolAs(env, 'admin')).visitor;
  rh1 = (await enrolAs(env, 'rh1')).visitor;
});
afterAll(async () => {
  await env?.close();
});

async function categoryCount(): Promise<number> {
  return Number((await env.db.query<{ n: string }>('select count(*) as n from app_public.absence_categories')).rows[0]!.n);
}

async function categoryId(code: string): Promise<number | null> {
  return (await env.db.query<{ id: number }>('select id from app_public.absence_categories where code = $1', [code])).rows[0]?.id ?? null;
}

/** A sub-category of the reference (its parent is a root). */
async function aSubCategory(): Promise<{ id: number; code: string }> {
  return (await env.db.query<{ id: number; code: string }>(
    'select id, code from app_public.absence_categories where parent_id is not null order by id limit 1')).rows[0]!;
}

/** The text of the error paragraph under the field `id` of a page. */
function errorUnder(text: string, id: string): string | undefined {
  return new RegExp(`<p class="field-error" id="${id}-erreur">([^<]*)</p>`).exec(text)?.[1];
}

describe('generic create form', () => {
  it('is offered to a staff account, with a select whose options come from the database', async () => {
    const list = await admin.get('/backoffice/absence-categories/');
    expect(list.status).toBe(200);
    expect(list.text).toContain('href="/backoffice/absence-categories/nouveau/"');
    const form = await admin.get('/backoffice/absence-categories/nouveau/');
    expect(form.status).toBe(200);
    expect(form.text).toMatch(/<input type="text" id="c-code" name="code" value="" maxlength="32" aria-required="true"/);
    const roots = (await env.db.query<{ id: number; name: string }>(
      'select id, name from app_public.absence_categories where parent_id is null')).rows;
    expect(roots.length).toBeGreaterThan(0);
    for (const root of roots) expect(form.text).toContain(`<option value="${root.id}">`);
    const sub = await aSubCategory();
    expect(form.text).not.toContain(`<option value="${sub.id}">`);
    expect(form.text).toMatch(/name="csrf_token" value="[^"]+"/);
  });

  it('shows a SQL refusal under its field and writes nothing', async () => {
    const before = await categoryCount();
    // A third level: the table's trigger refuses it under parent.
    const sub = await aSubCategory();
    const page = await admin.submit('/backoffice/absence-categories/nouveau/', { code: 'TROP_PROFOND', name: 'Troisième niveau', parent: String(sub.id), position: '0' });
    expect(page.status).toBe(400);
    expect(errorUnder(page.text, 'c-parent')).toContain('au plus deux niveaux');
    expect(page.text).toContain('role="alert">Rien n’a été enregistré : corrigez les champs signalés.</p>');
    expect(page.text).toMatch(/<select id="c-parent" name="parent" aria-describedby="c-parent-aide c-parent-erreur" aria-invalid="true">/);
    // What was typed stays in the form.
    expect(page.text).toContain('value="TROP_PROFOND"');
    expect(await categoryCount()).toBe(before);
    expect(await categoryId('TROP_PROFOND')).toBeNull();
  });

  it('shows the schema validation under each field (empty required field, bad integer) and writes nothing', async () => {
    const before = await categoryCount();
    const page = await admin.submit('/backoffice/absence-categories/nouveau/', { code: '', name: 'Sans code', parent: '', position: 'deux' });
    expect(page.status).toBe(400);
    expect(errorUnder(page.text, 'c-code')).toBe('Ce champ est obligatoire.');
    expect(errorUnder(page.text, 'c-position')).toBe('Un nombre entier est attendu.');
    expect(errorUnder(page.text, 'c-name')).toBeUndefined();
    expect(await categoryCount()).toBe(before);
  });

  it('creates, redirects to the new row with a message, and shows its related rows', async () => {
    const root = (await env.db.query<{ id: number }>("select id from app_public.absence_categories where parent_id is null order by id limit 1")).rows[0]!.id;
    const created = await admin.submit('/backoffice/absence-categories/nouveau/', { code: 'essai_form', name: 'Essai du formulaire', parent: String(root), position: '7' });
    expect(created.status).toBe(303);
    const id = await categoryId('ESSAI_FORM');
    expect(id).not.toBeNull();
    expect(created.location).toBe(`/backoffice/absence-categories/${id}/?fait=cree`);
    const detail = await admin.get(created.location!);
    expect(detail.text).toContain('La catégorie a été créée.');
    expect(detail.text).toContain('Sous-catégories');
    expect(detail.text).toContain('Aucun motif dans cette catégorie.');
    const parentPage = await admin.get(`/backoffice/absence-categories/${root}/`);
    expect(parentPage.text).toContain(`href="/backoffice/absence-categories/${id}/">ESSAI_FORM</a>`);
    const audit = await env.db.query("select verb from app_private.audit_log where model = 'absence_category' and target_id = $1", [id]);
    expect(audit.rows.map((r) => r.verb)).toEqual(['Creation']);
  });
});

describe('generic edit form', () => {
  it('opens with the row values, refuses under the field, then saves and redirects with a message', async () => {
    const id = (await categoryId('ESSAI_FORM'))!;
    const detail = await admin.get(`/backoffice/absence-categories/${id}/`);
    expect(detail.text).toContain(`href="/backoffice/absence-categories/${id}/modifier/"`);
    const form = await admin.get(`/backoffice/absence-categories/${id}/modifier/`);
    expect(form.status).toBe(200);
    expect(form.text).toContain('value="ESSAI_FORM"');
    expect(form.text).toMatch(/<option value="\d+" selected>/);
    const taken = (await env.db.query<{ code: string }>("select code from app_public.absence_categories where id <> $1 order by id limit 1", [id])).rows[0]!.code;
    const refused = await admin.submit(`/backoffice/absence-categories/${id}/modifier/`, { code: taken, name: 'Renommée', parent: '', position: '7' });
    expect(refused.status).toBe(400);
    expect(errorUnder(refused.text, 'e-code')).toContain('déjà utilisé');
    expect((await env.db.query('select name from app_public.absence_categories where id = $1', [id])).rows[0]!.name).toBe('Essai du formulaire');
    const saved = await admin.submit(`/backoffice/absence-categories/${id}/modifier/`, { code: 'ESSAI_FORM', name: 'Renommée', parent: '', position: '7' });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/backoffice/absence-categories/${id}/?fait=modifier`);
    expect((await admin.get(saved.location!)).text).toContain('La catégorie a été enregistrée.');
    expect((await env.db.query('select name, parent_id from app_public.absence_categories where id = $1', [id])).rows[0]).toEqual({ name: 'Renommée', parent_id: null });
  });

  it('refuses a post without its CSRF token', async () => {
    const id = (await categoryId('ESSAI_FORM'))!;
    const page = await admin.request('POST', `/backoffice/absence-categories/${id}/modifier/`, { form: { code: 'ESSAI_FORM', name: 'Sans jeton', parent: '', position: '7' } });
    expect(page.status).toBe(403);
    expect((await env.db.query('select name from app_public.absence_categories where id = $1', [id])).rows[0]!.name).toBe('Renommée');
  });

  it('deletes through an action and goes back to the list with a message', async () => {
    const id = (await categoryId('ESSAI_FORM'))!;
    const page = await admin.submit(`/backoffice/absence-categories/${id}/supprimer/`, {}, `/backoffice/absence-categories/${id}/`);
    expect(page.status).toBe(303);
    expect(page.location).toBe('/backoffice/absence-categories/?fait=supprimer');
    expect((await admin.get(page.location!)).text).toContain('La catégorie a été supprimée.');
    expect(await categoryId('ESSAI_FORM')).toBeNull();
  });
});

describe('a non-staff account', () => {
  it('reads the list and the detail but is offered no form', async () => {
    const list = await rh1.get('/backoffice/absence-categories/');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain('/backoffice/absence-categories/nouveau/');
    const root = (await env.db.query<{ id: number }>("select id from app_public.absence_categories where parent_id is null order by id limit 1")).rows[0]!.id;
    const detail = await rh1.get(`/backoffice/absence-categories/${root}/`);
    expect(detail.status).toBe(200);
    expect(detail.text).not.toContain('/modifier/');
    expect((await rh1.get('/backoffice/absence-categories/nouveau/')).status).toBe(403);
    expect((await rh1.get(`/backoffice/absence-categories/${root}/modifier/`)).status).toBe(403);
  });

  it('is refused by SQL (403) when it posts anyway, and nothing is written', async () => {
    const before = await categoryCount();
    const page = await rh1.submit('/backoffice/absence-categories/nouveau/', { code: 'PAR_RH', name: 'Par un RH', parent: '', position: '0' }, '/backoffice/absence-categories/');
    expect(page.status).toBe(403);
    expect(page.text).toContain('comptes du personnel d’administration');
    expect(await categoryCount()).toBe(before);
  });
});

describe('schema-driven inputs', () => {
  const schema = s.object({
    types: s.array(s.id()),
    cap: s.nullable({ type: 'number', exclusiveMinimum: 0 }),
    overrun: s.enum(['refuse', 'warn']),
    active: s.bool(),
    label: s.text(100),
  }, ['types', 'cap', 'overrun', 'active', 'label']);
  const fields = [
    { key: 'types', label: 'Types de contrat' },
    { key: 'cap', label: 'Plafond' },
    { key: 'overrun', label: 'Dépassement' },
    { key: 'active', label: 'Actif' },
    { key: 'label', label: 'Libellé' },
  ];

  it('turns repeated check boxes into a list of ids, a decimal comma into a number, an empty input into null', () => {
    expect(formBody(fields, schema, { types: ['3', '5'], cap: '12,5', overrun: 'warn', active: '1', label: ' Congé ' }))
      .toEqual({ types: [3, 5], cap: 12.5, overrun: 'warn', active: true, label: 'Congé' });
    expect(formBody(fields, schema, { types: '4', cap: '', overrun: '', label: '' }))
      .toEqual({ types: [4], cap: null, overrun: null, active: false, label: null });
    expect(formBody(fields, schema, {})).toMatchObject({ types: [] });
  });

  it('draws check boxes for a list with options, a select for an enum, a check box for a boolean', () => {
    const markup = formFields('t', fields, schema, { types: [5], overrun: 'warn', active: true },
      { types: ['Plafond dépassé'] }, { types: [{ value: '3', label: 'CDI' }, { value: '5', label: 'CDD' }] }).text;
    expect(markup).toMatch(/<fieldset class="choices" id="t-types" aria-describedby="t-types-erreur" aria-invalid="true">\s*<legend>Types de contrat<\/legend>/);
    expect(markup).toContain('<input type="checkbox" id="t-types-0" name="types" value="3">');
    expect(markup).toContain('<input type="checkbox" id="t-types-1" name="types" value="5" checked>');
    expect(markup).toContain('<p class="field-error" id="t-types-erreur">Plafond dépassé</p>');
    expect(markup).toMatch(/<select id="t-overrun" name="overrun" aria-required="true">[\s\S]*<option value="warn" selected>warn<\/option>/);
    expect(markup).toMatch(/<input type="text" inputmode="decimal" id="t-cap" name="cap"/);
    expect(markup).toMatch(/<input type="checkbox" id="t-active" name="active" value="1" checked>/);
  });
});
