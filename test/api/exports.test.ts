import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import type { HttpResponse } from '../helpers/http.js';
import { csvCell } from '../../src/http/exports/csv.js';

let env: TestEnv;
let E: Record<string, number>;
let EST: Record<string, number>;
const tokens: Record<string, string> = {};
const as = (user: string) => tokens[user]!;

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Every row of a list route, page after page. */
async function listAll(path: string, token: string): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 1; ; page += 1) {
    const res = await env.get(`${path}${path.includes('?') ? '&' : '?'}page=${page}${path.startsWith('/api/payroll/') ? '' : '&page_size=200'}`, token);
    expect(res.status).toBe(200);
    rows.push(...res.body.results);
    if (!res.body.next) return rows;
  }
}

/** A CSV export read back by a CSV parser: header line, then records by header. */
function readCsv(res: HttpResponse): { header: string[]; records: Record<string, string>[] } {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
  expect([...res.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  const lines: string[][] = parse(res.bytes, { bom: true, delimiter: ';', record_delimiter: '\r\n', relax_column_count: false });
  const [header, ...rest] = lines;
  return { header: header!, records: rest.map((cells) => Object.fromEntries(header!.map((name, i) => [name, cells[i]!]))) };
}

/** An XLSX export read back by exceljs: the first sheet's header and rows of cell values. */
async function readXlsx(res: HttpResponse): Promise<{ header: string[]; rows: Record<string, unknown>[] }> {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe(XLSX);
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(res.bytes as unknown as ArrayBuffer);
  const sheet = workbook.worksheets[0]!;
  const header = (sheet.getRow(1).values as unknown[]).slice(1).map(String);
  const rows: Record<string, unknown>[] = [];
  sheet.eachRow((row, n) => {
    if (n === 1) return;
    const values = (row.values as unknown[]).slice(1);
    rows.push(Object.fromEntries(header.map((name, i) => [name, values[i] ?? null])));
  });
  return { header, rows };
}

const frDate = (iso: string) => iso.split('-').reverse().join('/');

beforeAll(async () => {
  env = await startTestEnv();
  E = env.ids.employees!;
  EST = env.ids.establishments!;
  for (const user of ['alice', 'mgr1', 'mgr2', 'rh1', 'paie', 'admin', 'admin_noemp', 'farid']) tokens[user] = await env.login(user);
  const types = await env.db.query<{ id: number; code: string }>("select id, code from app_public.absence_types where code in ('CP', 'MAL')");
  const type = Object.fromEntries(types.rows.map((r) => [r.code, r.id]));
  const insert = `insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, status,
                    counted_quantity, counted_unit, comment, decision_reason)
                  values ($1, $2, $3, $4, $5, $6, $7, $8, 'day', $9, $10)`;
  await env.db.query(insert, [E.alice, type.CP, '2026-11-23', '2026-11-27', null, null, 'validated', 5, 'Vacances; "en famille"', null]);
  await env.db.query(insert, [E.alice, type.MAL, '2026-11-18', '2026-11-18', 'afternoon', 'afternoon', 'validated', 0.5, '=HYPERLINK("http://x")', 'Certificat reçu']);
  await env.db.query(insert, [E.bruno, type.CP, '2026-11-12', '2026-11-13', null, null, 'refused', 2, '+33 6 00', 'Motif de refus confidentiel']);
  await env.db.query(insert, [E.chloe, type.CP, '2026-11-16', '2026-11-16', null, null, 'pending', 1, '@chloe', null]);
});
afterAll(async () => {
  await env?.close();
});

describe('CSV cells', () => {
  it('guards every formula start (= + - @ tab CR) and quotes the separator, quotes and line breaks', () => {
    expect(['=1+1', '+1', '-1', '@SUM(A1)', '\tx'].map(csvCell)).toEqual(["'=1+1", "'+1", "'-1", "'@SUM(A1)", "'\tx"]);
    expect(csvCell('\rx')).toBe('"\'\rx"');
    expect(csvCell('a;b')).toBe('"a;b"');
    expect(csvCell('dit "oui"')).toBe('"dit ""oui"""');
    expect(csvCell('deux\nlignes')).toBe('"deux\nlignes"');
    expect(csvCell('Élodie')).toBe('Élodie');
  });
});

describe('GET /api/absences/export/', () => {
  it('CSV: BOM, « ; », CRLF, French headers, file headers; the rows of the list for the same filters, in its order', async () => {
    const res = await env.get('/api/absences/export/?format=csv', as('mgr1'));
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="absences\.csv"/);
    const named = await env.get(`/api/absences/export/?format=csv&status=pending&from=2026-11-01&to=2026-11-30&establishment=${EST.E1}`, as('mgr1'));
    expect(named.headers.get('content-disposition'))
      .toMatch(new RegExp(`^attachment; filename="absences-du-2026-11-01-au-2026-11-30-statut-en-attente-etablissement-${EST.E1}\\.csv"`));
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.text.split('\r\n')[0]).toBe('\ufeffN°;N° salarié;Salarié;Code motif;Motif;Début;Demi-journée de début;Fin;Demi-journée de fin;' +
      'Heure de début;Heure de fin;Décompte;Unité;Statut;Commentaire;Motif de la décision;Justificatifs;Déposée le;Décidée le');
    const { records } = readCsv(res);
    const list = await listAll('/api/absences/', as('mgr1'));
    expect(records.map((r) => Number(r['N°']))).toEqual(list.map((row) => row.id));
    for (const [i, row] of list.entries()) {
      expect(records[i]).toMatchObject({
        'N° salarié': String(row.employee),
        Salarié: row.employee_name,
        'Code motif': row.type_code,
        Début: frDate(row.date_start),
        Fin: frDate(row.date_end),
        Statut: row.status_label,
        Décompte: row.counted_quantity === null ? '' : row.counted_quantity.replace('.', ','),
        Justificatifs: String(row.documents.length),
      });
    }
    const filtered = readCsv(await env.get(`/api/absences/export/?format=csv&status=validated&employee=${E.alice}`, as('mgr1')));
    const filteredList = await listAll(`/api/absences/?status=validated&employee=${E.alice}`, as('mgr1'));
    expect(filtered.records.map((r) => Number(r['N°']))).toEqual(filteredList.map((row) => row.id));
    expect(filtered.records.length).toBeGreaterThanOrEqual(2);
  });

  it('CSV quoting and the formula guard: a text cell starting with = + - @ is prefixed with an apostrophe', async () => {
    const { records } = readCsv(await env.get('/api/absences/export/?format=csv', as('rh1')));
    const comments = records.map((r) => r.Commentaire);
    expect(comments).toContain('Vacances; "en famille"');
    expect(comments).toContain('\'=HYPERLINK("http://x")');
    expect(comments).toContain("'+33 6 00");
    expect(comments).toContain("'@chloe");
    const half = records.find((r) => r.Commentaire === '\'=HYPERLINK("http://x")')!;
    expect(half).toMatchObject({ 'Demi-journée de début': 'Après-midi', Décompte: '0,50', Unité: 'jours', 'Motif de la décision': 'Certificat reçu' });
  });

  it('XLSX: read back by exceljs, typed cells (numbers, dates), the same rows as the list', async () => {
    const res = await env.get(`/api/absences/export/?format=xlsx&employee=${E.alice}`, as('mgr1'));
    expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename="absences-salarie-${E.alice}\\.xlsx"`));
    const { header, rows } = await readXlsx(res);
    expect(header.slice(0, 3)).toEqual(['N°', 'N° salarié', 'Salarié']);
    const list = await listAll(`/api/absences/?employee=${E.alice}`, as('mgr1'));
    expect(rows.map((r) => r['N°'])).toEqual(list.map((row) => row.id));
    const first = rows[0]!;
    expect(first['Début']).toBeInstanceOf(Date);
    expect((first['Début'] as Date).toISOString().slice(0, 10)).toBe(list[0].date_start);
    const guarded = rows.find((r) => String(r.Commentaire).includes('HYPERLINK'))!;
    expect(guarded.Commentaire).toBe('\'=HYPERLINK("http://x")');
    expect(guarded['Décompte']).toBe(0.5);
  });

  it('the perimeter of the list: a manager of E2 never sees E1-only employees; an employee, their own; Service Paie, none', async () => {
    const e2 = readCsv(await env.get('/api/absences/export/?format=csv', as('mgr2')));
    expect(e2.records.map((r) => Number(r['N° salarié']))).not.toContain(E.alice);
    expect(e2.records.map((r) => Number(r['N°']))).toEqual((await listAll('/api/absences/', as('mgr2'))).map((row) => row.id));
    const own = readCsv(await env.get('/api/absences/export/?format=csv', as('alice')));
    expect(new Set(own.records.map((r) => Number(r['N° salarié'])))).toEqual(new Set([E.alice]));
    const paie = readCsv(await env.get('/api/absences/export/?format=csv', as('paie')));
    expect(paie.records).toEqual([]);
    const noEmployee = readCsv(await env.get('/api/absences/export/?format=csv', as('admin_noemp')));
    expect(noEmployee.records.map((r) => Number(r['N° salarié']))).not.toContain(E.alice);
  });

  it('400 on a missing or unknown format and on the list’s own filter errors; 401 without a token or for a closed account', async () => {
    const missing = await env.get('/api/absences/export/', as('mgr1'));
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body)).toEqual(['format']);
    expect((await env.get('/api/absences/export/?format=pdf', as('mgr1'))).status).toBe(400);
    const badWindow = await env.get('/api/absences/export/?format=csv&from=2026-12-01&to=2026-11-01', as('mgr1'));
    expect(badWindow.status).toBe(400);
    expect(Object.keys(badWindow.body)).toEqual(['to']);
    expect((await env.get('/api/absences/export/?format=csv')).status).toBe(401);
    const closed = await env.login('farid');
    await env.db.query('update app_public.accounts set is_active = false where id = $1', [env.ids.accounts!.farid]);
    expect((await env.get('/api/absences/export/?format=csv', closed)).status).toBe(401);
    await env.db.query('update app_public.accounts set is_active = true where id = $1', [env.ids.accounts!.farid]);
  });
});

describe('counters by establishment', () => {
  it('JSON: one line per counter of the establishment’s employees in the perimeter (Acquis, Pris, Planifiés, Restant)', async () => {
    const res = await env.get(`/api/counters/establishment/?establishment=${EST.E1}&year=2026`, as('mgr1'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ establishment: EST.E1, establishment_name: 'Foyer Les Tilleuls', year: 2026 });
    const employees = new Set(res.body.results.map((row: any) => row.employee));
    expect(employees).toContain(E.alice);
    expect(employees).toContain(E.bruno); // secondary workplace E2, main E1
    expect(employees).not.toContain(E.david); // E3
    const cp = res.body.results.find((row: any) => row.employee === E.alice && row.code === 'CP');
    expect(cp).toMatchObject({ unit: 'day' });
    expect(Number(cp.remaining)).toBeCloseTo(Number(cp.acquired) - Number(cp.taken) - Number(cp.planned));
  });

  it('CSV and XLSX exports hold the JSON list’s lines', async () => {
    const json = (await env.get(`/api/counters/establishment/?establishment=${EST.E1}&year=2026`, as('mgr1'))).body.results;
    const csv = readCsv(await env.get(`/api/counters/establishment/export/?establishment=${EST.E1}&year=2026&format=csv`, as('mgr1')));
    expect(csv.header).toEqual(['N° salarié', 'Salarié', 'Code', 'Compteur', 'Unité', 'Acquis', 'Pris', 'Planifiés', 'Restant']);
    expect(csv.records.map((r) => [Number(r['N° salarié']), r.Code, r.Acquis, r.Restant])).toEqual(
      json.map((row: any) => [row.employee, row.code, row.acquired.replace('.', ','), row.remaining.replace('.', ',')]));
    const xlsx = await readXlsx(await env.get(`/api/counters/establishment/export/?establishment=${EST.E1}&year=2026&format=xlsx`, as('mgr1')));
    expect(xlsx.rows.map((r) => [r['N° salarié'], r.Code, r.Restant])).toEqual(
      json.map((row: any) => [row.employee, row.code, Number(row.remaining)]));
  });

  it('an establishment outside the perimeter or unknown, or a caller without the queue: 404 (WN302); a bad year: 400', async () => {
    expect((await env.get(`/api/counters/establishment/?establishment=${EST.E2}`, as('mgr1'))).status).toBe(404);
    expect((await env.get('/api/counters/establishment/?establishment=999999', as('rh1'))).status).toBe(404);
    expect((await env.get(`/api/counters/establishment/?establishment=${EST.E1}`, as('alice'))).status).toBe(404);
    expect((await env.get(`/api/counters/establishment/export/?establishment=${EST.E2}&format=csv`, as('mgr1'))).status).toBe(404);
    expect((await env.get(`/api/counters/establishment/?establishment=${EST.E1}&year=1999`, as('mgr1'))).status).toBe(400);
  });
});

describe('GET /api/payroll/export/', () => {
  it('every line of the month, in the list’s order, without comment, decision reason or document', async () => {
    const res = await env.get('/api/payroll/export/?month=2026-11&format=csv', as('paie'));
    expect(res.headers.get('content-disposition')).toMatch(/filename="paie-2026-11\.csv"/);
    const { header, records } = readCsv(res);
    for (const name of header) expect(name).not.toMatch(/commentaire|motif de la décision|justificatif/i);
    expect(res.text).not.toContain('Vacances');
    expect(res.text).not.toContain('HYPERLINK');
    expect(res.text).not.toContain('Certificat reçu');
    const list = await listAll('/api/payroll/?month=2026-11', as('paie'));
    expect(records.map((r) => [Number(r['N° salarié']), r['Heures planifiées']])).toEqual(
      list.map((line) => [line.employee, line.planned_hours.replace('.', ',')]));
    const alice = records.find((r) => Number(r['N° salarié']) === E.alice)!;
    expect(alice['Absences du mois']).toMatch(/ : \d+,\d\d j/);
    // Issue 27 point 5: the counters' figures of « Mes compteurs », one French column per figure.
    expect(header.slice(-6)).toEqual(['Compteurs : acquisition', 'Compteurs : acquis', 'Compteurs : restant',
      'Compteurs : à venir cette année', 'Compteurs : reporté de l’année précédente', 'Compteurs : fin d’année']);
    const aliceLine = list.find((line) => line.employee === E.alice);
    expect(alice['Compteurs : restant']).toBe(aliceLine.counters.map((c: any) =>
      `${c.code} : ${Number(c.remaining).toLocaleString('fr-FR')} ${c.unit === 'hour' ? 'heure' : 'jour'}${Number(c.remaining) >= 2 ? 's' : ''}`).join(' ; '));
    const cp = aliceLine.counters.find((c: any) => c.code === 'CP');
    expect(alice['Compteurs : fin d’année']).toContain(`CP : reporte ${Number(cp.year_end.carries_over).toLocaleString('fr-FR')} jours jusqu’au ` +
      cp.year_end.carry_over_until.split('-').reverse().join('/'));
    const xlsx = await readXlsx(await env.get('/api/payroll/export/?month=2026-11&format=xlsx', as('paie')));
    expect(xlsx.rows.map((r) => r['N° salarié'])).toEqual(list.map((line) => line.employee));
    expect(xlsx.header).toEqual(header);
    const aliceXlsx = xlsx.rows.find((r) => r['N° salarié'] === E.alice)!;
    for (const name of header.slice(-6)) expect(aliceXlsx[name]).toBe(alice[name]);
  });

  it('refused as the list is: 403 without employee.view_payroll, 400 on a bad month', async () => {
    expect((await env.get('/api/payroll/export/?month=2026-11&format=csv', as('mgr1'))).status).toBe(403);
    const bad = await env.get('/api/payroll/export/?month=2026-13&format=csv', as('paie'));
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toEqual(['month']);
  });
});

describe('GET /api/audit-log/export/', () => {
  it('its readers get the lines of the search for the same filters; others 403', async () => {
    const res = await env.get('/api/audit-log/export/?format=csv&model=absence', as('rh1'));
    const { records } = readCsv(res);
    const list = await listAll('/api/audit-log/?model=absence', as('rh1'));
    expect(records.map((r) => Number(r['N°']))).toEqual(list.map((line) => line.id));
    expect((await env.get('/api/audit-log/export/?format=csv', as('mgr1'))).status).toBe(403);
    expect((await env.get('/api/audit-log/export/?format=xlsx', as('alice'))).status).toBe(403);
    expect((await env.get('/api/audit-log/export/?format=csv&model=nothing', as('rh1'))).status).toBe(400);
  });
});

describe('streaming', () => {
  it('a client that goes away mid-download releases the transaction: the next exports still answer', async () => {
    // 6 000 more absences (refused, one a day from 2000 on): six fetches of 1 000 rows. Written
    // without their triggers (journal, audit, notifications), which this test does not read.
    await env.db.query(`begin; set local session_replication_role = replica;
      insert into app_public.absences (employee_id, type_id, date_start, date_end, status, counted_quantity, counted_unit)
      select ${E.david}, (select id from app_public.absence_types where code = 'CP'), d, d, 'refused', 1, 'day'
      from generate_series(date '2000-01-03', date '2000-01-03' + 5999, interval '1 day') d;
      commit;`);
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      const response = await fetch(`${env.url}/api/absences/export/?format=xlsx&employee=${E.david}`, {
        headers: { authorization: `Bearer ${as('rh1')}` }, signal: controller.signal,
      });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
    }
    for (let i = 0; i < 12; i++) {
      const res = await env.get(`/api/absences/export/?format=csv&employee=${E.alice}`, as('mgr1'));
      expect(res.status).toBe(200);
    }
    const whole = readCsv(await env.get(`/api/absences/export/?format=csv&employee=${E.david}&status=refused`, as('rh1')));
    expect(whole.records.length).toBeGreaterThanOrEqual(6000);
  }, 60_000);
});

/** What a cell of the team grid shows (TeamPlanning.tsx), as the export writes it. */
function gridLabel(blocks: any[]): string {
  const codes = blocks.map((block) => {
    if (block.absence) {
      const part = { day: '', morning: ' matin', afternoon: ' après-midi', hours: ` ${block.absence.start_time}-${block.absence.end_time}` }[
        block.absence.part as string];
      return `${block.absence.type_code}${part}`;
    }
    return block.kind === 'work' ? block.post_code : null;
  }).filter((code) => code !== null && code !== '');
  const pending = blocks.filter((block) => block.pending_request);
  const mark = pending.some((block) => block.pending_request.is_cancellation)
    ? '(annulation demandée)' : pending.length ? '(demande en attente)' : '';
  return [codes.join(' / '), mark].filter(Boolean).join(' ');
}

describe('GET /api/planning/export/ (the team planning grid)', () => {
  it('CSV parsed back: one row per employee of the planning read, one column per day, each cell what the grid shows', async () => {
    const res = await env.get(`/api/planning/export/?format=csv&from=2026-11-01&to=2026-11-30&establishment=${EST.E1}`, as('mgr1'));
    expect(res.headers.get('content-disposition'))
      .toMatch(new RegExp(`^attachment; filename="planning-du-2026-11-01-au-2026-11-30-etablissement-${EST.E1}\\.csv"`));
    const { header, records } = readCsv(res);
    expect(header).toHaveLength(2 + 30);
    expect(header.slice(0, 4)).toEqual(['N° salarié', 'Salarié', 'dim. 01/11', 'lun. 02/11']);
    expect(header[header.length - 1]).toBe('lun. 30/11');
    const planning = (await env.get(`/api/planning/?from=2026-11-01&to=2026-11-30&establishment=${EST.E1}`, as('mgr1'))).body;
    expect(records.map((r) => [Number(r['N° salarié']), r.Salarié])).toEqual(
      planning.employees.map((employee: any) => [employee.id, employee.name]));
    for (const cell of planning.cells) {
      const record = records.find((r) => Number(r['N° salarié']) === cell.employee)!;
      const column = header[2 + (Number(cell.date.slice(8)) - 1)]!;
      expect(record[column], `${cell.employee} ${cell.date}`).toBe(gridLabel(cell.blocks));
    }
    const alice = records.find((r) => Number(r['N° salarié']) === E.alice)!;
    expect(alice['lun. 23/11']).toBe('CP');
    expect(alice['ven. 27/11']).toBe('CP');
    expect(alice['mer. 18/11']).toMatch(/MAL après-midi$/);
    expect(Object.values(records).some((r) => Object.values(r).some((text) => text.endsWith('(demande en attente)')))).toBe(true);
    // A week-end without work shows nothing.
    expect(alice['dim. 01/11']).toBe('');
  });

  it('XLSX parsed back: the same grid; an employee reads only their own row', async () => {
    const csv = readCsv(await env.get('/api/planning/export/?format=csv&from=2026-11-16&to=2026-11-22', as('mgr1')));
    const xlsx = await readXlsx(await env.get('/api/planning/export/?format=xlsx&from=2026-11-16&to=2026-11-22', as('mgr1')));
    expect(xlsx.header).toEqual(csv.header);
    expect(xlsx.rows.map((row) => csv.header.map((name) => (row[name] === null ? '' : String(row[name])))))
      .toEqual(csv.records.map((record) => csv.header.map((name) => record[name])));
    const own = readCsv(await env.get('/api/planning/export/?format=csv&from=2026-11-16&to=2026-11-22', as('alice')));
    expect(own.records.map((r) => Number(r['N° salarié']))).toEqual([E.alice]);
  });

  it('400 without from or to (under the field), over 62 days or with to before from; 404 for an employee outside the perimeter', async () => {
    const noFrom = await env.get('/api/planning/export/?format=csv&to=2026-11-30', as('mgr1'));
    expect(noFrom.status).toBe(400);
    expect(Object.keys(noFrom.body)).toEqual(['from']);
    const long = await env.get('/api/planning/export/?format=csv&from=2026-11-01&to=2027-01-15', as('mgr1'));
    expect(long.status).toBe(400);
    expect(Object.keys(long.body)).toEqual(['to']);
    expect((await env.get('/api/planning/export/?format=xlsx&from=2026-11-30&to=2026-11-01', as('mgr1'))).status).toBe(400);
    const outside = await env.get(`/api/planning/export/?format=csv&from=2026-11-01&to=2026-11-30&employee=${E.alice}`, as('mgr2'));
    expect([403, 404]).toContain(outside.status);
    expect((await env.get('/api/planning/export/?format=csv&from=2026-11-01&to=2026-11-30')).status).toBe(401);
  });
});

describe('GET /api/shift-change-requests/export/ (the queue’s day-change tab)', () => {
  it('the rows of the list for the same filters, in its order; the file named by its period and filters', async () => {
    await env.db.query(`insert into app_public.shift_change_requests (employee_id, date, reason, comment, status)
                        values ($1, '2026-11-19', 'urgence', '=cmd', 'pending'), ($2, '2026-11-20', 'remplacement', null, 'pending'),
                               ($1, '2026-11-10', 'urgence', null, 'refused')`, [E.alice, E.bruno]);
    const res = await env.get('/api/shift-change-requests/export/?format=csv&status=pending&from=2026-01-01&to=2027-12-31', as('mgr1'));
    expect(res.headers.get('content-disposition'))
      .toMatch(/^attachment; filename="modifications-de-journee-du-2026-01-01-au-2027-12-31-statut-en-attente\.csv"/);
    const { header, records } = readCsv(res);
    expect(header.slice(0, 5)).toEqual(['N°', 'N° salarié', 'Salarié', 'Jour', 'Motif']);
    const list = await listAll('/api/shift-change-requests/?status=pending&from=2026-01-01&to=2027-12-31', as('mgr1'));
    expect(list.length).toBeGreaterThan(0);
    expect(records.find((r) => Number(r['N°']) === list.find((line) => line.employee === E.alice).id)).toMatchObject({
      Motif: 'Urgence', 'Journée demandée': 'Repos', Commentaire: "'=cmd", Statut: 'En attente',
    });
    expect(records.map((r) => [Number(r['N°']), r.Jour, r.Statut])).toEqual(list.map((line) => [line.id, frDate(line.date), 'En attente']));
    const xlsx = await readXlsx(await env.get('/api/shift-change-requests/export/?format=xlsx', as('mgr1')));
    expect(xlsx.rows.map((r) => r['N°'])).toEqual((await listAll('/api/shift-change-requests/', as('mgr1'))).map((line) => line.id));
    const bad = await env.get('/api/shift-change-requests/export/?format=csv&status=cancelled', as('mgr1'));
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toEqual(['status']);
  });
});
