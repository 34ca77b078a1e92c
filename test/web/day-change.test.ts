import { describe, expect, it } from 'vitest';
import { checkPage, login, openPage, poll, screenshots, browserWalk } from './browser.js';

const walk = browserWalk();

describe('day-change request', () => {
  it('is filed from a day of the planning: slots pre-filled, break dropped when shortened, live net minutes, telework; a refusal is read by the employee', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.getByRole('link', { name: 'Mon planning' }).click();
    await page.getByRole('button', { name: 'Semaine suivante' }).click();
    await poll(() => page.locator('.period').textContent()).toBe('Semaine du 23/11/2026');
    await page.getByRole('button', { name: 'Modifier la journée du mardi 24 novembre 2026' }).click();

    const panel = page.getByRole('region', { name: 'Modifier la journée du mardi 24 novembre 2026' });
    await panel.waitFor();
    // The planned day (post J, 09:00-17:00, unpaid break 12:00-12:30): 7 h 30 net.
    const slot = panel.getByRole('group', { name: /^Créneau 1/ });
    expect(await slot.getByLabel('Début', { exact: true }).inputValue()).toBe('09:00');
    expect(await slot.getByLabel('Fin', { exact: true }).inputValue()).toBe('17:00');
    expect(await slot.getByLabel('Début de pause').inputValue()).toBe('12:00');
    expect(await panel.locator('.net strong').textContent()).toBe('7 h 30');
    // A paid break is not deducted.
    await slot.getByLabel('Pause payée').check();
    expect(await panel.locator('.net strong').textContent()).toBe('8 h 00');
    await slot.getByLabel('Pause payée').uncheck();
    // Shortened to end before the break: the break goes.
    await slot.getByLabel('Fin', { exact: true }).fill('11:45');
    expect(await slot.getByLabel('Début de pause').inputValue()).toBe('');
    expect(await panel.getByRole('status').textContent()).toContain('La pause de 12:00 à 12:30 a été retirée');
    expect(await panel.locator('.net strong').textContent()).toBe('2 h 45');
    await panel.getByLabel('Télétravail').check();
    await panel.getByLabel('Commentaire (facultatif)').fill('Rendez-vous médical l’après-midi.');
    await checkPage(page, 'Modifier une journée');
    await screenshots(page, 'day-change');
    await panel.getByRole('button', { name: 'Envoyer la demande' }).click();
    await poll(() => page.getByRole('status').filter({ hasText: 'envoyée' }).count()).toBe(1);
    const tuesday = page.locator('.day[data-date="2026-11-24"]');
    await poll(() => tuesday.locator('.block.pending').count()).toBe(1);

    const alice = await walk.env.login('alice');
    const { body: list } = await walk.env.get('/api/shift-change-requests/?status=pending', alice);
    const filed = list.results.find((request: { date: string }) => request.date === '2026-11-24');
    expect(filed.is_remote).toBe(true);
    expect(filed.requested_minutes).toBe(165);
    expect(filed.slots[0]).toMatchObject({ start_time: '09:00', end_time: '11:45', break_start_time: null });

    // The same date again: the server's answer appears in the form.
    await page.getByRole('button', { name: 'Modifier la journée du mardi 24 novembre 2026' }).click();
    await panel.getByLabel('Télétravail').uncheck();
    await panel.getByRole('group', { name: /^Créneau 1/ }).getByLabel('Début', { exact: true }).fill('08:00');
    await panel.getByRole('button', { name: 'Envoyer la demande' }).click();
    await poll(() => panel.locator('.field-error, .notice.error').count()).toBeGreaterThan(0);
    await panel.getByRole('button', { name: 'Annuler' }).click();

    // Refused with a reason: the employee reads it.
    const refused = await walk.env.post(`/api/shift-change-requests/${filed.id}/refuse/`, await walk.env.login('mgr1'), {
      version: filed.version, reason: 'Réunion d’équipe ce jour-là.',
    });
    expect(refused.status).toBe(200);
    await page.getByRole('link', { name: 'Mes demandes' }).click();
    const card = page.locator('.card', { hasText: 'Journée du 24/11/2026' });
    await poll(() => card.locator('.badge').textContent()).toBe('Refusée');
    expect(await card.textContent()).toContain('Motif de la décision : Réunion d’équipe ce jour-là.');
    expect(await card.textContent()).toContain('télétravail');
    await page.getByRole('link', { name: /^Notifications/ }).click();
    await page.locator('.notification.level-error', { hasText: 'Demande de modification refusée' }).waitFor();
    expect(page.problems.filter((problem) => !problem.includes('400'))).toEqual([]);
    await page.context().close();
  });
});
