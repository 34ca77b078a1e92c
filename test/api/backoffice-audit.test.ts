/**
 * Audit log viewer of the back-office (registry list view over GET /api/audit-log/): readers
 * of audit.view_actionlog only; filters drawn and validated from the route's JSON Schema;
 * a SQL refusal shown under its field; before and after side by side, changed keys marked.
 * The API route takes the same filters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrolAs, type BackofficeVisitor } from '../helpers/backoffice.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let rh1: BackofficeVisitor;
let accountId: number;

beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
  // Two audited writes by rh1: david's account closed, then opened again.
  const token = await env.login('rh1');
  const path = `/api/employees/${env.ids.employees!.david}/account-activation/`;
  expect((await env.put(path, token, { is_active: false })).status).toBe(200);
  expect((await env.put(path, token, { is_active: true })).status).toBe(200);
  accountId = env.ids.accounts!.david!;
  rh1 = (await enrolAs(env, 'rh1')).visitor;
});
afterAll(async () => {
  await env?.close();
});

describe('audit log viewer', () => {
  it('is offered to a reader of the audit log, with filters drawn from the route schema', async () => {
    const home = await rh1.get('/backoffice/');
    expect(home.text).toContain('href="/backoffice/audit-log/"');
    const page = await rh1.get('/backoffice/audit-log/');
    expect(page.status).toBe(200);
    // model: a select of the audited models (labels from SQL); verb: the schema's enum; from/to: dates.
    expect(page.text).toMatch(/<select id="f-model" name="model">[\s\S]*<option value="account">Compte/);
    expect(page.text).toMatch(/<select id="f-verb" name="verb">[\s\S]*<option value="Correction">Correction<\/option>/);
    expect(page.text).toMatch(/<input id="f-from" name="from" type="date"/);
    expect(page.text).toMatch(/<label for="f-actor">Auteur<\/label>/);
  });

  it('filters by model, target, actor and verb, and shows before and after with the changed key marked', async () => {
    const page = await rh1.get(`/backoffice/audit-log/?model=account&target_id=${accountId}&actor=RH1&verb=Modification`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('2 lignes');
    const diff = /<table class="diff">[\s\S]*?<\/table>/.exec(page.text)![0];
    expect(diff).toMatch(/<tr class="changed">\s*<th scope="row">is_active <span class="badge">modifié<\/span><\/th>\s*<td>false<\/td>\s*<td>true<\/td>/);
    expect(diff).toMatch(/1 champ modifié sur \d+/);
    // Another verb, another actor: nothing.
    expect((await rh1.get(`/backoffice/audit-log/?model=account&target_id=${accountId}&verb=Creation`)).text).toContain('Aucune ligne ne correspond');
    expect((await rh1.get(`/backoffice/audit-log/?model=account&target_id=${accountId}&actor=rh2`)).text).toContain('0 ligne');
  });

  it('links to the CSV and Excel exports with the filters on screen; the session downloads them', async () => {
    const page = await rh1.get(`/backoffice/audit-log/?model=account&target_id=${accountId}&verb=Modification`);
    const csvLink = /<a href="([^"]+)" download>Exporter \(CSV\)<\/a>/.exec(page.text)![1]!.replace(/&amp;/g, '&');
    expect(csvLink).toBe(`/api/audit-log/export/?model=account&target_id=${accountId}&verb=Modification&format=csv`);
    expect(page.text).toContain('Exporter (Excel)');
    const csv = await rh1.get(csvLink);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = csv.text.trim().split('\r\n');
    expect(lines).toHaveLength(3); // the header and the two lines
    expect(lines[1]).toContain(';rh1;');
  });

  it('shows a schema refusal and a SQL refusal under their field', async () => {
    const badDate = await rh1.get('/backoffice/audit-log/?from=2026-13-45&target_id=abc');
    expect(badDate.status).toBe(400);
    expect(badDate.text).toMatch(/id="f-from-erreur">Date invalide : format attendu AAAA-MM-JJ\./);
    expect(badDate.text).toMatch(/id="f-target_id-erreur">Un nombre entier est attendu\./);
    expect(badDate.text).toMatch(/<input id="f-from" name="from" type="date" value="2026-13-45" aria-describedby="f-from-erreur" aria-invalid="true">/);
    const reversed = await rh1.get('/backoffice/audit-log/?from=2026-11-12&to=2026-11-10');
    expect(reversed.status).toBe(400);
    expect(reversed.text).toMatch(/id="f-to-erreur">La fin de la période précède son début\./);
  });

  it('is refused to a back-office account without audit.view_actionlog', async () => {
    const rh2 = (await enrolAs(env, 'rh2')).visitor;
    expect((await rh2.get('/backoffice/')).text).not.toContain('/backoffice/audit-log/');
    const page = await rh2.get('/backoffice/audit-log/');
    expect(page.status).toBe(403);
    expect(page.text).toContain('réservée aux comptes ayant la permission audit.view_actionlog');
  });

  it('the API route takes the same filters', async () => {
    const token = await env.login('rh1');
    const res = await env.get(`/api/audit-log/?model=account&target_id=${accountId}&actor=rh1&verb=Modification&from=2026-11-16&to=2026-11-16`, token);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    expect((await env.get('/api/audit-log/?verb=Nope', token)).status).toBe(400);
    expect((await env.get(`/api/audit-log/?model=account&target_id=${accountId}&from=2026-11-17`, token)).body.count).toBe(0);
  });

  it('shows « par X, pour le compte de Y » for a write made while impersonating, and filters on X (issue 25 finding 5)', async () => {
    await env.db.query(
      `insert into app_private.audit_log (actor_account_id, actor_username, actor_display_name,
                                          impersonator_account_id, impersonator_username, impersonator_display_name,
                                          verb, model, target_id, before, after)
       values ($1, 'alice', 'Alice Martin', $2, 'root', 'Super Utilisateur', 'Creation', 'absence', 909, null, '{"status": "pending"}')`,
      [env.ids.accounts!.alice, env.ids.accounts!.root]);
    const page = await rh1.get('/backoffice/audit-log/?model=absence&target_id=909');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/par Super Utilisateur <span class="muted">\(root\)<\/span>,\s*pour le compte de Alice Martin <span class="muted">\(alice\)<\/span>/);
    expect(page.text).toMatch(/<label for="f-impersonator">Par \(emprunt d’identité\)<\/label>/);
    expect((await rh1.get('/backoffice/audit-log/?impersonator=root')).text).toContain('Alice Martin');
    expect((await rh1.get('/backoffice/audit-log/?model=absence&target_id=909&impersonator=rh2')).text).toContain('Aucune ligne ne correspond');
    // A write without impersonation names its author alone.
    const own = await rh1.get(`/backoffice/audit-log/?model=account&target_id=${accountId}`);
    expect(own.text).not.toMatch(/<\/span>,\s*pour le compte de/);
  });

  it('shows the security events of accounts: rh1’s own enrolment, with its address (issue 25 finding 3)', async () => {
    const page = await rh1.get(`/backoffice/audit-log/?model=account_security&target_id=${env.ids.accounts!.rh1}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Sécurité du compte : Second facteur enregistré');
    expect(page.text).toContain('depuis 127.0.0.1');
  });
});
