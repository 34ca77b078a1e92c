/**
 * « Mon compte › Délégations » (issue 30): a manager names a delegate by name for the days of its
 * leave; an employee files; the delegate is told, finds the request in its queue and decides; the
 * requester reads « par délégation de ». Bad input answers under its field. axe-core and screenshots.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { typeIds } from '../api/absence-helpers.js';
import { browserWalk, checkPage, login, openPage, poll, screenshots } from './browser.js';

const walk = browserWalk();
let types: Record<string, number>;
let E: Record<string, number>;

beforeAll(async () => {
  types = await typeIds(walk.env);
  E = walk.env.ids.employees!;
});

describe('Délégations', () => {
  it('a manager delegates, an employee files, the delegate is told and decides, the requester reads « par délégation de »', async () => {
    const manager = await openPage(walk.browser, walk.env.url);
    await login(manager, 'mgr1');
    await manager.getByRole('navigation', { name: 'Menu principal' }).getByRole('link', { name: 'Mon compte' }).click();
    await manager.getByRole('link', { name: 'mes délégations' }).click();
    await manager.getByRole('heading', { level: 1, name: 'Délégations' }).waitFor();
    const form = manager.getByRole('form', { name: 'Déléguer mes décisions' });

    // Nothing chosen: each error under its field, nothing written.
    await form.getByRole('button', { name: 'Déléguer' }).click();
    await poll(() => form.locator('.field-error').count()).toBeGreaterThan(2);
    expect(await form.getByLabel('Du').getAttribute('aria-invalid')).toBe('true');
    expect(Number((await walk.env.db.query('select count(*) from app_public.delegations')).rows[0].count)).toBe(0);
    manager.problems.splice(0, manager.problems.length, ...manager.problems.filter((problem) => !problem.includes('status of 400')));

    await form.getByLabel('Délégataire (rechercher par nom)').fill('Lamb');
    await form.getByRole('button', { name: 'Choisir Bruno Lambert' }).click();
    await poll(() => form.getByRole('status').first().textContent()).toContain('Délégataire choisi : Bruno Lambert');
    await form.getByLabel('Du').fill('2026-11-16');
    await form.getByLabel('Au (inclus)').fill('2026-11-20');
    await form.getByLabel('Absences').check();
    await checkPage(manager, 'Délégations (formulaire rempli)');
    await form.getByRole('button', { name: 'Déléguer' }).click();
    await manager.getByText('Délégation enregistrée : Bruno Lambert décide à votre place du 16/11/2026 au 20/11/2026.').waitFor();
    const given = manager.getByRole('region', { name: 'Délégations données' });
    await poll(() => given.locator('.card h3').allTextContents()).toEqual(['À Bruno Lambert']);
    expect(await given.locator('.card .badge').textContent()).toBe('En cours');
    await checkPage(manager, 'Délégations');
    await screenshots(manager, 'delegations');

    // An employee files: the delegate is told.
    const alice = await walk.env.login('alice');
    const filed = await walk.env.post('/api/absences/', alice, { employee: E.alice, type: types.CP, date_start: '2026-12-14', date_end: '2026-12-15' });
    expect(filed.status).toBe(201);
    expect(filed.body.has_recipient).toBe(true);

    const delegate = await openPage(walk.browser, walk.env.url);
    await login(delegate, 'bruno');
    await poll(() => delegate.getByRole('link', { name: /^Notifications/ }).textContent()).toBe('Notifications1');
    await delegate.getByRole('link', { name: /^Notifications/ }).click();
    await delegate.locator('.notification', { hasText: "Nouvelle demande d'absence" }).waitFor();
    await delegate.getByRole('link', { name: 'File des demandes' }).click();
    await delegate.getByRole('heading', { name: 'File des demandes', level: 1 }).waitFor();
    const row = delegate.locator('table.queue tbody tr', { hasText: 'du 14/12/2026 au 15/12/2026' });
    await poll(() => row.locator('th').textContent()).toBe('Alice Martinpar délégation de Julien Petit');
    await checkPage(delegate, 'File des demandes (par délégation)');
    await screenshots(delegate, 'delegations-queue');
    await delegate.getByRole('button', { name: /Examiner la demande d’Alice Martin, Congés payés, du 14\/12\/2026 au 15\/12\/2026/ }).click();
    const dialog = delegate.getByRole('dialog', { name: 'Demande d’absence' });
    await dialog.getByRole('form', { name: 'Décision' }).waitFor();
    await dialog.getByRole('button', { name: 'Valider', exact: true }).click();
    await poll(() => delegate.getByRole('status').filter({ hasText: 'Demande d’absence d’Alice Martin validée.' }).count()).toBe(1);

    // The delegate reads the delegation received.
    await delegate.goto('/compte/delegations');
    const received = delegate.getByRole('region', { name: 'Délégations reçues' });
    await poll(() => received.locator('.card h3').allTextContents()).toEqual(['De Julien Petit']);
    expect(await delegate.getByRole('form', { name: 'Déléguer mes décisions' }).count()).toBe(0);
    await checkPage(delegate, 'Délégations (reçues)');

    // The requester reads both names.
    const employee = await openPage(walk.browser, walk.env.url);
    await login(employee, 'alice');
    await employee.getByRole('link', { name: /^Notifications/ }).click();
    const note = employee.locator('.notification', { hasText: "Demande d'absence validée" });
    await note.waitFor();
    expect(await note.textContent()).toContain('Décision de Bruno Lambert, par délégation de Julien Petit.');

    // Ended early: the card says so.
    await given.getByRole('button', { name: 'Mettre fin maintenant' }).click();
    await poll(() => given.locator('.card .badge').textContent()).toBe('Terminée');

    expect(manager.problems).toEqual([]);
    expect(delegate.problems).toEqual([]);
    expect(employee.problems).toEqual([]);
    for (const page of [manager, delegate, employee]) await page.context().close();
  });
});
