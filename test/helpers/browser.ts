/**
 * Browser tests: playwright-core driving Debian's Chromium (/usr/bin/chromium, installed by
 * .ci/run; never a downloaded browser), axe-core for accessibility, screenshots written under
 * test-results/screenshots/ (git-ignored) at laptop and tablet widths.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { ROOT_DIR } from '../../src/db/migrate.js';

const require = createRequire(import.meta.url);
export const SCREENSHOT_DIR = path.join(ROOT_DIR, 'test-results/screenshots');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const VIEWPORTS = {
  laptop: { width: 1366, height: 768 },
  tablet: { width: 768, height: 1024 },
} as const;

/**
 * The browser's own words in French, as a French user sees them: the date fields' « jj/mm/aaaa », the
 * file field's « Choisir des fichiers ». On Linux, Chromium takes its interface language from
 * LANGUAGE (--lang alone is not enough), and needs Debian's chromium-l10n for it (.ci/run installs it).
 */
const FRENCH_BROWSER_ENV: Record<string, string> = { ...(process.env as Record<string, string>), LANGUAGE: 'fr' };

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--lang=fr-FR'],
    env: FRENCH_BROWSER_ENV,
  });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * Runs axe-core in the page (through the DevTools protocol: the page's CSP refuses any
 * script it would load) and returns the serious and critical violations.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  const source = require('axe-core').source as string;
  await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Screenshots of the current page at both widths (full page), named `<name>-<width>.png`. */
export async function screenshots(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const original = page.viewportSize();
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${label}.png`), fullPage: true });
  }
  if (original) await page.setViewportSize(original);
}

/** Checks a main page: screenshots at both widths, then no serious or critical axe violation. */
export async function checkPage(page: Page, name: string): Promise<void> {
  await screenshots(page, name);
  expect(await seriousViolations(page), `axe on ${name}`).toEqual([]);
}
