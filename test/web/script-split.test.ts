/**
 * The script, split (issue 29 point 6; BENCHMARKS.md, "The script, split"): the login fetches only
 * its own files (no router, no screen), « Mon planning » after the login only the app's and its
 * own, and another screen its files when it is opened; a screen whose file cannot come says so and
 * offers to reload. Which file holds what is read from the build's manifest (web/dist/.vite/), as
 * bench/web-script.ts measures it; the files are served cached for good, under the same CSP.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { appKey, filesOf, readManifest, SCREEN_MODULES, type Manifest } from '../../bench/web-script.js';
import { ROOT_DIR } from '../../src/db/root.js';
import { WEB_CSP } from '../../src/http/web.js';
import { FIXTURE_PASSWORD } from '../helpers/settings.js';
import { browserWalk, checkPage, login, openPage, poll } from './browser.js';

const walk = browserWalk();
const DIST = path.join(ROOT_DIR, 'web/dist');
let manifest: Manifest;

beforeAll(() => {
  const read = readManifest(DIST);
  if (!read) throw new Error('web/dist has no manifest: the build does not split the script');
  manifest = read;
});

/** The script files (/assets/….js) the page fetches, from now on. */
function watchScripts(page: Page): Set<string> {
  const scripts = new Set<string>();
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (pathname.startsWith('/assets/') && pathname.endsWith('.js')) scripts.add(pathname);
  });
  return scripts;
}

const union = (...sets: Array<Set<string>>) => new Set(sets.flatMap((set) => [...set]));
const sorted = (set: Set<string>) => [...set].sort();
/** A screen module's own file (app/screens.tsx imports it on demand). */
const ownFile = (screen: string) => `/${manifest[`src/routes/${screen}.tsx`]!.file}`;
const otherScreens = (...shown: string[]) =>
  SCREEN_MODULES.map((key) => path.basename(key, '.tsx')).filter((screen) => !shown.includes(screen));

describe('the script, split', () => {
  it('the login fetches its own files only, announced by index.html; the files are cached for good under the CSP', async () => {
    const login = filesOf(manifest, 'index.html');
    const app = filesOf(manifest, appKey(manifest));
    // The login's files hold no router and no screen: the app is a file of its own.
    expect([...login].some((file) => app.has(file) && !login.has(file))).toBe(false);
    expect(sorted(login)).not.toContain(`/${manifest[appKey(manifest)]!.file}`);

    const page = await openPage(walk.browser, walk.env.url);
    const scripts = watchScripts(page);
    await page.goto('/');
    await page.getByRole('heading', { name: 'Connexion' }).waitFor();
    await page.waitForLoadState('networkidle');
    expect(sorted(scripts)).toEqual(sorted(login));
    await checkPage(page, 'login');
    await page.context().close();

    // index.html names the login's files: its script, and modulepreload for what it imports.
    const index = await walk.env.get('/');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const announced = new Set([...index.text.matchAll(/(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((match) => match[1]!));
    expect(sorted(announced)).toEqual(sorted(login));
    expect(index.text).toMatch(/<link rel="modulepreload"[^>]*href="\/assets\/vendor-[^"]+\.js"/);

    // Every file of the build: served with its type, cached for good (its name changes with its content), same CSP.
    const files = new Set(Object.values(manifest).map((chunk) => `/${chunk.file}`).filter((file) => file.endsWith('.js')));
    expect(files.size).toBeGreaterThan(10);
    for (const file of files) {
      const res = await walk.env.get(file);
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-type'), file).toMatch(/^text\/javascript|^application\/javascript/);
      expect(res.headers.get('cache-control'), file).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-security-policy'), file).toBe(WEB_CSP);
      expect(res.text, file).toBe(readFileSync(path.join(DIST, file), 'utf8'));
    }
    // The manifest stays on the server.
    expect((await walk.env.get('/.vite/manifest.json')).status).toBe(404);
  });

  it('« Mon planning » after the login fetches the app and its own files; another screen fetches its own when opened', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    const scripts = watchScripts(page);
    await login(page, 'alice');
    await page.getByRole('heading', { name: 'Mon planning', level: 1 }).waitFor();
    await page.waitForLoadState('networkidle');
    const home = union(filesOf(manifest, 'index.html'), filesOf(manifest, appKey(manifest)), filesOf(manifest, 'src/routes/planning.tsx'));
    expect(sorted(scripts)).toEqual(sorted(home));
    for (const screen of otherScreens('planning')) expect(scripts, screen).not.toContain(ownFile(screen));
    await checkPage(page, 'Mon planning');

    // « Mes compteurs »: its file comes with it, the screen works and its title takes the focus.
    await page.getByRole('link', { name: 'Mes compteurs' }).click();
    await page.getByRole('heading', { name: 'Mes compteurs', level: 1 }).waitFor();
    expect(scripts).toContain(ownFile('counters'));
    await poll(() => page.evaluate('document.activeElement?.tagName + " " + document.activeElement?.textContent')).toBe('H1 Mes compteurs');
    await poll(() => page.locator('.counter').count()).toBeGreaterThan(0);
    await page.waitForLoadState('networkidle');
    expect(sorted(scripts)).toEqual(sorted(union(home, filesOf(manifest, 'src/routes/counters.tsx'))));
    for (const screen of otherScreens('planning', 'counters')) expect(scripts, screen).not.toContain(ownFile(screen));

    // Back to « Mon planning »: nothing fetched again.
    const before = scripts.size;
    await page.getByRole('link', { name: 'Mon planning' }).click();
    await page.getByRole('heading', { name: 'Mon planning', level: 1 }).waitFor();
    expect(scripts.size).toBe(before);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('an address opened without a session fetches, after the login, that screen’s files and not the home’s', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    const scripts = watchScripts(page);
    await page.goto('/equipe');
    await page.getByLabel('Identifiant').fill('mgr1');
    await page.getByLabel('Mot de passe').fill(FIXTURE_PASSWORD);
    await page.getByRole('button', { name: 'Se connecter' }).click();
    await page.getByRole('heading', { name: 'Planning d’équipe', level: 1 }).waitFor();
    await poll(() => page.locator('table tbody tr').count()).toBeGreaterThan(0);
    await page.waitForLoadState('networkidle');
    expect(sorted(scripts)).toEqual(sorted(union(filesOf(manifest, 'index.html'), filesOf(manifest, appKey(manifest)),
      filesOf(manifest, 'src/routes/team-planning.tsx'))));
    expect(scripts).not.toContain(ownFile('planning'));
    await checkPage(page, 'Planning d’équipe');
    await page.context().close();
  });

  it('a screen whose file cannot come says so and offers to reload the page, which then opens it', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.getByRole('heading', { name: 'Mon planning', level: 1 }).waitFor();
    // The connection is lost for the file of « Mes demandes » (or a new version removed it).
    const file = ownFile('my-requests');
    await page.route(`**${file}`, (route) => route.abort('internetdisconnected'));
    await page.getByRole('link', { name: 'Mes demandes' }).click();
    const alert = page.getByRole('alert');
    await poll(() => alert.textContent()).toContain('Cette page n’a pas pu être chargée');
    // The menu stays usable, and the current entry is the screen asked for.
    expect(await page.getByRole('link', { name: 'Mes demandes' }).getAttribute('aria-current')).toBe('page');
    // The failed request, and React reporting the failure it caught (the boundary shows it): nothing else.
    expect(page.problems).toContain('console: Failed to load resource: net::ERR_INTERNET_DISCONNECTED');
    expect(page.problems.some((problem) => problem.includes(`LoadFailure: Failed to fetch dynamically imported module: ${walk.env.url}${file}`))).toBe(true);
    expect(page.problems.filter((problem) => !problem.includes('ERR_INTERNET_DISCONNECTED') && !problem.includes('LoadFailure'))).toEqual([]);
    page.problems = [];
    await checkPage(page, 'a screen that could not load');

    await page.unroute(`**${file}`);
    await page.getByRole('button', { name: 'Recharger la page' }).click();
    await page.getByRole('heading', { name: 'Mes demandes', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/demandes');
    await page.context().close();
  });
});
