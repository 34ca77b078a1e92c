/**
 * « Mon compte › Agendas »: an employee creates the feed of their planning and sees its secret
 * address once (which opens the feed); renewing shows a new one; a manager also gets the feed
 * of the perimeter's absences.
 */
import { describe, expect, it } from 'vitest';
import { browserWalk, checkPage, login, openPage, poll, screenshots } from './browser.js';

const walk = browserWalk();

describe('Agendas', () => {
  it('an employee creates the feed of their planning from « Mon compte », sees its address, renews it', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.getByRole('navigation', { name: 'Menu principal' }).getByRole('link', { name: 'Mon compte' }).click();
    await page.getByRole('link', { name: 'abonner mon agenda (flux iCalendar)' }).click();
    await page.getByRole('heading', { level: 1, name: 'Agendas' }).waitFor();
    // A Salarié is offered her planning only.
    const cards = page.locator('main .card');
    await poll(() => cards.locator('h2').allTextContents()).toEqual(['Mon planning']);

    await page.getByRole('button', { name: 'Créer le flux' }).click();
    const address = page.getByLabel('Adresse d’abonnement (affichée cette fois seulement)');
    await address.waitFor();
    const url = await address.inputValue();
    expect(url).toMatch(/^http:\/\/wfm\.test\/api\/feeds\/[0-9a-f]{64}\.ics$/);
    expect(await page.getByRole('link', { name: 'Ouvrir dans mon agenda' }).getAttribute('href')).toBe(url.replace(/^http:/, 'webcal:'));
    await poll(() => cards.first().textContent()).toContain('Adresse créée ou renouvelée le');
    // The address shown opens the feed.
    const feed = await walk.env.get(new URL(url).pathname);
    expect(feed.status).toBe(200);
    expect(feed.text).toContain('BEGIN:VCALENDAR');

    await page.getByText('Comment s’abonner ?').click();
    await checkPage(page, 'Agendas');
    await screenshots(page, 'calendar-feeds');

    await page.getByRole('button', { name: 'Renouveler l’adresse' }).click();
    await poll(() => address.inputValue()).not.toBe(url);
    expect((await walk.env.get(new URL(url).pathname)).status).toBe(404);
    // The menu marks « Mon compte » as the section of this screen.
    expect(await page.getByRole('navigation', { name: 'Menu principal' }).getByRole('link', { name: 'Mon compte' }).getAttribute('aria-current')).toBe('true');

    await page.getByRole('button', { name: 'Supprimer le flux' }).click();
    await page.getByText('Flux supprimé : son adresse ne fonctionne plus.').waitFor();
    await page.getByRole('button', { name: 'Créer le flux' }).waitFor();
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('a manager is also offered the absences of the perimeter', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'mgr1');
    await page.goto('/compte/agendas');
    const cards = page.locator('main .card');
    await poll(() => cards.locator('h2').allTextContents()).toEqual(['Mon planning', 'Absences de mon périmètre']);
    await cards.nth(1).getByRole('button', { name: 'Créer le flux' }).click();
    await cards.nth(1).getByLabel('Adresse d’abonnement (affichée cette fois seulement)').waitFor();
    await checkPage(page, 'Agendas (manager)');
    await page.context().close();
  });
});
