/**
 * The manager screens: "File des demandes" (filters, 10 a page), the decision panel (absence and
 * day change; the DA without action foot; the 409 of a second decider; keyboard alone) and
 * "Déclarer une absence". Against a real server and database; axe-core and screenshots.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { PDF, typeIds } from '../api/absence-helpers.js';
import {
  checkPage, counterFigures, login, numberIn, openPage, poll, screenshots, browserWalk, DESKTOP, PHONE, SCREENSHOT_DIR, type WatchedPage,
} from './browser.js';

const walk = browserWalk();
let types: Record<string, number>;
let E: Record<string, number>;

beforeAll(async () => {
  types = await typeIds(walk.env);
  E = walk.env.ids.employees!;
});

const STALE = 'Quelqu’un d’autre a déjà décidé ; rechargez la file';

/** The DOM as these checks use it inside the page (the server's type check knows no DOM). */
type DomNode = { ownerDocument: { activeElement: unknown }; contains(other: unknown): boolean };
/** Does the element hold the keyboard focus? */
const hasFocus = (locator: Locator) =>
  locator.evaluate((element) => (element as unknown as DomNode) === (element as unknown as DomNode).ownerDocument.activeElement);
/** Does the focus lie inside the element? */
const holdsFocus = (locator: Locator) =>
  locator.evaluate((element) => (element as unknown as DomNode).contains((element as unknown as DomNode).ownerDocument.activeElement));

/**
 * The panel is a modal dialog that scrolls on its own: captures of the screen (not of the page
 * behind it) at desktop and phone widths, its top and its foot.
 */
async function panelScreenshots(page: Page, dialog: Locator, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  for (const [label, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    await page.setViewportSize(viewport);
    await dialog.evaluate((element) => { (element as unknown as { scrollTop: number }).scrollTop = 0; });
    await page.waitForTimeout(100);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${label}.png`) });
    await dialog.evaluate((element) => { const box = element as unknown as { scrollTop: number; scrollHeight: number }; box.scrollTop = box.scrollHeight; });
    await page.waitForTimeout(100);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-foot-${label}.png`) });
  }
  await page.setViewportSize(DESKTOP);
}

/** The browser logs every refused request; the one a step provoked on purpose is no page error. */
function forgetRefusal(page: WatchedPage, status: number): void {
  const kept = page.problems.filter((problem) => !problem.includes(`status of ${status}`));
  page.problems.splice(0, page.problems.length, ...kept);
}

/** Files an absence request as the employee (API), returns its id. */
async function fileAbsence(employee: string, type: string, dateStart: string, dateEnd = dateStart): Promise<number> {
  const token = await walk.env.login(employee);
  const res = await walk.env.post('/api/absences/', token, { employee: E[employee], type: types[type], date_start: dateStart, date_end: dateEnd });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function openQueue(page: WatchedPage, user: string): Promise<void> {
  await login(page, user);
  await page.getByRole('link', { name: 'File des demandes' }).click();
  await page.getByRole('heading', { name: 'File des demandes', level: 1 }).waitFor();
  await page.locator('table.queue caption').waitFor();
}

const filters = (page: Page) => page.getByRole('search', { name: 'Filtres de la file' });
const panel = (page: Page, name = 'Demande d’absence') => page.getByRole('dialog', { name });
const examine = (page: Page, description: RegExp) => page.getByRole('button', { name: description });

describe('manager screens', () => {
  it('an employee files an absence with a document and sees the preview; a manager validates it in the panel; the employee sees state, notification and counters', async () => {
    const employee = await openPage(walk.browser, walk.env.url);
    await login(employee, 'alice');
    const before = (await walk.env.get('/api/counters/', await walk.env.login('alice'))).body.CP;
    await employee.getByRole('link', { name: 'Demander une absence' }).click();
    const form = employee.getByRole('form', { name: 'Demande d’absence' });
    await form.getByLabel('Motif').selectOption(String(types.CP));
    await form.getByLabel('Premier jour').fill('2026-12-14');
    await form.getByLabel('Dernier jour').fill('2026-12-16');
    const preview = employee.getByRole('region', { name: 'Aperçu' });
    await poll(() => preview.locator('.big').textContent()).toBe('3 jours');
    expect(await preview.textContent()).toContain('CP 2026');
    await form.getByLabel(/^Justificatifs/).setInputFiles({ name: 'billet.pdf', mimeType: 'application/pdf', buffer: PDF });
    await form.getByRole('button', { name: 'Envoyer la demande' }).click();
    await employee.getByRole('heading', { name: 'Mes demandes' }).waitFor();

    const manager = await openPage(walk.browser, walk.env.url);
    await openQueue(manager, 'mgr1');
    await examine(manager, /Examiner la demande de Alice Martin, Congés payés, du 14\/12\/2026 au 16\/12\/2026/).click();
    const dialog = panel(manager);
    await dialog.waitFor();
    await dialog.getByRole('form', { name: 'Décision' }).waitFor();
    const text = await dialog.textContent();
    expect(text).toContain('3 jours');
    // A manager holds no right to read a document's content: its name, not a download.
    expect(text).toContain('billet.pdf');
    expect(text).toContain('contenu réservé aux RH');
    expect(await dialog.getByRole('button', { name: /billet\.pdf/ }).count()).toBe(0);
    // The employee's CP counter as the server counts it (the request already reserved its days).
    await poll(() => dialog.locator('.counter-table tbody tr').count()).toBe(1);
    await checkPage(manager, 'Panneau de décision (absence)');
    await panelScreenshots(manager, dialog, 'decision-panel-absence');
    await dialog.getByRole('button', { name: 'Valider', exact: true }).click();
    await poll(() => manager.getByRole('status').filter({ hasText: 'Demande d’absence de Alice Martin validée.' }).count()).toBe(1);
    expect(await panel(manager).count()).toBe(0);

    await employee.reload();
    await employee.getByRole('heading', { name: 'Mes demandes' }).waitFor();
    const card = employee.locator('.card', { hasText: 'du 14/12/2026 au 16/12/2026' });
    await poll(() => card.locator('.badge').textContent()).toBe('Validée');
    await poll(() => employee.getByRole('link', { name: /^Notifications/ }).textContent()).toBe('Notifications1');
    await employee.getByRole('link', { name: /^Notifications/ }).click();
    await employee.locator('.notification', { hasText: "Demande d'absence validée" }).waitFor();
    await employee.getByRole('link', { name: 'Mes compteurs' }).click();
    const after = (await walk.env.get('/api/counters/', await walk.env.login('alice'))).body.CP;
    expect(Number(after.remaining)).toBe(Number(before.remaining) - 3);
    await poll(async () => numberIn((await counterFigures(employee, 'CP')).Restant)).toBe(Number(after.remaining));
    expect(numberIn((await counterFigures(employee, 'CP')).Planifiés)).toBe(Number(after.planned));
    expect(employee.problems).toEqual([]);
    expect(manager.problems).toEqual([]);
    await employee.context().close();
    await manager.context().close();
  });

  it('HR downloads a document it may read; a day change refused without reason shows the error under the reason, then with it the employee reads it', async () => {
    const absenceId = await fileAbsence('alice', 'MAL', '2026-11-17');
    const alice = await walk.env.login('alice');
    const form = new FormData();
    form.append('add_documents', new Blob([new Uint8Array(PDF)]), 'arret.pdf');
    expect((await walk.env.post(`/api/absences/${absenceId}/documents/`, alice, undefined, { form })).status).toBe(200);
    const filed = await walk.env.post('/api/shift-change-requests/', alice, { date: '2026-11-25', reason: 'urgence', is_remote: true });
    expect(filed.status).toBe(201);

    const page = await openPage(walk.browser, walk.env.url);
    await openQueue(page, 'rh1');
    await examine(page, /Examiner la demande de Alice Martin, Maladie/).click();
    const dialog = panel(page);
    const download = page.waitForEvent('download');
    await dialog.getByRole('button', { name: /arret\.pdf/ }).click();
    expect((await download).suggestedFilename()).toBe('arret.pdf');
    await dialog.getByRole('button', { name: /^Fermer/ }).click();

    await filters(page).getByLabel('Type de demande').selectOption('shift_change');
    await poll(() => page.locator('table.queue caption').textContent()).toContain('Demandes de modification de journée');
    await examine(page, /Examiner la modification de journée de Alice Martin du 25\/11\/2026/).click();
    const shift = panel(page, 'Demande de modification de journée');
    await shift.getByRole('form', { name: 'Décision' }).waitFor();
    expect(await shift.textContent()).toContain('télétravail');
    await shift.getByRole('button', { name: 'Refuser' }).click();
    const reason = shift.getByLabel('Motif de la décision');
    await poll(() => reason.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await reason.getAttribute('aria-describedby'))!.split(' ');
    expect((await page.locator(`[id="${describedBy.at(-1)}"]`).textContent())!.length).toBeGreaterThan(5);
    forgetRefusal(page, 400);
    await checkPage(page, 'Panneau de décision (modification, en erreur)');
    await panelScreenshots(page, shift, 'decision-panel-day-change');
    await reason.fill('Réunion institutionnelle ce jour-là.');
    await shift.getByRole('button', { name: 'Refuser' }).click();
    await poll(() => page.getByRole('status').filter({ hasText: 'Modification de journée de Alice Martin refusée.' }).count()).toBe(1);

    const employee = await openPage(walk.browser, walk.env.url);
    await login(employee, 'alice');
    await employee.getByRole('link', { name: 'Mes demandes' }).click();
    const card = employee.locator('.card', { hasText: 'Journée du 25/11/2026' });
    await poll(() => card.locator('.badge').textContent()).toBe('Refusée');
    expect(await card.textContent()).toContain('Motif de la décision : Réunion institutionnelle ce jour-là.');
    expect(page.problems).toEqual([]);
    expect(employee.problems).toEqual([]);
    await page.context().close();
    await employee.context().close();
  });

  it('corrections in the panel: a date_end correction previews its count and needs a reason; an adjusted day is granted with its reason', async () => {
    await fileAbsence('alice', 'FOR', '2026-12-21', '2026-12-23');
    const alice = await walk.env.login('alice');
    const filed = await walk.env.post('/api/shift-change-requests/', alice, {
      date: '2026-11-26', reason: 'demande_personnelle', slots: [{ start_time: '08:00', end_time: '16:00', break_start_time: '12:00', break_end_time: '12:30' }],
    });
    expect(filed.status).toBe(201);
    const page = await openPage(walk.browser, walk.env.url);
    await openQueue(page, 'mgr1');
    await examine(page, /Examiner la demande de Alice Martin, Formation, du 21\/12\/2026 au 23\/12\/2026/).click();
    const dialog = panel(page);
    const decision = dialog.getByRole('form', { name: 'Décision' });
    await decision.getByLabel('Date de fin (correction)').fill('2026-12-22');
    await poll(() => decision.locator('.correction-preview strong').textContent()).toBe('2 jours');
    await decision.getByRole('button', { name: 'Valider avec correction' }).click();
    const reason = decision.getByLabel('Motif de la décision');
    await poll(() => reason.getAttribute('aria-invalid')).toBe('true');
    await reason.fill('Le 23 est un jour de réunion.');
    await decision.getByRole('button', { name: 'Valider avec correction' }).click();
    await poll(() => page.getByRole('status').filter({ hasText: 'validée' }).count()).toBe(1);
    const { body: absences } = await walk.env.get(`/api/absences/?employee=${E.alice}&from=2026-12-21&to=2026-12-21`, alice);
    expect(absences.results[0]).toMatchObject({ status: 'validated', date_end: '2026-12-22', decision_reason: 'Le 23 est un jour de réunion.' });

    await filters(page).getByLabel('Type de demande').selectOption('shift_change');
    await examine(page, /Examiner la modification de journée de Alice Martin du 26\/11\/2026/).click();
    const shift = panel(page, 'Demande de modification de journée');
    const foot = shift.getByRole('form', { name: 'Décision' });
    await foot.getByLabel('Accorder une journée ajustée').check();
    const slot = foot.getByRole('group', { name: 'Créneau accordé 1' });
    expect(await slot.getByLabel('Début', { exact: true }).inputValue()).toBe('08:00');
    await slot.getByLabel('Début', { exact: true }).fill('09:00');
    await slot.getByLabel('Fin', { exact: true }).fill('17:00');
    await foot.getByRole('button', { name: 'Valider la journée ajustée' }).click();
    await poll(() => foot.getByLabel('Motif de la décision').getAttribute('aria-invalid')).toBe('true');
    await foot.getByLabel('Motif de la décision').fill('Ouverture assurée à 9 h seulement.');
    await foot.getByRole('button', { name: 'Valider la journée ajustée' }).click();
    await poll(() => page.getByRole('status').filter({ hasText: 'Modification de journée de Alice Martin validée.' }).count()).toBe(1);
    const { body: granted } = await walk.env.get(`/api/shift-change-requests/${filed.body.id}/`, alice);
    expect(granted.granted_slots[0]).toMatchObject({ start_time: '09:00', end_time: '17:00' });
    expect(granted.decision_reason).toBe('Ouverture assurée à 9 h seulement.');
    forgetRefusal(page, 400);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('a requested cancellation is decided in the panel: what granting it would recredit, a refusal with its reason', async () => {
    const id = await fileAbsence('alice', 'CP', '2026-12-28', '2026-12-29');
    expect((await walk.env.post(`/api/absences/${id}/validate/`, await walk.env.login('rh1'), { version: 1 })).status).toBe(200);
    expect((await walk.env.post(`/api/absences/${id}/request-cancellation/`, await walk.env.login('alice'), { comment: 'Finalement je travaille.' })).status).toBe(200);
    const page = await openPage(walk.browser, walk.env.url);
    await openQueue(page, 'mgr1');
    await filters(page).getByLabel('Statut').selectOption('cancellation_requested');
    await examine(page, /Examiner la demande de Alice Martin, Congés payés, du 28\/12\/2026 au 29\/12\/2026/).click();
    const dialog = panel(page);
    const foot = dialog.getByRole('form', { name: 'Décision' });
    await foot.waitFor();
    const text = await dialog.textContent();
    expect(text).toContain('Finalement je travaille.');
    expect(text).toContain('Accorder l’annulation recréditerait');
    expect(text).toContain('CP 2026');
    await foot.getByRole('button', { name: 'Refuser l’annulation' }).click();
    await poll(() => foot.getByLabel('Motif de la décision').getAttribute('aria-invalid')).toBe('true');
    await foot.getByLabel('Motif de la décision').fill('Planning de fin d’année déjà bouclé.');
    await foot.getByRole('button', { name: 'Refuser l’annulation' }).click();
    await poll(() => page.getByRole('status').filter({ hasText: 'Annulation refusée : l’absence de Alice Martin est maintenue.' }).count()).toBe(1);
    const { body } = await walk.env.get(`/api/absences/${id}/`, await walk.env.login('alice'));
    expect(body).toMatchObject({ status: 'validated', cancellation_decision_reason: 'Planning de fin d’année déjà bouclé.' });
    forgetRefusal(page, 400);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('two managers decide the same request: the second sees the 409 message and the queue reloads', async () => {
    await fileAbsence('alice', 'FOR', '2026-12-03');
    const first = await openPage(walk.browser, walk.env.url);
    const second = await openPage(walk.browser, walk.env.url);
    await Promise.all([openQueue(first, 'mgr1'), openQueue(second, 'rh1')]);
    const name = /Examiner la demande de Alice Martin, Formation, 03\/12\/2026/;
    await examine(first, name).click();
    await examine(second, name).click();
    await panel(first).getByRole('form', { name: 'Décision' }).waitFor();
    await panel(second).getByRole('form', { name: 'Décision' }).waitFor();

    await panel(first).getByRole('button', { name: 'Valider', exact: true }).click();
    await poll(() => first.getByRole('status').filter({ hasText: 'validée' }).count()).toBe(1);
    await panel(second).getByLabel('Motif de la décision').fill('Formation déjà complète.');
    await panel(second).getByRole('button', { name: 'Refuser' }).click();
    await poll(() => panel(second).getByRole('alert').filter({ hasText: STALE }).count()).toBe(1);
    // The queue behind the panel was reloaded: the request left the pending list.
    await poll(() => examine(second, name).count()).toBe(0);
    // The record was reloaded too: decided, it has no action foot; the message stays.
    await poll(() => panel(second).getByRole('form', { name: 'Décision' }).count()).toBe(0);
    expect(await panel(second).locator('.badge').textContent()).toBe('Validée');
    expect(await panel(second).getByRole('alert').filter({ hasText: STALE }).count()).toBe(1);
    forgetRefusal(second, 409);
    await checkPage(second, 'Panneau de décision, décision périmée');
    await panelScreenshots(second, panel(second), 'decision-panel-stale');
    await panel(second).getByRole('button', { name: /^Fermer/ }).click();
    expect(await panel(second).count()).toBe(0);
    // The first decision stands.
    const { body } = await walk.env.get(`/api/absences/?employee=${E.alice}&from=2026-12-03&to=2026-12-03`, await walk.env.login('mgr1'));
    expect(body.results[0].status).toBe('validated');
    expect(first.problems).toEqual([]);
    expect(second.problems).toEqual([]);
    await first.context().close();
    await second.context().close();
  });

  it('the DA reads the panel with no action foot, and has no declaration screen', async () => {
    await fileAbsence('alice', 'FOR', '2026-12-04');
    const page = await openPage(walk.browser, walk.env.url);
    await openQueue(page, 'da');
    expect(await page.getByRole('link', { name: 'Déclarer une absence' }).count()).toBe(0);
    await examine(page, /Examiner la demande de Alice Martin, Formation, 04\/12\/2026/).click();
    const dialog = panel(page);
    await dialog.getByRole('heading', { name: 'Justificatifs' }).waitFor();
    expect(await dialog.getByRole('form', { name: 'Décision' }).count()).toBe(0);
    expect(await dialog.getByRole('button', { name: /Valider|Refuser/ }).count()).toBe(0);
    await checkPage(page, 'Panneau de décision du DA');
    await panelScreenshots(page, dialog, 'decision-panel-da');
    await page.keyboard.press('Escape');
    expect(await dialog.count()).toBe(0);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('the decision panel works by keyboard alone: focus in, Escape back to the row, Enter to validate', async () => {
    await fileAbsence('bruno', 'FOR', '2026-12-09');
    const page = await openPage(walk.browser, walk.env.url);
    await openQueue(page, 'mgr1');
    const opener = examine(page, /Examiner la demande de Bruno Lambert, Formation, 09\/12\/2026/);
    await opener.waitFor();
    // From the filters, Tab until the row's button holds the focus.
    await filters(page).getByLabel('Type de demande').focus();
    for (let step = 0; step < 60 && !(await hasFocus(opener)); step++) {
      await page.keyboard.press('Tab');
    }
    expect(await hasFocus(opener)).toBe(true);
    await page.keyboard.press('Enter');
    const dialog = panel(page);
    await dialog.getByRole('form', { name: 'Décision' }).waitFor();
    expect(await holdsFocus(dialog)).toBe(true);
    await page.keyboard.press('Escape');
    expect(await dialog.count()).toBe(0);
    await poll(() => hasFocus(opener)).toBe(true);

    await page.keyboard.press('Enter');
    await dialog.getByRole('form', { name: 'Décision' }).waitFor();
    const validate = dialog.getByRole('button', { name: 'Valider', exact: true });
    for (let step = 0; step < 40 && !(await hasFocus(validate)); step++) {
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('Enter');
    await poll(() => page.getByRole('status').filter({ hasText: 'Demande d’absence de Bruno Lambert validée.' }).count()).toBe(1);
    // The row left the pending queue: the focus is on the page title.
    await poll(() => hasFocus(page.getByRole('heading', { name: 'File des demandes', level: 1 }))).toBe(true);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('filters (kind, status, establishment, employee, dates) and 10 rows a page', async () => {
    const rh = await walk.env.login('rh1');
    for (let day = 0; day < 11; day++) {
      await fileAbsence('bruno', 'FOR', `2027-01-${String(4 + day).padStart(2, '0')}`);
    }
    expect((await walk.env.post('/api/absences/', rh, { employee: E.chloe, type: types.FOR, date_start: '2027-01-05' })).status).toBe(201);
    const page = await openPage(walk.browser, walk.env.url);
    await openQueue(page, 'rh1');
    const bar = filters(page);
    await bar.getByLabel('Salarié').selectOption(String(E.bruno));
    await bar.getByLabel('Du').fill('2027-01-01');
    const caption = page.locator('table.queue caption');
    await poll(() => caption.textContent()).toBe('Demandes d’absence : 11 résultats, page 1 sur 2');
    expect(await page.locator('table.queue tbody tr').count()).toBe(10);
    await checkPage(page, 'File des demandes');
    await screenshots(page, 'queue');
    await page.getByRole('button', { name: 'Page suivante' }).click();
    await poll(() => caption.textContent()).toBe('Demandes d’absence : 11 résultats, page 2 sur 2');
    expect(await page.locator('table.queue tbody tr').count()).toBe(1);

    // Establishment E2 (IME): bruno (secondary workplace) and chloe; chloe's is a validated declaration.
    await bar.getByLabel('Salarié').selectOption('');
    await bar.getByLabel('Établissement').selectOption(String(walk.env.ids.establishments!.E2));
    await bar.getByLabel('Statut').selectOption('validated');
    await poll(() => caption.textContent()).toBe('Demandes d’absence : 1 résultat');
    expect(await page.locator('table.queue tbody').textContent()).toContain('Chloé Bernard');
    await bar.getByLabel('Au').fill('2027-01-04');
    await poll(() => caption.textContent()).toBe('Demandes d’absence : 0 résultat');
    await bar.getByRole('button', { name: 'Réinitialiser les filtres' }).click();
    await bar.getByLabel('Type de demande').selectOption('shift_change');
    await poll(() => caption.textContent()).toMatch(/^Demandes de modification de journée : \d+ résultats?/);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('a manager declares an absence for an employee of the perimeter (picker limited to it): born validated', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'mgr1');
    await page.getByRole('link', { name: 'Déclarer une absence' }).click();
    const form = page.getByRole('form', { name: 'Déclaration d’absence' });
    const picker = form.getByLabel('Salarié');
    // The employees arrive after the form is drawn: wait for them before reading the options.
    await picker.locator('option', { hasText: 'Martin Alice' }).waitFor({ state: 'attached' });
    const offered = await picker.locator('option').allTextContents();
    expect(offered).toContain('Martin Alice');
    expect(offered).not.toContain('Mercier David');
    await picker.selectOption(String(E.alice));
    await form.getByLabel('Motif').selectOption(String(types.FOR));
    await form.getByLabel('Premier jour', { exact: true }).fill('2026-12-17');
    await form.getByLabel('Dernier jour', { exact: true }).fill('2026-12-18');
    const preview = page.getByRole('region', { name: 'Aperçu' });
    await poll(() => preview.locator('.big').textContent()).toBe('2 jours');
    await checkPage(page, 'Déclarer une absence');
    await screenshots(page, 'declare-absence');
    await form.getByRole('button', { name: 'Déclarer l’absence' }).click();
    await poll(() => page.getByRole('status').filter({ hasText: 'Absence déclarée pour Alice Martin (du 17/12/2026 au 18/12/2026) : Validée.' }).count()).toBe(1);
    expect(await form.getByLabel('Motif').inputValue()).toBe('');
    expect(page.problems).toEqual([]);
    await page.context().close();
  });
});
