/**
 * The back-office in a real browser (Debian's Chromium through playwright-core): first login
 * with enrolment and backup codes, a login with a TOTP code, a login with a backup code then
 * the same code refused, the refusal of a non-HR account, the authenticators page. Each main
 * page passes axe-core without serious or critical violation, runs no script (CSP) and is
 * photographed at laptop and tablet widths (test-results/screenshots/).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { totp } from '../helpers/backoffice.js';
import { checkPage, launchChromium } from '../helpers/browser.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { DEFAULT_NOW, FIXTURE_PASSWORD } from '../helpers/settings.js';

let env: TestEnv;
let browser: Browser;
const T0 = Date.parse(DEFAULT_NOW) / 1000;
const at = (seconds: number) => new Date((T0 + seconds) * 1000).toISOString();
const cspViolations: string[] = [];

beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await env?.close();
});

async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, locale: 'fr-FR' });
  const page = await context.newPage();
  // A missing element fails its step with its locator, well before the test's own timeout.
  page.setDefaultTimeout(8_000);
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
  });
  return { context, page };
}

const check = checkPage;

async function passwordStep(page: Page, username: string, password = FIXTURE_PASSWORD): Promise<void> {
  await page.goto(`${env.url}/backoffice/`);
  await page.getByLabel('Identifiant').fill(username);
  await page.getByLabel('Mot de passe').fill(password);
  await page.getByRole('button', { name: 'Continuer' }).click();
  await page.waitForLoadState();
}

async function logout(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Se déconnecter' }).click();
  await page.waitForURL(/\/backoffice\/login\/$/);
}

// Each walk drives a browser, runs axe and takes screenshots at two widths: slower than an HTTP test.
describe('back-office in the browser', { timeout: 120_000 }, () => {
  let secret = '';
  let backupCodes: string[] = [];

  it('first login: password, QR code, confirmation, 10 backup codes shown once, then the home page', async () => {
    env.setNow(DEFAULT_NOW);
    const { context, page } = await newPage();
    await page.goto(`${env.url}/backoffice/`);
    expect(page.url()).toBe(`${env.url}/backoffice/login/`);
    await check(page, '01-login');

    await passwordStep(page, 'rh1');
    expect(page.url()).toBe(`${env.url}/backoffice/login/enrol/`);
    await expect(page.getByRole('img', { name: /QR code/ }).isVisible()).resolves.toBe(true);
    await check(page, '02-enrolment');
    secret = (await page.locator('#cle').textContent())!.replace(/\s/g, '');

    await page.getByLabel('Code à 6 chiffres').fill(await totp(secret, T0));
    await page.getByRole('button', { name: 'Valider' }).click();
    await page.getByRole('heading', { name: 'Vos codes de secours' }).waitFor();
    backupCodes = await page.locator('.codes code').allTextContents();
    expect(backupCodes).toHaveLength(10);
    await check(page, '03-backup-codes');

    await page.getByRole('link', { name: /accéder au back-office/ }).click();
    await page.getByRole('heading', { name: 'Accueil' }).waitFor();
    await check(page, '04-home');
    // Shown once: the enrolment page does not come back once the session is open.
    await page.goto(`${env.url}/backoffice/login/enrol/`);
    expect(page.url()).toBe(`${env.url}/backoffice/`);
    await context.close();
  });

  it('a later login with a TOTP code', async () => {
    env.setNow(at(60));
    const { context, page } = await newPage();
    await passwordStep(page, 'rh1');
    expect(page.url()).toBe(`${env.url}/backoffice/login/verify/`);
    await check(page, '05-second-factor');
    await page.getByLabel('Code à 6 chiffres ou code de secours').fill(await totp(secret, T0 + 60));
    await page.getByRole('button', { name: 'Valider' }).click();
    await page.getByRole('heading', { name: 'Accueil' }).waitFor();
    await logout(page);
    await context.close();
  });

  it('the audit log viewer: filters, before and after side by side', async () => {
    // An audited write by rh1: david's account closed.
    const token = await env.login('rh1');
    expect((await env.put(`/api/employees/${env.ids.employees!.david}/account-activation/`, token, { is_active: false })).status).toBe(200);
    env.setNow(at(90));
    const { context, page } = await newPage();
    await passwordStep(page, 'rh1');
    await page.getByLabel('Code à 6 chiffres ou code de secours').fill(await totp(secret, T0 + 90));
    await page.getByRole('button', { name: 'Valider' }).click();
    await page.getByRole('link', { name: 'Journal d’audit' }).first().click();
    await page.getByRole('heading', { name: 'Journal d’audit' }).waitFor();
    await page.getByLabel('Objet', { exact: true }).selectOption('account');
    await page.getByLabel('Auteur').fill('rh1');
    await page.getByLabel('Action').selectOption('Modification');
    await page.getByRole('button', { name: 'Filtrer' }).click();
    await page.getByText('1 ligne', { exact: true }).waitFor();
    await page.locator('details summary').first().click();
    const changed = await page.locator('table.diff tr.changed th').allTextContents();
    expect(changed.map((text) => text.replace(' modifié', ''))).toContain('is_active');
    await check(page, '09-audit-log');
    // A date the schema refuses comes back under its field.
    await page.goto(`${env.url}/backoffice/audit-log/?from=2026-11-20&to=2026-11-10`);
    expect(await page.locator('#f-to-erreur').textContent()).toContain('La fin de la période précède son début');
    await check(page, '10-audit-log-error');
    await context.close();
  });

  it('an RH correction, a validation refused without reason then accepted with one, notification and audit lines', async () => {
    const filed = await env.post('/api/shift-change-requests/', await env.login('alice'), {
      date: '2026-11-20', reason: 'urgence',
      slots: [{ start_time: '10:00', end_time: '18:00', break_start_time: '12:00', break_end_time: '12:30' }],
    });
    expect(filed.status).toBe(201);
    const id = filed.body.id as number;
    env.setNow(at(150));
    const { context, page } = await newPage();
    await passwordStep(page, 'rh1');
    await page.getByLabel('Code à 6 chiffres ou code de secours').fill(await totp(secret, T0 + 150));
    await page.getByRole('button', { name: 'Valider' }).click();
    await page.getByRole('link', { name: 'Demandes de modification' }).first().click();
    await page.getByLabel('Statut').selectOption('pending');
    await page.getByRole('button', { name: 'Filtrer' }).click();
    await check(page, '11-shift-change-list');
    await page.locator(`a[href="/backoffice/shift-change-requests/${id}/"]`).click();
    await page.getByRole('heading', { name: 'Corriger la demande (RH)' }).waitFor();
    await check(page, '12-shift-change-detail');

    await page.getByLabel('Début du créneau 1').first().fill('08:30');
    await page.getByLabel('Fin du créneau 1').first().fill('16:30');
    await page.getByRole('button', { name: 'Enregistrer la correction' }).click();
    await page.getByRole('status').filter({ hasText: 'La demande a été corrigée' }).waitFor();
    expect(await page.locator('dl.facts').textContent()).toContain('Claire Dubois');

    await page.getByRole('button', { name: 'Valider la demande' }).click();
    await page.locator('#a-validate-reason-erreur').waitFor();
    await check(page, '13-shift-change-reason-required');
    expect((await env.db.query('select status from app_public.shift_change_requests where id = $1', [id])).rows[0].status).toBe('pending');
    await page.getByLabel(/^Motif/).first().fill('Prise de poste avancée, validée avec le salarié');
    await page.getByRole('button', { name: 'Valider la demande' }).click();
    await page.getByRole('status').filter({ hasText: 'La demande a été validée' }).waitFor();
    const { rows: notes } = await env.db.query(`select body from app_public.notifications where account_id = $1 and title = 'Demande de modification validée'`,
      [env.ids.accounts!.alice]);
    expect(notes.map((n) => n.body).join()).toContain('Prise de poste avancée');
    const { rows: lines } = await env.db.query(`select verb, model from app_private.audit_log
      where (model = 'shift_change_request' and target_id = $1) or model = 'day_modification' order by id`, [id]);
    expect(lines.map((l) => `${l.model}:${l.verb}`)).toEqual(expect.arrayContaining(
      ['shift_change_request:Correction', 'shift_change_request:Validation', 'day_modification:Creation']));
    // The audit viewer shows the correction.
    await page.goto(`${env.url}/backoffice/audit-log/?model=shift_change_request&target_id=${id}&verb=Correction`);
    await page.getByText('1 ligne', { exact: true }).waitFor();
    await page.locator('details summary').first().click();
    expect(await page.locator('table.diff tr.changed th').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('slots')]));
    await check(page, '14-audit-correction');
    await context.close();
  });

  it('« Mes codes de secours »: renewed once, shown once; the security events in the audit log (issue 25)', async () => {
    env.setNow(at(200));
    const { context, page } = await newPage();
    await passwordStep(page, 'rh1');
    await page.getByLabel('Code à 6 chiffres ou code de secours').fill(await totp(secret, T0 + 200));
    await page.getByRole('button', { name: 'Valider' }).click();
    await page.getByRole('link', { name: 'Mes codes de secours' }).first().click();
    await page.getByRole('heading', { name: 'Mes codes de secours' }).waitFor();
    await check(page, '15-backup-codes-page');
    await page.getByRole('button', { name: 'Générer de nouveaux codes de secours' }).click();
    await page.getByRole('heading', { name: 'Vos nouveaux codes de secours' }).waitFor();
    const renewed = await page.locator('.codes code').allTextContents();
    expect(renewed).toHaveLength(10);
    expect(renewed.filter((code) => backupCodes.includes(code))).toEqual([]);
    await check(page, '16-backup-codes-renewed');
    backupCodes = renewed;
    await page.goto(`${env.url}/backoffice/audit-log/?model=account_security&target_id=${env.ids.accounts!.rh1}`);
    await page.getByText('Codes de secours renouvelés').first().waitFor();
    await check(page, '17-audit-security-events');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: 'test-results/screenshots/17-audit-security-events-390.png', fullPage: true });
    await context.close();
  });

  it('a login with a backup code, then the same code refused', async () => {
    env.setNow(at(120));
    const { context, page } = await newPage();
    await passwordStep(page, 'rh1');
    await page.getByLabel('Code à 6 chiffres ou code de secours').fill(backupCodes[0]!);
    await page.getByRole('button', { name: 'Valider' }).click();
    await page.getByRole('heading', { name: 'Accueil' }).waitFor();
    await logout(page);

    await passwordStep(page, 'rh1');
    await page.getByLabel('Code à 6 chiffres ou code de secours').fill(backupCodes[0]!);
    await page.getByRole('button', { name: 'Valider' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('Code invalide, expiré ou déjà utilisé');
    await expect(page.getByLabel('Code à 6 chiffres ou code de secours').getAttribute('aria-invalid')).resolves.toBe('true');
    await check(page, '06-code-refused');
    await context.close();
  });

  it('an account without back-office access is refused with a clear page', async () => {
    const { context, page } = await newPage();
    await passwordStep(page, 'mgr1');
    await page.getByRole('heading', { name: 'Accès refusé' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('n’a pas accès au back-office');
    await check(page, '07-refused');
    await context.close();
  });

  it('a superuser lists the authenticators and deletes the factors of an account', async () => {
    env.setNow(at(180));
    const { context, page } = await newPage();
    await passwordStep(page, 'root');
    const rootSecret = (await page.locator('#cle').textContent())!.replace(/\s/g, '');
    await page.getByLabel('Code à 6 chiffres').fill(await totp(rootSecret, T0 + 180));
    await page.getByRole('button', { name: 'Valider' }).click();
    await page.getByRole('link', { name: /accéder au back-office/ }).click();
    await page.getByRole('link', { name: 'Authentificateurs' }).first().click();
    await page.getByRole('table').waitFor();
    await check(page, '08-authenticators');
    await page.getByRole('button', { name: 'Supprimer les facteurs de rh1' }).click();
    await page.getByRole('status').waitFor();
    expect(await page.getByRole('status').textContent()).toContain('Les facteurs de rh1 ont été supprimés');
    await context.close();

    // rh1 enrols again at its next login.
    const again = await newPage();
    await passwordStep(again.page, 'rh1');
    expect(again.page.url()).toBe(`${env.url}/backoffice/login/enrol/`);
    await again.context.close();
  });

  it('no page broke its Content-Security-Policy', () => {
    expect(cspViolations).toEqual([]);
  });
});
