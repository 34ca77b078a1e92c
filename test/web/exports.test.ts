/**
 * Export buttons (issue 16): « Exporter (CSV) » and « Exporter (Excel) » download the list on
 * screen with its current filters, through the bearer token (fetch, blob, object URL).
 */
import { readFile } from 'node:fs/promises';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { browserWalk, login, openPage, poll, type WatchedPage } from './browser.js';

const walk = browserWalk();

/** Clicks an export button and returns the downloaded file's name and bytes. */
async function download(page: WatchedPage, name: string): Promise<{ filename: string; bytes: Buffer }> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name }).click()]);
  return { filename: file.suggestedFilename(), bytes: await readFile((await file.path())!) };
}

describe('export buttons', () => {
  it('the payroll page downloads the month’s lines as CSV and as Excel, with the filters on screen', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'paie');
    await page.getByRole('link', { name: 'Paie' }).click();
    await page.getByRole('heading', { name: 'Éléments de paie' }).waitFor();
    await page.getByLabel('Mois').fill('2026-11');
    await page.getByLabel('Rechercher un salarié').fill('Martin');
    await poll(() => page.locator('main p[role="status"]').textContent()).toBe('1 ligne (une par contrat)');

    const csv = await download(page, 'Exporter (CSV)');
    expect(csv.filename).toBe('paie-2026-11-recherche-martin.csv');
    const records: string[][] = parse(csv.bytes, { bom: true, delimiter: ';' });
    expect(records[0]).toContain('Heures planifiées');
    expect(records.slice(1).map((row) => row[1])).toEqual(['Alice Martin']);

    const xlsx = await download(page, 'Exporter (Excel)');
    expect(xlsx.filename).toBe('paie-2026-11-recherche-martin.xlsx');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.bytes as unknown as ArrayBuffer);
    expect(workbook.worksheets[0]!.rowCount).toBe(2);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('the queue exports the absences of its filters, and on its day-change tab the day-change requests', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'mgr1');
    await page.getByRole('link', { name: 'File des demandes' }).click();
    await page.getByRole('heading', { name: 'File des demandes' }).waitFor();
    const csv = await download(page, 'Exporter (CSV)');
    expect(csv.filename).toBe('absences-statut-en-attente.csv');
    const records: string[][] = parse(csv.bytes, { bom: true, delimiter: ';' });
    const api = await walk.env.get('/api/absences/?status=pending&page_size=200', await walk.env.login('mgr1'));
    expect(records.slice(1).map((row) => Number(row[0]))).toEqual(api.body.results.map((row: { id: number }) => row.id));

    // The day-change tab keeps its exports: its own list, named by its filters.
    await walk.env.db.query(`insert into app_public.shift_change_requests (employee_id, date, reason, status)
                             values ($1, '2026-11-19', 'urgence', 'pending')`, [walk.env.ids.employees!.alice]);
    await page.getByLabel('Type de demande').selectOption('shift_change');
    await page.getByLabel('Du').fill('2026-11-01');
    const shifts = await download(page, 'Exporter (CSV)');
    expect(shifts.filename).toBe('modifications-de-journee-depuis-2026-11-01-statut-en-attente.csv');
    const lines: string[][] = parse(shifts.bytes, { bom: true, delimiter: ';' });
    expect(lines[0]!.slice(0, 4)).toEqual(['N°', 'N° salarié', 'Salarié', 'Jour']);
    const dayChanges = await walk.env.get('/api/shift-change-requests/?status=pending&from=2026-11-01&page_size=200', await walk.env.login('mgr1'));
    expect(dayChanges.body.count).toBeGreaterThan(0);
    expect(lines.slice(1).map((row) => Number(row[0]))).toEqual(dayChanges.body.results.map((row: { id: number }) => row.id));
    expect(page.problems).toEqual([]);
    await page.context().close();
  });
});
