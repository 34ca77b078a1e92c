import { describe, expect, it, vi } from 'vitest';
import { typeIds } from '../api/absence-helpers.js';
import { checkPage, login, openPage, poll, screenshots, browserWalk } from './browser.js';
import { WEB_CSP } from '../../src/http/web.js';

const walk = browserWalk();

describe('serving the web application', () => {
  it('serves the application at / and on client paths, under a strict CSP; API, back-office and files do not fall back', async () => {
    for (const path of ['/', '/demandes', '/compteurs/2026']) {
      const res = await walk.env.get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toContain('text/html');
      expect(res.headers.get('content-security-policy'), path).toBe(WEB_CSP);
      expect(res.text, path).toContain('<div id="root"></div>');
      expect(res.text, path).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    }
    expect(WEB_CSP).toContain("script-src 'self'");
    expect(WEB_CSP).not.toContain('unsafe-inline');
    const api = await walk.env.get('/api/nothing-here/');
    expect(api.status).toBe(404);
    expect(api.body).toEqual({ detail: 'Adresse inconnue.' });
    expect((await walk.env.get('/backoffice/somewhere')).text).not.toContain('id="root"');
    expect((await walk.env.get('/graphql')).text).not.toContain('id="root"');
    expect((await walk.env.get('/assets/missing-file.js')).status).toBe(404);
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec((await walk.env.get('/')).text)![1]!;
    const script = await walk.env.get(asset);
    expect(script.status).toBe(200);
    expect(script.headers.get('cache-control')).toContain('immutable');
  });
});

describe('session', () => {
  it('refuses wrong credentials with the message next to the fields', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await page.goto('/');
    await screenshots(page, 'login');
    await page.getByLabel('Identifiant').fill('alice');
    await page.getByLabel('Mot de passe').fill('not-the-password');
    await page.getByRole('button', { name: 'Se connecter' }).click();
    const alert = page.getByRole('alert');
    await poll(() => alert.textContent()).toContain('Aucun compte actif');
    expect(await page.getByLabel('Mot de passe').getAttribute('aria-describedby')).toBe(await alert.getAttribute('id'));
    // The 401 of the login form is an expected answer; only it may appear in the console.
    page.problems = page.problems.filter((problem) => !problem.includes('401'));
    await checkPage(page, 'login');
    await page.context().close();
  });

  it('logs in, shows "Mon compte", logs out; the next account sees none of the first one’s data', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.getByRole('link', { name: 'Mon compte' }).click();
    await page.getByRole('heading', { name: 'Mon compte' }).waitFor();
    const facts = page.locator('.facts');
    await poll(() => facts.textContent()).toContain('alice');
    expect(await facts.textContent()).toContain('Salarié');
    await checkPage(page, 'Mon compte');
    await screenshots(page, 'account');

    await page.getByRole('button', { name: 'Se déconnecter' }).first().click();
    await page.getByRole('heading', { name: 'Connexion' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('wfm.token'))).toBeNull();

    await login(page, 'mgr1');
    await page.getByRole('link', { name: 'Mon compte' }).click();
    await poll(() => page.locator('.facts').textContent()).toContain('Manager n1');
    expect(await page.locator('.facts').textContent()).not.toContain('alice');
    expect(await page.locator('main').textContent()).toContain('décider des demandes d’absence');
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('a reload keeps the session of the tab', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.reload();
    await page.getByRole('navigation', { name: 'Menu principal' }).waitFor();
    expect(await page.locator('.who span').textContent()).toBe('Alice Martin · Salarié');
    await page.context().close();
  });

  it('an expired token brings the login back over the page, and what was typed is kept', async () => {
    const types = await typeIds(walk.env);
    const alice = await walk.env.login('alice');
    const created = await walk.env.post('/api/absences/', alice, {
      employee: walk.env.ids.employees!.alice, type: types.CP, date_start: '2026-12-21', date_end: '2026-12-23',
    });
    expect(created.status).toBe(201);
    const decided = await walk.env.post(`/api/absences/${created.body.id}/validate/`, await walk.env.login('mgr1'), { version: created.body.version });
    expect(decided.status).toBe(200);

    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.getByRole('link', { name: 'Mes demandes' }).click();
    await page.getByRole('button', { name: 'Demander l’annulation' }).click();
    const comment = page.getByLabel('Pourquoi demandez-vous l’annulation ? (facultatif)');
    await comment.fill('Mon fils est finalement gardé par ses grands-parents.');

    // Six hours and a minute later, for the server: the token has expired.
    const realNow = Date.now.bind(Date);
    const spy = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + (6 * 60 + 1) * 60_000);
    try {
      await page.getByRole('button', { name: 'Envoyer la demande d’annulation' }).click();
      const dialog = page.getByRole('dialog', { name: 'Votre session a expiré' });
      await dialog.waitFor();
      expect(await dialog.getByLabel('Identifiant').inputValue()).toBe('alice');
      await screenshots(page, 'session-expired');
      await dialog.getByLabel('Mot de passe').fill('Fixture-Passw0rd!');
      await dialog.getByRole('button', { name: 'Se connecter' }).click();
      await dialog.waitFor({ state: 'detached' });
    } finally {
      spy.mockRestore();
    }
    // The form is still there with its text; sending it again goes through with the new token.
    expect(await comment.inputValue()).toBe('Mon fils est finalement gardé par ses grands-parents.');
    await page.getByRole('button', { name: 'Envoyer la demande d’annulation' }).click();
    await poll(() => page.locator('.card.status-cancellation_requested').count()).toBe(1);
    expect(await page.locator('.card.status-cancellation_requested').textContent()).toContain('Mon fils est finalement gardé');
    // The refused call is the one console error a browser reports for the expired token.
    expect(page.problems.filter((problem) => !problem.includes('401'))).toEqual([]);
    await page.context().close();
  });
});
