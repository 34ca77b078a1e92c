/**
 * Absences in the back-office, in a real browser (Debian's Chromium through playwright-core):
 * an HR account cancels a granted absence; the counter is recredited (on the page and by the
 * API) and the employee's notification « Absence annulée » exists. The absence list, detail
 * and form pass axe-core without serious or critical violation and are photographed at
 * laptop and tablet widths (test-results/screenshots/).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { enrolAs, totp } from '../helpers/backoffice.js';
import { checkPage, launchChromium } from '../helpers/browser.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { DEFAULT_NOW, FIXTURE_PASSWORD } from '../helpers/settings.js';
import { PDF, form, typeIds } from './absence-helpers.js';

let env: TestEnv;
let browser: Browser;
let secret: string;
const T0 = Date.parse(DEFAULT_NOW) / 1000;
const cspViolations: string[] = [];

beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
  ({ secret } = await enrolAs(env, 'rh1'));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await env?.close();
});

const check = checkPage;

/** rh1 signs in with its password and a TOTP code of a later time step (a code passes once). */
async function signIn(seconds: number): Promise<Page> {
  env.setNow(new Date((T0 + seconds) * 1000).toISOString());
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, locale: 'fr-FR' });
  const page = await context.newPage();
  page.setDefaultTimeout(8_000);
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
  });
  await page.goto(`${env.url}/backoffice/`);
  await page.getByLabel('Identifiant').fill('rh1');
  await page.getByLabel('Mot de passe').fill(FIXTURE_PASSWORD);
  await page.getByRole('button', { name: 'Continuer' }).click();
  await page.getByLabel('Code à 6 chiffres ou code de secours').fill(await totp(secret, T0 + seconds));
  await page.getByRole('button', { name: 'Valider' }).click();
  await page.getByRole('heading', { name: 'Accueil' }).waitFor();
  return page;
}

async function remainingCp(page: Page): Promise<string> {
  return (await page.locator('#table-compteurs tr[data-counter="CP"] td.remaining').textContent())!.trim();
}

describe('absences in the back-office, in the browser', { timeout: 120_000 }, () => {
  it('an HR account cancels a granted absence: counter recredited on the page and by the API, employee notified', async () => {
    const T = await typeIds(env);
    const declared = await env.request('POST', '/api/absences/', {
      token: await env.login('mgr1'),
      form: form({ employee: env.ids.employees!.alice!, type: T.CP!, date_start: '2026-12-28', date_end: '2026-12-29' },
        [['add_documents', PDF, 'billet.pdf']]),
    });
    expect(declared.status).toBe(201);
    const id = declared.body.id as number;
    const rh1Token = await env.login('rh1');
    const counters = async () => (await env.get(`/api/counters/?employee=${env.ids.employees!.alice}&year=2026`, rh1Token)).body.CP;
    const before = await counters();

    const page = await signIn(60);
    await page.getByRole('link', { name: 'Absences' }).first().click();
    await page.getByRole('heading', { name: 'Absences' }).waitFor();
    await page.getByLabel('Statut').selectOption('validated');
    await page.getByLabel('Salarié').selectOption(String(env.ids.employees!.alice));
    await page.getByRole('button', { name: 'Filtrer' }).click();
    await page.locator(`a[href="/backoffice/absences/${id}/"]`).waitFor();
    await check(page, 'absences-01-list');

    await page.locator(`a[href="/backoffice/absences/${id}/"]`).click();
    await page.getByRole('heading', { name: `Absence n° ${id} — Alice Martin` }).waitFor();
    expect(await remainingCp(page)).toBe(`${Number(before.remaining).toLocaleString('fr-FR', { maximumFractionDigits: 2 })} jours`);
    await expect(page.getByRole('link', { name: 'billet.pdf' }).isVisible()).resolves.toBe(true);
    await check(page, 'absences-02-detail');

    // The form: the status field offers the current state and « En attente », nothing else.
    await page.getByRole('link', { name: 'Modifier l’absence' }).click();
    await page.getByRole('heading', { name: /^Modifier l’absence/ }).waitFor();
    expect(await page.getByLabel('Statut').locator('option').allTextContents()).toEqual(['— choisir —', 'Validée (actuel)', 'En attente']);
    await check(page, 'absences-04-form');
    // A correction refused by the rules comes back under its field, focusable by keyboard.
    await page.getByLabel('Dernier jour').fill('2026-12-20');
    await page.getByRole('button', { name: 'Enregistrer' }).click();
    await page.locator('#e-date_end-erreur').waitFor();
    await check(page, 'absences-05-form-error');
    await page.goto(`${env.url}/backoffice/absences/${id}/`);

    await page.getByRole('button', { name: 'Annuler l’absence' }).click();
    await page.getByText('L’absence est annulée ; le salarié est notifié.').waitFor();
    const recredited = (Number(before.remaining) + 2).toFixed(2);
    expect(await remainingCp(page)).toBe(`${Number(recredited).toLocaleString('fr-FR', { maximumFractionDigits: 2 })} jours`);
    await expect(page.getByText('Annulée', { exact: true }).isVisible()).resolves.toBe(true);
    await check(page, 'absences-03-cancelled');

    // The API agrees: the counter is recredited, the absence kept on file, cancelled, without documents.
    expect((await counters()).remaining).toBe(recredited);
    const record = await env.get(`/api/absences/${id}/`, rh1Token);
    expect([record.body.status, record.body.documents]).toEqual(['cancelled', []]);
    const notes = await env.get('/api/notifications/', await env.login('alice'));
    expect(notes.body.results.find((n: { title: string }) => n.title === 'Absence annulée')).toMatchObject({
      body: expect.stringContaining('a été annulée par Claire Dubois'),
    });
    expect(cspViolations).toEqual([]);
    await page.context().close();
  });
});
