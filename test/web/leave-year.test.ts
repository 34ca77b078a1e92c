import { beforeAll, describe, expect, it } from 'vitest';
import { typeIds } from '../api/absence-helpers.js';
import { checkPage, login, openPage, poll, screenshots, browserWalk } from './browser.js';

const walk = browserWalk();
let types: Record<string, number>;

beforeAll(async () => {
  types = await typeIds(walk.env);
});

describe('the leave year (issue 27)', () => {
  it('in November, the form says next year is not open; once the opening ran, an employee books CP in January of next year', async () => {
    // 16 November 2026 (the tests' clock): chloe has no CP counter for 2027 yet.
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'chloe');
    await page.getByRole('link', { name: 'Demander une absence' }).click();
    const form = page.getByRole('form', { name: 'Demande d’absence' });
    await form.getByLabel('Motif').selectOption(String(types.CP));
    // Before any date is typed, the form tells which years are open.
    const years = form.getByRole('list', { name: 'Années ouvertes de ses compteurs' });
    await poll(() => years.textContent()).toContain('Congés payés 2027 : pas encore ouvert');
    expect(await years.textContent()).toMatch(/Congés payés 2026 : ouvert \(restant [\d,]+ jours\)/);

    // The opening (what the back-office's confirmation and the job of 1 October run).
    const opened = (await walk.env.db.query<{ result: { opened: number } }>(
      "select app_private.counters_open_year(2027, null, '2026-11-16') as result")).rows[0]!.result;
    expect(opened.opened).toBeGreaterThan(0);

    await page.reload();
    await form.getByLabel('Motif').selectOption(String(types.CP));
    // chloe (E2, jours ouvrés): January to October 2026 acquired for 2027, 25 × 10 / 12.
    await poll(() => years.textContent()).toContain('Congés payés 2027 : ouvert (restant 20,83 jours)');
    await form.getByLabel('Premier jour').fill('2027-01-11');
    await form.getByLabel('Dernier jour').fill('2027-01-15');
    const preview = page.getByRole('region', { name: 'Aperçu' });
    await poll(() => preview.locator('.big').textContent()).toBe('5 jours');
    expect(await preview.textContent()).toContain('CP 2027');
    await checkPage(page, 'Demander une absence');
    await screenshots(page, 'leave-year-next-year-open');

    await form.getByRole('button', { name: 'Envoyer la demande' }).click();
    await page.getByRole('heading', { name: 'Mes demandes' }).waitFor();
    const card = page.locator('.card', { hasText: 'du 11/01/2027 au 15/01/2027' });
    await card.waitFor();
    expect(await card.locator('.badge').textContent()).toBe('En attente');
    const counters = (await walk.env.get('/api/counters/?year=2027', await walk.env.login('chloe'))).body.CP;
    expect([counters.acquired, counters.planned, counters.remaining]).toEqual(['20.83', '5.00', '15.83']);

    // « Mes compteurs »: this year, then next year with what is still to come and the year's end.
    await page.getByRole('link', { name: 'Mes compteurs' }).click();
    const next = page.getByRole('region', { name: 'Compteurs de 2027' });
    const cp2027 = next.locator('.next-counter', { hasText: 'Congés payés' });
    await cp2027.waitFor();
    await poll(() => cp2027.textContent()).toContain('À venir : 4,17 jours d’ici la fin de 2026 (acquisition mensuelle)');
    expect(await cp2027.textContent()).toContain('Acquis à ce jour : 20,83 jours · Restant : 15,83 jours');
    expect(await cp2027.textContent()).toContain('Au 31/12/2027 : 15,83 jours reportés sur 2028 jusqu’au 31/05/2028');
    const rtt2026 = page.locator('.counter', { hasText: 'Réduction du temps de travail' }).first();
    expect(await rtt2026.textContent()).toMatch(/Au 31\/12\/2026 : 10 jours perdus/);
    await checkPage(page, 'Mes compteurs');
    await screenshots(page, 'leave-year-my-counters');
    expect(page.problems).toEqual([]);
    await page.context().close();
  });
});
