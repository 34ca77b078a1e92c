/**
 * Counter rules and the opening of next year in a real browser (issue 27 points 1 and 2): a staff
 * account reads the defaults, creates an establishment's rule after a refusal shown under its
 * field, previews the opening of next year (employees skipped and why) and confirms it. Each page
 * passes axe-core without serious or critical violation, runs no script (CSP) and is photographed.
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

describe('counter rules and the opening in the browser', { timeout: 180_000 }, () => {
  it('defaults read, a rule refused then created, next year previewed then opened', async () => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, locale: 'fr-FR' });
    const page = await context.newPage();
    page.setDefaultTimeout(8_000);
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
    await signIn(page, 'admin');

    const nav = page.getByRole('navigation', { name: 'Navigation principale' });
    await nav.getByRole('link', { name: 'Règles des compteurs' }).click();
    await page.getByRole('heading', { name: 'Règles des compteurs' }).waitFor();
    expect(await page.getByText('25,00 j ouvrés / 30,00 j ouvrables').count()).toBe(1);
    await checkPage(page, 'counter-rules-01-list');

    await page.getByRole('link', { name: 'Nouvelle règle de compteur' }).click();
    await page.getByLabel('Établissement').selectOption({ label: 'IME Les Peupliers' });
    await page.getByLabel(/^Compteur/).selectOption('CP');
    await page.getByLabel('Quantité annuelle', { exact: true }).fill('25');
    await page.getByLabel('Acquisition').selectOption('monthly');
    await page.getByLabel('Report du solde en fin d’année').selectOption('ceiling');
    await page.getByLabel(/^Date limite du report/).fill('31/03');
    await page.getByRole('button', { name: 'Créer la règle' }).click();
    const ceiling = page.getByLabel('Plafond du report');
    expect(await ceiling.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`#${(await ceiling.getAttribute('aria-describedby'))!.split(' ').pop()}`).textContent())
      .toBe('Le plafond du report est obligatoire pour un report plafonné.');
    await checkPage(page, 'counter-rules-02-refused');
    await ceiling.fill('5');
    await page.getByRole('button', { name: 'Créer la règle' }).click();
    await page.getByText('La règle a été créée.').waitFor();
    expect(await page.getByText('Jusqu’à 5,00 j, jusqu’au 31/03 de l’année suivante').count()).toBe(1);
    await checkPage(page, 'counter-rules-03-detail');

    await nav.getByRole('link', { name: 'Ouverture des compteurs' }).click();
    await page.getByLabel('Année').selectOption('2027');
    await page.getByRole('button', { name: 'Voir l’aperçu' }).click();
    await page.getByRole('heading', { name: 'Aperçu : compteurs 2027 — toute l’association' }).waitFor();
    expect(await page.getByRole('row', { name: /Benali Farid/ }).textContent()).toContain('Sans établissement principal');
    await checkPage(page, 'counter-openings-01-preview');
    await page.getByRole('button', { name: /^Ouvrir 25 compteur\(s\) 2027$/ }).click();
    await page.getByRole('heading', { name: 'Compteurs 2027 ouverts — toute l’association' }).waitFor();
    await checkPage(page, 'counter-openings-02-done');
    expect(Number((await env.db.query<{ n: string }>('select count(*) as n from app_public.counters where year = 2027')).rows[0]!.n)).toBe(26);

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'fr-FR' });
    const small = await phone.newPage();
    await small.context().addCookies(await context.cookies());
    await small.goto(`${env.url}/backoffice/counter-rules/`);
    await small.getByRole('heading', { name: 'Règles des compteurs' }).waitFor();
    await checkPage(small, 'counter-rules-04-list-phone');
    await phone.close();
    expect(cspViolations).toEqual([]);
    await context.close();
  });
});
