/**
 * Multipart bodies that never end well (issue 11, finding 1): a body without its closing
 * boundary, an upload cut off before its announced length, and a closed account's upload.
 * The server answers (or drops the connection), keeps serving, and leaves no descriptor
 * open on the storage directory and no .part file behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { eventually, multipartBody, openDescriptors, partFiles, rawRequest, storedFiles as storedUnder } from '../helpers/raw-http.js';
import { PDF } from './absence-helpers.js';

let env: TestEnv;
let alice: string;
let absenceId: number;

beforeAll(async () => {
  env = await startTestEnv();
  alice = await env.login('alice');
  const { rows } = await env.db.query<{ id: number }>(
    'select id from app_public.absences where employee_id = $1 order by id limit 1', [env.ids.employees!.alice]);
  absenceId = rows[0]?.id ?? 1;
});
afterAll(async () => {
  await env?.close();
});

const storageDescriptors = async () =>
  (await openDescriptors('self')).filter((target) => target.startsWith(env.config.storageDir));

const storedFiles = () => storedUnder(env.config.storageDir);

async function expectNothingLeft(): Promise<void> {
  expect(await eventually(async () => (await storageDescriptors()).length === 0 && (await partFiles(env.config.storageDir)).length === 0),
    `descriptors ${JSON.stringify(await storageDescriptors())}, part files ${JSON.stringify(await partFiles(env.config.storageDir))}`)
    .toBe(true);
  expect((await env.get('/api/health/')).status).toBe(200);
}

describe('a multipart body without its closing boundary', () => {
  it.each([
    ['in the middle of a file', 'add_documents'],
    ['in a field that takes no file', 'comment'],
  ])('%s: 400 under non_field_errors, nothing stored, the server keeps serving', async (_what, field) => {
    const before = await storedFiles();
    const { body, contentType } = multipartBody(field, 'certificat.pdf', Buffer.concat([PDF, Buffer.alloc(20_000, 0x20)]), false);
    const response = await rawRequest(env.url, {
      method: 'POST',
      path: `/api/absences/${absenceId}/documents/`,
      headers: { authorization: `Bearer ${alice}`, 'content-type': contentType },
      body,
    });
    expect(response?.status).toBe(400);
    expect(JSON.parse(response!.text)).toEqual({ non_field_errors: ['Corps multipart illisible.'] });
    await expectNothingLeft();
    expect(await storedFiles()).toEqual(before);
  });
});

describe('a malformed part header, then a body cut short (found by the fuzzer)', () => {
  it('400 under non_field_errors: the file stream busboy leaves open is ended, nothing left', async () => {
    const before = await storedFiles();
    const malformed = multipartBody('add_documents', 'a\u0001b.png', PDF, false).body;
    const { body: truncated, contentType } = multipartBody('add_documents', 'x.pdf', PDF, false);
    // The first part's header holds a control character; the second part never ends.
    const body = Buffer.concat([malformed, Buffer.from('\r\n'), truncated]);
    const response = await rawRequest(env.url, {
      method: 'POST',
      path: `/api/absences/${absenceId}/documents/`,
      headers: { authorization: `Bearer ${alice}`, 'content-type': contentType },
      body,
    }, 5_000);
    expect(response?.status).toBe(400);
    await expectNothingLeft();
    expect(await storedFiles()).toEqual(before);
  });
});

describe('an upload cut off before its announced length', () => {
  it('releases its descriptor and removes its .part file', async () => {
    const before = await storedFiles();
    const { body, contentType } = multipartBody('add_documents', 'certificat.pdf', Buffer.concat([PDF, Buffer.alloc(50_000, 0x20)]), false);
    const response = await rawRequest(env.url, {
      method: 'POST',
      path: `/api/absences/${absenceId}/documents/`,
      headers: { authorization: `Bearer ${alice}`, 'content-type': contentType },
      body,
      contentLength: body.length + 1_000_000,
      then: 'abort',
    });
    expect(response).toBeNull();
    await expectNothingLeft();
    expect(await storedFiles()).toEqual(before);
  });
});

describe('the account is reloaded before the body is read', () => {
  it('a closed account gets 401 without the server waiting for (or storing) its upload', async () => {
    const token = await env.login('farid');
    await env.db.query('update app_public.accounts set is_active = false where id = $1', [env.ids.accounts!.farid]);
    try {
      const before = await storedFiles();
      const { body, contentType } = multipartBody('add_documents', 'certificat.pdf', PDF, false);
      // The announced body never fully arrives: only an answer given before reading it can come back.
      const response = await rawRequest(env.url, {
        method: 'POST',
        path: `/api/absences/${absenceId}/documents/`,
        headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
        body,
        contentLength: body.length + 1_000_000,
      }, 5_000);
      expect(response?.status).toBe(401);
      await expectNothingLeft();
      expect(await storedFiles()).toEqual(before);
    } finally {
      await env.db.query('update app_public.accounts set is_active = true where id = $1', [env.ids.accounts!.farid]);
    }
  });
});
