/**
 * Reference administration in a real browser (Debian's Chromium through playwright-core): a
 * staff account enrols, opens the absence types, creates one whose code is a post code (other
 * case) and sees the refusal under the code field, corrects it and saves; then a counter with
 * its journal and the adjustment form. Each page passes axe-core without serious or critical
 * violation, runs no script (CSP) and is photographed at laptop and tablet widths.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { totp } from '../helpers/backoffice.js';
import { checkPage, launchChromium } from '../helpers/browser.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { DEFAULT_NOW, FIXTURE_PASSWORD } from '../helpers/settings.js';

let env: TestEnv;
let browser: Browser;
const T0 = Date.parse(DEFAULT_NOW) / 1000;
const cspViolations: string[] = [];

beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await env?.close();
});

const check = checkPage;

/** Signs `username` in afresh: password, enrolment with a TOTP code, the backup codes page, home. */
async function signIn(page: Page, username: string): Promise<void> {
  await env.db.query('delete from app_private.backoffice_factors where account_id = $1', [env.ids.accounts![username]]);
  env.setNow(DEFAULT_NOW);
  await page.goto(`${env.url}/backoffice/`);
  await page.getByLabel('Identifiant').fill(username);
  await page.getByLabel('Mot de passe').fill(FIXTURE_PASSWORD);
  await page.getByRole('button', { name: 'Continuer' }).click();
  const secret = (await page.locator('#cle').textContent())!.replace(/\s/g, '');
  await page.getByLabel('Code à 6 chiffres').fill(await totp(secret, T0));
  await page.getByRole('button', { name: 'Valider' }).click();
  await page.getByRole('link', { name: /accéder au back-office/ }).click();
  await page.getByRole('heading', { name: 'Accueil' }).waitFor();
}

describe('reference administration in the browser', { timeout: 180_000 }, () => {
  it('an absence type refused for a post-code clash, the error under the code field, then saved', async () => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, locale: 'fr-FR' });
    const page = await context.newPage();
    page.setDefaultTimeout(8_000);
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
    await signIn(page, 'admin');

    await page.getByRole('navigation', { name: 'Navigation principale' }).getByRole('link', { name: 'Motifs d’absence' }).click();
    await page.getByRole('heading', { name: 'Motifs d’absence' }).waitFor();
    await expect(page.getByRole('link', { name: 'CP', exact: true }).isVisible()).resolves.toBe(true);
    await check(page, 'ref-01-absence-types');

    await page.getByRole('link', { name: 'Nouveau motif' }).click();
    await page.getByRole('heading', { name: 'Nouveau motif' }).waitFor();
    await check(page, 'ref-02-absence-type-form');

    // « m »: the code of post M (E1), in another case.
    await page.getByLabel('Code (obligatoire)', { exact: true }).fill('m');
    await page.getByLabel('Libellé (obligatoire)').fill('Motif du navigateur');
    await page.getByLabel('Catégorie (obligatoire)', { exact: true }).selectOption({ label: 'Congés' });
    await page.getByLabel('CDI — ', { exact: false }).check();
    await page.getByRole('button', { name: 'Créer le motif' }).click();
    const error = page.locator('#c-code-erreur');
    await error.waitFor();
    expect(await error.textContent()).toBe('Le code « m » est déjà utilisé par un poste.');
    expect(await page.getByLabel('Code (obligatoire)', { exact: true }).getAttribute('aria-describedby')).toContain('c-code-erreur');
    expect(await page.getByLabel('Code (obligatoire)', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    // What was typed and checked stays.
    expect(await page.getByLabel('Libellé (obligatoire)').inputValue()).toBe('Motif du navigateur');
    expect(await page.getByLabel('CDI — ', { exact: false }).isChecked()).toBe(true);
    expect((await env.db.query("select 1 from app_public.absence_types where lower(code) = 'm'")).rowCount).toBe(0);
    await check(page, 'ref-03-absence-type-code-clash');

    await page.getByLabel('Code (obligatoire)', { exact: true }).fill('NAV');
    await page.getByRole('button', { name: 'Créer le motif' }).click();
    await page.getByText('Le motif a été créé.').waitFor();
    await expect(page.getByRole('heading', { name: 'Motif NAV — Motif du navigateur' }).isVisible()).resolves.toBe(true);
    await check(page, 'ref-04-absence-type-detail');
    await context.close();
  });

  it('a counter with its read-only journal and the adjustment form', async () => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, locale: 'fr-FR' });
    const page = await context.newPage();
    page.setDefaultTimeout(8_000);
    await signIn(page, 'rh1');
    const id = (await env.db.query<{ id: number }>(
      "select id from app_public.counters where employee_id = $1 and code = 'CP' and year = 2026", [env.ids.employees!.alice])).rows[0]!.id;
    await page.goto(`${env.url}/backoffice/counters/?code=CP&year=2026`);
    await check(page, 'ref-05-counters');
    await page.goto(`${env.url}/backoffice/counters/${id}/`);
    await page.getByLabel('Quantité (obligatoire)').fill('2');
    await page.getByLabel('Motif de l’ajustement (obligatoire)').fill('Report de 2025');
    await page.getByRole('button', { name: 'Enregistrer l’ajustement' }).click();
    await page.getByText('L’ajustement a été écrit dans le journal.').waitFor();
    await expect(page.getByRole('cell', { name: 'Report de 2025' }).isVisible()).resolves.toBe(true);
    await check(page, 'ref-06-counter-journal');
    await context.close();
    expect(cspViolations).toEqual([]);
  });
});
