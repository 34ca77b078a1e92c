import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let E: Record<string, number>;

beforeAll(async () => {
  env = await startTestEnv();
  E = env.ids.employees!;
});
afterAll(async () => {
  await env?.close();
});

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

function pdfForm(title?: string, files: Array<[Buffer, string]> = [[PDF, 'contrat-signé.pdf']]): FormData {
  const form = new FormData();
  if (title !== undefined) form.append('title', title);
  for (const [bytes, name] of files) form.append('file', new Blob([new Uint8Array(bytes)], { type: 'application/pdf' }), name);
  return form;
}

describe('emergency contacts', () => {
  const contacts = () => `/api/employees/${E.alice}/emergency-contacts/`;

  it('HR adds a contact; the employee and the managers of the perimeter read it', async () => {
    const created = await env.post(contacts(), await env.login('rh1'), {
      name: 'Jeanne Martin',
      relationship: 'Mère',
      phone: '06 12 34 56 78',
      email: 'jeanne.martin@example.fr',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ employee: E.alice, name: 'Jeanne Martin', relationship: 'Mère', phone: '06 12 34 56 78', position: 1 });

    for (const user of ['alice', 'mgr1', 'da', 'rh1']) {
      const res = await env.get(contacts(), await env.login(user));
      expect(res.status).toBe(200);
      expect(res.body.count).toBe(1);
      expect(res.body.results[0].name).toBe('Jeanne Martin');
    }
    expect(await env.db.query("select 1 from app_private.audit_log where model = 'emergency_contact' and verb = 'Creation'")).toHaveProperty('rowCount', 1);
  });

  it('outside the perimeter answers 404, without the permission 403', async () => {
    expect((await env.get(contacts(), await env.login('mgr2'))).status).toBe(404);
    expect((await env.get(contacts(), await env.login('bruno'))).status).toBe(404);
    expect((await env.get(contacts(), await env.login('paie'))).status).toBe(403);
    expect((await env.get(`/api/employees/999999/emergency-contacts/`, await env.login('rh1'))).status).toBe(404);
  });

  it('only HR writes, on its perimeter', async () => {
    const body = { name: 'Paul', phone: '0611223344' };
    expect((await env.post(contacts(), await env.login('alice'), body)).status).toBe(403);
    expect((await env.post(contacts(), await env.login('mgr1'), body)).status).toBe(403);
    expect((await env.put(contacts(), await env.login('mgr1'), { contacts: [] })).status).toBe(403);
    expect((await env.post(contacts(), await env.login('rh2'), body)).status).toBe(404);
    expect((await env.post(`/api/employees/${E.chloe}/emergency-contacts/`, await env.login('rh2'), body)).status).toBe(201);
  });

  it('validates a contact under its fields', async () => {
    const res = await env.post(contacts(), await env.login('rh1'), { name: ' ', phone: 'abc', email: 'x@' });
    expect(res.status).toBe(400);
    expect(res.body.name).toEqual(['Le nom du contact est obligatoire.']);
    expect(res.body.phone[0]).toMatch(/Numéro de téléphone invalide/);
    expect(res.body.email).toEqual(['Adresse e-mail invalide.']);
    const missing = await env.post(contacts(), await env.login('rh1'), { name: 'Paul' });
    expect(missing.status).toBe(400);
    expect(missing.body.phone).toEqual(['Ce champ est obligatoire.']);
  });

  it('PUT replaces the list in order, keeping ids sent and deleting the others', async () => {
    const token = await env.login('rh1');
    const current = (await env.get(contacts(), token)).body.results;
    const res = await env.put(contacts(), token, {
      contacts: [
        { name: 'Louis Martin', relationship: 'Frère', phone: '+33 6 98 76 54 32' },
        { ...current[0], relationship: 'Mère (tutrice)' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ count: 2, next: null, previous: null });
    expect(res.body.results.map((c: { name: string; position: number }) => [c.name, c.position])).toEqual([
      ['Louis Martin', 1],
      ['Jeanne Martin', 2],
    ]);
    expect(res.body.results[1].id).toBe(current[0].id);
    expect(res.body.results[1].relationship).toBe('Mère (tutrice)');

    const invalid = await env.put(contacts(), token, { contacts: [{ name: 'A', phone: '0611223344' }, { name: '', phone: '1' }] });
    expect(invalid.status).toBe(400);
    expect(invalid.body.contacts.join(' ')).toMatch(/Contact n° 2 : nom : le nom du contact est obligatoire\./);
    expect((await env.get(contacts(), token)).body.count).toBe(2);

    const foreign = await env.put(contacts(), token, { contacts: [{ id: 999999, name: 'A', phone: '0611223344' }] });
    expect(foreign.status).toBe(400);
    expect(foreign.body.contacts[0]).toMatch(/n’appartient pas à ce salarié/);

    const tooMany = await env.put(contacts(), token, { contacts: Array.from({ length: 11 }, (_, i) => ({ name: `C${i}`, phone: '0611223344' })) });
    expect(tooMany.status).toBe(400);

    const cleared = await env.put(contacts(), token, { contacts: [] });
    expect(cleared.body.count).toBe(0);
  });

  it('at most ten contacts', async () => {
    const token = await env.login('rh1');
    const url = `/api/employees/${E.david}/emergency-contacts/`;
    for (let i = 1; i <= 10; i += 1) expect((await env.post(url, token, { name: `Contact ${i}`, phone: '0611223344' })).status).toBe(201);
    const eleventh = await env.post(url, token, { name: 'Contact 11', phone: '0611223344' });
    expect(eleventh.status).toBe(400);
    expect(eleventh.body.non_field_errors[0]).toMatch(/Au plus 10/);
  });
});

describe('attachments', () => {
  const list = () => `/api/employees/${E.alice}/attachments/`;
  let attachment: { id: number; file: string };

  it('HR deposits a PDF; the employee lists and downloads it', async () => {
    const res = await env.post(list(), await env.login('rh1'), undefined, { form: pdfForm('Contrat de travail') });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      employee: E.alice,
      title: 'Contrat de travail',
      filename: 'contrat-signé.pdf',
      content_type: 'application/pdf',
      size_bytes: PDF.length,
      uploaded_by_name: 'Claire Dubois',
    });
    expect(res.body.file).toBe(`http://wfm.test/api/employees/${E.alice}/attachments/${res.body.id}/file/`);
    attachment = res.body;

    const alice = await env.login('alice');
    const own = await env.get(list(), alice);
    expect(own.status).toBe(200);
    expect(own.body.results.map((a: { id: number }) => a.id)).toEqual([attachment.id]);

    const download = await env.get(`/api/employees/${E.alice}/attachments/${attachment.id}/file/`, alice);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
    expect(download.headers.get('cache-control')).toBe('private, no-store');
    expect(download.headers.get('content-disposition')).toContain("filename*=UTF-8''contrat-sign%C3%A9.pdf");
    expect(download.text).toBe(PDF.toString());
  });

  it('third parties need the permission and the perimeter', async () => {
    const file = `/api/employees/${E.alice}/attachments/${attachment.id}/file/`;
    expect((await env.get(file, null)).status).toBe(401);
    expect((await env.get(list(), await env.login('mgr1'))).status).toBe(403);
    expect((await env.get(file, await env.login('mgr1'))).status).toBe(403);
    expect((await env.get(file, await env.login('bruno'))).status).toBe(404);
    expect((await env.get(list(), await env.login('rh2'))).status).toBe(404);
    expect((await env.get(file, await env.login('rh1'))).status).toBe(200);
    expect((await env.get(`/api/employees/${E.bruno}/attachments/${attachment.id}/file/`, await env.login('rh1'))).status).toBe(404);
    expect((await env.post(list(), await env.login('alice'), undefined, { form: pdfForm() })).status).toBe(403);
  });

  it('refuses other formats, several files, or none, and keeps no file', async () => {
    const token = await env.login('rh1');
    const text = new FormData();
    text.append('file', new Blob(['bonjour'], { type: 'application/pdf' }), 'faux.pdf');
    const bad = await env.post(list(), token, undefined, { form: text });
    expect(bad.status).toBe(400);
    expect(bad.body.file[0]).toMatch(/PDF, JPG et PNG/);

    const two = await env.post(list(), token, undefined, { form: pdfForm('Deux', [[PDF, 'a.pdf'], [PDF, 'b.pdf']]) });
    expect(two.status).toBe(400);
    expect(two.body.file[0]).toMatch(/un seul fichier/);

    const none = await env.post(list(), token, { title: 'Sans fichier' });
    expect(none.status).toBe(400);
    expect(none.body.file).toBeDefined();
    expect((await env.get(list(), token)).body.count).toBe(1);
  });

  it('renames, then deletes (the file is queued for removal); a missing file answers 404', async () => {
    const token = await env.login('rh1');
    const item = `/api/employees/${E.alice}/attachments/${attachment.id}/`;
    const renamed = await env.put(item, token, { title: 'Contrat CDI' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.title).toBe('Contrat CDI');
    expect((await env.put(item, token, { title: ' ' })).status).toBe(400);
    expect((await env.put(item, await env.login('mgr1'), { title: 'x' })).status).toBe(403);

    const second = await env.post(list(), token, undefined, { form: pdfForm() });
    expect(second.body.title).toBe('contrat-signé.pdf');
    const { rows } = await env.db.query<{ storage_key: string }>('select storage_key from app_public.employee_attachments where id = $1', [second.body.id]);
    await unlink(path.join(env.config.storageDir, rows[0]!.storage_key.slice(0, 2), rows[0]!.storage_key));
    expect((await env.get(`/api/employees/${E.alice}/attachments/${second.body.id}/file/`, token)).status).toBe(404);

    const { rows: keys } = await env.db.query<{ storage_key: string }>('select storage_key from app_public.employee_attachments where id = $1', [attachment.id]);
    expect((await env.delete(item, token)).status).toBe(204);
    expect((await env.delete(item, token)).status).toBe(404);
    const garbage = await env.db.query('select 1 from app_private.storage_garbage where storage_key = $1', [keys[0]!.storage_key]);
    expect(garbage.rowCount).toBe(1);
    expect((await env.get(`/api/employees/${E.alice}/attachments/${attachment.id}/file/`, token)).status).toBe(404);
  });
});
