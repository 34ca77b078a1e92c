/**
 * Browser tests: Debian's Chromium driven by playwright-core, against a real server and database
 * (startTestEnv). Every page collects its console errors and failed requests; `checkPage` runs
 * axe-core inside it; `screenshots` writes desktop and phone captures to test-results/screenshots.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { startTestEnv, type TestEnv, type TestEnvOptions } from '../helpers/server.js';
import { launchChromium } from '../helpers/browser.js';
import { FIXTURE_PASSWORD } from '../helpers/settings.js';

const require = createRequire(import.meta.url);
export const SCREENSHOT_DIR = path.resolve('test-results/screenshots');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/**
 * One server, database and Chromium for a file of browser walks: `walk.env` and `walk.browser`
 * are there once the file's first `beforeAll` has run; both are closed after the file.
 */
export function browserWalk(options: TestEnvOptions = {}): { env: TestEnv; browser: Browser } {
  // A browser walk takes seconds, more on a busy machine.
  vi.setConfig({ testTimeout: 90_000 });
  const walk = {} as { env: TestEnv; browser: Browser };
  beforeAll(async () => {
    [walk.env, walk.browser] = await Promise.all([startTestEnv(options), launchBrowser()]);
  });
  afterAll(async () => {
    await walk.browser?.close();
    await walk.env?.close();
  });
  return walk;
}

/** Chromium as every browser test launches it (test/helpers/browser.ts: headless, in French). */
export const launchBrowser = launchChromium;

export interface WatchedPage extends Page {
  /** Console errors and uncaught exceptions seen so far. */
  problems: string[];
}

/** A fresh browser context (own storage) on the server, with its console watched. */
export async function openPage(browser: Browser, baseURL: string, viewport = DESKTOP): Promise<WatchedPage> {
  const context = await browser.newContext({ baseURL, viewport, locale: 'fr-FR', timezoneId: 'Europe/Paris' });
  const page = (await context.newPage()) as WatchedPage;
  page.problems = [];
  page.on('console', (message) => {
    if (message.type() === 'error') page.problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => page.problems.push(`exception: ${error.message}`));
  page.setDefaultTimeout(10_000);
  return page;
}

/** Logs in through the form and waits for the menu. */
export async function login(page: WatchedPage, username: string, password = FIXTURE_PASSWORD): Promise<void> {
  await page.goto('/');
  await page.getByLabel('Identifiant').fill(username);
  await page.getByLabel('Mot de passe').fill(password);
  await page.getByRole('button', { name: 'Se connecter' }).click();
  try {
    await page.getByRole('navigation', { name: 'Menu principal' }).waitFor();
  } catch (error) {
    throw new Error(`login ${username}: ${(error as Error).message}; page problems: ${page.problems.join(' | ')}; body: ${await page.locator('body').textContent()}`);
  }
}

let axeSource: string | null = null;

/** axe-core inside the page: no serious or critical violation; and no console error so far. */
export async function checkPage(page: WatchedPage, what: string): Promise<void> {
  axeSource ??= await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol: the page's CSP (no inline script) stays in force.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // Runs in the page (the server's type check knows no DOM: globalThis stands for window).
    const page = globalThis as unknown as {
      document: unknown;
      axe: { run(context: unknown, options: object): Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: unknown }> }> }> };
    };
    const result = await page.axe.run(page.document, { resultTypes: ['violations'] });
    return result.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} ${JSON.stringify(violation.nodes.map((node) => node.target))}`);
  });
  expect(violations, `axe on ${what}`).toEqual([]);
  expect(page.problems, `console on ${what}`).toEqual([]);
}

/** Captures the page at desktop and phone widths (full page), then restores the desktop width. */
export async function screenshots(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  for (const [label, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(100);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}

/** expect.poll with the patience of a page under load (a login hashes a password: slow on a busy machine). */
export function poll<T>(read: () => Promise<T> | T) {
  return expect.poll(read, { timeout: 10_000 });
}

/** The number shown in "1,5 jour" or "3 jours". */
export const numberIn = (text: string | null | undefined) => Number((text ?? '').replace(/[^\d,.-]/g, '').replace(',', '.'));

/** The four figures of a counter card of "Mes compteurs" as displayed, by label. */
export async function counterFigures(page: Page, code: string): Promise<Record<string, string>> {
  const card = page.locator('.counter', { has: page.getByRole('heading', { name: new RegExp(`\\b${code}\\b`) }) });
  const labels = await card.locator('dt').allTextContents();
  const values = await card.locator('dd').allTextContents();
  return Object.fromEntries(labels.map((label, index) => [label, values[index]!]));
}
