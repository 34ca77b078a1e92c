import { beforeAll, describe, expect, it } from 'vitest';
import { PDF, typeIds } from '../api/absence-helpers.js';
import { checkPage, counterFigures, login, numberIn, openPage, poll, screenshots, browserWalk } from './browser.js';

const walk = browserWalk();
let types: Record<string, number>;

beforeAll(async () => {
  types = await typeIds(walk.env);
});

describe('absence request', () => {
  it('an employee files an absence with a document, seeing the server’s preview; validated, it moves state, notification and counters', async () => {
    const alice = await walk.env.login('alice');
    const initial = (await walk.env.get('/api/counters/', alice)).body.CP;
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.getByRole('link', { name: 'Demander une absence' }).click();
    const form = page.getByRole('form', { name: 'Demande d’absence' });
    await form.getByLabel('Motif').selectOption(String(types.CP));
    await form.getByLabel('Premier jour').fill('2026-12-07');
    await form.getByLabel('Dernier jour').fill('2026-12-11');
    // CP takes no half-day: the form does not offer one.
    expect(await form.getByRole('group', { name: 'Demi-journées' }).count()).toBe(0);
    expect(await form.getByRole('group', { name: 'Cette journée' }).count()).toBe(0);

    const expected = (await walk.env.post('/api/absences/preview/', alice, {
      employee: walk.env.ids.employees!.alice, type: types.CP, date_start: '2026-12-07', date_end: '2026-12-11',
    })).body;
    const preview = page.getByRole('region', { name: 'Aperçu' });
    await poll(() => preview.locator('.big').textContent()).toBe(`${Number(expected.quantity)} jours`);
    expect(expected.counter_effects.length).toBeGreaterThan(0);
    for (const effect of expected.counter_effects) expect(await preview.textContent()).toContain(`${effect.counter} ${effect.year}`);

    // A file of another format is refused before any upload, under its field.
    const documents = form.getByLabel(/^Justificatifs/);
    await documents.setInputFiles({ name: 'note.txt', mimeType: 'text/plain', buffer: Buffer.from('bonjour') });
    const fileError = page.locator(`#${await documents.getAttribute('aria-describedby')}`);
    expect(await fileError.textContent()).toContain('seuls les fichiers PDF, JPG et PNG sont acceptés');
    await documents.setInputFiles({ name: 'attestation.pdf', mimeType: 'application/pdf', buffer: PDF });
    expect(await documents.getAttribute('aria-describedby')).toBeNull();
    await form.getByLabel('Commentaire (facultatif)').fill('Vacances en famille.');
    await checkPage(page, 'Demander une absence');
    await screenshots(page, 'absence-request');

    await form.getByRole('button', { name: 'Envoyer la demande' }).click();
    await page.getByRole('heading', { name: 'Mes demandes' }).waitFor();
    const card = page.locator('.card', { hasText: 'du 07/12/2026 au 11/12/2026' });
    await card.waitFor();
    expect(await card.locator('.badge').textContent()).toBe('En attente');
    expect(await card.textContent()).toContain('attestation.pdf');

    const { body: list } = await walk.env.get(`/api/absences/?employee=${walk.env.ids.employees!.alice}&status=pending`, alice);
    const filed = list.results.find((absence: { date_start: string }) => absence.date_start === '2026-12-07');
    expect(filed.documents.map((document: { filename: string }) => document.filename)).toEqual(['attestation.pdf']);

    const validated = await walk.env.post(`/api/absences/${filed.id}/validate/`, await walk.env.login('mgr1'), { version: filed.version });
    expect(validated.status).toBe(200);
    await page.reload();
    await page.getByRole('heading', { name: 'Mes demandes' }).waitFor();
    await poll(() => card.locator('.badge').textContent()).toBe('Validée');
    await poll(() => page.getByRole('link', { name: /^Notifications/ }).textContent()).toBe('Notifications1');
    await page.getByRole('link', { name: /^Notifications/ }).click();
    await page.locator('.notification', { hasText: "Demande d'absence validée" }).waitFor();
    // The counters as the server now counts them (the granted days left the reservation).
    const after = (await walk.env.get('/api/counters/', alice)).body.CP;
    await page.getByRole('link', { name: 'Mes compteurs' }).click();
    // All three figures at once: before the card is drawn every figure reads 0, which a taken of 0 equals.
    await poll(async () => {
      const shown = await counterFigures(page, 'CP');
      return [numberIn(shown.Pris), numberIn(shown.Planifiés), numberIn(shown.Restant)];
    }).toEqual([Number(after.taken), Number(after.planned), Number(after.remaining)]);
    // Moved by the filing (reserved in Planifiés) and kept by the validation of future days.
    expect(Number(after.taken) + Number(after.planned)).toBe(Number(initial.taken) + Number(initial.planned) + Number(expected.quantity));
    expect(Number(after.remaining)).toBe(Number(initial.remaining) - Number(expected.quantity));
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('the server’s errors appear under their field as the form changes; an hourly type asks for hours', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.getByRole('link', { name: 'Demander une absence' }).click();
    const form = page.getByRole('form', { name: 'Demande d’absence' });
    await form.getByLabel('Motif').selectOption(String(types.CP));
    // More than 14 days back (the business day is 16/11/2026).
    await form.getByLabel('Premier jour').fill('2026-10-01');
    await form.getByLabel('Dernier jour').fill('2026-10-02');
    const start = form.getByLabel('Premier jour');
    await poll(() => start.getAttribute('aria-invalid')).toBe('true');
    const message = page.locator(`#${await start.getAttribute('aria-describedby')}`);
    expect((await message.textContent())!.length).toBeGreaterThan(10);
    await checkPage(page, 'Demander une absence, en erreur');

    await form.getByLabel('Motif').selectOption(String(types.DON));
    expect(await form.getByLabel('Dernier jour').count()).toBe(0);
    await form.getByLabel('Date').fill('2026-12-02');
    await form.getByLabel('De').fill('09:00');
    await form.getByLabel('À', { exact: true }).fill('10:30');
    const preview = page.getByRole('region', { name: 'Aperçu' });
    await poll(() => preview.locator('.big').textContent()).toBe('1,5 h');
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('a one-day morning is one choice, previewed and filed as ½ jour; several days start in the afternoon and end at noon', async () => {
    const alice = await walk.env.login('alice');
    const employee = walk.env.ids.employees!.alice;
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.getByRole('link', { name: 'Demander une absence' }).click();
    const form = page.getByRole('form', { name: 'Demande d’absence' });
    const preview = page.getByRole('region', { name: 'Aperçu' });
    const send = form.getByRole('button', { name: 'Envoyer la demande' });
    await form.getByLabel('Motif').selectOption(String(types.ENF));
    await form.getByLabel('Premier jour').fill('2026-12-02');
    // One day: one choice, whose labels say what is counted; the whole day by default.
    const day = form.getByRole('group', { name: 'Cette journée' });
    expect(await day.locator('label').allTextContents())
      .toEqual(['Journée entière (compte 1 jour)', 'Matin seulement (compte ½ jour)', 'Après-midi seulement (compte ½ jour)']);
    expect(await form.getByRole('group', { name: 'Demi-journées' }).count()).toBe(0);
    await poll(() => preview.locator('.big').textContent()).toBe('1 jour');
    await day.getByLabel('Matin seulement').check();
    // The button waits for the count of what it would send.
    await poll(() => preview.locator('.big').textContent()).toBe('0,5 jour');
    await poll(() => send.isEnabled()).toBe(true);
    // The preview sits above the send button, at both widths.
    for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
      await page.setViewportSize(viewport);
      const [previewBox, sendBox] = [await preview.boundingBox(), await send.boundingBox()];
      if (viewport.width < 800) expect(previewBox!.y + previewBox!.height).toBeLessThanOrEqual(sendBox!.y);
      else expect(previewBox!.y).toBeLessThan(sendBox!.y);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    await checkPage(page, 'Demander une absence, un matin');
    await screenshots(page, 'absence-half-day');
    await send.click();
    await page.getByRole('heading', { name: 'Mes demandes' }).waitFor();
    const { body: list } = await walk.env.get(`/api/absences/?employee=${employee}&from=2026-12-02&to=2026-12-02`, alice);
    expect(list.results.map((row: Record<string, unknown>) => [row.start_half, row.end_half, row.counted_quantity]))
      .toEqual([['morning', 'morning', '0.50']]);

    // Several days: « commence l’après-midi » and « finit à midi », each counting half of its day.
    await page.getByRole('link', { name: 'Demander une absence' }).click();
    await form.getByLabel('Motif').selectOption(String(types.ENF));
    await form.getByLabel('Premier jour').fill('2026-12-15');
    await form.getByLabel('Dernier jour').fill('2026-12-16');
    expect(await form.getByRole('group', { name: 'Cette journée' }).count()).toBe(0);
    const halves = form.getByRole('group', { name: 'Demi-journées' });
    await poll(() => preview.locator('.big').textContent()).toBe('2 jours');
    await halves.getByLabel(/Commence l’après-midi/).check();
    await poll(() => preview.locator('.big').textContent()).toBe('1,5 jour');
    await halves.getByLabel(/Finit à midi/).check();
    await poll(() => preview.locator('.big').textContent()).toBe('1 jour');
    await poll(() => send.isEnabled()).toBe(true);
    await send.click();
    await page.getByRole('heading', { name: 'Mes demandes' }).waitFor();
    const { body: after } = await walk.env.get(`/api/absences/?employee=${employee}&from=2026-12-15&to=2026-12-16`, alice);
    expect(after.results.map((row: Record<string, unknown>) => [row.start_half, row.end_half, row.counted_quantity]))
      .toEqual([['afternoon', 'morning', '1.00']]);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('an employee is offered the reasons they may ask for, unavailable ones saying why; a manager declaring keeps every reason', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    await page.getByRole('link', { name: 'Demander une absence' }).click();
    const form = page.getByRole('form', { name: 'Demande d’absence' });
    const reason = form.getByLabel('Motif');
    await reason.locator('option', { hasText: 'Congés payés (CP)' }).waitFor({ state: 'attached' });
    const offered = await reason.locator('option').allTextContents();
    // The placeholder and alice's 40 reasons: no union congress, no « Absence injustifiée ».
    expect(offered).toHaveLength(41);
    expect(offered.some((text) => /\((ABS|SYN_CON|FOR)\)/.test(text))).toBe(false);
    // A reason whose counter is not open: shown, not choosable, and the form says why.
    const dlgDs = reason.locator('option', { hasText: '(DLG_DS)' });
    expect(await dlgDs.textContent()).toBe('Délégation délégué syndical (DLG_DS) — indisponible');
    expect(await dlgDs.isDisabled()).toBe(true);
    expect(await reason.locator('option', { hasText: '(DLG_CSE)' }).isDisabled()).toBe(false);
    const why = form.locator('details.unavailable');
    await why.locator('summary').click();
    expect(await why.textContent()).toContain(
      'Délégation délégué syndical (DLG_DS) : Aucun compteur DLG_DS ouvert pour 2026 : le motif « Délégation délégué syndical » ne peut pas être posé sur cette année.');
    await checkPage(page, 'Demander une absence, motifs indisponibles');
    await screenshots(page, 'absence-reasons');
    // A first day in 2027: CT has no counter that year, and becomes unavailable.
    await form.getByLabel('Premier jour').fill('2027-02-01');
    await poll(() => reason.locator('option', { hasText: '(CT)' }).textContent()).toBe('Congés trimestriels (CT) — indisponible');
    await page.context().close();

    const manager = await openPage(walk.browser, walk.env.url);
    await login(manager, 'mgr1');
    await manager.getByRole('link', { name: 'Déclarer une absence' }).click();
    const declaration = manager.getByRole('form', { name: 'Déclaration d’absence' });
    const picker = declaration.getByLabel('Salarié');
    await picker.locator('option', { hasText: 'Martin Alice' }).waitFor({ state: 'attached' });
    await picker.selectOption(String(walk.env.ids.employees!.alice));
    const full = declaration.getByLabel('Motif');
    await full.locator('option', { hasText: '(ABS)' }).waitFor({ state: 'attached' });
    expect(await full.locator('option').count()).toBe(53);
    expect(await full.locator('option', { hasText: '(SYN_CON)' }).isDisabled()).toBe(false);
    await checkPage(manager, 'Déclarer une absence, liste complète');
    expect(manager.problems).toEqual([]);
    await manager.context().close();
  });
});
