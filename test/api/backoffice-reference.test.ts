/**
 * Reference administration in the back-office, over HTTP with signed-in visitors: absence
 * types (code clash with a post, cap > 0, contract types, orphan rule on deactivation), posts
 * (code clash with an absence type), counter associations (orphan rule on deletion) and the
 * counters' manual adjustment (one journal row with its reason). Each refusal shows under the
 * field to correct and writes nothing. A non-staff RH account reads the lists, is offered no
 * form and is refused by SQL (403) when it posts anyway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrolAs, type BackofficeVisitor } from '../helpers/backoffice.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let admin: BackofficeVisitor;
let rh1: BackofficeVisitor;
let conges: number;

beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
  admin = (await enrolAs(env, 'admin')).visitor;
  rh1 = (await enrolAs(env, 'rh1')).visitor;
  conges = (await env.db.query<{ id: number }>("select id from app_public.absence_categories where code = 'CONGES'")).rows[0]!.id;
});
afterAll(async () => {
  await env?.close();
});

function errorUnder(text: string, id: string): string | undefined {
  return new RegExp(`<p class="field-error" id="${id}-erreur">([^<]*)</p>`).exec(text)?.[1];
}

async function count(sql: string, values: unknown[] = []): Promise<number> {
  return Number((await env.db.query<{ n: string }>(`select count(*) as n from (${sql}) x`, values)).rows[0]!.n);
}

/** A complete absence type form. */
function typeForm(overrides: Record<string, string | string[]> = {}): Record<string, string> {
  return {
    code: 'BO_ESSAI', name: 'Motif du back-office', category: String(conges), unit: 'day', splittable: '1',
    annual_cap: '', cap_overrun: 'refuse', half_day_allowed: '1', validation_required: '1',
    annualisation_effect: 'none', is_active: '1', position: '0', ...overrides,
  } as Record<string, string>;
}

/** Posts a form whose fields may repeat (check boxes of a multi-select), with the CSRF token of `from`. */
async function submitMulti(visitor: BackofficeVisitor, action: string, fields: Array<[string, string]>, from = action) {
  const page = await visitor.get(from);
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!;
  const body = new URLSearchParams([...fields, ['csrf_token', csrf]]).toString();
  const response = await fetch(`${env.url}${action}`, {
    method: 'POST', redirect: 'manual', body,
    headers: { cookie: visitor.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
  });
  return { status: response.status, location: response.headers.get('location'), text: await response.text() };
}

describe('absence types', () => {
  it('refuses a code that a post holds (other case), under the code field, and writes nothing', async () => {
    const before = await count('select 1 from app_public.absence_types');
    const page = await admin.submit('/backoffice/absence-types/nouveau/', typeForm({ code: 'j' }));
    expect(page.status).toBe(400);
    expect(errorUnder(page.text, 'c-code')).toBe('Le code « j » est déjà utilisé par un poste.');
    expect(page.text).toMatch(/id="c-code" name="code" value="j"[^>]*aria-invalid="true"/);
    expect(await count('select 1 from app_public.absence_types')).toBe(before);
  });

  it('refuses a cap of zero under its field', async () => {
    const page = await admin.submit('/backoffice/absence-types/nouveau/', typeForm({ annual_cap: '0' }));
    expect(page.status).toBe(400);
    expect(errorUnder(page.text, 'c-annual_cap')).toBe('Le plafond annuel est strictement positif, ou vide pour aucun plafond.');
    expect(await count("select 1 from app_public.absence_types where code = 'BO_ESSAI'")).toBe(0);
  });

  it('creates a type with its contract types (multi-select) and a decimal cap', async () => {
    const ids = (await env.db.query<{ id: number }>("select id from app_public.contract_types where code in ('CDI', 'CDD') order by id")).rows.map((r) => String(r.id));
    const form = await admin.get('/backoffice/absence-types/nouveau/');
    for (const id of ids) expect(form.text).toContain(`name="contract_types" value="${id}"`);
    const fields = Object.entries(typeForm({ annual_cap: '12,5' })).concat(ids.map((id) => ['contract_types', id]));
    const created = await submitMulti(admin, '/backoffice/absence-types/nouveau/', fields);
    expect(created.status).toBe(303);
    const row = (await env.db.query<{ id: number; annual_cap: string }>("select id, annual_cap from app_public.absence_types where code = 'BO_ESSAI'")).rows[0]!;
    expect(row.annual_cap).toBe('12.50');
    expect(created.location).toBe(`/backoffice/absence-types/${row.id}/?fait=cree`);
    expect(await count('select 1 from app_public.absence_type_contract_types where absence_type_id = $1', [row.id])).toBe(2);
    const detail = await admin.get(created.location!);
    expect(detail.text).toContain('Le motif a été créé.');
    expect(detail.text).toContain('12,50 j');
  });

  it('refuses to deactivate CP while it would orphan active counters, under « Actif »', async () => {
    const cp = (await env.db.query<{ id: number }>("select id from app_public.absence_types where code = 'CP'")).rows[0]!.id;
    const edit = await admin.get(`/backoffice/absence-types/${cp}/modifier/`);
    expect(edit.status).toBe(200);
    expect(edit.text).toMatch(/<input type="checkbox" id="e-is_active" name="is_active" value="1" checked/);
    const fields = typeForm({ code: 'CP', name: 'Congés payés', half_day_allowed: '' });
    delete fields.is_active;
    const page = await admin.submit(`/backoffice/absence-types/${cp}/modifier/`, fields);
    expect(page.status).toBe(400);
    expect(errorUnder(page.text, 'e-is_active')).toMatch(/^Impossible de désactiver ou de supprimer le motif CP : \d+ compteur\(s\) CP actif/);
    expect((await env.db.query('select is_active from app_public.absence_types where id = $1', [cp])).rows[0]!.is_active).toBe(true);
  });

  it('« Demandable par le salarié »: shown ticked from the reference, unticked by staff, and the employee is no longer offered the reason', async () => {
    const row = (await env.db.query<{ id: number; category_id: number }>("select id, category_id from app_public.absence_types where code = 'RTT'")).rows[0]!;
    const edit = await admin.get(`/backoffice/absence-types/${row.id}/modifier/`);
    expect(edit.text).toMatch(/<input type="checkbox" id="e-employee_requestable" name="employee_requestable" value="1" checked/);
    const fields = typeForm({ code: 'RTT', name: 'Réduction du temps de travail', category: String(row.category_id) });
    const saved = await admin.submit(`/backoffice/absence-types/${row.id}/modifier/`, fields);
    expect(saved.status).toBe(303);
    expect((await env.db.query('select employee_requestable from app_public.absence_types where id = $1', [row.id])).rows[0]!.employee_requestable).toBe(false);
    const detail = await admin.get(saved.location!);
    expect(detail.text).toMatch(/<dt>Demandable par le salarié<\/dt><dd>non<\/dd>/);
    const offered = await env.get('/api/absence-types/requestable/?page_size=200', await env.login('chloe'));
    expect(offered.body.results.map((reason: { code: string }) => reason.code)).not.toContain('RTT');
    // A non-staff RH account is refused by SQL.
    const refused = await rh1.submit(`/backoffice/absence-types/${row.id}/modifier/`, { ...fields, employee_requestable: '1' });
    expect(refused.status).toBe(403);
    expect((await env.db.query('select employee_requestable from app_public.absence_types where id = $1', [row.id])).rows[0]!.employee_requestable).toBe(false);
  });
});

describe('posts', () => {
  it('refuses a code that an absence type holds (other case), under the code field, and writes nothing', async () => {
    const e1 = String(env.ids.establishments!.E1);
    const fields = { code: 'cp', label: 'Poste CP', establishment: e1, start_time: '08:00', end_time: '16:00', break_start_time: '', break_end_time: '', is_active: '1' };
    const page = await admin.submit('/backoffice/posts/nouveau/', fields);
    expect(page.status).toBe(400);
    expect(errorUnder(page.text, 'c-code')).toBe('Le code « cp » est déjà utilisé par un motif d’absence.');
    expect(await count("select 1 from app_public.posts where lower(code) = 'cp'")).toBe(0);
    const created = await admin.submit('/backoffice/posts/nouveau/', { ...fields, code: 'BO_P', break_start_time: '12:00', break_end_time: '12:30' });
    expect(created.status).toBe(303);
    expect(await count("select 1 from app_public.posts where code = 'BO_P' and break_end_time = '12:30'")).toBe(1);
  });

  it('refuses a break without its end under break_end_time', async () => {
    const e1 = String(env.ids.establishments!.E1);
    const page = await admin.submit('/backoffice/posts/nouveau/', { code: 'BO_Q', label: 'Q', establishment: e1, start_time: '08:00', end_time: '16:00', break_start_time: '12:00', break_end_time: '', is_active: '1' });
    expect(page.status).toBe(400);
    expect(errorUnder(page.text, 'c-break_end_time')).toBe('Une pause a un début et une fin.');
    expect(await count("select 1 from app_public.posts where code = 'BO_Q'")).toBe(0);
  });
});

describe('counter associations', () => {
  it('refuses to delete the only association of CP while CP counters are active', async () => {
    const id = (await env.db.query<{ id: number }>("select id from app_public.counter_associations where counter_code = 'CP'")).rows[0]!.id;
    const page = await admin.submit(`/backoffice/counter-associations/${id}/supprimer/`, {}, `/backoffice/counter-associations/${id}/`);
    expect(page.status).toBe(400);
    expect(page.text).toMatch(/role="alert">Impossible de désactiver ou de supprimer l’association au compteur CP/);
    expect(await count('select 1 from app_public.counter_associations where id = $1', [id])).toBe(1);
  });
});

describe('counters', () => {
  it('adjusts a balance through one journal movement with its reason, refused without reason', async () => {
    const id = (await env.db.query<{ id: number }>(
      "select id from app_public.counters where employee_id = $1 and code = 'CP' and year = 2026", [env.ids.employees!.alice])).rows[0]!.id;
    const journal = () => count('select 1 from app_private.counter_movements where counter_id = $1', [id]);
    const before = await journal();
    const detail = await rh1.get(`/backoffice/counters/${id}/`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain('Journal des mouvements (lecture seule)');
    expect(detail.text).toContain(`action="/backoffice/counters/${id}/ajuster/"`);
    const refused = await rh1.submit(`/backoffice/counters/${id}/ajuster/`, { bucket: 'acquired', quantity: '1,5', reason: '' }, `/backoffice/counters/${id}/`);
    expect(refused.status).toBe(400);
    expect(errorUnder(refused.text, 'a-ajuster-reason')).toBe('Ce champ est obligatoire.');
    expect(await journal()).toBe(before);
    const done = await rh1.submit(`/backoffice/counters/${id}/ajuster/`, { bucket: 'acquired', quantity: '1,5', reason: 'Report de 2025' }, `/backoffice/counters/${id}/`);
    expect(done.status).toBe(303);
    expect(await journal()).toBe(before + 1);
    const after = await rh1.get(done.location!);
    expect(after.text).toContain('L’ajustement a été écrit dans le journal.');
    expect(after.text).toContain('<td>Report de 2025</td>');
    expect(after.text).toContain('26,50 j');
  });
});

describe('a non-staff RH account', () => {
  it('reads the reference lists but is offered no create or edit form', async () => {
    for (const slug of ['absence-types', 'posts', 'counter-associations']) {
      const list = await rh1.get(`/backoffice/${slug}/`);
      expect(list.status).toBe(200);
      expect(list.text).not.toContain(`/backoffice/${slug}/nouveau/`);
    }
    const cp = (await env.db.query<{ id: number }>("select id from app_public.absence_types where code = 'CP'")).rows[0]!.id;
    const detail = await rh1.get(`/backoffice/absence-types/${cp}/`);
    expect(detail.status).toBe(200);
    expect(detail.text).not.toContain('/modifier/');
  });

  it('is refused by SQL (403) when it posts anyway, and nothing is written', async () => {
    const before = await count('select 1 from app_public.absence_types');
    const page = await rh1.submit('/backoffice/absence-types/nouveau/', typeForm({ code: 'PAR_RH' }), '/backoffice/absence-types/');
    expect(page.status).toBe(403);
    expect(page.text).toContain('comptes du personnel d’administration');
    expect(await count('select 1 from app_public.absence_types')).toBe(before);
    const cp = (await env.db.query<{ id: number }>("select id from app_public.absence_types where code = 'CP'")).rows[0]!.id;
    const edit = await rh1.submit(`/backoffice/absence-types/${cp}/modifier/`, typeForm({ code: 'CP', name: 'Renommé par RH' }), '/backoffice/absence-types/');
    expect(edit.status).toBe(403);
    expect((await env.db.query('select name from app_public.absence_types where id = $1', [cp])).rows[0]!.name).toBe('Congés payés');
  });
});
