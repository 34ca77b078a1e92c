/**
 * Absences in the back-office: the list's filters (those of the API list, plus establishment
 * and type), the detail (decision read-only, documents, counters, audit trail), each action
 * through the API's SQL functions (validate, refuse, grant or refuse a cancellation, cancel a
 * granted absence) with the API's notifications, refusals under their field with nothing
 * written, and document downloads exactly as the API allows them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackofficeVisitor, enrolAs } from '../helpers/backoffice.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { PDF, auditVerbs, balance, form, notifications, typeIds } from './absence-helpers.js';

let env: TestEnv;
let rh1: BackofficeVisitor;
let alice: string;
let T: Record<string, number>;

beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
  rh1 = (await enrolAs(env, 'rh1')).visitor;
  alice = await env.login('alice');
  T = await typeIds(env);
});
afterAll(async () => {
  await env?.close();
});

/** alice files a request for herself (pending), optionally with a PDF. */
async function request(type: string, start: string, end = start, withFile = false): Promise<{ id: number; documents: Array<{ id: number; file?: string }> }> {
  const fields = { employee: env.ids.employees!.alice!, type: T[type]!, date_start: start, date_end: end };
  const res = withFile
    ? await env.request('POST', '/api/absences/', { token: alice, form: form(fields, [['add_documents', PDF, 'justificatif.pdf']]) })
    : await env.post('/api/absences/', alice, fields);
  expect(res.status).toBe(201);
  return res.body;
}

/** A manager's declaration for alice (born validated). */
async function declared(type: string, start: string, end = start, withFile = false) {
  const fields = { employee: env.ids.employees!.alice!, type: T[type]!, date_start: start, date_end: end };
  const token = await env.login('mgr1');
  const res = withFile
    ? await env.request('POST', '/api/absences/', { token, form: form(fields, [['add_documents', PDF, 'justificatif.pdf']]) })
    : await env.post('/api/absences/', token, fields);
  expect(res.status).toBe(201);
  expect(res.body.status).toBe('validated');
  return res.body as { id: number; documents: Array<{ id: number; file?: string }> };
}

async function row(id: number) {
  return (await env.db.query('select status, version, decided_by, decision_reason from app_public.absences where id = $1', [id])).rows[0];
}

async function formOf(visitor: BackofficeVisitor, id: number, action: string) {
  const page = await visitor.get(`/backoffice/absences/${id}/`);
  const found = new RegExp(`<form method="post" action="/backoffice/absences/${id}/${action}/"[\\s\\S]*?</form>`).exec(page.text)?.[0];
  if (!found) throw new Error(`no ${action} form on absence ${id} (${page.status})`);
  return {
    csrf: /name="csrf_token" value="([^"]+)"/.exec(found)![1]!,
    version: /name="version" value="(\d+)"/.exec(found)?.[1] ?? '',
    form: found,
    values: valuesOf(found),
  };
}

/** The edit form of absence `id` (its own page), as formOf. */
async function editFormOf(visitor: BackofficeVisitor, id: number) {
  const page = await visitor.get(`/backoffice/absences/${id}/modifier/`);
  const found = new RegExp(`<form method="post" action="/backoffice/absences/${id}/modifier/"[\\s\\S]*?</form>`).exec(page.text)?.[0];
  if (!found) throw new Error(`no edit form on absence ${id} (${page.status})`);
  return { page, form: found, values: valuesOf(found) };
}

/** The options of the select `name` in a form, as [value, label]. */
function optionsOf(formHtml: string, name: string): Array<[string, string]> {
  const select = new RegExp(`<select id="[^"]+" name="${name}"[^>]*>([\\s\\S]*?)</select>`).exec(formHtml)?.[1] ?? '';
  return [...select.matchAll(/<option value="([^"]*)"[^>]*>([^<]*)<\/option>/g)].map((m) => [m[1]!, m[2]!]);
}

/** What a browser would post from a form as it is shown: inputs, selected options, textareas. */
function valuesOf(formHtml: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const m of formHtml.matchAll(/<input type="(?:hidden|date|time|text)"[^>]*?name="([^"]+)"[^>]*?value="([^"]*)"/g)) values[m[1]!] = m[2]!;
  for (const m of formHtml.matchAll(/<select id="[^"]+" name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g)) {
    values[m[1]!] = /<option value="([^"]*)" selected>/.exec(m[2]!)?.[1] ?? '';
  }
  for (const m of formHtml.matchAll(/<textarea id="[^"]+" name="([^"]+)"[^>]*>([^<]*)<\/textarea>/g)) values[m[1]!] = m[2]!;
  return values;
}

function post(visitor: BackofficeVisitor, id: number, action: string, fields: Record<string, string>) {
  return visitor.request('POST', `/backoffice/absences/${id}/${action}/`, { form: fields });
}

describe('absences in the back-office: list and detail', () => {
  it('lists with the filters of the API list, plus establishment and type', async () => {
    const cp = await request('CP', '2026-12-07', '2026-12-08');
    const mgr2 = await env.login('mgr2');
    const chloe = await env.post('/api/absences/', mgr2, { employee: env.ids.employees!.chloe!, type: T.FOR!, date_start: '2026-12-07' });
    expect(chloe.status).toBe(201);
    const link = (id: number) => `href="/backoffice/absences/${id}/"`;

    const home = await rh1.get('/backoffice/');
    expect(home.text).toContain('href="/backoffice/absences/"');
    const all = await rh1.get('/backoffice/absences/?from=2026-12-07&to=2026-12-07');
    expect(all.status).toBe(200);
    expect(all.text).toContain(link(cp.id));
    expect(all.text).toContain(link(chloe.body.id));
    for (const select of ['status', 'establishment', 'type', 'employee']) {
      expect(all.text).toMatch(new RegExp(`<label for="f-${select}">[^<]+</label>\\s*<select id="f-${select}" name="${select}">`));
    }
    expect(all.text).toMatch(/<input id="f-from" name="from" type="date" value="2026-12-07"/);

    const cases: Array<[string, boolean, boolean]> = [
      [`establishment=${env.ids.establishments!.E1}`, true, false],
      [`establishment=${env.ids.establishments!.E2}`, false, true],
      [`type=${T.CP}`, true, false],
      [`type=${T.FOR}`, false, true],
      [`employee=${env.ids.employees!.chloe}`, false, true],
      ['status=pending', true, false],
      ['status=validated', false, true],
    ];
    for (const [query, hasCp, hasChloe] of cases) {
      const page = await rh1.get(`/backoffice/absences/?from=2026-12-07&to=2026-12-07&${query}`);
      expect([query, page.text.includes(link(cp.id)), page.text.includes(link(chloe.body.id))]).toEqual([query, hasCp, hasChloe]);
    }
    const outside = await rh1.get('/backoffice/absences/?from=2026-12-09&to=2026-12-31');
    expect(outside.text).not.toContain(link(cp.id));
  });

  it('a refused filter comes back under its field', async () => {
    const page = await rh1.get('/backoffice/absences/?from=2026-12-09&to=2026-12-01');
    expect(page.status).toBe(400);
    expect(page.text).toMatch(/id="f-to-erreur">[^<]*to ne peut pas précéder from/);
    const bad = await rh1.get('/backoffice/absences/?status=bogus');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('id="f-status-erreur"');
  });

  it('shows the absence, its decision read-only, documents, counters and audit trail', async () => {
    const abs = await declared('MAL', '2026-11-17', '2026-11-17', true);
    const page = await rh1.get(`/backoffice/absences/${abs.id}/`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('MAL — ');
    // « Voir dans l'application »: the address of the notifications and e-mails (issue 28 point 3).
    expect(page.text).toContain(`<a href="/file/absences/${abs.id}">Voir dans l’application</a>`);
    expect(page.text).toMatch(/<dt>Statut<\/dt><dd><strong>Validée<\/strong> \(version 1\)<\/dd>/);
    // A declaration has no decision: decided_by stays empty, and is never an input.
    expect(page.text).toMatch(/<dt>Décidée par<\/dt><dd>—<\/dd>/);
    expect(page.text).not.toMatch(/name="decided_(by|at)"/);
    expect(page.text).toContain(`href="http://wfm.test/api/absence-documents/${abs.documents[0]!.id}/file/"`);
    expect(page.text).toMatch(/<tr data-counter="CP">/);
    expect(page.text).toMatch(/Historique \(journal d’audit\)[\s\S]*Création/);
    expect(page.text).not.toMatch(/· Creation ·/);
    expect(page.text).toContain(`action="/backoffice/absences/${abs.id}/cancel/"`);
    expect((await rh1.get('/backoffice/absences/999999/')).status).toBe(404);
  });
});

describe('absences in the back-office: decisions', () => {
  it('validates a pending request, notifying as the API does', async () => {
    const abs = await request('CP', '2026-12-14');
    const validate = await formOf(rh1, abs.id, 'validate');
    expect(validate.version).toBe('1');
    const ok = await post(rh1, abs.id, 'validate', { ...validate.values, reason: '' });
    expect(ok.status).toBe(303);
    expect(ok.location).toBe(`/backoffice/absences/${abs.id}/?fait=validate`);
    const shown = await rh1.get(ok.location!);
    expect(shown.text).toContain('La demande a été validée');
    expect(shown.text).toMatch(/<dt>Décidée par<\/dt><dd>Claire Dubois, le /);
    expect(await row(abs.id)).toMatchObject({ status: 'validated', version: 2, decided_by: env.ids.accounts!.rh1 });
    expect((await notifications(env, 'alice')).at(-1)).toMatch(/^Demande d'absence validée \| info \| Votre demande d’absence « Congés payés » le 14\/12\/2026 a été validée\.$/);
  });

  it('refuses: without reason 400 under reason and nothing written; with one, refused and notified', async () => {
    const abs = await request('CP', '2026-12-15');
    const before = await balance(env, 'alice', 'CP');
    const refuse = await formOf(rh1, abs.id, 'refuse');
    const missing = await post(rh1, abs.id, 'refuse', { csrf_token: refuse.csrf, version: refuse.version, reason: '  ' });
    expect(missing.status).toBe(400);
    expect(missing.text).toMatch(/id="a-refuse-reason-erreur">Un refus doit être motivé/);
    expect(await row(abs.id)).toMatchObject({ status: 'pending', version: 1 });
    const ok = await post(rh1, abs.id, 'refuse', { csrf_token: refuse.csrf, version: refuse.version, reason: 'Effectif insuffisant' });
    expect(ok.status).toBe(303);
    expect(await row(abs.id)).toMatchObject({ status: 'refused', version: 2, decision_reason: 'Effectif insuffisant' });
    expect(await balance(env, 'alice', 'CP')).not.toBe(before);
    expect((await notifications(env, 'alice')).at(-1)).toMatch(/^Demande d'absence refusée \| error \| .*Motif : Effectif insuffisant$/);
    const shown = await rh1.get(`/backoffice/absences/${abs.id}/`);
    expect(shown.text).not.toContain(`action="/backoffice/absences/${abs.id}/validate/"`);
  });

  it('a stale version answers the conflict on the form, nothing written', async () => {
    const abs = await request('CP', '2026-12-16');
    const validate = await formOf(rh1, abs.id, 'validate');
    const stale = await post(rh1, abs.id, 'validate', { ...validate.values, version: '5' });
    expect(stale.status).toBe(409);
    expect(stale.text).toMatch(/role="alert">Quelqu’un d’autre a déjà traité cette absence/);
    expect(await row(abs.id)).toMatchObject({ status: 'pending', version: 1 });
  });

  it('grants a cancellation request: cancelled, counters recredited, documents deleted, kept on file', async () => {
    const abs = await declared('CP', '2026-12-21', '2026-12-22', true);
    const asked = await env.post(`/api/absences/${abs.id}/request-cancellation/`, alice, { comment: 'Voyage annulé' });
    expect(asked.status).toBe(200);
    const before = await balance(env, 'alice', 'CP');
    const grant = await formOf(rh1, abs.id, 'grant-cancellation');
    const detail = await rh1.get(`/backoffice/absences/${abs.id}/`);
    expect(detail.text).toContain('Accorder l’annulation recréditerait');
    expect(detail.text).toContain('Voyage annulé');
    const ok = await post(rh1, abs.id, 'grant-cancellation', { csrf_token: grant.csrf, version: grant.version });
    expect(ok.status).toBe(303);
    expect(await row(abs.id)).toMatchObject({ status: 'cancelled' });
    const [acquired, taken, planned] = before.split('/').map(Number);
    expect(await balance(env, 'alice', 'CP')).toBe(`${acquired!.toFixed(2)}/${taken!.toFixed(2)}/${(planned! - 2).toFixed(2)}`);
    expect((await env.db.query('select count(*)::int as n from app_public.absence_documents where absence_id = $1', [abs.id])).rows[0].n).toBe(0);
    expect((await notifications(env, 'alice')).at(-1)).toMatch(/^Annulation d'absence acceptée \| info \| /);
    expect(await auditVerbs(env, abs.id)).toEqual(['Creation', "Demande d'annulation", 'Annulation']);
  });

  it('refuses a cancellation request only with a reason; the absence is kept', async () => {
    const abs = await declared('FOR', '2026-12-23');
    expect((await env.post(`/api/absences/${abs.id}/request-cancellation/`, alice, {})).status).toBe(200);
    const refuse = await formOf(rh1, abs.id, 'refuse-cancellation');
    const missing = await post(rh1, abs.id, 'refuse-cancellation', { csrf_token: refuse.csrf, version: refuse.version, reason: '' });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('id="a-refuse-cancellation-reason-erreur"');
    expect(await row(abs.id)).toMatchObject({ status: 'cancellation_requested', version: 2 });
    const ok = await post(rh1, abs.id, 'refuse-cancellation', { csrf_token: refuse.csrf, version: refuse.version, reason: 'Formation maintenue' });
    expect(ok.status).toBe(303);
    expect(await row(abs.id)).toMatchObject({ status: 'validated', version: 3 });
    expect((await notifications(env, 'alice')).at(-1)).toMatch(/^Annulation d'absence refusée \| error \| .*Motif : Formation maintenue$/);
  });

  it('cancels a granted absence: recredited, documents deleted, kept on file, « Absence annulée » naming who cancelled', async () => {
    const abs = await declared('CP', '2026-12-28', '2026-12-29', true);
    const before = await balance(env, 'alice', 'CP');
    const cancel = await formOf(rh1, abs.id, 'cancel');
    const ok = await post(rh1, abs.id, 'cancel', { csrf_token: cancel.csrf });
    expect(ok.status).toBe(303);
    const shown = await rh1.get(ok.location!);
    expect(shown.text).toContain('L’absence est annulée ; le salarié est notifié.');
    expect(shown.text).toMatch(/<dt>Annulée par<\/dt><dd>Claire Dubois, le /);
    expect(shown.text).toContain('Aucun justificatif (ceux d’une absence annulée sont supprimés)');
    expect(await row(abs.id)).toMatchObject({ status: 'cancelled', version: 2 });
    const [acquired, taken, planned] = before.split('/').map(Number);
    expect(await balance(env, 'alice', 'CP')).toBe(`${acquired!.toFixed(2)}/${taken!.toFixed(2)}/${(planned! - 2).toFixed(2)}`);
    expect((await env.db.query('select count(*)::int as n from app_public.absence_documents where absence_id = $1', [abs.id])).rows[0].n).toBe(0);
    expect((await env.db.query('select count(*)::int as n from app_private.storage_garbage')).rows[0].n).toBe(0);
    expect((await notifications(env, 'alice')).at(-1)).toBe(
      "Absence annulée | warning | Votre absence « Congés payés » du 28/12/2026 au 29/12/2026 a été annulée par Claire Dubois.");
    // A second post (the form is no longer offered): 400 under status, shown on the page.
    const again = await post(rh1, abs.id, 'cancel', { csrf_token: cancel.csrf });
    expect(again.status).toBe(400);
    expect(again.text).toContain('Cette absence est déjà annulée.');
  });

  it('offers no decision on one’s own absence, and the function refuses a forged post', async () => {
    const own = await env.post('/api/absences/', await env.login('rh1'), { employee: env.ids.employees!.rh1!, type: T.FOR!, date_start: '2026-12-02' });
    expect(own.status).toBe(201);
    const detail = await rh1.get(`/backoffice/absences/${own.body.id}/`);
    expect(detail.status).toBe(200);
    expect(detail.text).not.toContain(`<form method="post" action="/backoffice/absences/${own.body.id}/`);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(detail.text)![1]!;
    const forged = await post(rh1, own.body.id, 'validate', { csrf_token: csrf, version: '1', date_end: '2026-12-02', type: String(T.FOR) });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('Vous ne pouvez pas décider de votre propre demande d’absence.');
    expect(await row(own.body.id)).toMatchObject({ status: 'pending', version: 1 });
  });
});

describe('absences in the back-office: documents', () => {
  it('downloads only for those the SPEC allows, with the API’s answers', async () => {
    const abs = await declared('MAL', '2026-11-18', '2026-11-18', true);
    const path = `/api/absence-documents/${abs.documents[0]!.id}/file/`;
    // RH n1 (whole association, document right): the file.
    const ok = await fetch(`${env.url}${path}`, { headers: { cookie: rh1.cookieHeader() } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('application/pdf');
    expect(ok.headers.get('cache-control')).toBe('private, no-store');
    expect(Buffer.from(await ok.arrayBuffer()).equals(PDF)).toBe(true);
    // No session: 401.
    expect((await fetch(`${env.url}${path}`)).status).toBe(401);
    // RH n2 (E2 only): alice is outside its perimeter, 404.
    const rh2 = (await enrolAs(env, 'rh2')).visitor;
    expect((await rh2.get(`/backoffice/absences/${abs.id}/`)).status).toBe(404);
    expect((await fetch(`${env.url}${path}`, { headers: { cookie: rh2.cookieHeader() } })).status).toBe(404);
    // A staff manager (Manager n1, E1) reads the absence, not the content: no link, 403.
    await env.db.query('update app_public.accounts set is_staff = true where username = $1', ['mgr1']);
    const mgr1 = (await enrolAs(env, 'mgr1')).visitor;
    const page = await mgr1.get(`/backoffice/absences/${abs.id}/`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('justificatif.pdf');
    expect(page.text).toContain('(contenu réservé aux RH et au salarié)');
    expect(page.text).not.toContain(path);
    expect((await fetch(`${env.url}${path}`, { headers: { cookie: mgr1.cookieHeader() } })).status).toBe(403);
  });
});

describe('absences in the back-office: the form', () => {
  async function notes(title: string) {
    return (await notifications(env, 'alice')).filter((n) => n.startsWith(`${title} |`));
  }

  it('shows decided_by read-only and a status field without the cancellation states; sets a validated absence back to pending', async () => {
    const abs = await request('CP', '2026-12-09', '2026-12-10');
    const validate = await formOf(rh1, abs.id, 'validate');
    expect((await post(rh1, abs.id, 'validate', validate.values)).status).toBe(303);
    const before = await balance(env, 'alice', 'CP');

    const detail = await rh1.get(`/backoffice/absences/${abs.id}/`);
    expect(detail.text).toContain(`href="/backoffice/absences/${abs.id}/modifier/"`);
    const edit = await editFormOf(rh1, abs.id);
    expect(edit.page.status).toBe(200);
    expect(optionsOf(edit.form, 'status')).toEqual([['', '— choisir —'], ['validated', 'Validée (actuel)'], ['pending', 'En attente']]);
    expect(edit.form).not.toMatch(/name="decided_(by|at)"/);
    expect(edit.page.text).toContain('« Décidée par » et sa date sont écrits par la décision : ils ne se modifient pas ici.');
    expect(edit.values).toMatchObject({ status: 'validated', type: String(T.CP), date_start: '2026-12-09', date_end: '2026-12-10' });

    const saved = await rh1.request('POST', `/backoffice/absences/${abs.id}/modifier/`, { form: { ...edit.values, status: 'pending' } });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/backoffice/absences/${abs.id}/?fait=modifier`);
    const record = await env.get(`/api/absences/${abs.id}/`, await env.login('rh1'));
    expect([record.body.status, record.body.decided_by, record.body.decided_at, record.body.version]).toEqual(['pending', null, null, 3]);
    expect(await balance(env, 'alice', 'CP')).toBe(before);
    expect((await notes('Absence remise en attente')).at(-1)).toContain('remise en attente par Claire Dubois');
    expect(await auditVerbs(env, abs.id)).toEqual(['Creation', 'Validation', 'Modification']);
    // Pending now: the decisions are offered again, the status field offers pending alone.
    expect((await rh1.get(`/backoffice/absences/${abs.id}/`)).text).toContain(`action="/backoffice/absences/${abs.id}/validate/"`);
    expect(optionsOf((await editFormOf(rh1, abs.id)).form, 'status')).toEqual([['', '— choisir —'], ['pending', 'En attente (actuel)']]);
  });

  it('a refused request: corrections refused under status (nothing written), set back to pending it reserves again', async () => {
    const abs = await request('CP', '2026-12-17');
    const refuse = await formOf(rh1, abs.id, 'refuse');
    expect((await post(rh1, abs.id, 'refuse', { ...refuse.values, reason: 'Effectif' })).status).toBe(303);
    const released = await balance(env, 'alice', 'CP');
    const edit = await editFormOf(rh1, abs.id);
    expect(optionsOf(edit.form, 'status').map(([v]) => v)).toEqual(['', 'refused', 'pending']);

    const corrected = await rh1.request('POST', `/backoffice/absences/${abs.id}/modifier/`, { form: { ...edit.values, comment: 'Revu' } });
    expect(corrected.status).toBe(400);
    expect(corrected.text).toMatch(/id="e-status-erreur">Une absence refusée ne se modifie plus\./);
    expect(await row(abs.id)).toMatchObject({ status: 'refused', version: 2 });

    const forged = await rh1.request('POST', `/backoffice/absences/${abs.id}/modifier/`, { form: { ...edit.values, status: 'validated' } });
    expect(forged.status).toBe(400);
    expect(forged.text).toMatch(/id="e-status-erreur">Le statut ne peut être remis qu’« En attente »/);
    expect(await row(abs.id)).toMatchObject({ status: 'refused', version: 2 });

    const reopened = await rh1.request('POST', `/backoffice/absences/${abs.id}/modifier/`, { form: { ...edit.values, status: 'pending', comment: 'Revu' } });
    expect(reopened.status).toBe(303);
    expect(await row(abs.id)).toMatchObject({ status: 'pending', version: 4, decided_by: null, decision_reason: null });
    const [acquired, taken, planned] = released.split('/').map(Number);
    expect(await balance(env, 'alice', 'CP')).toBe(`${acquired!.toFixed(2)}/${taken!.toFixed(2)}/${(planned! + 1).toFixed(2)}`);
  });

  it('never writes the cancellation states: no form in those states, a forged post refused under status, nothing written', async () => {
    const abs = await declared('FOR', '2026-12-11');
    const edit = await editFormOf(rh1, abs.id);
    const cancelled = await rh1.request('POST', `/backoffice/absences/${abs.id}/modifier/`, { form: { ...edit.values, status: 'cancelled' } });
    expect(cancelled.status).toBe(400);
    expect(cancelled.text).toContain('id="e-status-erreur"');
    expect(await row(abs.id)).toMatchObject({ status: 'validated', version: 1 });

    expect((await env.post(`/api/absences/${abs.id}/request-cancellation/`, alice, {})).status).toBe(200);
    const detail = await rh1.get(`/backoffice/absences/${abs.id}/`);
    expect(detail.text).not.toContain(`/backoffice/absences/${abs.id}/modifier/`);
    expect(detail.text).toContain('Une demande d’annulation est en cours : le statut et la période ne se modifient pas avant sa décision.');
    expect((await rh1.get(`/backoffice/absences/${abs.id}/modifier/`)).status).toBe(403);
    const forged = await rh1.request('POST', `/backoffice/absences/${abs.id}/modifier/`, { form: { ...edit.values, version: '2', status: 'pending' } });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('Le statut d’une absence « Annulation demandée » ne se modifie pas');
    expect(await row(abs.id)).toMatchObject({ status: 'cancellation_requested', version: 2 });
  });

  it('a correction reruns the rules (errors under their field, nothing written) and compensates the counters', async () => {
    const abs = await declared('CP', '2026-12-01', '2026-12-02');
    const before = await balance(env, 'alice', 'CP');
    const edit = await editFormOf(rh1, abs.id);
    const backwards = await rh1.request('POST', `/backoffice/absences/${abs.id}/modifier/`, { form: { ...edit.values, date_end: '2026-11-30' } });
    expect(backwards.status).toBe(400);
    expect(backwards.text).toContain('id="e-date_end-erreur"');
    expect(backwards.text).toMatch(/name="date_end" value="2026-11-30"/);
    expect(await row(abs.id)).toMatchObject({ status: 'validated', version: 1 });
    expect(await balance(env, 'alice', 'CP')).toBe(before);

    const longer = await rh1.request('POST', `/backoffice/absences/${abs.id}/modifier/`, { form: { ...edit.values, date_end: '2026-12-03' } });
    expect(longer.status).toBe(303);
    expect(await row(abs.id)).toMatchObject({ status: 'validated', version: 2 });
    const [acquired, taken, planned] = before.split('/').map(Number);
    expect(await balance(env, 'alice', 'CP')).toBe(`${acquired!.toFixed(2)}/${taken!.toFixed(2)}/${(planned! + 1).toFixed(2)}`);
    expect(await auditVerbs(env, abs.id)).toEqual(['Creation', 'Correction']);
  });

  it('a validation that corrects the end date needs a reason (400 under reason, nothing written)', async () => {
    const abs = await request('CP', '2026-12-30', '2026-12-31');
    const validate = await formOf(rh1, abs.id, 'validate');
    const missing = await post(rh1, abs.id, 'validate', { ...validate.values, date_end: '2026-12-30' });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('id="a-validate-reason-erreur"');
    expect(await row(abs.id)).toMatchObject({ status: 'pending', version: 1 });
    const ok = await post(rh1, abs.id, 'validate', { ...validate.values, date_end: '2026-12-30', reason: 'Un seul jour possible' });
    expect(ok.status).toBe(303);
    expect(await row(abs.id)).toMatchObject({ status: 'validated', decision_reason: 'Un seul jour possible' });
    expect((await notes("Demande d'absence validée")).at(-1)).toContain('validée avec modification');
  });
});
