/**
 * Documents over HTTP: multipart uploads on creation, correction and the documents route,
 * content and size checks, protected downloads (401/403/404 and headers), the `file` key,
 * removal from storage, the honorability certificate, and the OpenAPI description.
 */
import { access, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import type { JobHelpers } from 'graphile-worker';
import purgeStorageGarbage from '../../worker/tasks/purge_storage_garbage.js';
import { JPG, PDF, PNG, form, typeIds } from './absence-helpers.js';

let env: TestEnv;
let T: Record<string, number>;
let E: Record<string, number>;
const tokens: Record<string, string> = {};
const as = (user: string) => tokens[user]!;

beforeAll(async () => {
  env = await startTestEnv();
  T = await typeIds(env);
  E = env.ids.employees!;
  for (const user of ['alice', 'bruno', 'mgr1', 'mgr2', 'rh1', 'rh2', 'da']) tokens[user] = await env.login(user);
});
afterAll(async () => {
  await env?.close();
});

const storagePath = (key: string) => path.join(env.config.storageDir, key.slice(0, 2), key);
const keyOf = async (documentId: number) =>
  (await env.db.query('select storage_key from app_public.absence_documents where id = $1', [documentId])).rows[0]?.storage_key as string;
const filesOnDisk = async () => {
  const { readdir } = await import('node:fs/promises');
  const dirs = await readdir(env.config.storageDir).catch(() => [] as string[]);
  let count = 0;
  for (const dir of dirs) count += (await readdir(path.join(env.config.storageDir, dir))).filter((f) => !f.endsWith('.part')).length;
  return count;
};

let sickLeave: { id: number; documents: Array<{ id: number; file?: string; filename: string }> };

describe('uploads', () => {
  it('creation in multipart with PDF, PNG and JPG files (add_documents repeated)', async () => {
    const res = await env.request('POST', '/api/absences/', {
      token: as('alice'),
      form: form({ employee: E.alice!, type: T.MAL!, date_start: '2026-11-16', date_end: '2026-11-18', comment: 'Grippe' }, [
        ['add_documents', PDF, 'arrêt de travail.pdf'],
        ['add_documents', PNG, 'scan.png'],
        ['add_documents', JPG, 'photo.jpg'],
      ]),
    });
    expect(res.status).toBe(201);
    expect(res.body.documents.map((d: any) => [d.filename, d.content_type, d.uploaded_by])).toEqual([
      ['arrêt de travail.pdf', 'application/pdf', 'Alice Martin'],
      ['scan.png', 'image/png', 'Alice Martin'],
      ['photo.jpg', 'image/jpeg', 'Alice Martin'],
    ]);
    for (const document of res.body.documents) {
      expect(document.file).toBe(`http://wfm.test/api/absence-documents/${document.id}/file/`);
      expect(document.uploaded_at).toBe('2026-11-16T10:00:00+01:00');
      await access(storagePath(await keyOf(document.id)));
    }
    sickLeave = res.body;
  });

  it('a file of another format (checked by content, not by name): 400 under add_documents, nothing created or stored', async () => {
    const before = await filesOnDisk();
    const rows = (await env.db.query('select count(*)::int as n from app_public.absences')).rows[0].n;
    const res = await env.request('POST', '/api/absences/', {
      token: as('alice'),
      form: form({ employee: E.alice!, type: T.FOR!, date_start: '2026-12-01' }, [
        ['add_documents', PDF, 'ok.pdf'],
        ['add_documents', Buffer.from('MZ not a pdf at all'), 'fake.pdf'],
      ]),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ add_documents: ['Format de fichier non accepté : seuls les fichiers PDF, JPG et PNG sont acceptés.'] });
    expect((await env.db.query('select count(*)::int as n from app_public.absences')).rows[0].n).toBe(rows);
    expect(await filesOnDisk()).toBe(before);
  });

  it('a file under a field that takes none: 400 under that field, or non_field_errors when the part has no name', async () => {
    const before = await filesOnDisk();
    const rows = (await env.db.query('select count(*)::int as n from app_public.absences')).rows[0].n;
    for (const [name, key] of [['comment', 'comment'], ['', 'non_field_errors']] as const) {
      const res = await env.request('POST', '/api/absences/', {
        token: as('alice'),
        form: form({ employee: E.alice!, type: T.FOR!, date_start: '2026-12-01' }, [[name, PDF, 'x.pdf']]),
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ [key]: ['Ce champ n’accepte pas de fichier.'] });
    }
    expect((await env.db.query('select count(*)::int as n from app_public.absences')).rows[0].n).toBe(rows);
    expect(await filesOnDisk()).toBe(before);
  });

  it('a file over 10 MB (10 × 1024 × 1024 bytes): 400 under add_documents', async () => {
    const big = Buffer.concat([PDF, Buffer.alloc(10 * 1024 * 1024 + 1 - PDF.length, 0x20)]);
    const res = await env.request('POST', '/api/absences/', {
      token: as('alice'),
      form: form({ employee: E.alice!, type: T.FOR!, date_start: '2026-12-01' }, [['add_documents', big, 'gros.pdf']]),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ add_documents: ['Fichier trop volumineux : 10 Mo au plus par fichier.'] });
  });

  it('a rule refusal after the upload removes the stored files', async () => {
    const before = await filesOnDisk();
    const res = await env.request('POST', '/api/absences/', {
      token: as('alice'),
      form: form({ employee: E.alice!, type: T.FOR!, date_start: '2026-11-17' }, [['add_documents', PDF, 'x.pdf']]),
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['date_start']);
    expect(await filesOnDisk()).toBe(before);
  });

  it('files travel only in multipart bodies', async () => {
    const res = await env.post('/api/absences/', as('alice'), {
      employee: E.alice, type: T.FOR, date_start: '2026-12-01', add_documents: [{ filename: 'x.pdf' }],
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['add_documents']);
  });

  it('PATCH in multipart: a manager adds a file and removes another (remove_document_ids repeated); the removed file leaves storage', async () => {
    const removed = sickLeave.documents[1]!;
    const removedKey = await keyOf(removed.id);
    const res = await env.request('PATCH', `/api/absences/${sickLeave.id}/`, {
      token: as('mgr1'),
      form: form({ remove_document_ids: [removed.id] }, [['add_documents', PDF, 'complement.pdf']]),
    });
    expect(res.status).toBe(200);
    expect(res.body.documents.map((d: any) => d.filename)).toEqual(['arrêt de travail.pdf', 'photo.jpg', 'complement.pdf']);
    expect(res.body.documents[2].uploaded_by).toBe('Julien Petit');
    expect(res.body.version).toBe(2);
    await expect(access(storagePath(removedKey))).rejects.toThrow();
    expect((await env.db.query('select count(*)::int as n from app_private.storage_garbage')).rows[0].n).toBe(0);
  });

  it('remove_document_ids of another absence: 400, refused and nothing changed (JSON list)', async () => {
    const other = await env.request('POST', '/api/absences/', {
      token: as('bruno'),
      form: form({ employee: E.bruno!, type: T.MAL!, date_start: '2026-11-16' }, [['add_documents', PDF, 'bruno.pdf']]),
    });
    expect(other.status).toBe(201);
    const res = await env.patch(`/api/absences/${sickLeave.id}/`, as('mgr1'), { remove_document_ids: [other.body.documents[0].id] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      remove_document_ids: [`Le document n° ${other.body.documents[0].id} n’appartient pas à cette absence : rien n’a été modifié.`],
    });
    const read = await env.get(`/api/absences/${sickLeave.id}/`, as('mgr1'));
    expect(read.body.documents).toHaveLength(3);
    expect(read.body.version).toBe(2);
  });

  it('the documents route: the employee deposits on their own absence', async () => {
    const res = await env.request('POST', `/api/absences/${sickLeave.id}/documents/`, {
      token: as('alice'),
      form: form({}, [['add_documents', PNG, 'prolongation.png']]),
    });
    expect(res.status).toBe(200);
    expect(res.body.documents.map((d: any) => d.filename)).toContain('prolongation.png');
    const empty = await env.request('POST', `/api/absences/${sickLeave.id}/documents/`, { token: as('alice'), form: form({ x: 1 }) });
    expect(empty.status).toBe(400);
    expect(Object.keys(empty.body)).toEqual(['add_documents']);
    expect((await env.request('POST', `/api/absences/${sickLeave.id}/documents/`, { token: as('bruno'), form: form({}, [['add_documents', PDF, 'x.pdf']]) })).status).toBe(404);
  });
});

describe('GET /api/absence-documents/<id>/file/', () => {
  it('the employee downloads: content, type, nosniff, private no-store, attachment name', async () => {
    const document = sickLeave.documents[0]!;
    const res = await fetch(`${env.url}/api/absence-documents/${document.id}/file/`, { headers: { authorization: `Bearer ${as('alice')}` } });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(PDF)).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="arr_t de travail.pdf"; filename*=UTF-8''arr%C3%AAt%20de%20travail.pdf`,
    );
  });

  it('401 without authentication; 403 without the right; 404 outside the perimeter or absent', async () => {
    const url = `/api/absence-documents/${sickLeave.documents[0]!.id}/file/`;
    expect((await env.get(url)).status).toBe(401);
    const manager = await env.get(url, as('mgr1'));
    expect(manager.status).toBe(403);
    expect(manager.body).toEqual({ detail: "Vous n’avez pas le droit de lire le contenu de ce justificatif." });
    expect((await env.get(url, as('da'))).status).toBe(403);
    expect((await env.get(url, as('mgr2'))).status).toBe(404);
    expect((await env.get(url, as('rh2'))).status).toBe(404);
    expect((await env.get(url, as('bruno'))).status).toBe(404);
    expect((await env.get('/api/absence-documents/999999/file/', as('rh1'))).status).toBe(404);
    expect((await env.get(url, as('rh1'))).status).toBe(200);
  });

  it('a missing file answers 404', async () => {
    const document = sickLeave.documents[2]!;
    await rm(storagePath(await keyOf(document.id)));
    const res = await env.get(`/api/absence-documents/${document.id}/file/`, as('alice'));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Fichier introuvable.' });
  });

  it('readers without the right see filename, date and depositor, but no file key; consultation is not audited', async () => {
    const audit = async () => (await env.db.query('select count(*)::int as n from app_private.audit_log')).rows[0].n as number;
    const before = await audit();
    const manager = await env.get(`/api/absences/${sickLeave.id}/`, as('mgr1'));
    for (const document of manager.body.documents) {
      expect(Object.keys(document).sort()).toEqual(['content_type', 'filename', 'id', 'size_bytes', 'uploaded_at', 'uploaded_by']);
    }
    const list = await env.get(`/api/absences/?employee=${E.alice}`, as('rh1'));
    expect(list.body.results.find((row: any) => row.id === sickLeave.id).documents[0].file).toMatch(/\/file\/$/);
    await env.get(`/api/absence-documents/${sickLeave.documents[0]!.id}/file/`, as('alice'));
    expect(await audit()).toBe(before);
  });

  it('withdrawing the absence deletes its documents and their files', async () => {
    const created = await env.request('POST', '/api/absences/', {
      token: as('alice'),
      form: form({ employee: E.alice!, type: T.FOR!, date_start: '2026-12-08' }, [['add_documents', PDF, 'convocation.pdf']]),
    });
    const key = await keyOf(created.body.documents[0].id);
    await access(storagePath(key));
    expect((await env.delete(`/api/absences/${created.body.id}/`, as('alice'))).status).toBe(204);
    await expect(access(storagePath(key))).rejects.toThrow();
    expect((await env.get(`/api/absence-documents/${created.body.documents[0].id}/file/`, as('alice'))).status).toBe(404);
  });
});

describe('honorability certificate', () => {
  const base = () => `/api/employees/${E.alice}/honorability-certificate/`;

  it('the employee deposits it (multipart, one file under `file`) and reads it', async () => {
    expect((await env.get(base(), as('alice'))).status).toBe(404);
    const res = await env.request('PUT', base(), { token: as('alice'), form: form({}, [['file', PDF, 'honorabilite.pdf']]) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ employee: E.alice, filename: 'honorabilite.pdf', uploaded_by: 'Alice Martin', file: `http://wfm.test${base()}file/` });
    const download = await fetch(`${env.url}${base()}file/`, { headers: { authorization: `Bearer ${as('alice')}` } });
    expect(download.status).toBe(200);
    expect(download.headers.get('cache-control')).toBe('private, no-store');
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('readers without the right: metadata without file key, 403 on the file; 401 without authentication; 404 outside', async () => {
    const manager = await env.get(base(), as('mgr1'));
    expect(manager.status).toBe(200);
    expect(manager.body).not.toHaveProperty('file');
    expect((await env.get(`${base()}file/`, as('mgr1'))).status).toBe(403);
    expect((await env.get(`${base()}file/`)).status).toBe(401);
    expect((await env.get(`${base()}file/`, as('bruno'))).status).toBe(404);
    expect((await env.get(`${base()}file/`, as('rh1'))).status).toBe(200);
  });

  it('replacing it removes the old file; a wrong format or two files: 400 under file; a colleague: 404; a manager outside the perimeter: 404', async () => {
    const oldKey = (await env.db.query('select storage_key from app_public.honorability_certificates where employee_id = $1', [E.alice])).rows[0].storage_key;
    const replaced = await env.request('PUT', base(), { token: as('mgr1'), form: form({}, [['file', PNG, 'attestation.png']]) });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ filename: 'attestation.png', uploaded_by: 'Julien Petit' });
    await expect(access(storagePath(oldKey))).rejects.toThrow();
    const wrong = await env.request('PUT', base(), { token: as('alice'), form: form({}, [['file', Buffer.from('hello'), 'a.pdf']]) });
    expect(wrong.status).toBe(400);
    expect(Object.keys(wrong.body)).toEqual(['file']);
    const two = await env.request('PUT', base(), { token: as('alice'), form: form({}, [['file', PDF, 'a.pdf'], ['file', PDF, 'b.pdf']]) });
    expect(two.status).toBe(400);
    expect(two.body).toEqual({ file: ['Déposez exactement un fichier (PDF, JPG ou PNG).'] });
    expect((await env.request('PUT', base(), { token: as('bruno'), form: form({}, [['file', PDF, 'a.pdf']]) })).status).toBe(404);
    expect((await env.request('PUT', base(), { token: as('mgr2'), form: form({}, [['file', PDF, 'a.pdf']]) })).status).toBe(404);
  });

  it('DELETE removes it and its file', async () => {
    const key = (await env.db.query('select storage_key from app_public.honorability_certificates where employee_id = $1', [E.alice])).rows[0].storage_key;
    expect((await env.delete(base(), as('bruno'))).status).toBe(404);
    expect((await env.delete(base(), as('mgr2'))).status).toBe(404);
    expect((await env.delete(base(), as('alice'))).status).toBe(204);
    await expect(access(storagePath(key))).rejects.toThrow();
    expect((await env.get(base(), as('alice'))).status).toBe(404);
    expect((await env.delete(base(), as('alice'))).status).toBe(404);
  });
});

describe('worker task purge_storage_garbage', () => {
  it('removes the files queued by deletions the request handlers could not purge', async () => {
    const created = await env.request('POST', '/api/absences/', {
      token: as('alice'),
      form: form({ employee: E.alice!, type: T.FOR!, date_start: '2026-12-09' }, [['add_documents', PDF, 'a.pdf']]),
    });
    const key = await keyOf(created.body.documents[0].id);
    // A deletion outside the API (back-office, script): the key is queued, the file stays.
    await env.db.query('delete from app_public.absence_documents where id = $1', [created.body.documents[0].id]);
    await access(storagePath(key));
    expect((await env.db.query('select storage_key from app_private.storage_garbage')).rows).toEqual([{ storage_key: key }]);
    const previous = process.env.STORAGE_DIR;
    process.env.STORAGE_DIR = env.config.storageDir;
    const logs: string[] = [];
    try {
      await purgeStorageGarbage({}, {
        withPgClient: async <R>(work: (client: any) => Promise<R>) => {
          const client = await env.db.connect();
          try {
            return await work(client);
          } finally {
            client.release();
          }
        },
        logger: { info: (message: string) => logs.push(message) },
      } as unknown as JobHelpers);
    } finally {
      if (previous === undefined) delete process.env.STORAGE_DIR;
      else process.env.STORAGE_DIR = previous;
    }
    expect(logs).toEqual(['purge_storage_garbage: 1 file(s) removed']);
    await expect(access(storagePath(key))).rejects.toThrow();
    expect((await env.db.query('select count(*)::int as n from app_private.storage_garbage')).rows[0].n).toBe(0);
  });
});

describe('orphan sweep of purge_storage_garbage', () => {
  it('removes, after an hour, files no row names and partial uploads; keeps younger files and those rows name', async () => {
    const { mkdir, utimes, writeFile } = await import('node:fs/promises');
    const created = await env.request('POST', '/api/absences/', {
      token: as('alice'),
      form: form({ employee: E.alice!, type: T.FOR!, date_start: '2026-12-10' }, [['add_documents', PDF, 'a.pdf']]),
    });
    expect(created.status).toBe(201);
    const named = await keyOf(created.body.documents[0].id);
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    const place = async (key: string, suffix: string, old: boolean) => {
      const file = `${storagePath(key)}${suffix}`;
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, PDF);
      if (old) await utimes(file, twoHoursAgo, twoHoursAgo);
    };
    const oldOrphan = 'a'.repeat(32);
    const youngOrphan = 'b'.repeat(32);
    const oldPart = 'c'.repeat(32);
    await place(oldOrphan, '', true);
    await place(youngOrphan, '', false);
    await place(oldPart, '.part', true);
    await utimes(storagePath(named), twoHoursAgo, twoHoursAgo);
    const previous = process.env.STORAGE_DIR;
    process.env.STORAGE_DIR = env.config.storageDir;
    const logs: string[] = [];
    try {
      await purgeStorageGarbage({}, {
        withPgClient: async <R>(work: (client: any) => Promise<R>) => {
          const client = await env.db.connect();
          try {
            return await work(client);
          } finally {
            client.release();
          }
        },
        logger: { info: (message: string) => logs.push(message) },
      } as unknown as JobHelpers);
    } finally {
      if (previous === undefined) delete process.env.STORAGE_DIR;
      else process.env.STORAGE_DIR = previous;
    }
    expect(logs).toEqual(['purge_storage_garbage: 0 file(s) removed, 2 orphan file(s) swept']);
    await expect(access(storagePath(oldOrphan))).rejects.toThrow();
    await expect(access(`${storagePath(oldPart)}.part`)).rejects.toThrow();
    await access(storagePath(youngOrphan));
    await access(storagePath(named));
    await rm(storagePath(youngOrphan));
  });
});

describe('OpenAPI', () => {
  it('describes the bodies (JSON and multipart), the filters and the errors of the absence and document routes', async () => {
    const { body: schema } = await env.get('/api/schema/');
    const create = schema.paths['/api/absences/'].post;
    expect(Object.keys(create.requestBody.content)).toEqual(['application/json', 'multipart/form-data']);
    expect(create.requestBody.content['multipart/form-data'].schema.properties.add_documents.type).toBe('array');
    expect(create.requestBody.content['multipart/form-data'].encoding.add_documents).toEqual({ style: 'form', explode: true });
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['employee', 'type', 'date_start']);
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401']));
    const patch = schema.paths['/api/absences/{id}/'].patch;
    expect(patch.requestBody.content['multipart/form-data'].encoding.remove_document_ids).toEqual({ style: 'form', explode: true });
    expect(Object.keys(patch.responses)).toEqual(expect.arrayContaining(['200', '400', '403', '404', '409']));
    const list = schema.paths['/api/absences/'].get;
    expect(list.parameters.map((p: any) => p.name)).toEqual(['status', 'employee', 'from', 'to', 'establishment', 'type', 'page', 'page_size']);
    expect(list.parameters[0].schema.enum).toEqual(['pending', 'validated', 'refused', 'cancellation_requested', 'cancelled']);
    expect(schema.paths['/api/absences/{id}/validate/'].post.requestBody.content['application/json'].schema.required).toEqual(['version']);
    expect(Object.keys(schema.paths['/api/absences/{id}/validate/'].post.responses)).toEqual(expect.arrayContaining(['403', '404', '409']));
    expect(Object.keys(schema.paths['/api/absences/preview/'].post.responses)).toEqual(expect.arrayContaining(['200', '400']));
    const download = schema.paths['/api/absence-documents/{id}/file/'].get;
    expect(Object.keys(download.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '404']));
    expect(download.responses['200'].headers['Cache-Control'].schema.const).toBe('private, no-store');
    expect(schema.paths['/api/employees/{id}/honorability-certificate/'].put.requestBody.content['multipart/form-data'].schema.properties.file.type).toBe('array');
    expect(schema.paths['/api/counters/'].get.parameters.map((p: any) => p.name)).toEqual(['employee', 'year']);
    expect(schema.components.schemas.Absence.properties.documents.items).toEqual({ $ref: '#/components/schemas/AbsenceDocument' });
    expect(schema.components.schemas.AbsencePreview.required).toEqual(['quantity', 'unit', 'counter_effects', 'warnings', 'errors']);
  });
});
