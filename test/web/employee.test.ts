import { beforeAll, describe, expect, it } from 'vitest';
import { typeIds } from '../api/absence-helpers.js';
import { checkPage, counterFigures, login, numberIn, openPage, poll, screenshots, browserWalk } from './browser.js';

const walk = browserWalk();
let types: Record<string, number>;

beforeAll(async () => {
  types = await typeIds(walk.env);
});

async function fileAbsence(code: string, dateStart: string, dateEnd: string): Promise<{ id: number; version: number }> {
  const res = await walk.env.post('/api/absences/', await walk.env.login('alice'), {
    employee: walk.env.ids.employees!.alice, type: types[code], date_start: dateStart, date_end: dateEnd,
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('employee screens', () => {
  it('"Mes compteurs" shows Acquis, Pris, Planifiés, Restant as the server counts them, and moves with a withdrawal', async () => {
    const pending = await fileAbsence('CP', '2026-12-14', '2026-12-16');
    const alice = await walk.env.login('alice');
    const before = (await walk.env.get('/api/counters/', alice)).body.CP;

    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.getByRole('link', { name: 'Mes compteurs' }).click();
    await page.getByRole('heading', { name: /Congés payés|CP/ }).first().waitFor();
    await poll(() => page.getByText('Année 2026').count()).toBe(1);
    const shown = await counterFigures(page, 'CP');
    expect(Object.keys(shown)).toEqual(['Acquis', 'Pris', 'Planifiés', 'Restant']);
    expect(numberIn(shown.Planifiés)).toBe(Number(before.planned));
    expect(numberIn(shown.Restant)).toBe(Number(before.remaining));
    expect(numberIn(shown.Acquis)).toBe(Number(before.acquired));
    expect(Number(before.planned)).toBeGreaterThan(0);
    await checkPage(page, 'Mes compteurs');
    await screenshots(page, 'counters');

    // The next year, then back.
    await page.getByRole('button', { name: 'Année 2027' }).click();
    await poll(() => page.getByText('Année 2027').count()).toBe(1);
    await poll(async () => (await counterFigures(page, 'CP')).Acquis).toBe('25 jours');
    await page.getByRole('button', { name: 'Année 2026' }).click();

    // Withdrawing the pending request releases its reservation.
    await page.getByRole('link', { name: 'Mes demandes' }).click();
    const card = page.locator('.card', { hasText: '14/12/2026' });
    expect(await card.locator('.badge').textContent()).toBe('En attente');
    await checkPage(page, 'Mes demandes');
    await screenshots(page, 'my-requests');
    // Withdrawing asks first, naming what would be withdrawn; « Non, la garder » keeps it (and the focus returns).
    await card.getByRole('button', { name: 'Retirer la demande' }).click();
    const question = card.getByRole('group', { name: /^Retirer la demande d’absence «\s.+\s» du 14\/12\/2026.* \(\d+(,\d+)? jours?\) \?/ });
    await question.waitFor();
    await poll(() => page.evaluate('document.activeElement?.textContent')).toBe('Oui, retirer la demande');
    await checkPage(page, 'Mes demandes, retrait à confirmer');
    await screenshots(page, 'withdraw-confirm');
    await card.getByRole('button', { name: 'Non, la garder' }).click();
    await poll(() => page.evaluate('document.activeElement?.textContent')).toBe('Retirer la demande');
    expect((await walk.env.get(`/api/absences/${pending.id}/`, alice)).status).toBe(200);
    await card.getByRole('button', { name: 'Retirer la demande' }).click();
    await card.getByRole('button', { name: 'Oui, retirer la demande' }).click();
    await card.waitFor({ state: 'detached' });
    expect((await walk.env.get(`/api/absences/${pending.id}/`, alice)).status).toBe(404);
    await page.getByRole('link', { name: 'Mes compteurs' }).click();
    const after = (await walk.env.get('/api/counters/', alice)).body.CP;
    // Planifiés with Restant: before the card is drawn every figure reads 0, which a planned of 0 equals.
    await poll(async () => {
      const shown = await counterFigures(page, 'CP');
      return [numberIn(shown.Planifiés), numberIn(shown.Restant)];
    }).toEqual([Number(after.planned), Number(after.remaining)]);
    expect(Number(after.planned)).toBeLessThan(Number(before.planned));
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('a decision reaches the employee: state in "Mes demandes", notification counted and marked as read', async () => {
    const absence = await fileAbsence('CT', '2026-12-28', '2026-12-28');
    const refused = await walk.env.post(`/api/absences/${absence.id}/refuse/`, await walk.env.login('mgr1'), {
      version: absence.version, reason: 'Service déjà réduit entre les fêtes.',
    });
    expect(refused.status).toBe(200);

    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    const menuLink = page.getByRole('link', { name: /^Notifications/ });
    await poll(() => menuLink.textContent()).toBe('Notifications1');
    expect(await menuLink.getAttribute('aria-current')).toBeNull();
    await page.getByRole('link', { name: 'Mes demandes' }).click();
    const card = page.locator('.card', { hasText: '28/12/2026' });
    expect(await card.locator('.badge').textContent()).toBe('Refusée');
    expect(await card.textContent()).toContain('Motif de la décision : Service déjà réduit entre les fêtes.');

    await menuLink.click();
    const notification = page.locator('.notification', { hasText: "Demande d'absence refusée" });
    await notification.waitFor();
    expect(await notification.textContent()).toContain('Service déjà réduit entre les fêtes.');
    expect(await notification.getAttribute('class')).toContain('level-error');
    await checkPage(page, 'Notifications');
    await screenshots(page, 'notifications');
    await notification.getByRole('button', { name: 'Marquer comme lue' }).click();
    await poll(() => notification.getByRole('button', { name: 'Marquer comme lue' }).count()).toBe(0);
    await poll(() => menuLink.textContent()).toBe('Notifications');
    const read = await walk.env.get('/api/notifications/?unread=true', await walk.env.login('alice'));
    expect(read.body.count).toBe(0);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });
});
