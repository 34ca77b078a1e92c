/**
 * Issue 11, the SQL-side findings over HTTP: callers without an employee record (NULL guards),
 * on-call periods, document removal, the contact e-mail of an account, events outside the
 * perimeter, and 404 rather than 403 outside the perimeter. Extra accounts are created in the
 * test database through the owner pool; tokens are signed with the server's secret.
 */
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { PDF, form, typeIds } from './absence-helpers.js';

let env: TestEnv;
let T: Record<string, number>;
let E: Record<string, number>;
let EST: Record<string, number>;
const tokens: Record<string, string> = {};
const as = (user: string) => tokens[user]!;

const ROLE_IDS: Record<string, number> = { Admin: 1, 'RH n1': 2, 'RH n2': 3, DA: 4, 'Manager n1': 5, 'Manager n2': 6, 'Service Paie': 9 };

/** An active account without an employee record holding one role (over establishments, or the whole association). */
async function accountWithoutEmployee(username: string, role: string, establishments: string[] = []): Promise<string> {
  const { rows } = await env.db.query<{ id: number }>('insert into app_public.accounts (username) values ($1) returning id', [username]);
  const id = rows[0]!.id;
  const attribution = await env.db.query<{ id: number }>(
    'insert into app_public.role_attributions (account_id, role_id) values ($1, $2) returning id', [id, ROLE_IDS[role]]);
  for (const key of establishments) {
    await env.db.query('insert into app_public.role_attribution_establishments (attribution_id, establishment_id) values ($1, $2)',
      [attribution.rows[0]!.id, EST[key]]);
  }
  return jwt.sign({ sub: String(id), typ: 'access' }, env.config.jwtSecret, { algorithm: 'HS256', expiresIn: 600 });
}

beforeAll(async () => {
  env = await startTestEnv();
  T = await typeIds(env);
  E = env.ids.employees!;
  EST = env.ids.establishments!;
  for (const user of ['alice', 'mgr1', 'rh1', 'rh2', 'da', 'admin']) tokens[user] = await env.login(user);
  tokens['nx-mgr1'] = await accountWithoutEmployee('nx-mgr1', 'Manager n1', ['E1']);
  tokens['nx-paie'] = await accountWithoutEmployee('nx-paie', 'Service Paie');
});
afterAll(async () => {
  await env?.close();
});

describe('finding 2: a caller without an employee record meets guards that are never NULL', () => {
  let documentId: number;
  beforeAll(async () => {
    const created = await env.request('POST', '/api/absences/', {
      token: as('alice'),
      form: form({ employee: E.alice!, type: T.MAL!, date_start: '2026-11-16', date_end: '2026-11-16' },
        [['add_documents', PDF, 'arret.pdf']]),
    });
    expect(created.status).toBe(201);
    documentId = created.body.documents[0].id;
    const certificate = await env.request('PUT', `/api/employees/${E.alice}/honorability-certificate/`, {
      token: as('alice'), form: form({}, [['file', PDF, 'casier.pdf']]),
    });
    expect(certificate.status).toBe(200);
  });

  it('a manager without employee record may not download a medical certificate of its perimeter (403)', async () => {
    expect((await env.get(`/api/absence-documents/${documentId}/file/`, as('nx-mgr1'))).status).toBe(403);
  });

  it('nor an honorability certificate (403)', async () => {
    expect((await env.get(`/api/employees/${E.alice}/honorability-certificate/file/`, as('nx-mgr1'))).status).toBe(403);
  });

  it('nor read the balances of an employee outside its perimeter (404)', async () => {
    expect((await env.get(`/api/counters/?employee=${E.david}&year=2026`, as('nx-mgr1'))).status).toBe(404);
  });

  it('Service Paie without employee record does not remove a certificate: 403, and it stays', async () => {
    expect((await env.delete(`/api/employees/${E.alice}/honorability-certificate/`, as('nx-paie'))).status).toBe(403);
    const left = await env.db.query('select 1 from app_public.honorability_certificates where employee_id = $1', [E.alice]);
    expect(left.rowCount).toBe(1);
  });
});

describe('finding 3: an on-call period extends the queue and the decisions, nothing else', () => {
  it('a DA of E1 puts the RH n2 of E2 on call over E1: the RH n2 decides there but reads no number and writes no record', async () => {
    const created = await env.post('/api/on-call-periods/', as('da'), {
      account: env.ids.accounts!.rh2, start_at: '2026-11-16T08:00:00+01:00', end_at: '2026-11-17T08:00:00+01:00',
      establishments: [EST.E1],
    });
    expect(created.status).toBe(201);
    const record = await env.get(`/api/employees/${E.alice}/`, as('rh2'));
    expect(record.status).toBe(200);
    expect(record.body).not.toHaveProperty('social_security_number');
    expect((await env.patch(`/api/employees/${E.alice}/`, as('rh2'), { first_name: 'Alicia' })).status).toBe(404);
    const queue = await env.get(`/api/absences/?employee=${E.alice}`, as('rh2'));
    expect(queue.status).toBe(200);
  });
});

describe('finding 5: a DA deposits documents but does not remove them; both are audited by name', () => {
  it('PATCH remove_document_ids by the DA answers 403 and removes nothing; the manager removes it, audited by name', async () => {
    const created = await env.request('POST', '/api/absences/', {
      token: as('alice'),
      form: form({ employee: E.alice!, type: T.MAL!, date_start: '2026-11-18', date_end: '2026-11-18' },
        [['add_documents', PDF, 'certificat-medical.pdf']]),
    });
    expect(created.status).toBe(201);
    const absenceId = created.body.id;
    const documentId = created.body.documents[0].id;
    const refused = await env.patch(`/api/absences/${absenceId}/`, as('da'), { remove_document_ids: [documentId] });
    expect(refused.status).toBe(403);
    expect((await env.db.query('select 1 from app_public.absence_documents where id = $1', [documentId])).rowCount).toBe(1);
    expect((await env.patch(`/api/absences/${absenceId}/`, as('mgr1'), { remove_document_ids: [documentId] })).status).toBe(200);
    const lines = await env.get(`/api/audit-log/?model=absence_document&target_id=${absenceId}`, as('rh1'));
    expect(lines.status).toBe(200);
    expect(lines.body.results.map((l: any) => [l.verb, (l.after ?? l.before).filename])).toEqual([
      ['Suppression', 'certificat-medical.pdf'],
      ['Creation', 'certificat-medical.pdf'],
    ]);
  });
});

describe('finding 4: the contact address of an account is changed only by an editor covering its rights', () => {
  it('RH n2 of E2 may not redirect the address of a manager holding rights on E1; a password reset then goes to the real address', async () => {
    const bruno = env.ids.accounts!.bruno!;
    const attribution = await env.db.query<{ id: number }>(
      'insert into app_public.role_attributions (account_id, role_id) values ($1, 5) returning id', [bruno]);
    await env.db.query('insert into app_public.role_attribution_establishments (attribution_id, establishment_id) values ($1, $2)',
      [attribution.rows[0]!.id, EST.E1]);
    await env.db.query("update app_public.employees set professional_email = 'bruno@e1.test' where id = $1", [E.bruno]);
    const refused = await env.patch(`/api/employees/${E.bruno}/`, as('rh2'), { professional_email: 'pirate@evil.test' });
    expect(refused.status).toBe(400);
    expect(refused.body.professional_email[0]).toMatch(/droits que vous ne couvrez pas/);
    expect((await env.post('/api/auth/password/reset/', null, { login: 'bruno' })).status).toBeLessThan(300);
    const sent = await env.db.query("select to_address from app_private.email_outbox where account_id = $1 and kind = 'password_reset'", [bruno]);
    expect(sent.rows.map((r) => r.to_address)).toEqual(['bruno@e1.test']);
  });

  it('a covered change tells the old address (outbox) and the account (notification)', async () => {
    const changed = await env.patch(`/api/employees/${E.alice}/`, as('rh1'), { professional_email: 'alice.new@e1.test' });
    expect(changed.status).toBe(200);
    await env.db.query("update app_public.employees set professional_email = 'alice@e1.test' where id = $1", [E.alice]);
    const again = await env.patch(`/api/employees/${E.alice}/`, as('rh1'), { professional_email: 'alice.2@e1.test' });
    expect(again.status).toBe(200);
    const mail = await env.db.query("select 1 from app_private.email_outbox where to_address = 'alice@e1.test' and kind = 'email_changed'");
    expect(mail.rowCount).toBe(1);
    const notes = await env.get('/api/notifications/', as('alice'));
    expect(notes.body.results.filter((n: any) => n.title === 'Adresse e-mail modifiée').length).toBe(2);
  });
});

describe('finding 7: events are no absence oracle', () => {
  it('a manager of E1 may not invite an employee of E3 (404), and nothing reaches that employee\'s deciders', async () => {
    expect((await env.post('/api/absences/', as('admin'), { employee: E.david, type: T.FOR, date_start: '2026-12-01', date_end: '2026-12-01' })).status).toBe(201);
    const conflictsOfMgr3 = async () => (await env.db.query(
      "select 1 from app_public.notifications where account_id = $1 and title = 'Conflit entre un événement et une absence'",
      [env.ids.accounts!.mgr3])).rowCount;
    const res = await env.post('/api/events/', as('mgr1'), {
      title: 'Piège', start_at: '2025-11-16T00:00:00+01:00', end_at: '2027-11-16T00:00:00+01:00', participants: [E.david],
    });
    expect(res.status).toBe(404);
    expect(JSON.stringify(res.body)).not.toMatch(/absence/);
    expect(await conflictsOfMgr3()).toBe(0);
  });
});

describe('finding 10: outside the perimeter, 404 rather than 403', () => {
  it('the honorability file of an employee outside the perimeter: 404; in reach without the right: 403', async () => {
    // alice's certificate exists (deposited above, finding 2). While rh2 is on call over E1
    // (finding 3 above), alice is in its queue: in reach, without the right to read her files.
    const file = `/api/employees/${E.alice}/honorability-certificate/file/`;
    expect((await env.get(file, as('rh2'))).status).toBe(403);
    await env.setNow('2026-11-17T10:00:00+01:00'); // the on-call period has ended
    try {
      expect((await env.get(file, as('rh2'))).status).toBe(404);
    } finally {
      await env.setNow('2026-11-16T10:00:00+01:00');
    }
  });

  it('the account activation of an employee outside the perimeter: 404', async () => {
    expect((await env.put(`/api/employees/${E.alice}/account-activation/`, as('rh2'), { is_active: false })).status).toBe(404);
    expect((await env.db.query('select is_active from app_public.accounts where employee_id = $1', [E.alice])).rows[0].is_active).toBe(true);
  });

  it('the record of an employee outside the write perimeter: 404', async () => {
    expect((await env.patch(`/api/employees/${E.alice}/`, as('rh2'), { first_name: 'Alicia' })).status).toBe(404);
  });
});

describe('an employee with no main workplace (farid)', () => {
  it('reads their own balances; a restricted manager without employee record does not (404)', async () => {
    const farid = await env.login('farid');
    expect((await env.get('/api/counters/?year=2026', farid)).status).toBe(200);
    expect((await env.get(`/api/counters/?employee=${E.farid}&year=2026`, as('nx-mgr1'))).status).toBe(404);
  });
});
