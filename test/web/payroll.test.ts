/**
 * The payroll consultation screen ("Paie"): only for accounts the API gives payroll rights;
 * month, authorised establishments (payroll_options), search, 25 lines a page.
 */
import { describe, expect, it } from 'vitest';
import { browserWalk, checkPage, login, openPage, poll, screenshots } from './browser.js';

const walk = browserWalk();

/** Thirty more employees with a contract in the ESAT (E3): more than one page of 25 lines. */
async function arrangeContracts(): Promise<void> {
  await walk.env.db.query(`
    with created as (
      insert into app_public.employees (first_name, last_name, main_establishment_id)
      select 'Agent', 'Paie ' || lpad(g::text, 2, '0'), $1 from generate_series(1, 30) g
      returning id
    )
    insert into app_public.contracts (employee_id, contract_type_id, start_date, weekly_hours, job_title)
    select id, (select min(id) from app_public.contract_types), '2025-01-01', 35, 'Moniteur d’atelier' from created`,
  [walk.env.ids.establishments!.E3]);
}

async function apiCount(query: string): Promise<number> {
  const res = await walk.env.get(`/api/payroll/?month=2026-11${query}`, await walk.env.login('paie'));
  expect(res.status, res.text).toBe(200);
  return res.body.count;
}

describe('Paie', () => {
  it('is not offered to accounts without payroll rights', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'mgr1');
    const menu = page.getByRole('navigation', { name: 'Menu principal' });
    await poll(() => menu.getByRole('link').allTextContents()).toContain('Mon compte');
    expect(await menu.getByRole('link', { name: 'Paie' }).count()).toBe(0);
    await page.context().close();
  });

  it('pages 25 lines at a time, filters by establishment and searches by name', async () => {
    await arrangeContracts();
    const total = await apiCount('');
    const inEsat = await apiCount(`&establishment=${walk.env.ids.establishments!.E3}`);
    expect(total).toBeGreaterThan(25);
    expect(total).toBeLessThanOrEqual(50);

    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'paie');
    // Issue 29 point 5: the header names the person and every role held; the payroll account,
    // having an employee record, is a Salarié too.
    await poll(() => page.locator('.who span').textContent()).toBe('Isabelle Girard · Salarié, Service Paie');
    await page.getByRole('link', { name: 'Paie' }).click();
    await page.getByRole('heading', { name: 'Éléments de paie' }).waitFor();
    await page.getByLabel('Mois').fill('2026-11');
    const rows = page.locator('table.payroll tbody tr');
    const status = page.locator('main p[role="status"]');
    await poll(() => status.textContent()).toBe(`${total} lignes (une par contrat)`);
    await poll(() => rows.count()).toBe(25);
    expect(await page.locator('.pager').textContent()).toContain(`Page 1 sur ${Math.ceil(total / 25)}`);
    await checkPage(page, 'Paie');
    // Each counters cell stays a cell of the table and its lines wrap inside it: the class of the
    // « Mes compteurs » cards, once shared with it, made it a 16rem grid that the table clipped.
    const counterCells = (await page.evaluate(`[...document.querySelectorAll('td[data-label^="Compteurs"]')].map((cell) => {
      const right = cell.getBoundingClientRect().right;
      return { display: getComputedStyle(cell).display,
               outside: [...cell.querySelectorAll('li')].filter((line) => line.getBoundingClientRect().right > right + 0.5).length };
    })`)) as Array<{ display: string; outside: number }>;
    expect(counterCells).toHaveLength(25);
    expect(counterCells.filter((cell) => cell.display !== 'table-cell' || cell.outside > 0)).toEqual([]);
    await screenshots(page, 'payroll');

    await page.getByRole('button', { name: 'Page suivante' }).click();
    await poll(() => page.locator('.pager').textContent()).toContain('Page 2 sur 2');
    await poll(() => rows.count()).toBe(total - 25);

    // The establishments offered are the authorised ones; choosing one goes back to page 1.
    const offered = await page.getByLabel('Établissement').locator('option').allTextContents();
    expect(offered).toEqual(['Tous les établissements autorisés', 'ESAT du Moulin', 'Foyer Les Tilleuls', 'IME Les Peupliers']);
    await page.getByLabel('Établissement').selectOption({ label: 'ESAT du Moulin' });
    await poll(() => status.textContent()).toBe(`${inEsat} lignes (une par contrat)`);
    await poll(() => rows.count()).toBe(25);

    await page.getByLabel('Établissement').selectOption({ label: 'Tous les établissements autorisés' });
    await page.getByLabel('Rechercher un salarié').fill('Martin');
    await poll(() => status.textContent()).toBe('1 ligne (une par contrat)');
    expect(await rows.count()).toBe(1);
    expect(await rows.locator('th').textContent()).toContain('Alice Martin');
    expect(await page.locator('.pager').count()).toBe(0);
    // Issue 27 point 5: each counter's year, the figures of « Mes compteurs » (GET /api/counters/).
    const mine = await walk.env.get('/api/counters/?year=2026', await walk.env.login('alice'));
    const cp = mine.body.CP;
    const counters = rows.locator('td[data-label^="Compteurs"]');
    expect(await counters.textContent()).toContain('Ouvert à la main ou par import');
    expect(await counters.textContent()).toContain(
      `Au 31/12/2026 : ${Number(cp.year_end.carries_over).toLocaleString('fr-FR')} jours reportés sur 2027 jusqu’au ` +
      `${cp.year_end.carry_over_until.split('-').reverse().join('/')}`);
    // CT carries nothing over: what the year end loses, never « 0 jour reportés ».
    expect(await counters.textContent()).toMatch(/Au 31\/12\/2026 : \d+ jours perdus/);
    await screenshots(page, 'payroll-counters');
    await page.getByLabel('Rechercher un salarié').fill('Personne de ce nom');
    await poll(() => status.textContent()).toBe('Aucune ligne pour ces critères.');
    expect(page.problems).toEqual([]);
    await page.context().close();
  });
});
