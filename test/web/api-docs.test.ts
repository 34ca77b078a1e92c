/**
 * /api/docs/ under a Content-Security-Policy as strict as the web application's (issue 25,
 * finding 7): the page reads the back-office's CSRF cookie and acts with its session, so it runs
 * only its own files (Swagger UI's bundle and the initializer, no inline script). Chromium loads it
 * and reports every CSP violation, in the console and through `securitypolicyviolation` events.
 */
import { describe, expect, it } from 'vitest';
import { DOCS_CSP } from '../../src/http/docs.js';
import { WEB_CSP } from '../../src/http/web.js';
import { browserWalk, openPage, screenshots } from './browser.js';

const walk = browserWalk();

describe('the interactive documentation under a strict CSP', () => {
  it('every answer under /api/docs carries the web application’s CSP; the page has no inline script', async () => {
    expect(DOCS_CSP).toBe(WEB_CSP);
    expect(DOCS_CSP).toContain("script-src 'self'");
    expect(DOCS_CSP).not.toContain('unsafe-inline');
    expect(DOCS_CSP).not.toContain('unsafe-eval');
    for (const path of ['/api/docs/', '/api/docs/initializer.js', '/api/docs/swagger-ui-bundle.js', '/api/docs/swagger-ui.css']) {
      const res = await walk.env.get(path, null, { uncheckedBecause: 'documentation files, not API answers' });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-security-policy'), path).toBe(DOCS_CSP);
    }
    const redirect = await fetch(`${walk.env.url}/api/docs`, { redirect: 'manual' });
    expect(redirect.headers.get('content-security-policy')).toBe(DOCS_CSP);
    const page = (await walk.env.get('/api/docs/', null, { uncheckedBecause: 'HTML page' })).text;
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page).not.toMatch(/\son[a-z]+=/);
  });

  it('Chromium renders Swagger UI with no CSP violation and no console error, and an operation opens', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    const violations: string[] = [];
    const failed: string[] = [];
    page.on('response', (answer) => {
      if (answer.status() >= 400) failed.push(`${answer.status()} ${answer.url()}`);
    });
    await page.exposeFunction('reportViolation', (text: string) => violations.push(text));
    await page.addInitScript(() => {
      const w = globalThis as unknown as { document: { addEventListener(type: string, f: (e: { violatedDirective: string; blockedURI: string }) => void): void }; reportViolation(text: string): void };
      w.document.addEventListener('securitypolicyviolation', (event) => w.reportViolation(`${event.violatedDirective} ${event.blockedURI}`));
    });
    // waitUntil 'commit': the headers are what is checked here; the page's load is awaited below, longer.
    const response = await page.goto('/api/docs/', { waitUntil: 'commit' });
    expect(response?.headers()['content-security-policy']).toBe(DOCS_CSP);
    // A 1.5 MB bundle, then the whole document parsed: slow on a busy machine.
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: 60_000 }).catch((error: Error) => {
      throw new Error(`${error.message}; violations: ${violations.join(' | ')}; failed: ${failed.join(' | ')}; problems: ${page.problems.join(' | ')}`);
    });
    expect(await page.locator('.swagger-ui .info .title').textContent()).toContain('Service de gestion des temps et absences');
    expect(await page.locator('.opblock').count()).toBeGreaterThan(50);
    // Opening an operation renders its parameters, responses and schemas.
    await page.locator('.opblock-summary', { hasText: '/api/auth/token/' }).first().click();
    await page.locator('.opblock.is-open .responses-wrapper').waitFor({ timeout: 30_000 });
    await page.locator('.opblock.is-open .try-out__btn').click();
    await page.waitForTimeout(300);
    await screenshots(page, 'api-docs');
    expect(violations).toEqual([]);
    expect(failed).toEqual([]);
    expect(page.problems).toEqual([]);
  });
});
