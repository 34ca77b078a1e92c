/**
 * The phone (issue 29 point 3): every screen at 360 and 390 px wide has no horizontal overflow
 * (the page, and the decision panel inside its dialog) and shows its first content within the
 * first screen; the navigation folds behind « Menu »; the month cells hold their content and a
 * pending absence shows its reason. Against a real server and database; axe-core on each state.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { typeIds } from '../api/absence-helpers.js';
import { checkPage, login, openPage, poll, browserWalk, SCREENSHOT_DIR, type WatchedPage } from './browser.js';

const walk = browserWalk();
const WIDTHS = [{ width: 360, height: 740 }, { width: 390, height: 844 }];
let ids: { pendingAbsence: number; countedAbsence: number; dayChange: number };

beforeAll(async () => {
  const types = await typeIds(walk.env);
  const alice = await walk.env.login('alice');
  const employee = walk.env.ids.employees!.alice;
  // A pending absence (its reason, not the post, in the month cell) and a pending day change.
  const pending = await walk.env.post('/api/absences/', alice, { employee, type: types.ENF, date_start: '2026-11-25', date_end: '2026-11-25' });
  expect(pending.status, pending.text).toBe(201);
  // And one that draws on a counter: its panel shows the counters' table.
  const counted = await walk.env.post('/api/absences/', alice, { employee, type: types.CP, date_start: '2026-12-14', date_end: '2026-12-16' });
  expect(counted.status, counted.text).toBe(201);
  const change = await walk.env.post('/api/shift-change-requests/', alice, { date: '2026-11-27', reason: 'demande_personnelle', is_remote: true });
  expect(change.status, change.text).toBe(201);
  ids = { pendingAbsence: pending.body.id, countedAbsence: counted.body.id, dayChange: change.body.id };
});

interface Measure {
  viewport: { width: number; height: number };
  scrollWidth: number;
  offenders: string[];
  dialog: { scrollWidth: number; clientWidth: number } | null;
  heading: { top: number; bottom: number } | null;
  firstContent: { top: number; what: string } | null;
}

/**
 * Measured inside the page: the document's width against the viewport (and the elements that
 * pass its right edge), the open dialog's, the title (h1, or the dialog's h2) and the first
 * content after it.
 */
const MEASURE = `(() => {
  const root = document.documentElement;
  const width = root.clientWidth;
  const offenders = [];
  if (root.scrollWidth > width) {
    for (const element of document.querySelectorAll('body *')) {
      const box = element.getBoundingClientRect();
      if (box.width > 0 && box.right > width + 1) offenders.push(element.tagName.toLowerCase() + '.' + String(element.className) + ' → ' + Math.round(box.right));
      if (offenders.length > 8) break;
    }
  }
  const dialog = document.querySelector('dialog[open]');
  const heading = dialog ? dialog.querySelector('h2') : document.querySelector('main h1');
  const first = dialog ? dialog.querySelector('.decision-body > *, .notice') : document.querySelector('main .page-head + *');
  const box = (element) => element ? element.getBoundingClientRect() : null;
  return {
    viewport: { width, height: window.innerHeight },
    scrollWidth: root.scrollWidth,
    offenders,
    dialog: dialog ? { scrollWidth: dialog.scrollWidth, clientWidth: dialog.clientWidth } : null,
    heading: heading ? { top: box(heading).top, bottom: box(heading).bottom } : null,
    firstContent: first ? { top: box(first).top, what: first.tagName.toLowerCase() + '.' + String(first.className) } : null,
  };
})()`;

/** The screen at the current width: no sideways scroll, the title and the first content on the first screen. */
async function expectFits(page: WatchedPage, what: string): Promise<void> {
  await page.waitForTimeout(150);
  const measure = (await page.evaluate(MEASURE)) as Measure;
  const label = `${what} at ${measure.viewport.width} px`;
  expect(measure.scrollWidth, `${label}: wider than the screen: ${measure.offenders.join(', ')}`).toBeLessThanOrEqual(measure.viewport.width);
  if (measure.dialog) expect(measure.dialog.scrollWidth, `${label}: the panel scrolls sideways`).toBeLessThanOrEqual(measure.dialog.clientWidth);
  expect(measure.heading, `${label}: a title`).not.toBeNull();
  expect(measure.heading!.bottom, `${label}: the title within the first screen`).toBeLessThanOrEqual(measure.viewport.height);
  expect(measure.firstContent, `${label}: content after the title`).not.toBeNull();
  expect(measure.firstContent!.top, `${label}: the first content (${measure.firstContent!.what}) within the first screen`)
    .toBeLessThan(measure.viewport.height);
}

async function capture(page: Page, name: string, width: number): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `phone-${name}-${width}.png`) });
}

/** Opens each address at each phone width, waiting for what shows the screen is drawn. */
async function walkScreens(username: string, screens: Array<{
  name: string; address: string; ready: (page: WatchedPage) => Promise<unknown>;
  /** A second state of the screen, measured too (a panel's adjusted day...). */
  then?: (page: WatchedPage) => Promise<unknown>;
}>) {
  for (const viewport of WIDTHS) {
    const page = await openPage(walk.browser, walk.env.url, viewport);
    await login(page, username);
    for (const screen of screens) {
      await page.goto(screen.address);
      await screen.ready(page);
      await expectFits(page, `${username} ${screen.name}`);
      await checkPage(page, `${screen.name} at ${viewport.width} px`);
      await capture(page, screen.name, viewport.width);
      // A panel scrolls on its own: its foot (the decision form) is captured too.
      const dialog = page.locator('dialog[open]');
      if (await dialog.count()) {
        await dialog.evaluate((element) => { const box = element as unknown as { scrollTop: number; scrollHeight: number }; box.scrollTop = box.scrollHeight; });
        await page.waitForTimeout(100);
        await capture(page, `${screen.name}-foot`, viewport.width);
      }
      if (screen.then) {
        await screen.then(page);
        await expectFits(page, `${username} ${screen.name}, then`);
        await checkPage(page, `${screen.name}, then, at ${viewport.width} px`);
        await capture(page, `${screen.name}-then`, viewport.width);
      }
    }
    expect(page.problems).toEqual([]);
    await page.context().close();
  }
}

const heading = (name: string) => (page: WatchedPage) => page.getByRole('heading', { name, level: 1 }).waitFor();

describe('the phone', () => {
  it('folds the navigation behind « Menu », which opens, leads and closes', async () => {
    const page = await openPage(walk.browser, walk.env.url, WIDTHS[1]);
    await login(page, 'alice');
    const menu = page.getByRole('navigation', { name: 'Menu principal' });
    const toggle = menu.getByRole('button', { name: /^Menu/ });
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await menu.getByRole('link', { name: 'Mes compteurs' }).isVisible()).toBe(false);
    // The header takes a line, not half the screen.
    const header = await page.locator('header.top').boundingBox();
    expect(header!.height).toBeLessThanOrEqual(64);
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    await checkPage(page, 'the menu open at 390 px');
    await capture(page, 'menu-open', 390);
    await menu.getByRole('link', { name: 'Mes compteurs' }).click();
    await page.getByRole('heading', { name: 'Mes compteurs', level: 1 }).waitFor();
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await menu.getByRole('link', { name: 'Mon planning' }).isVisible()).toBe(false);
    // Escape closes it too.
    await toggle.click();
    await page.keyboard.press('Escape');
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    // At desktop width the list is there and the button is not.
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await toggle.isVisible()).toBe(false);
    expect(await menu.getByRole('link', { name: 'Mes compteurs' }).isVisible()).toBe(true);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('the employee’s screens fit 360 and 390 px', async () => {
    await walkScreens('alice', [
      { name: 'planning', address: '/planning', ready: (page) => page.locator('.day[data-date]').first().waitFor() },
      { name: 'my-requests', address: '/demandes', ready: (page) => page.locator('.card').first().waitFor() },
      { name: 'my-absence', address: `/demandes/absences/${ids.pendingAbsence}`, ready: (page) => page.locator('.card').first().waitFor() },
      { name: 'absence-request', address: '/absences/nouvelle', ready: (page) => page.getByLabel('Motif').locator('option', { hasText: '(CP)' }).waitFor({ state: 'attached' }) },
      { name: 'counters', address: '/compteurs', ready: (page) => page.locator('.counter').first().waitFor() },
      { name: 'notifications', address: '/notifications', ready: heading('Notifications') },
      { name: 'account', address: '/compte', ready: heading('Mon compte') },
      { name: 'calendar-feeds', address: '/compte/agendas', ready: heading('Agendas') },
    ]);
  });

  it('the month holds its cells’ content, and a pending absence shows its reason', async () => {
    for (const viewport of WIDTHS) {
      const page = await openPage(walk.browser, walk.env.url, viewport);
      await login(page, 'alice');
      await page.goto('/planning');
      await page.locator('.day[data-date]').first().waitFor();
      await page.getByRole('button', { name: 'Mois' }).click();
      const cell = page.locator('.day[data-date="2026-11-25"]');
      await poll(() => cell.locator('.block').first().textContent()).toContain('ENF');
      expect(await cell.textContent()).not.toMatch(/\bJ\b/);
      await expectFits(page, 'the month');
      // No block is wider than its cell, and none clips its text.
      const spilling = await page.evaluate(`(() => [...document.querySelectorAll('.grid.month td')].flatMap((cell) => {
        const box = cell.getBoundingClientRect();
        return [...cell.querySelectorAll('.block, .block *')].filter((block) => {
          const inner = block.getBoundingClientRect();
          if (inner.width === 0 && inner.height === 0) return false; // not displayed at this width
          return inner.right > box.right + 0.5 || inner.left < box.left - 0.5 || block.scrollWidth > block.clientWidth + 1;
        }).map((block) => cell.querySelector('.day').dataset.date + ' ' + block.textContent);
      }))()`);
      expect(spilling, `month at ${viewport.width} px`).toEqual([]);
      await checkPage(page, `the month at ${viewport.width} px`);
      await capture(page, 'planning-month', viewport.width);
      expect(page.problems).toEqual([]);
      await page.context().close();
    }
  });

  it('the manager’s screens and both decision panels fit 360 and 390 px', async () => {
    await walkScreens('mgr1', [
      { name: 'queue', address: '/file', ready: (page) => page.locator('.queue tbody tr').first().waitFor() },
      { name: 'decision-absence', address: `/file/absences/${ids.pendingAbsence}`, ready: (page) => page.getByRole('dialog').getByRole('form', { name: 'Décision' }).waitFor() },
      {
        name: 'decision-absence-counters', address: `/file/absences/${ids.countedAbsence}`,
        ready: (page) => page.getByRole('dialog').getByRole('row', { name: /^CP 2026/ }).waitFor(),
      },
      {
        name: 'decision-day-change', address: `/file/journees/${ids.dayChange}`,
        ready: (page) => page.getByRole('dialog').getByRole('form', { name: 'Décision' }).waitFor(),
        // The adjusted day: the slot editor inside the panel.
        then: async (page) => {
          await page.getByRole('dialog').getByLabel('Accorder une journée ajustée').check();
          await page.getByRole('dialog').getByRole('group', { name: /^Créneau accordé 1/ }).waitFor();
        },
      },
      { name: 'absence-declaration', address: '/absences/declarer', ready: (page) => page.getByLabel('Salarié').locator('option', { hasText: 'Martin Alice' }).waitFor({ state: 'attached' }) },
      { name: 'team-planning', address: '/equipe?mois=2026-11', ready: (page) => page.locator('.team-grid').waitFor() },
    ]);
  });

  it('the payroll screen fits 360 and 390 px', async () => {
    await walkScreens('paie', [
      { name: 'payroll', address: '/paie', ready: heading('Paie') },
    ]);
  });

  it('« Mon planning » shows the public holidays as the team planning does', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.goto('/planning');
    await page.locator('.day[data-date]').first().waitFor();
    await page.getByRole('button', { name: 'Mois' }).click();
    await page.getByRole('button', { name: 'Mois suivant' }).click();
    const christmas = page.locator('.day[data-date="2026-12-25"]');
    await christmas.waitFor();
    expect(await christmas.locator('xpath=..').getAttribute('class')).toBe('holiday');
    expect(await christmas.locator('.holiday-name abbr').getAttribute('title')).toBe('Jour férié : Noël');
    // Christmas and New Year's Day (the month's last week reaches 3 January).
    expect(await page.locator('td.holiday').count()).toBe(2);
    expect(await page.getByRole('list', { name: 'Légende' }).textContent()).toContain('Jour férié');
    await checkPage(page, 'the month of December');
    // The week names it in full.
    await page.getByRole('button', { name: 'Semaine', exact: true }).click();
    await poll(() => page.locator('.period').textContent()).toBe('Semaine du 30/11/2026');
    for (const monday of ['07/12/2026', '14/12/2026', '21/12/2026']) {
      await page.getByRole('button', { name: 'Semaine suivante' }).click();
      await poll(() => page.locator('.period').textContent()).toBe(`Semaine du ${monday}`);
    }
    await poll(() => page.locator('.day[data-date="2026-12-25"] .holiday-name').textContent()).toBe('Férié : Noël');
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('the team month of 31 days fits a 1440 px window', async () => {
    const page = await openPage(walk.browser, walk.env.url, { width: 1440, height: 900 });
    await login(page, 'mgr1');
    await page.goto('/equipe?mois=2026-12');
    const grid = page.locator('.team-grid');
    await grid.locator('thead th[data-date="2026-12-31"], thead th').last().waitFor();
    expect(await grid.locator('thead th').count()).toBe(32);
    const fits = (await grid.evaluate((element) => {
      const box = element as unknown as { scrollWidth: number; clientWidth: number };
      return { scrollWidth: box.scrollWidth, clientWidth: box.clientWidth };
    }));
    expect(fits.scrollWidth, 'the grid scrolls sideways at 1440 px').toBeLessThanOrEqual(fits.clientWidth);
    await expectFits(page, 'the team month at 1440 px');
    await capture(page, 'team-month-1440', 1440);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });
});
