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

  it('the queue exports the absences of its filters', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'mgr1');
    await page.getByRole('link', { name: 'File des demandes' }).click();
    await page.getByRole('heading', { name: 'File des demandes' }).waitFor();
    const csv = await download(page, 'Exporter (CSV)');
    expect(csv.filename).toBe('absences-statut-en-attente.csv');
    const records: string[][] = parse(csv.bytes, { bom: true, delimiter: ';' });
    const api = await walk.env.get('/api/absences/?status=pending&page_size=200', await walk.env.login('mgr1'));
    expect(records.slice(1).map((row) => Number(row[0]))).toEqual(api.body.results.map((row: { id: number }) => row.id));
    expect(page.problems).toEqual([]);
    await page.context().close();
  });
});
