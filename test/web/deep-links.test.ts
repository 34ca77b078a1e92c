/**
 * Deep links (issue 26 point 3, issue 28 point 3): the address of a request, opened in a fresh
 * browser (a link from a notification or an e-mail), asks for the login and then lands on the
 * request itself: the author's own request at /demandes/absences/:id and /demandes/journees/:id,
 * the decider's panel over the queue at /file/absences/:id and /file/journees/:id. An address
 * that names no request the reader may open says so in words.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { typeIds } from '../api/absence-helpers.js';
import { FIXTURE_PASSWORD } from '../helpers/settings.js';
import { browserWalk, checkPage, openPage, poll, screenshots, type WatchedPage } from './browser.js';

const walk = browserWalk();
let types: Record<string, number>;
let E: Record<string, number>;

beforeAll(async () => {
  types = await typeIds(walk.env);
  E = walk.env.ids.employees!;
});

/** Opens an address in a fresh browser: the login comes first, then the address's screen. */
async function openAfterLogin(address: string, username: string): Promise<WatchedPage> {
  const page = await openPage(walk.browser, walk.env.url);
  await page.goto(address);
  await page.getByLabel('Identifiant').fill(username);
  await page.getByLabel('Mot de passe').fill(FIXTURE_PASSWORD);
  await page.getByRole('button', { name: 'Se connecter' }).click();
  await page.getByRole('navigation', { name: 'Menu principal' }).waitFor();
  return page;
}

const pathOf = (page: Page) => new URL(page.url()).pathname;

/** The browser logs the 404 a step asked for on purpose: no page error. */
function forgetNotFound(page: WatchedPage): void {
  const kept = page.problems.filter((problem) => !problem.includes('status of 404'));
  page.problems.splice(0, page.problems.length, ...kept);
}

async function fileAbsence(employee: string, type: string, dateStart: string, dateEnd = dateStart): Promise<number> {
  const res = await walk.env.post('/api/absences/', await walk.env.login(employee), { employee: E[employee], type: types[type], date_start: dateStart, date_end: dateEnd });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function fileDayChange(employee: string, date: string): Promise<number> {
  const res = await walk.env.post('/api/shift-change-requests/', await walk.env.login(employee), { date, reason: 'urgence', is_remote: true });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe('deep links', () => {
  it('the author’s request: the login, then the request itself; another’s or an unknown one says so; withdrawn, back to the list', async () => {
    const absence = await fileAbsence('alice', 'FOR', '2026-12-10', '2026-12-11');
    const dayChange = await fileDayChange('alice', '2026-11-27');
    const bruno = await fileAbsence('bruno', 'FOR', '2026-12-10');

    const page = await openAfterLogin(`/demandes/absences/${absence}`, 'alice');
    await page.getByRole('heading', { name: 'Demande d’absence', level: 1 }).waitFor();
    expect(pathOf(page)).toBe(`/demandes/absences/${absence}`);
    const card = page.locator('.card', { hasText: 'du 10/12/2026 au 11/12/2026' });
    await poll(() => card.locator('.badge').textContent()).toBe('En attente');
    // The menu marks « Mes demandes » as the section; the way back is a link.
    expect(await page.getByRole('link', { name: 'Mes demandes', exact: true }).getAttribute('aria-current')).toBe('true');
    expect(await page.getByRole('link', { name: 'Toutes mes demandes' }).getAttribute('href')).toBe('/demandes');
    await checkPage(page, 'Demande d’absence (lien direct)');
    await screenshots(page, 'my-request');
    // The narrowest phone: nothing runs off the side.
    await page.setViewportSize({ width: 360, height: 740 });
    expect(await page.evaluate(() => {
      const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
      return root.scrollWidth <= root.clientWidth;
    })).toBe(true);
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.goto(`/demandes/journees/${dayChange}`);
    await page.getByRole('heading', { name: 'Demande de modification de journée', level: 1 }).waitFor();
    await poll(() => page.locator('.card', { hasText: 'Journée du 27/11/2026' }).locator('.badge').textContent()).toBe('En attente');
    expect(await page.locator('.card').textContent()).toContain('télétravail');

    for (const address of [`/demandes/absences/${bruno}`, '/demandes/absences/999999', '/demandes/absences/abc', `/demandes/journees/${dayChange + 1000}`]) {
      await page.goto(address);
      await poll(() => page.getByRole('alert').textContent()).toMatch(/introuvable : elle a été retirée, ou ce n’est pas l’une de vos demandes\./);
    }
    forgetNotFound(page);
    await checkPage(page, 'Demande introuvable');

    await page.goto(`/demandes/absences/${absence}`);
    await page.getByRole('button', { name: 'Retirer la demande' }).click();
    await page.getByRole('button', { name: 'Oui, retirer la demande' }).click();
    await page.getByRole('heading', { name: 'Mes demandes', level: 1 }).waitFor();
    expect(pathOf(page)).toBe('/demandes');
    expect((await walk.env.get(`/api/absences/${absence}/`, await walk.env.login('alice'))).status).toBe(404);
    forgetNotFound(page);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('the decider’s panel: the login, then the panel over the queue; decided or closed, the queue', async () => {
    const absence = await fileAbsence('alice', 'FOR', '2026-12-14');
    const dayChange = await fileDayChange('alice', '2026-11-30');

    const page = await openAfterLogin(`/file/absences/${absence}`, 'mgr1');
    const dialog = page.getByRole('dialog', { name: 'Demande d’absence' });
    await dialog.getByRole('form', { name: 'Décision' }).waitFor();
    expect(await dialog.textContent()).toContain('Alice Martin');
    expect(await page.getByRole('link', { name: 'File des demandes' }).getAttribute('aria-current')).toBe('page');
    await checkPage(page, 'Panneau de décision (lien direct)');
    await dialog.getByRole('button', { name: 'Valider', exact: true }).click();
    await poll(() => page.getByRole('status').filter({ hasText: 'Demande d’absence d’Alice Martin validée.' }).count()).toBe(1);
    // The message is shown before the panel's address is left: the panel closes with that navigation.
    await poll(() => dialog.count()).toBe(0);
    expect(pathOf(page)).toBe('/file');

    // A day change: the queue behind shows the day changes; « Fermer » leaves the panel's address.
    await page.goto(`/file/journees/${dayChange}`);
    const shift = page.getByRole('dialog', { name: 'Demande de modification de journée' });
    await shift.getByRole('form', { name: 'Décision' }).waitFor();
    expect(await page.getByRole('search', { name: 'Filtres de la file' }).getByLabel('Type de demande').inputValue()).toBe('shift_change');
    await shift.getByRole('button', { name: /^Fermer/ }).click();
    await poll(() => pathOf(page)).toBe('/file');
    expect(await shift.count()).toBe(0);
    // The focus goes to the request's row, as when the row had opened the panel.
    const row = page.getByRole('button', { name: /Examiner la modification de journée d’Alice Martin du 30\/11\/2026/ });
    await poll(() => row.evaluate(
      (element) => element === (element as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)).toBe(true);

    // Opened from the queue, the panel has its address too; Escape goes back to the queue's.
    await row.click();
    await shift.getByRole('form', { name: 'Décision' }).waitFor();
    expect(pathOf(page)).toBe(`/file/journees/${dayChange}`);
    await page.keyboard.press('Escape');
    await poll(() => pathOf(page)).toBe('/file');

    // An unknown id, and one that is no number: the panel says so.
    for (const address of ['/file/absences/999999', '/file/journees/abc']) {
      await page.goto(address);
      await poll(() => page.getByRole('dialog').getByRole('alert').textContent()).toMatch(/introuvable : elle a été retirée, ou elle n’est pas de votre périmètre\./);
    }
    forgetNotFound(page);
    await checkPage(page, 'Panneau de décision, demande introuvable');
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('an employee without queue rights who follows a panel’s link lands on their home screen', async () => {
    const absence = await fileAbsence('bruno', 'FOR', '2026-12-15');
    const page = await openAfterLogin(`/file/absences/${absence}`, 'alice');
    await page.getByRole('heading', { name: 'Mon planning', level: 1 }).waitFor();
    expect(pathOf(page)).toBe('/planning');
    expect(page.problems).toEqual([]);
    await page.context().close();
  });
});
