/**
 * Reference administration in a real browser (Debian's Chromium through playwright-core): a
 * staff account creates an establishment (a name already used refused under its field first),
 * then grants a role on it (an end before the start refused under its field first); an HR
 * account reads an employee record with its roles and its "Compte actif" box. Each page passes
 * axe-core without serious or critical violation, runs no script (CSP) and is photographed at
 * laptop and tablet widths (test-results/screenshots/bo-org-*).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { enrolAs } from '../helpers/backoffice.js';
import { checkPage, launchChromium } from '../helpers/browser.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let browser: Browser;
const cspViolations: string[] = [];

beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await env?.close();
});

/** A browser signed in as `username` (password and second factor done over HTTP: the login walk has its own test). */
async function signedIn(username: string): Promise<{ context: BrowserContext; page: Page }> {
  const { visitor } = await enrolAs(env, username);
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, locale: 'fr-FR' });
  const { hostname } = new URL(env.url);
  await context.addCookies([...visitor.cookies].map(([name, value]) => ({ name, value, domain: hostname, path: '/' })));
  const page = await context.newPage();
  page.setDefaultTimeout(8_000);
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
  });
  return { context, page };
}

const check = (page: Page, name: string) => checkPage(page, `bo-org-${name}`);

describe('reference administration in the browser', { timeout: 120_000 }, () => {
  it('a staff account creates an establishment, then grants a role on it', async () => {
    const { context, page } = await signedIn('admin');
    await page.goto(`${env.url}/backoffice/`);
    await page.getByRole('link', { name: 'Établissements' }).first().click();
    await page.getByRole('heading', { name: 'Établissements' }).waitFor();
    await check(page, '01-establishments');

    await page.getByRole('link', { name: /Créer|Nouvel établissement/ }).first().click();
    await page.getByRole('heading', { name: 'Nouvel établissement' }).waitFor();
    await check(page, '02-establishment-form');
    const taken = (await env.db.query<{ name: string }>('select name from app_public.establishments where id = $1', [env.ids.establishments!.E1])).rows[0]!.name;
    await page.getByLabel('Nom').fill(taken);
    await page.getByLabel('Base de décompte des congés').selectOption('ouvres');
    await page.getByRole('button', { name: 'Créer l’établissement' }).click();
    await page.locator('#c-name-erreur').waitFor();
    expect(await page.locator('#c-name-erreur').textContent()).toContain('appelle déjà');
    await expect(page.getByLabel('Nom').getAttribute('aria-invalid')).resolves.toBe('true');
    await check(page, '03-establishment-error');

    await page.getByLabel('Nom').fill('Foyer de vie Les Glycines');
    await page.getByRole('button', { name: 'Créer l’établissement' }).click();
    await page.getByRole('status').filter({ hasText: 'L’établissement a été créé.' }).waitFor();
    const created = (await env.db.query<{ id: number; count_base: string }>(
      "select id, count_base from app_public.establishments where name = 'Foyer de vie Les Glycines'")).rows[0]!;
    expect(created.count_base).toBe('ouvres');
    expect(await page.locator('dl.facts').textContent()).toContain('Jours ouvrés');
    await check(page, '04-establishment-detail');

    await page.getByRole('link', { name: 'Attributions de rôle' }).first().click();
    await page.getByRole('heading', { name: 'Attributions de rôle' }).waitFor();
    await check(page, '05-role-attributions');
    await page.getByRole('link', { name: /Créer|Attribuer un rôle/ }).first().click();
    await page.getByRole('heading', { name: 'Attribuer un rôle' }).waitFor();
    await page.locator('#c-account').selectOption(String(env.ids.accounts!.chloe));
    await page.locator('#c-role').selectOption('Manager n1');
    await page.locator('#c-start_date').fill('2026-12-01');
    await page.locator('#c-end_date').fill('2026-11-01');
    await page.getByRole('checkbox', { name: 'Foyer de vie Les Glycines' }).check();
    await page.getByRole('button', { name: 'Attribuer le rôle' }).click();
    await page.locator('#c-end_date-erreur').waitFor();
    expect(await page.locator('#c-end_date-erreur').textContent()).toContain('La fin doit être');
    expect((await env.db.query('select count(*)::int as n from app_public.role_attributions where account_id = $1 and role_id = 5',
      [env.ids.accounts!.chloe])).rows[0]!.n).toBe(0);
    await check(page, '06-role-attribution-error');

    await page.locator('#c-end_date').fill('');
    await page.getByRole('button', { name: 'Attribuer le rôle' }).click();
    await page.getByRole('status').filter({ hasText: 'Le rôle a été attribué.' }).waitFor();
    const granted = (await env.db.query(`select array(select x.establishment_id from app_public.role_attribution_establishments x where x.attribution_id = ra.id) as est
      from app_public.role_attributions ra where ra.account_id = $1 and ra.role_id = 5`, [env.ids.accounts!.chloe])).rows;
    expect(granted).toEqual([{ est: [created.id] }]);
    expect(await page.locator('dl.facts').textContent()).toContain('Foyer de vie Les Glycines');
    await check(page, '07-role-attribution-detail');
    await context.close();
  });

  it('an HR account reads an employee record: contracts, roles, "Compte actif", certificate', async () => {
    const { context, page } = await signedIn('rh1');
    await page.goto(`${env.url}/backoffice/employees/`);
    await page.getByRole('heading', { name: 'Salariés' }).waitFor();
    await check(page, '08-employees');
    await page.goto(`${env.url}/backoffice/employees/${env.ids.employees!.chloe}/`);
    await page.getByRole('heading', { name: 'Rôles' }).waitFor();
    await expect(page.getByLabel('Compte actif').isChecked()).resolves.toBe(true);
    expect(await page.locator('table').filter({ hasText: 'Rôles attribués' }).textContent()).toContain('Manager n1');
    await check(page, '09-employee-detail');
    await page.getByRole('link', { name: 'Déposer l’attestation' }).click();
    await page.getByLabel('Fichier de l’attestation').waitFor();
    await check(page, '10-honorability-form');
    expect(cspViolations).toEqual([]);
    await context.close();
  });
});
