/**
 * Issue 27 points 1 and 2 over HTTP: the counter rules in the back-office (defaults shown,
 * staff creates and edits with every refusal under its field and nothing written, HR reads
 * without a form and is refused by SQL when it posts anyway) and the opening of next year's
 * counters on demand (preview that writes nothing, confirmation that writes, a second
 * confirmation that writes nothing), while an employee files a request during an opening
 * that has not committed yet (no lock stops the filing).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrolAs, type BackofficeVisitor } from '../helpers/backoffice.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { typeIds } from './absence-helpers.js';

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

function errorUnder(text: string, id: string): string | undefined {
  return new RegExp(`<p class="field-error" id="${id}-erreur">([^<]*)</p>`).exec(text)?.[1];
}

async function count(sql: string, values: unknown[] = []): Promise<number> {
  return Number((await env.db.query<{ n: string }>(`select count(*) as n from (${sql}) x`, values)).rows[0]!.n);
}

const e1 = () => String(env.ids.establishments!.E1);

function ruleForm(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    establishment: e1(), counter_code: 'CT', annual_amount: '12', annual_amount_ouvrables: '', acquisition: 'opening',
    rounding: 'half_up', prorate: '1', carry_over: 'ceiling', carry_over_ceiling: '3', carry_over_until: '31/03', ...overrides,
  };
}

describe('counter rules', () => {
  it('shows the defaults: CP 25 jours ouvrés / 30 ouvrables month by month, carried over until 31/05', async () => {
    const list = await admin.get('/backoffice/counter-rules/');
    expect(list.status).toBe(200);
    expect(list.text).toContain('25,00 j ouvrés / 30,00 j ouvrables');
    expect(list.text).toContain('Mois par mois (2,08 j ouvrés / 2,50 j ouvrables par mois, sur l’année précédente)');
    expect(list.text).toContain('Tout le solde, jusqu’au 31/05 de l’année suivante');
    expect(list.text).toContain('href="/backoffice/counter-rules/nouveau/"');
    const home = await admin.get('/backoffice/');
    expect(home.text).toContain('href="/backoffice/counter-openings/"');
  });

  it('refuses a bad rule under its fields and writes nothing, then creates and edits it, audited', async () => {
    const before = await count('select 1 from app_public.counter_rules');
    const refused = await admin.submit('/backoffice/counter-rules/nouveau/', ruleForm({ annual_amount: '-2', carry_over_ceiling: '', carry_over_until: '31/02' }));
    expect(refused.status).toBe(400);
    expect(errorUnder(refused.text, 'c-annual_amount')).toBe('Une quantité entre 0 et 999,99, deux décimales au plus ; vide : aucun compteur ouvert.');
    expect(errorUnder(refused.text, 'c-carry_over_ceiling')).toBe('Le plafond du report est obligatoire pour un report plafonné.');
    expect(errorUnder(refused.text, 'c-carry_over_until')).toMatch(/^Une date de l’année suivante au format JJ\/MM/);
    expect(await count('select 1 from app_public.counter_rules')).toBe(before);

    const created = await admin.submit('/backoffice/counter-rules/nouveau/', ruleForm());
    expect(created.status).toBe(303);
    const id = Number(/counter-rules\/(\d+)\//.exec(created.location!)![1]);
    const row = (await env.db.query('select establishment_id, counter_code, annual_amount, rounding, carry_over_ceiling, carry_over_until from app_public.counter_rules where id = $1', [id])).rows[0];
    expect(row).toEqual({ establishment_id: env.ids.establishments!.E1, counter_code: 'CT', annual_amount: '12.00', rounding: 'half_up', carry_over_ceiling: '3.00', carry_over_until: '31/03' });
    const detail = await admin.get(created.location!);
    expect(detail.text).toContain('Jusqu’à 3,00 j, jusqu’au 31/03 de l’année suivante');

    const edited = await admin.submit(`/backoffice/counter-rules/${id}/modifier/`, ruleForm({ annual_amount: '13,5' }));
    expect(edited.status).toBe(303);
    expect((await env.db.query('select annual_amount from app_public.counter_rules where id = $1', [id])).rows[0].annual_amount).toBe('13.50');
    expect(await count("select 1 from app_private.audit_log where model = 'counter_rule' and target_id = $1", [id])).toBe(2);

    const deleted = await admin.submit(`/backoffice/counter-rules/${id}/supprimer/`, {}, `/backoffice/counter-rules/${id}/`);
    expect(deleted.status).toBe(303);
    expect(await count('select 1 from app_public.counter_rules where id = $1', [id])).toBe(0);
  });

  it('lets HR read the rules without any form, and SQL refuses the post of HR (403)', async () => {
    const list = await rh1.get('/backoffice/counter-rules/');
    expect(list.status).toBe(200);
    expect(list.text).toContain('25,00 j ouvrés / 30,00 j ouvrables');
    expect(list.text).not.toContain('/backoffice/counter-rules/nouveau/');
    const cp = (await env.db.query<{ id: number }>("select id from app_public.counter_rules where establishment_id is null and counter_code = 'CP'")).rows[0]!.id;
    const detail = await rh1.get(`/backoffice/counter-rules/${cp}/`);
    expect(detail.status).toBe(200);
    expect(detail.text).not.toContain(`/backoffice/counter-rules/${cp}/modifier/`);
    const before = await count('select 1 from app_public.counter_rules');
    const posted = await rh1.submit('/backoffice/counter-rules/nouveau/', ruleForm(), '/backoffice/counter-rules/');
    expect(posted.status).toBe(403);
    expect(await count('select 1 from app_public.counter_rules')).toBe(before);
    const opening = await rh1.get('/backoffice/counter-openings/');
    expect(opening.status).toBe(403);
  });
});

describe('opening next year on demand', () => {
  it('previews without writing, names the employees skipped and why, then opens once', async () => {
    const counters2027 = () => count('select 1 from app_public.counters where year = 2027');
    const before = await counters2027();
    const preview = await admin.submit('/backoffice/counter-openings/', { year: '2027', establishment: '', step: 'preview' });
    expect(preview.status).toBe(200);
    expect(preview.text).toContain('Aperçu : compteurs 2027 — toute l’association');
    // 13 employees with a contract of their own running into 2027 and a main workplace: CP and CT
    // each, alice's CP 2027 already open.
    expect(preview.text).toMatch(/<dt>Compteurs à ouvrir<\/dt><dd><strong>25<\/strong>\s*pour 13 salarié\(s\)/);
    expect(preview.text).toMatch(/Faure Emma<\/a><\/th><td>Aucun contrat en cours en 2027\.<\/td>/);
    expect(preview.text).toMatch(/Benali Farid<\/a><\/th><td>Sans établissement principal : aucune règle d’établissement ne s’applique\.<\/td>/);
    expect(await counters2027()).toBe(before);

    // Confirmed for E1 first: its 7 employees of their own contract, CP and CT, alice's CP already open.
    const done = await admin.submit('/backoffice/counter-openings/', { year: '2027', establishment: e1(), step: 'confirm' });
    expect(done.status).toBe(200);
    expect(done.text).toContain('Compteurs 2027 ouverts — Foyer Les Tilleuls');
    expect(await counters2027()).toBe(before + 13);
    // Bruno (E1, ouvrables, CDD from 5 January 2026): January prorated 2.5 × 27 / 31, then 2.5 a month to October.
    const bruno = (await env.db.query<{ acquired: string; n: string }>(
      `select sum(m.quantity)::text as acquired, count(*)::text as n from app_private.counter_movements m
       join app_public.counters c on c.id = m.counter_id
       where c.employee_id = $1 and c.code = 'CP' and c.year = 2027`, [env.ids.employees!.bruno])).rows[0]!;
    expect(bruno).toEqual({ acquired: '24.68', n: '10' });
    // Each acquisition is a journal movement with its reason, read in the counter's journal.
    const brunoCp = (await env.db.query<{ id: number }>("select id from app_public.counters where employee_id = $1 and code = 'CP' and year = 2027",
      [env.ids.employees!.bruno])).rows[0]!.id;
    const journal = await admin.get(`/backoffice/counters/${brunoCp}/`);
    expect(journal.text).toContain('<td>Acquisition</td>');
    expect(journal.text).toContain('Acquisition de janvier 2026 pour 2027 : 2,18 jours (prorata : 27 jours de contrat sur 31)');

    // The rest of the association is opened on another connection that has not committed yet,
    // while alice files a request for January 2027: the request does not wait for the opening.
    const T = await typeIds(env);
    const token = await env.login('alice');
    const holder = new pg.Client({ connectionString: env.config.databaseUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      const opened = (await holder.query<{ result: { opened: number } }>(
        "select app_private.counters_open_year(2027, null, '2026-11-16') as result")).rows[0]!.result;
      expect(opened.opened).toBe(12);
      const started = Date.now();
      const filed = await env.post('/api/absences/', token, { employee: env.ids.employees!.alice, type: T.CP, date_start: '2027-01-11', date_end: '2027-01-15' });
      expect(filed.status).toBe(201);
      expect(Date.now() - started).toBeLessThan(5000);
      await holder.query('commit');
    } finally {
      await holder.query('rollback').catch(() => {});
      await holder.end();
    }
    expect(await counters2027()).toBe(before + 25);

    const again = await admin.submit('/backoffice/counter-openings/', { year: '2027', establishment: '', step: 'confirm' });
    expect(again.status).toBe(200);
    expect(again.text).toMatch(/<dt>Compteurs ouverts<\/dt><dd><strong>0<\/strong>/);
    expect(again.text).toMatch(/<dt>Déjà ouverts \(laissés tels quels\)<\/dt><dd>26<\/dd>/);
    expect(await counters2027()).toBe(before + 25);
  });

  it('refuses a year other than this one or the next under the year field', async () => {
    const page = await admin.submit('/backoffice/counter-openings/', { year: '2030', establishment: '', step: 'preview' });
    expect(page.status).toBe(400);
    expect(errorUnder(page.text, 'ouverture-year')).toBe('Seuls les compteurs de 2026 ou de 2027 s’ouvrent.');
  });
});

describe('a closed account', () => {
  it('opens nothing and writes no rule once its account is closed', async () => {
    const staff = (await enrolAs(env, 'staff')).visitor;
    const page = await staff.get('/backoffice/counter-openings/');
    expect(page.status).toBe(200);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!;
    await env.db.query('update app_public.accounts set is_active = false where id = $1', [env.ids.accounts!.staff]);
    try {
      const before = await count('select 1 from app_public.counters');
      const posted = await staff.request('POST', '/backoffice/counter-openings/', { form: { year: '2027', establishment: '', step: 'confirm', csrf_token: csrf } });
      expect(posted.status).not.toBe(200);
      expect(posted.text).not.toContain('Compteurs 2027 ouverts');
      expect(await count('select 1 from app_public.counters')).toBe(before);
      const rules = await count('select 1 from app_public.counter_rules');
      const created = await staff.request('POST', '/backoffice/counter-rules/nouveau/', { form: { ...ruleForm(), csrf_token: csrf } });
      expect(created.location ?? '').not.toMatch(/counter-rules\/\d+/);
      expect(await count('select 1 from app_public.counter_rules')).toBe(rules);
    } finally {
      await env.db.query('update app_public.accounts set is_active = true where id = $1', [env.ids.accounts!.staff]);
    }
  });
});
