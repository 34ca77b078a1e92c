/**
 * Bad input is refused under the field to correct, never a 500, never half-written
 * (issue 11, finding 9): deep JSON, malformed percent-encoding in a path, bodies over the
 * multipart limits, non-finite numbers, and JSON bodies taken as sent (coercion is for
 * multipart form fields only).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { rawRequest, storedFiles } from '../helpers/raw-http.js';
import { PDF, form, typeIds } from './absence-helpers.js';

let env: TestEnv;
let T: Record<string, number>;
let E: Record<string, number>;
const tokens: Record<string, string> = {};
const as = (user: string) => tokens[user]!;
let sickLeave: { id: number; version: number; documents: Array<{ id: number }> };

beforeAll(async () => {
  env = await startTestEnv();
  T = await typeIds(env);
  E = env.ids.employees!;
  for (const user of ['alice', 'mgr1', 'rh1']) tokens[user] = await env.login(user);
  const created = await env.request('POST', '/api/absences/', {
    token: as('alice'),
    form: form({ employee: E.alice!, type: T.MAL!, date_start: '2026-11-16', date_end: '2026-11-17' },
      [['add_documents', PDF, 'arret.pdf'], ['add_documents', PDF, 'second.pdf']]),
  });
  expect(created.status).toBe(201);
  sickLeave = created.body;
});
afterAll(async () => {
  await env?.close();
});

const storedFileCount = async () => (await storedFiles(env.config.storageDir)).length;

async function absenceRow(id: number) {
  return (await env.db.query('select version, (select count(*)::int from app_public.absence_documents d where d.absence_id = a.id) as documents from app_public.absences a where id = $1', [id])).rows[0];
}

describe('deeply nested JSON', () => {
  const deep = (levels: number) => `{"username":${'['.repeat(levels)}${']'.repeat(levels)},"password":"x"}`;

  it('about 4 000 levels, unauthenticated: 400 under non_field_errors', async () => {
    const response = await env.request('POST', '/api/auth/token/', { rawBody: deep(4000) });
    expect(response.status).toBe(400);
    expect(Object.keys(response.body)).toEqual(['non_field_errors']);
  });

  it('the same on an authenticated route with a schema', async () => {
    const response = await env.request('POST', '/api/absences/preview/', {
      token: as('alice'), rawBody: `{"type":1,"comment":${'{"a":'.repeat(4000)}1${'}'.repeat(4000)}}`,
    });
    expect(response.status).toBe(400);
    expect(Object.keys(response.body)).toEqual(['non_field_errors']);
  });
});

describe('malformed percent-encoding in a path', () => {
  it.each(['/api/absences/%zz/', '/api/absences/%E0%A4%A/', '/api/employees/%/'])('%s: 404, not 500', async (path) => {
    const response = await rawRequest(env.url, { method: 'GET', path, headers: { authorization: `Bearer ${as('alice')}` } });
    expect(response?.status).toBe(404);
    expect(Object.keys(JSON.parse(response!.text))).toEqual(['detail']);
  });
});

describe('multipart limits refuse the whole body', () => {
  it('a 21st file: 400 under add_documents, nothing stored, nothing written', async () => {
    const files = Array.from({ length: 21 }, (_, i) => ['add_documents', PDF, `piece-${i}.pdf`] as [string, Buffer, string]);
    const before = await storedFileCount();
    const row = await absenceRow(sickLeave.id);
    const response = await env.request('POST', `/api/absences/${sickLeave.id}/documents/`, { token: as('alice'), form: form({}, files) });
    expect(response.status).toBe(400);
    expect(Object.keys(response.body)).toEqual(['add_documents']);
    expect(await storedFileCount()).toBe(before);
    expect(await absenceRow(sickLeave.id)).toEqual(row);
  });

  it('a 101st field: 400 under that field, nothing stored, nothing written', async () => {
    const fields: Record<string, string> = {};
    for (let i = 0; i < 100; i += 1) fields[`extra_${i}`] = 'x';
    fields.comment = 'après la limite';
    const before = await storedFileCount();
    const row = await absenceRow(sickLeave.id);
    const response = await env.request('PATCH', `/api/absences/${sickLeave.id}/`, {
      token: as('mgr1'), form: form(fields, [['add_documents', PDF, 'en-plus.pdf']]),
    });
    expect(response.status).toBe(400);
    expect(Object.keys(response.body)).toEqual(['comment']);
    expect(await storedFileCount()).toBe(before);
    expect(await absenceRow(sickLeave.id)).toEqual(row);
  });
});

describe('non-finite numbers are refused under their field', () => {
  it('remove_document_ids: [1e400, <own document>]: 400 under remove_document_ids, version unchanged', async () => {
    const row = await absenceRow(sickLeave.id);
    const response = await env.request('PATCH', `/api/absences/${sickLeave.id}/`, {
      token: as('mgr1'), rawBody: `{"remove_document_ids":[1e400,${sickLeave.documents[1]!.id}]}`,
    });
    expect(response.status).toBe(400);
    expect(Object.keys(response.body)).toEqual(['remove_document_ids']);
    expect(await absenceRow(sickLeave.id)).toEqual(row);
  });

  it('employee: 1e400 on a preview: 400 under employee (not a preview of the caller)', async () => {
    const response = await env.request('POST', '/api/absences/preview/', {
      token: as('mgr1'), rawBody: `{"employee":1e400,"type":${T.CP},"date_start":"2026-12-07","date_end":"2026-12-08"}`,
    });
    expect(response.status).toBe(400);
    expect(Object.keys(response.body)).toEqual(['employee']);
  });

  it('weekly_hours: -1e400 inside contracts: 400 under contracts', async () => {
    const response = await env.request('PATCH', `/api/employees/${E.alice}/`, {
      token: as('rh1'), rawBody: '{"contracts":[{"type":1,"start_date":"2020-01-01","weekly_hours":-1e400}]}',
    });
    expect(response.status).toBe(400);
    expect(Object.keys(response.body)).toEqual(['contracts']);
  });
});

describe('JSON bodies are taken as sent, on multipart-capable routes too', () => {
  it('"remove_document_ids": "<id>" is not a list: 400, nothing removed', async () => {
    const row = await absenceRow(sickLeave.id);
    const response = await env.patch(`/api/absences/${sickLeave.id}/`, as('mgr1'), { remove_document_ids: String(sickLeave.documents[1]!.id) });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ remove_document_ids: ['Une liste est attendue.'] });
    expect(await absenceRow(sickLeave.id)).toEqual(row);
  });

  it('"employee": true is not an id: 400 under employee', async () => {
    const response = await env.post('/api/absences/', as('alice'), { employee: true, type: T.CP, date_start: '2026-12-07' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ employee: ['Un nombre entier est attendu.'] });
  });

  it('the same values as multipart form fields are still read as text and coerced', async () => {
    const response = await env.request('PATCH', `/api/absences/${sickLeave.id}/`, {
      token: as('mgr1'), form: form({ remove_document_ids: [sickLeave.documents[1]!.id] }),
    });
    expect(response.status).toBe(200);
    expect(response.body.documents).toHaveLength(1);
  });
});
