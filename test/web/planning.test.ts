import { describe, expect, it } from 'vitest';
import { typeIds } from '../api/absence-helpers.js';
import { checkPage, login, openPage, poll, screenshots, browserWalk } from './browser.js';

const walk = browserWalk();

/** Arranges, through the API, a week of alice's with every kind of cell (the business week is 16-22/11/2026). */
async function arrangeWeek(): Promise<void> {
  const types = await typeIds(walk.env);
  const alice = await walk.env.login('alice');
  const mgr1 = await walk.env.login('mgr1');
  const employee = walk.env.ids.employees!.alice;
  const expectStatus = (res: { status: number; text: string }, status: number) => expect(res.status, res.text).toBe(status);

  // Monday morning off sick (validated): a half-day block next to the worked afternoon.
  const sick = await walk.env.post('/api/absences/', alice, { employee, type: types.MAL, date_start: '2026-11-16', date_end: '2026-11-16', start_half: 'morning', end_half: 'morning' });
  expectStatus(sick, 201);
  expectStatus(await walk.env.post(`/api/absences/${sick.body.id}/validate/`, mgr1, { version: sick.body.version }), 200);
  // Tuesday worked differently (validated day change).
  const change = await walk.env.post('/api/shift-change-requests/', alice, {
    date: '2026-11-17', reason: 'demande_personnelle',
    slots: [{ start_time: '10:00', end_time: '18:00', break_start_time: '13:00', break_end_time: '13:30', break_paid: false }],
  });
  expectStatus(change, 201);
  expectStatus(await walk.env.post(`/api/shift-change-requests/${change.body.id}/validate/`, mgr1, { version: change.body.version }), 200);
  // Wednesday: a pending telework request.
  expectStatus(await walk.env.post('/api/shift-change-requests/', alice, { date: '2026-11-18', reason: 'demande_personnelle', is_remote: true }), 201);
  // Thursday-Friday: granted leave whose cancellation is asked.
  const leave = await walk.env.post('/api/absences/', alice, { employee, type: types.CP, date_start: '2026-11-19', date_end: '2026-11-20' });
  expectStatus(leave, 201);
  expectStatus(await walk.env.post(`/api/absences/${leave.body.id}/validate/`, mgr1, { version: leave.body.version }), 200);
  expectStatus(await walk.env.post(`/api/absences/${leave.body.id}/request-cancellation/`, alice, { comment: 'Finalement présente.' }), 200);
}

describe('Mon planning', () => {
  it('draws the week as a grid: half-day absence, modified day, pending request, requested cancellation, on-call, rest', async () => {
    await arrangeWeek();
    const planning = (await walk.env.get('/api/planning/', await walk.env.login('alice'))).body;

    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.getByRole('link', { name: 'Mon planning' }).click();
    const grid = page.getByRole('table');
    await grid.waitFor();
    const day = (date: string) => page.locator(`.day[data-date="${date}"]`);
    await day('2026-11-16').waitFor();
    expect(await page.locator('.period').textContent()).toBe('Semaine du 16/11/2026');

    // Monday: the sick morning and the worked afternoon, two blocks.
    expect(await day('2026-11-16').locator('.block.absence').textContent()).toContain('MAL');
    expect(await day('2026-11-16').locator('.block.absence').textContent()).toContain('(matin)');
    expect(await day('2026-11-16').locator('.block.work').count()).toBe(1);
    // Tuesday: modified to 10:00-18:00.
    const tuesday = day('2026-11-17').locator('.block.work.modified');
    expect(await tuesday.textContent()).toContain('10:00–18:00');
    expect(await tuesday.textContent()).toContain('Modifiée');
    // Wednesday: the pending request is marked.
    expect(await day('2026-11-18').locator('.block.pending').textContent()).toContain('Demande en attente');
    // Thursday and Friday: the leave is drawn, its cancellation marked.
    for (const date of ['2026-11-19', '2026-11-20']) {
      const block = day(date).locator('.block.absence');
      expect(await block.textContent()).toContain('CP');
      expect(await block.getAttribute('class')).toContain('cancelling');
      expect(await block.textContent()).toContain('Annulation demandée');
    }
    // Weekend: rest; on-call periods wherever the server gives them.
    expect(await day('2026-11-21').locator('.block.rest').count()).toBe(1);
    for (const cell of planning.cells as Array<{ date: string; blocks: Array<{ on_call: Array<{ name: string }> }> }>) {
      const onCall = cell.blocks.flatMap((block) => block.on_call);
      expect(await day(cell.date).locator('.block.on-call').count(), cell.date).toBe(onCall.length > 0 ? 1 : 0);
      // Who is on call, as the server names them.
      if (onCall.length > 0) expect(await day(cell.date).locator('.block.on-call').textContent()).toContain(onCall[0]!.name);
    }
    await checkPage(page, 'Mon planning, semaine');
    await screenshots(page, 'planning-week');

    // The month: whole weeks around November, the days outside the month dimmed.
    await page.getByRole('button', { name: 'Mois' }).click();
    await poll(() => page.locator('.period').textContent()).toBe('novembre 2026');
    await day('2026-11-30').waitFor();
    expect(await page.locator('.day[data-date="2026-10-26"]').count()).toBe(1);
    expect(await page.locator('td.outside').count()).toBe(12); // 26-31 October, 1-6 December
    expect(await day('2026-11-19').locator('.block.absence').textContent()).toContain('CP');
    await checkPage(page, 'Mon planning, mois');
    await screenshots(page, 'planning-month');
    await page.getByRole('button', { name: 'Mois suivant' }).click();
    await poll(() => page.locator('.period').textContent()).toBe('décembre 2026');
    // The month view comes back to the current month (the server's: 16/11/2026), the week view to the current week.
    expect(await page.getByRole('button', { name: 'Cette semaine' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Ce mois-ci' }).click();
    await poll(() => page.locator('.period').textContent()).toBe('novembre 2026');
    await page.getByRole('button', { name: 'Semaine', exact: true }).click();
    await page.getByRole('button', { name: 'Semaine suivante' }).click();
    await poll(() => page.locator('.period').textContent()).not.toBe('Semaine du 16/11/2026');
    await page.getByRole('button', { name: 'Cette semaine' }).click();
    await poll(() => page.locator('.period').textContent()).toBe('Semaine du 16/11/2026');
    await page.getByRole('button', { name: 'Semaine suivante' }).click();
    await poll(() => page.locator('.period').textContent()).toBe('Semaine du 23/11/2026');
    await day('2026-11-23').waitFor();
    expect(page.problems).toEqual([]);
    await page.context().close();
  });
});
