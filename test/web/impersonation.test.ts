/**
 * The impersonation button (SPEC Authentication rule 5): only when the server allows it
 * (ALLOW_IMPERSONATION) and only for superusers (/api/auth/me/ can_impersonate); acting as
 * another account and coming back each clear the data cache, and a banner says who is acted as.
 */
import { describe, expect, it } from 'vitest';
import type { TestEnv } from '../helpers/server.js';
import { browserWalk, checkPage, login, openPage, poll, screenshots, type WatchedPage } from './browser.js';

const MENU_ENTRY = 'Emprunter une identité';

async function menuEntries(page: WatchedPage): Promise<string[]> {
  return page.getByRole('navigation', { name: 'Menu principal' }).getByRole('link').allTextContents();
}

describe('impersonation off (default)', () => {
  const walk = browserWalk();

  it('no impersonation entry, even for a superuser', async () => {
    for (const username of ['root', 'admin']) {
      const page = await openPage(walk.browser, walk.env.url);
      await login(page, username);
      await poll(() => menuEntries(page)).toContain('Mon compte');
      expect(await menuEntries(page), username).not.toContain(MENU_ENTRY);
      await page.goto('/emprunt');
      await page.getByRole('navigation', { name: 'Menu principal' }).waitFor();
      expect(await page.getByRole('heading', { name: MENU_ENTRY }).count(), username).toBe(0);
      expect(page.problems).toEqual([]);
      await page.context().close();
    }
  });
});

describe('impersonation on (ALLOW_IMPERSONATION)', () => {
  const walk = browserWalk({ configOverrides: { allowImpersonation: true } });

  /** A notification of each account, to see whose data the screen shows. */
  async function notify(env: TestEnv, username: string, title: string): Promise<void> {
    await env.db.query("select app_private.notify($1, $2, 'Message de test.', 'info')", [env.ids.accounts![username], title]);
  }

  it('not offered to accounts that are not superusers', async () => {
    for (const username of ['admin', 'rh1', 'alice']) {
      const page = await openPage(walk.browser, walk.env.url);
      await login(page, username);
      await poll(() => menuEntries(page)).toContain('Mon compte');
      expect(await menuEntries(page), username).not.toContain(MENU_ENTRY);
      await page.context().close();
    }
  });

  it('a superuser acts as alice and comes back; the cache is cleared each time; a banner names who is acted as', async () => {
    await notify(walk.env, 'root', 'Note réservée à root');
    await notify(walk.env, 'alice', 'Note réservée à alice');
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'root');

    // root's notifications, now in the data cache (fresh for 30 s: a cache left in place would show them again).
    await page.getByRole('link', { name: /^Notifications/ }).click();
    await page.getByRole('heading', { name: 'Note réservée à root' }).waitFor();

    await page.getByRole('link', { name: MENU_ENTRY }).click();
    await page.getByRole('heading', { name: MENU_ENTRY, level: 1 }).waitFor();
    await page.getByLabel('Rechercher un salarié').fill('Martin');
    const button = page.getByRole('button', { name: 'Emprunter l’identité de Alice Martin' });
    await button.waitFor();
    await checkPage(page, 'Emprunter une identité');
    await screenshots(page, 'impersonation-search');
    await button.click();

    const banner = page.getByRole('complementary', { name: 'Emprunt d’identité' });
    await poll(() => banner.textContent()).toContain('Vous agissez en tant que alice');
    expect(await banner.textContent()).toContain('empruntée par root');
    expect(await menuEntries(page)).toContain('Mon planning');
    expect(await menuEntries(page)).not.toContain(MENU_ENTRY);
    expect(await page.locator('.who').textContent()).toContain('alice');

    await page.getByRole('link', { name: /^Notifications/ }).click();
    await page.getByRole('heading', { name: 'Note réservée à alice' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Note réservée à root' }).count()).toBe(0);
    await checkPage(page, 'Notifications, identité empruntée');
    await screenshots(page, 'impersonation-banner');

    // A reload keeps the impersonation and the way back.
    await page.reload();
    await poll(() => banner.textContent()).toContain('Vous agissez en tant que alice');

    await page.getByRole('button', { name: 'Reprendre mon identité' }).click();
    await banner.waitFor({ state: 'detached' });
    await poll(() => page.locator('.who').textContent()).toContain('root');
    expect(await menuEntries(page)).toContain(MENU_ENTRY);
    await page.getByRole('link', { name: /^Notifications/ }).click();
    await page.getByRole('heading', { name: 'Note réservée à root' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Note réservée à alice' }).count()).toBe(0);

    // The impersonation is in the audit log, by root.
    const { rows } = await walk.env.db.query(
      "select actor_username from app_private.audit_log where verb = 'Impersonation' and target_id = $1",
      [walk.env.ids.accounts!.alice],
    );
    expect(rows).toEqual([{ actor_username: 'root' }]);
    // And so is its end, written when « Reprendre mon identité » was pressed (issue 25).
    const { rows: ended } = await walk.env.db.query(
      "select actor_username from app_private.audit_log where model = 'account_security' and after ->> 'event' = 'impersonation_ended' and target_id = $1",
      [walk.env.ids.accounts!.alice],
    );
    expect(ended).toEqual([{ actor_username: 'root' }]);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });
});
