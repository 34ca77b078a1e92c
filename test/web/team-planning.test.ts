/**
 * "Planning d'équipe": a manager's 200-employee perimeter by the days of a month, rows
 * virtualised; absences (half-days), a modified day and a pending request drawn where they
 * are; weekends and holidays shaded; month navigation; establishment and team filters.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { Locator } from 'playwright-core';
import { addAgents } from '../helpers/large-perimeter.js';
import { browserWalk, checkPage, login, openPage, poll, SCREENSHOT_DIR, screenshots, type WatchedPage } from './browser.js';

const walk = browserWalk();
const ROW_HEIGHT = 44;

/**
 * 191 more employees in E1 (mgr1's perimeter: 200 in all), working Monday to Friday; and, in
 * December 2026: a week of leave, a sick morning, a modified day and a pending request.
 */
async function arrangePerimeter(): Promise<Record<string, number>> {
  const { E1 } = walk.env.ids.establishments!;
  const { 'E1-J': day, 'E1-M': morning } = walk.env.ids.posts!;
  await addAgents(walk.env.db, { establishment: E1!, evenPost: day!, oddPost: morning!, lastName: 'Charge' });
  const { rows } = await walk.env.db.query<{ last_name: string; id: number }>(
    "select last_name, id from app_public.employees where last_name in ('Charge 002', 'Charge 003', 'Charge 005', 'Charge 006')");
  const agent = Object.fromEntries(rows.map((row) => [row.last_name.slice(-3), row.id]));
  const type = async (code: string) =>
    (await walk.env.db.query<{ id: number }>('select id from app_public.absence_types where code = $1', [code])).rows[0]!.id;
  const absence = `insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, status)
                   values ($1, $2, $3, $4, $5, $6, $7)`;
  await walk.env.db.query(absence, [agent['002'], await type('CP'), '2026-12-07', '2026-12-11', null, null, 'validated']);
  await walk.env.db.query(absence, [agent['003'], await type('MAL'), '2026-12-14', '2026-12-14', 'morning', 'morning', 'validated']);
  await walk.env.db.query(absence, [agent['006'], await type('CP'), '2026-12-16', '2026-12-16', null, null, 'pending']);
  await walk.env.db.query(
    `insert into app_public.day_modifications (employee_id, date, slots, is_remote, comment)
     values ($1, '2026-12-15', array[row('10:00', '18:00', '13:00', '13:30', false, $2::int, $3::int, false)::app_public.slot], false, 'Réunion')`,
    [agent['005'], day, E1]);
  // An hourly absence among the worked slot, a half-day whose cancellation is asked.
  const more = (await walk.env.db.query<{ last_name: string; id: number }>(
    "select last_name, id from app_public.employees where last_name in ('Charge 007', 'Charge 008')")).rows;
  for (const row of more) agent[row.last_name.slice(-3)] = row.id;
  await walk.env.db.query(
    `insert into app_public.absences (employee_id, type_id, date_start, date_end, start_time, end_time, status)
     values ($1, $2, '2026-12-17', '2026-12-17', '10:00', '11:30', 'validated')`, [agent['007'], await type('DON')]);
  await walk.env.db.query(absence, [agent['008'], await type('MAL'), '2026-12-18', '2026-12-18', 'afternoon', 'afternoon', 'cancellation_requested']);
  return agent;
}

/**
 * What a cell of the grid showed when it drew the blocks of GET /api/planning/ (before the
 * compact read, issue 29 point 6): its title, and each block's classes and text.
 */
function cellOf(blocks: any[]): { title: string | null; blocks: Array<[string, string]> } {
  const part = { morning: 'matin', afternoon: 'après-midi', day: 'journée', hours: 'heures' } as Record<string, string>;
  const describe = (block: any) => {
    const pending = block.pending_request ? block.pending_request.is_cancellation ? ', annulation demandée' : ', demande en attente' : '';
    if (block.absence) {
      const { absence } = block;
      const what = absence.part === 'hours' ? `${absence.start_time}–${absence.end_time}` : part[absence.part];
      return `${absence.type_name} (${what})${absence.status === 'cancellation_requested' ? ', annulation demandée' : ''}${pending}`;
    }
    if (block.kind === 'rest') return `Repos${block.modified ? ' (journée modifiée)' : ''}${pending}`;
    return `${block.post_label ?? block.post_code ?? 'Travail'} ${block.start_time}–${block.end_time}${block.modified ? ' (journée modifiée)' : ''}${pending}`;
  };
  const classes = (block: any) => ['tblock', block.absence ? 'absence' : block.kind, block.absence && `part-${block.absence.part}`,
    block.absence?.status === 'cancellation_requested' && 'cancelling', block.modified && 'modified', block.pending_request && 'pending']
    .filter(Boolean).join(' ');
  const title = blocks.map(describe).join(' ; ');
  return {
    title: title || null,
    blocks: blocks.map((block) => [classes(block), block.absence ? block.absence.type_code : block.kind === 'work' ? block.post_code ?? '' : '']),
  };
}

/** Every cell of a drawn row is what the full read's blocks made it. */
async function expectRowAsTheFullRead(row: Locator, cells: any[], employee: number) {
  const drawn = await row.locator('td').evaluateAll((tds) => tds.map((td) => {
    const cell = td as unknown as { getAttribute(name: string): string | null; querySelectorAll(selector: string): ArrayLike<{ className: string; textContent: string | null }> };
    return {
      date: cell.getAttribute('data-date'),
      title: cell.getAttribute('title'),
      blocks: Array.from(cell.querySelectorAll('.tblock')).map((block) => [block.className, block.textContent ?? '']),
    };
  }));
  const expected = cells.filter((cell) => cell.employee === employee).map((cell) => ({ date: cell.date, ...cellOf(cell.blocks) }));
  expect(drawn).toEqual(expected);
}

/** The pages of a PDF and their media boxes (Chromium writes one uncompressed /Type /Page dictionary per page). */
function pdfPages(pdf: Buffer): { pages: number; boxes: number[][] } {
  const text = pdf.toString('latin1');
  const pages = text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  const boxes = [...text.matchAll(/\/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*\]/g)]
    .map((match) => [Number(match[3]) - Number(match[1]), Number(match[4]) - Number(match[2])]);
  return { pages, boxes };
}

/** Keeps the printed PDF beside the screenshots, to look at. */
async function writePdf(pdf: Buffer, name: string): Promise<void> {
  const { mkdir, writeFile } = await import('node:fs/promises');
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await writeFile(path.join(SCREENSHOT_DIR, name), pdf);
}

/** Scrolls the grid to an employee's row (the order of the API's answer) and returns the row. */
async function rowOf(page: WatchedPage, order: number[], employee: number) {
  const index = order.indexOf(employee);
  expect(index, `employee ${employee} in the answer`).toBeGreaterThanOrEqual(0);
  await page.locator('.team-grid').evaluate((element, top) => { (element as unknown as { scrollTop: number }).scrollTop = top; }, Math.max(0, index * ROW_HEIGHT - 100));
  const row = page.locator(`tr[data-employee="${employee}"]`);
  await row.waitFor();
  return row;
}

describe('Planning d’équipe', () => {
  it('draws a month of a 200-employee perimeter, navigates months and filters by team', async () => {
    const agent = await arrangePerimeter();
    const answer = await walk.env.get('/api/planning/?from=2026-12-01&to=2026-12-31', await walk.env.login('mgr1'));
    expect(answer.body.employees).toHaveLength(200);
    const order = (answer.body.employees as Array<{ id: number }>).map((employee) => employee.id);

    const page = await openPage(walk.browser, walk.env.url);
    // The screen reads the month's compact grid (issue 29 point 6), never the month's full planning
    // (the home page after the login reads one's own week: not the month).
    const reads: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/api/planning/') && url.searchParams.get('from') === '2026-12-01') reads.push(url.pathname);
    });
    await login(page, 'mgr1');
    await page.goto('/equipe?mois=2026-12');
    const grid = page.getByRole('region', { name: 'Planning d’équipe, décembre 2026' });
    await grid.waitFor({ timeout: 30_000 });
    await poll(() => page.locator('main p[role="status"]').textContent()).toBe('200 salariés, décembre 2026');
    expect(reads).toContain('/api/planning/grid/');
    expect(reads).not.toContain('/api/planning/');
    // Each cell of the rows in view, and of the rows with something of their own, shows what the full read's blocks showed.
    for (const employee of order.slice(0, 5)) await expectRowAsTheFullRead(page.locator(`tr[data-employee="${employee}"]`), answer.body.cells, employee);
    for (const key of ['002', '003', '005', '006', '007', '008']) {
      await expectRowAsTheFullRead(await rowOf(page, order, agent[key]!), answer.body.cells, agent[key]!);
    }
    const hourly = (await rowOf(page, order, agent['007']!)).locator('td[data-date="2026-12-17"]');
    expect(await hourly.getAttribute('title')).toContain('(10:00–11:30)');
    const cancelling = (await rowOf(page, order, agent['008']!)).locator('td[data-date="2026-12-18"] .tblock.absence');
    expect(await cancelling.getAttribute('class')).toBe('tblock absence part-afternoon cancelling pending');
    expect(await grid.locator('table').getAttribute('aria-rowcount')).toBe('201');
    // Virtualised: only the rows in view (and a margin) are in the page.
    const drawn = await page.locator('tr[data-employee]').count();
    expect(drawn).toBeGreaterThan(5);
    expect(drawn).toBeLessThan(60);

    // A week of leave, whole days.
    const leave = await rowOf(page, order, agent['002']!);
    for (const date of ['2026-12-07', '2026-12-11']) {
      expect(await leave.locator(`td[data-date="${date}"] .tblock.absence.part-day`).textContent(), date).toBe('CP');
    }
    expect(await leave.locator('td[data-date="2026-12-04"] .tblock.work').count()).toBe(1);
    // A sick morning: two halves, the absence first, the worked afternoon next to it.
    const sick = (await rowOf(page, order, agent['003']!)).locator('td[data-date="2026-12-14"]');
    expect(await sick.locator('.tcell.halves > .tblock').evaluateAll((blocks) => blocks.map((block) => (block as unknown as { className: string }).className)))
      .toEqual(['tblock absence part-morning', 'tblock work']);
    expect(await sick.locator('.sr-only').textContent()).toContain('(matin)');
    // A modified day and a pending request.
    const modified = (await rowOf(page, order, agent['005']!)).locator('td[data-date="2026-12-15"]');
    expect(await modified.locator('.tblock.work.modified').count()).toBe(1);
    expect(await modified.getAttribute('title')).toContain('10:00–18:00 (journée modifiée)');
    const pending = (await rowOf(page, order, agent['006']!)).locator('td[data-date="2026-12-16"]');
    expect(await pending.locator('.tblock.pending').count()).toBe(1);
    expect(await pending.getAttribute('title')).toContain('demande en attente');
    // Weekends and holidays are shaded; Christmas is named.
    expect(await pending.locator('xpath=..').locator('td[data-date="2026-12-19"]').getAttribute('class')).toBe('weekend');
    const christmas = grid.locator('thead th.holiday');
    expect(await christmas.count()).toBe(1);
    expect(await christmas.getAttribute('title')).toBe('Noël');

    // The last employee is reached by scrolling; the header and the names stay in place.
    const last = await rowOf(page, order, order[order.length - 1]!);
    expect(await last.locator('th').textContent()).toBe(answer.body.employees[199].name);

    await page.locator('.team-grid').evaluate((element) => { (element as unknown as { scrollTop: number }).scrollTop = 0; });
    await checkPage(page, 'Planning d’équipe');
    await screenshots(page, 'team-planning');

    // Month navigation, the address follows.
    await page.getByRole('button', { name: 'Mois suivant' }).click();
    await poll(() => page.locator('.period').textContent()).toBe('janvier 2027');
    await page.getByRole('region', { name: 'Planning d’équipe, janvier 2027' }).waitFor({ timeout: 30_000 });
    expect(await page.locator('thead th.holiday').getAttribute('title')).toBe("Jour de l’an");
    expect(new URL(page.url()).searchParams.get('mois')).toBe('2027-01');
    await page.getByRole('button', { name: 'Mois précédent' }).click();
    await page.getByRole('button', { name: 'Mois précédent' }).click();
    await poll(() => page.locator('.period').textContent()).toBe('novembre 2026');
    await page.getByRole('region', { name: 'Planning d’équipe, novembre 2026' }).waitFor({ timeout: 30_000 });

    // Filters: the team of the day shift in E1 holds Alice alone.
    await page.getByLabel('Équipe', { exact: true }).selectOption({ label: 'Équipe éducative jour' });
    await poll(() => page.locator('main p[role="status"]').textContent()).toBe('1 salarié, novembre 2026');
    expect(await page.locator('tr[data-employee] th').allTextContents()).toEqual(['Alice Martin']);
    await checkPage(page, 'Planning d’équipe, filtré');
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('exports the grid on screen (CSV and Excel, named by the month and the filter) and prints it on A4 landscape', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'mgr1');
    await page.goto('/equipe?mois=2026-12');
    await page.getByRole('region', { name: 'Planning d’équipe, décembre 2026' }).waitFor({ timeout: 30_000 });
    await poll(() => page.locator('main p[role="status"]').textContent()).toBe('200 salariés, décembre 2026');
    const download = async (name: string) => {
      const [file] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('group', { name: 'Exports (grille du planning)' }).getByRole('button', { name }).click(),
      ]);
      return { filename: file.suggestedFilename(), bytes: await readFile((await file.path())!) };
    };
    const csv = await download('Exporter (CSV)');
    expect(csv.filename).toBe('planning-du-2026-12-01-au-2026-12-31.csv');
    const records: string[][] = parse(csv.bytes, { bom: true, delimiter: ';' });
    expect(records[0]!.slice(0, 3)).toEqual(['N° salarié', 'Salarié', 'mar. 01/12']);
    expect(records[0]).toHaveLength(2 + 31);
    expect(records).toHaveLength(1 + 200);
    const agent = Object.fromEntries(records.slice(1).map((row) => [row[1], row]));
    const day = (n: number) => 1 + n;
    expect(agent['Agent Charge 002']![day(7)]).toBe('CP');
    expect(agent['Agent Charge 003']![day(14)]).toMatch(/^MAL matin \/ /);
    expect(agent['Agent Charge 006']![day(16)]).toMatch(/\(demande en attente\)$/);
    expect(agent['Agent Charge 002']![day(5)]).toBe('');

    const xlsx = await download('Exporter (Excel)');
    expect(xlsx.filename).toBe('planning-du-2026-12-01-au-2026-12-31.xlsx');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.bytes as unknown as ArrayBuffer);
    expect(workbook.worksheets[0]!.rowCount).toBe(201);
    expect(workbook.worksheets[0]!.columnCount).toBe(33);

    // Printed: every row is in the page (not only those in view), the menu and the filters are not.
    await page.emulateMedia({ media: 'print' });
    await poll(() => page.locator('tr[data-employee]').count()).toBe(200);
    expect(await page.locator('header.top').isVisible()).toBe(false);
    expect(await page.getByRole('search', { name: 'Filtres du planning' }).isVisible()).toBe(false);
    const pdf = await page.pdf({ preferCSSPageSize: true, printBackground: true });
    await writePdf(pdf, 'team-planning-print.pdf');
    const { pages, boxes } = pdfPages(pdf);
    // A4 landscape (842 × 595 points); 200 rows of about 6.5 mm under the days' heads: 7 to 8 pages.
    for (const [width, height] of boxes) {
      expect(Math.round(width!)).toBe(842);
      expect(Math.round(height!)).toBe(595);
    }
    expect(pages).toBeGreaterThanOrEqual(6);
    expect(pages).toBeLessThanOrEqual(9);
    await page.emulateMedia({ media: 'screen' });

    // One team: one page.
    await page.getByLabel('Équipe', { exact: true }).selectOption({ label: 'Équipe éducative jour' });
    await poll(() => page.locator('main p[role="status"]').textContent()).toBe('1 salarié, décembre 2026');
    const team = await page.getByLabel('Équipe', { exact: true }).inputValue();
    expect((await download('Exporter (CSV)')).filename).toBe(`planning-du-2026-12-01-au-2026-12-31-equipe-${team}.csv`);
    await page.emulateMedia({ media: 'print' });
    expect(pdfPages(await page.pdf({ preferCSSPageSize: true })).pages).toBe(1);
    await page.emulateMedia({ media: 'screen' });
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('is not offered to an employee', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    const menu = page.getByRole('navigation', { name: 'Menu principal' });
    await poll(() => menu.getByRole('link').allTextContents()).toContain('Mon compte');
    expect(await menu.getByRole('link', { name: 'Planning d’équipe' }).count()).toBe(0);
    await page.context().close();
  });
});
