/**
 * Issue 11, finding 10 (the HTTP layer's part): pagination links never reflect the Host
 * header, ids beyond PostgreSQL's integer range are missing rows (404) like any other, and
 * a stored document is named with the extension of the type its content was recognised as.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { rawRequest } from '../helpers/raw-http.js';
import { JPG, PDF, PNG, form, typeIds } from './absence-helpers.js';

let env: TestEnv;
let T: Record<string, number>;
const tokens: Record<string, string> = {};
const as = (user: string) => tokens[user]!;

beforeAll(async () => {
  env = await startTestEnv();
  T = await typeIds(env);
  for (const user of ['alice', 'rh1']) tokens[user] = await env.login(user);
});
afterAll(async () => {
  await env?.close();
});

describe('pagination links', () => {
  it.each([
    ['Host', { host: 'evil.example' }],
    ['X-Forwarded-Host', { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' }],
  ])('are built on PUBLIC_URL, whatever %s says, and lead to the next page', async (_what, headers) => {
    const response = await rawRequest(env.url, {
      method: 'GET', path: '/api/absence-types/?page_size=20&page=2', headers: { ...headers, authorization: `Bearer ${as('alice')}` },
    });
    expect(response?.status).toBe(200);
    const body = JSON.parse(response!.text);
    expect(body.next).toBe('http://wfm.test/api/absence-types/?page_size=20&page=3');
    expect(body.previous).toBe('http://wfm.test/api/absence-types/?page_size=20');
    const next = new URL(body.next);
    const third = await env.get(`${next.pathname}${next.search}`, as('alice'));
    expect(third.body.results).toHaveLength(12);
  });
});

describe('ids beyond the integer range are missing rows', () => {
  it.each([
    ['GET', '/api/absences/2147483648/'],
    ['GET', '/api/absences/99999999999999999999/'],
    ['PATCH', '/api/absences/2147483648/'],
    ['GET', '/api/employees/2147483648/'],
    ['DELETE', '/api/employees/1/attachments/99999999999/'],
  ])('%s %s: 404 like a missing row', async (method, path) => {
    const response = await env.request(method, path, { token: as('rh1'), ...(method === 'PATCH' ? { body: { comment: 'x' } } : {}) });
    expect(response.status).toBe(404);
    expect(Object.keys(response.body)).toEqual(['detail']);
  });

  it('an id in a body or a query beyond the range is refused under its field', async () => {
    const body = await env.post('/api/absences/preview/', as('alice'), { employee: 2147483648, type: T.CP, date_start: '2026-12-07' });
    expect(body.status).toBe(400);
    expect(Object.keys(body.body)).toEqual(['employee']);
    const query = await env.get('/api/absences/?employee=2147483648', as('rh1'));
    expect(query.status).toBe(400);
    expect(Object.keys(query.body)).toEqual(['employee']);
  });
});

describe('a stored document is named after the type of its content', () => {
  it('a PDF sent as x.html is stored as x.pdf; a matching or missing extension is kept or added', async () => {
    const response = await env.request('POST', '/api/absences/', {
      token: as('alice'),
      form: form({ employee: env.ids.employees!.alice!, type: T.MAL!, date_start: '2026-11-16' }, [
        ['add_documents', PDF, 'x.html'],
        ['add_documents', PNG, 'scan'],
        ['add_documents', JPG, 'photo.JPEG'],
        ['add_documents', JPG, 'arrêt.de.travail.png'],
        ['add_documents', PDF, 'rapport.pdf'],
      ]),
    });
    expect(response.status).toBe(201);
    expect(response.body.documents.map((d: { filename: string }) => d.filename))
      .toEqual(['x.pdf', 'scan.png', 'photo.JPEG', 'arrêt.de.travail.jpg', 'rapport.pdf']);
  });
});
