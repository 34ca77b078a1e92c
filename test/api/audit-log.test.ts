import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { INJECTED } from '../helpers/response-contract.js';

let env: TestEnv;
let rh1: string;
let emmaAccount: number;

const LINE_KEYS = ['actor', 'actor_identity', 'after', 'at', 'before', 'client_address', 'id', 'impersonator', 'impersonator_identity',
  'model', 'target_id', 'verb'];

/** An audit line as a business trigger would write it (absences are audited by their own concern). */
async function line(model: string, targetId: number, verb: string, at: string, actor = 'mgr1'): Promise<void> {
  await env.db.query(
    `insert into app_private.audit_log (at, actor_account_id, actor_username, actor_display_name, verb, model, target_id, before, after)
     select $1, a.id, a.username, app_hidden.account_display_name(a.id), $2, $3, $4,
            case when $2 = 'Creation' then null else '{"status": "pending"}'::jsonb end,
            case when $2 = 'Suppression' then null else '{"status": "validated"}'::jsonb end
     from app_public.accounts a where a.username = $5`,
    [at, verb, model, targetId, actor],
  );
}

beforeAll(async () => {
  env = await startTestEnv();
  rh1 = await env.login('rh1');
  emmaAccount = env.ids.accounts!.emma!;
  // Start from an empty log: the fixture import is audited too (lines without actor). The
  // log refuses TRUNCATE; a test arranging its data disables the triggers for that statement.
  await env.db.query('begin; set local session_replication_role = replica; truncate app_private.audit_log; commit;');
  // Lines about employees of three establishments (alice E1, chloe E2, david E3).
  await line('absence', 101, 'Creation', '2026-11-10T09:00:00+01:00', 'alice');
  await line('absence', 101, 'Validation', '2026-11-11T09:00:00+01:00', 'mgr1');
  await line('absence', 202, 'Refus', '2026-11-12T09:00:00+01:00', 'mgr2');
  await line('shift_change_request', 303, 'Creation', '2026-11-13T09:00:00+01:00', 'david');
});
afterAll(async () => {
  await env?.close();
});

describe('GET /api/audit-log/', () => {
  it('shows the audit line of an account activation written by its trigger', async () => {
    const closed = await env.put(`/api/employees/${env.ids.employees!.emma}/account-activation/`, rh1, { is_active: false });
    expect(closed.status).toBe(200);
    const res = await env.get(`/api/audit-log/?model=account&target_id=${emmaAccount}`, rh1);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['count', 'next', 'previous', 'results']);
    expect(res.body.count).toBe(1);
    const [entry] = res.body.results;
    expect(Object.keys(entry).sort()).toEqual(LINE_KEYS);
    expect(entry).toMatchObject({
      at: '2026-11-16T10:00:00+01:00',
      actor: env.ids.accounts!.rh1,
      actor_identity: { username: 'rh1', display_name: 'Claire Dubois' },
      verb: 'Modification',
      model: 'account',
      target_id: emmaAccount,
    });
    expect(entry.before.is_active).toBe(true);
    expect(entry.after.is_active).toBe(false);
  });

  it('keeps the identity frozen when the account is renamed later', async () => {
    await env.db.query("update app_public.accounts set username = 'claire.dubois' where username = 'rh1'");
    try {
      const res = await env.get(`/api/audit-log/?model=account&target_id=${emmaAccount}`, rh1);
      expect(res.body.results[0].actor_identity).toEqual({ username: 'rh1', display_name: 'Claire Dubois' });
    } finally {
      await env.db.query("update app_public.accounts set username = 'rh1' where username = 'claire.dubois'");
    }
  });

  it('reads the whole association: explicit permission, no establishment restriction', async () => {
    const res = await env.get('/api/audit-log/?model=absence', rh1);
    expect(res.status).toBe(200);
    expect(res.body.results.map((l: { target_id: number; verb: string }) => `${l.target_id}:${l.verb}`))
      .toEqual(['202:Refus', '101:Validation', '101:Creation']);
    const all = await env.get('/api/audit-log/', rh1);
    // The four lines above, emma's closure and the end of emma's sessions it caused (issue 25).
    expect(all.body.count).toBe(6);
  });

  it('filters by model and target id, newest first', async () => {
    const res = await env.get('/api/audit-log/?model=absence&target_id=101', rh1);
    expect(res.body.count).toBe(2);
    expect(res.body.results.map((l: { verb: string }) => l.verb)).toEqual(['Validation', 'Creation']);
    expect(res.body.results[1].before).toBeNull();
    const none = await env.get('/api/audit-log/?model=shift_change_request&target_id=101', rh1);
    expect(none.body).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('paginates', async () => {
    const res = await env.get('/api/audit-log/?page_size=2', rh1);
    expect(res.body.count).toBe(6);
    expect(res.body.results).toHaveLength(2);
    expect(res.body.next).toMatch(/page=2/);
  });

  it('refuses an unknown model under model, a bad target id under target_id', async () => {
    const model = await env.get('/api/audit-log/?model=absences', rh1);
    expect(model.status).toBe(400);
    expect(model.body.model[0]).toMatch(/^Modèle inconnu « absences »\. Valeurs possibles : .*absence.*day_modification.*shift_change_request/);
    const target = await env.get('/api/audit-log/?target_id=abc', rh1);
    expect(target.status).toBe(400);
    expect(Object.keys(target.body)).toEqual(['target_id']);
    const zero = await env.get('/api/audit-log/?model=absence&target_id=0', rh1);
    expect(zero.status).toBe(400);
    expect(Object.keys(zero.body)).toEqual(['target_id']);
  });

  it('needs an account', async () => {
    expect((await env.get('/api/audit-log/')).status).toBe(401);
  });

  it('refuses readers without audit.view_actionlog, whatever their perimeter', async () => {
    // admin: Admin of the whole association and staff; rh2: RH n2 with back-office access;
    // mgr1, da: managers of E1; alice: an employee.
    for (const username of ['admin', 'rh2', 'mgr1', 'da', 'alice', 'staff']) {
      const res = await env.get('/api/audit-log/?model=absence', await env.login(username));
      expect(res.status, username).toBe(403);
      expect(res.body.detail).toMatch(/audit\.view_actionlog/);
    }
  });

  it('refuses the permission without back-office access, accepts it with', async () => {
    await env.db.query(
      `insert into app_public.account_permissions (account_id, permission_code) values ($1, 'audit.view_actionlog'), ($2, 'audit.view_actionlog')`,
      [env.ids.accounts!.mgr1, env.ids.accounts!.staff],
    );
    const mgr1 = await env.get('/api/audit-log/', await env.login('mgr1'));
    expect(mgr1.status).toBe(403);
    const staff = await env.get('/api/audit-log/', await env.login('staff'));
    expect(staff.status).toBe(200);
    expect(staff.body.count).toBe(6);
  });

  it('lets a superuser read', async () => {
    const res = await env.get('/api/audit-log/?model=absence', await env.login('root'));
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(3);
  });
});

describe('an audited write whose audit line fails is not written (failure injection)', () => {
  it('the account stays open when its audit line cannot be written', async () => {
    await env.db.query(`
      create function public.test_fail_audit() returns trigger language plpgsql as $$
      begin
        raise exception using errcode = 'XX500', message = 'injected failure: audit refused';
      end;
      $$;
      create trigger _000_injected_failure before insert on app_private.audit_log
        for each row execute function public.test_fail_audit();`);
    try {
      const res = await env.put(`/api/employees/${env.ids.employees!.bruno}/account-activation/`, rh1, { is_active: false }, { uncheckedBecause: INJECTED });
      expect(res.status).toBe(500);
    } finally {
      await env.db.query('drop trigger _000_injected_failure on app_private.audit_log');
    }
    const { rows } = await env.db.query('select is_active from app_public.accounts where id = $1', [env.ids.accounts!.bruno]);
    expect(rows[0].is_active).toBe(true);
    const res = await env.get(`/api/audit-log/?model=account&target_id=${env.ids.accounts!.bruno}`, rh1);
    expect(res.body.count).toBe(0);
  });
});

describe('the impersonator is shown wherever the author is (issue 25 finding 5)', () => {
  beforeAll(async () => {
    // A write root made while impersonating alice, as app_private.write_audit records it.
    await env.db.query(
      `insert into app_private.audit_log (at, actor_account_id, actor_username, actor_display_name,
                                          impersonator_account_id, impersonator_username, impersonator_display_name,
                                          verb, model, target_id, before, after, client_address)
       values ('2026-11-14T09:00:00+01:00', $1, 'alice', 'Alice Martin', $2, 'root', 'root', 'Creation', 'absence', 404, null,
               '{"status": "pending"}', '127.0.0.1')`,
      [env.ids.accounts!.alice, env.ids.accounts!.root]);
  });

  it('in the list: the impersonator and its frozen identity beside the author', async () => {
    const res = await env.get('/api/audit-log/?model=absence&target_id=404', rh1);
    expect(res.body.results[0]).toMatchObject({
      actor: env.ids.accounts!.alice,
      actor_identity: { username: 'alice', display_name: 'Alice Martin' },
      impersonator: env.ids.accounts!.root,
      impersonator_identity: { username: 'root', display_name: 'root' },
      client_address: '127.0.0.1',
    });
    // A line written without impersonation says so.
    const own = await env.get('/api/audit-log/?model=absence&target_id=101', rh1);
    expect(own.body.results[0]).toMatchObject({ impersonator: null, impersonator_identity: null });
  });

  it('filters on the impersonator (case-insensitive), and refuses nothing else', async () => {
    const byRoot = await env.get('/api/audit-log/?impersonator=ROOT', rh1);
    expect(byRoot.status).toBe(200);
    expect(byRoot.body.results.map((l: { target_id: number }) => l.target_id)).toEqual([404]);
    const byAlice = await env.get('/api/audit-log/?impersonator=alice', rh1);
    expect(byAlice.body.count).toBe(0);
    expect((await env.get('/api/audit-log/?impersonator=', rh1)).status).toBe(400);
  });

  it('in the CSV export: the « Par » columns name the impersonator', async () => {
    const res = await env.get('/api/audit-log/export/?format=csv&target_id=404', rh1);
    expect(res.status).toBe(200);
    const [head, row] = res.text.replace(/^\uFEFF/, '').split(/\r?\n/);
    expect(head).toContain('Par (identifiant)');
    expect(head).toContain('Adresse du client');
    expect(row).toContain('alice');
    expect(row).toContain(`${env.ids.accounts!.root}`);
    expect(row).toMatch(/;root;root;|,root,root,/);
    const none = await env.get('/api/audit-log/export/?format=csv&impersonator=alice', rh1);
    expect(none.text.replace(/^\uFEFF/, '').split(/\r?\n/).filter(Boolean)).toHaveLength(1);
  });

  it('in the XLSX export: the same columns, typed', async () => {
    const res = await env.get('/api/audit-log/export/?format=xlsx&impersonator=root', rh1);
    expect(res.status).toBe(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.bytes as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0]!;
    const header = (sheet.getRow(1).values as unknown[]).slice(1).map(String);
    const row = (sheet.getRow(2).values as unknown[]).slice(1);
    const cell = (name: string) => row[header.indexOf(name)];
    expect(sheet.rowCount).toBe(2);
    expect([cell('Identifiant'), cell('Par le compte n° (emprunt d’identité)'), cell('Par (identifiant)'), cell('Adresse du client')])
      .toEqual(['alice', env.ids.accounts!.root, 'root', '127.0.0.1']);
  });
});
