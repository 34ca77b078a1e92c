/**
 * An upload to a staff route by a non-staff account never stores a byte: the router asks the
 * request prelude (SQL, app_private.begin_request_or_fail with the staff need) before it reads
 * a multipart body. No route of the manifest is both staff and multipart today, so this file
 * adds one to its own copy of the manifest (vitest isolates the modules of each file): the
 * honorability certificate's upload, reserved to staff.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { routes } from '../../src/http/routes/index.js';
import { FileStorage } from '../../src/storage/storage.js';
import { filesUnder } from '../helpers/files.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { PDF, form } from './absence-helpers.js';

const upload = routes.find((route) => route.operationId === 'honorability_certificate_put')!;
routes.push({
  ...upload,
  path: '/api/employees/{id}/honorability-certificate/staff-upload/',
  operationId: 'test_staff_upload',
  auth: 'staff',
  errors: [...upload.errors, 403],
});

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

describe('an upload to a staff route', () => {
  const path = () => `/api/employees/${env.ids.employees!.alice}/honorability-certificate/staff-upload/`;

  it('by a non-staff account: 403 with the one refusal, and nothing reaches the storage', async () => {
    // The server runs in this process: every file it starts writing goes through FileStorage.save.
    const save = vi.spyOn(FileStorage.prototype, 'save');
    for (const username of ['alice', 'rh1', 'rh1_noemp']) {
      const res = await env.request('PUT', path(), { token: await env.login(username), form: form({}, [['file', PDF, 'attestation.pdf']]) });
      expect([res.status, res.body], username).toEqual([403, { detail: 'Réservé aux comptes du personnel d’administration.' }]);
    }
    expect(save).not.toHaveBeenCalled();
    expect(await filesUnder(env.config.storageDir)).toEqual([]);
    save.mockRestore();
  });

  it('by a non-staff account: 403, not 400, even for a file the upload would refuse', async () => {
    const notAFile = form({}, [['file', Buffer.from('plain text, neither PDF nor image'), 'notes.txt']]);
    const res = await env.request('PUT', path(), { token: await env.login('rh1'), form: notAFile });
    expect([res.status, res.body]).toEqual([403, { detail: 'Réservé aux comptes du personnel d’administration.' }]);
    const staff = await env.request('PUT', path(), { token: await env.login('staff'), form: notAFile });
    expect(staff.status).toBe(400);
    expect(Object.keys(staff.body)).toEqual(['file']);
  });

  it('by a staff account: the body is read and the route\'s function decides', async () => {
    const res = await env.request('PUT', path(), { token: await env.login('root'), form: form({}, [['file', PDF, 'attestation.pdf']]) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ employee: env.ids.employees!.alice, filename: 'attestation.pdf' });
    expect(await filesUnder(env.config.storageDir)).toHaveLength(1);
  });
});
