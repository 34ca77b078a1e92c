/**
 * The web application on the demo that has lived a year (issue 27 point 6): what a visitor
 * sees at first sight with the demo logins, on a desktop and a phone. Each screen has
 * something of its own (past and pending requests, counters drawn on, notifications read and
 * unread, a queue to decide with a cancellation in it, a team planning with absences, the
 * payroll's absences); axe-core and the console are checked on each; screenshots under
 * test-results/screenshots/demo-*.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO_TEST_PASSWORD, demoTemplate, type TestDatabase } from '../helpers/demo.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { checkPage, launchBrowser, login, openPage, poll, screenshots, type WatchedPage } from './browser.js';

const NOW = '2026-11-16T10:00:00+01:00';
let template: TestDatabase;
let storageDir: string;
let env: TestEnv;
let browser: Browser;

vi.setConfig({ testTimeout: 120_000 });

beforeAll(async () => {
  storageDir = await mkdtemp(path.join(tmpdir(), 'wfm-demo-web-'));
  template = await demoTemplate(NOW, storageDir);
  [env, browser] = await Promise.all([
    startTestEnv({ template: template.name, now: NOW, configOverrides: { storageDir } }),
    launchBrowser(),
  ]);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await env?.close();
  await template?.drop();
  if (storageDir) await rm(storageDir, { recursive: true, force: true });
});

async function as(username: string): Promise<WatchedPage> {
  const page = await openPage(browser, env.url);
  await login(page, username, DEMO_TEST_PASSWORD);
  return page;
}

describe('the demo at first sight', () => {
  it('salarie: a year of requests, counters drawn on, notifications read and unread', async () => {
    const page = await as('salarie');
    await page.goto('/demandes');
    const main = page.getByRole('main');
    await poll(() => main.getByText('Refusée', { exact: true }).count()).toBeGreaterThan(0);
    await poll(() => main.getByText('Validée', { exact: true }).count()).toBeGreaterThan(3);
    await poll(() => main.getByText('En attente', { exact: true }).count()).toBeGreaterThan(1);
    await poll(() => main.getByText('Annulation demandée', { exact: true }).count()).toBe(1);
    await checkPage(page, 'demo: Mes demandes');
    await screenshots(page, 'demo-my-requests');

    await page.goto('/compteurs');
    await poll(() => main.getByText('Pris').count()).toBeGreaterThan(0);
    await checkPage(page, 'demo: Mes compteurs');
    await screenshots(page, 'demo-counters');

    await page.goto('/notifications');
    await poll(() => main.getByText('Non lue').count()).toBeGreaterThan(0);
    await poll(() => main.getByText('Demande d’absence validée').or(main.getByText("Demande d'absence validée")).count()).toBeGreaterThan(0);
    await checkPage(page, 'demo: Notifications');
    await screenshots(page, 'demo-notifications');

    await page.goto('/planning');
    await page.getByRole('main').waitFor();
    await checkPage(page, 'demo: Mon planning');
    await screenshots(page, 'demo-planning');
    await page.context().close();
  });

  it('manager1: a queue to decide with a cancellation in it, and a team planning with absences', async () => {
    const page = await as('manager1');
    await page.goto('/file');
    const main = page.getByRole('main');
    await poll(() => main.getByRole('row').filter({ hasText: 'En attente' }).count()).toBeGreaterThan(1);
    await checkPage(page, 'demo: File des demandes');
    await screenshots(page, 'demo-queue');
    // The cancellation that salarie requested yesterday.
    await main.getByLabel('Statut').selectOption({ label: 'Annulation demandée' });
    await poll(() => main.getByRole('row').filter({ hasText: 'Julie Caron' }).count()).toBe(1);
    await screenshots(page, 'demo-queue-cancellation');
    // Day-change requests to decide too.
    await main.getByLabel('Type de demande').selectOption({ label: 'Modifications de journée' });
    await main.getByLabel('Statut').selectOption({ label: 'En attente' });
    await poll(() => main.getByRole('row').filter({ hasText: 'En attente' }).count()).toBeGreaterThan(0);
    await screenshots(page, 'demo-queue-day-changes');

    await page.goto('/equipe');
    await poll(() => main.getByText(/Julie Caron|Caron/).count()).toBeGreaterThan(0);
    await checkPage(page, 'demo: Planning d’équipe');
    await screenshots(page, 'demo-team-planning');
    await page.context().close();
  });

  it('rh2 and da: their queues are not empty', async () => {
    for (const username of ['rh2', 'da']) {
      const page = await as(username);
      await page.goto('/file');
      await poll(() => page.getByRole('main').getByRole('row').filter({ hasText: 'En attente' }).count()).toBeGreaterThan(0);
      await checkPage(page, `demo: File des demandes (${username})`);
      await screenshots(page, `demo-queue-${username}`);
      await page.context().close();
    }
  });

  it('paie: the payroll month shows absences', async () => {
    const page = await as('paie');
    await page.goto('/paie');
    const main = page.getByRole('main');
    await poll(() => main.getByRole('row').count()).toBeGreaterThan(2);
    await checkPage(page, 'demo: Paie');
    await screenshots(page, 'demo-payroll');
    expect(page.problems).toEqual([]);
    await page.context().close();
  });
});
