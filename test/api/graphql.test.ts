/**
 * PostGraphile at /graphql: staff accounts only, under the same row-level security as the
 * REST API; errors of our SQLSTATE registry reach the client, other errors are masked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ graphql: true });
});
afterAll(async () => {
  await env?.close();
});

async function gql(token: string | null, query: string, variables?: Record<string, unknown>) {
  return env.post('/graphql', token, { query, ...(variables ? { variables } : {}) });
}

describe('who reaches /graphql', () => {
  it('anonymous → 401 {"detail"}', async () => {
    const res = await gql(null, '{ me }');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: "Informations d'authentification non fournies." });
  });

  it('an invalid token → 401; a closed staff account → 401', async () => {
    expect((await gql('garbage', '{ me }')).status).toBe(401);
    const token = await env.login('staff');
    await env.db.query('update app_public.accounts set is_active = false where id = $1', [env.ids.accounts!.staff]);
    try {
      const res = await gql(token, '{ me }');
      expect(res.status).toBe(401);
      expect(Object.keys(res.body)).toEqual(['detail']);
    } finally {
      await env.db.query('update app_public.accounts set is_active = true where id = $1', [env.ids.accounts!.staff]);
    }
  });

  it('an account without staff status (alice, and HR without it) → 403', async () => {
    for (const username of ['alice', 'rh1']) {
      const res = await gql(await env.login(username), '{ me }');
      expect(res.status, username).toBe(403);
      expect(Object.keys(res.body)).toEqual(['detail']);
    }
  });

  it('staff, admin (staff) and root (superuser) get data', async () => {
    for (const username of ['staff', 'admin', 'root']) {
      const res = await gql(await env.login(username), '{ me }');
      expect(res.status, username).toBe(200);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.me.username).toBe(username);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});

describe('row-level security applies', () => {
  it('staff (no role, no employee) sees no employee whereas admin sees them all', async () => {
    const { rows } = await env.db.query('select count(*)::int as n from app_public.employees');
    const query = '{ allEmployees { totalCount nodes { rowId lastName } } }';
    const staff = await gql(await env.login('staff'), query);
    expect(staff.status).toBe(200);
    expect(staff.body.data.allEmployees).toEqual({ totalCount: 0, nodes: [] });
    const admin = await gql(await env.login('admin'), query);
    expect(admin.body.data.allEmployees.totalCount).toBe(rows[0].n);
    expect(admin.body.data.allEmployees.nodes.map((n: any) => n.rowId).sort((a: number, b: number) => a - b)).toEqual(
      Object.values(env.ids.employees!).sort((a, b) => a - b),
    );
  });

  it('staff reads only its own account; social security numbers stay hidden from it', async () => {
    const staff = await gql(await env.login('staff'), '{ allAccounts { nodes { rowId username } } allEmployeeSocialSecurityNumbers { totalCount } }');
    expect(staff.body.data.allAccounts.nodes).toEqual([{ rowId: env.ids.accounts!.staff, username: 'staff' }]);
    expect(staff.body.data.allEmployeeSocialSecurityNumbers.totalCount).toBe(0);
    const admin = await gql(await env.login('admin'), '{ allEmployeeSocialSecurityNumbers { totalCount } }');
    expect(admin.body.data.allEmployeeSocialSecurityNumbers.totalCount).toBeGreaterThan(0);
  });

  it('private tables are not part of the schema', async () => {
    const res = await gql(await env.login('root'), '{ __schema { queryType { fields { name } } types { name } } }');
    const types = new Set<string>(res.body.data.__schema.types.map((t: any) => t.name));
    const fields: string[] = res.body.data.__schema.queryType.fields.map((f: any) => f.name);
    // Private tables have no type and no connection field (API functions such as
    // emailOutboxList are intended: they check their own rights).
    for (const hidden of ['EmailOutbox', 'AccountSecret', 'PasswordToken', 'CounterMovement', 'AuditLog']) {
      expect(types.has(hidden), hidden).toBe(false);
    }
    for (const field of fields) {
      expect(field).not.toMatch(/^(all)?(emailOutboxes|accountSecrets|passwordTokens|counterMovements|auditLogs)$/);
    }
  });

  it('runs on the same business clock as the REST API', async () => {
    // A role starting tomorrow (the frozen today is 2026-11-16) is not held yet.
    await env.db.query(
      "insert into app_public.role_attributions (account_id, role_id, start_date) values ($1, 1, '2026-11-17')",
      [env.ids.accounts!.staff],
    );
    try {
      const token = await env.login('staff');
      const before = await gql(token, '{ me }');
      expect(before.body.data.me).not.toHaveProperty('role');
      expect(before.body.data.me.can_view_payroll).toBe(false);
      env.setNow('2026-11-17T09:00:00+01:00');
      const after = await gql(token, '{ me }');
      expect(after.body.data.me.role).toBe('Admin');
    } finally {
      env.setNow('2026-11-16T10:00:00+01:00');
      await env.db.query('delete from app_public.role_attributions where account_id = $1 and role_id = 1', [env.ids.accounts!.staff]);
    }
  });
});

describe('errors', () => {
  const activation = 'mutation($id: Int!, $active: Boolean!) { accountActivationSet(input: {pEmployeeId: $id, pIsActive: $active}) { result } }';

  it('a rule of our registry reaches the client with its message and code (own account)', async () => {
    const res = await gql(await env.login('admin'), activation, { id: env.ids.employees!.admin, active: false });
    expect(res.status).toBe(200);
    expect(res.body.data.accountActivationSet).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].message).toBe('Vous ne pouvez pas ouvrir ou fermer votre propre compte.');
    expect(res.body.errors[0].extensions.code).toBe('WF010');
    const { rows } = await env.db.query('select is_active from app_public.accounts where id = $1', [env.ids.accounts!.admin]);
    expect(rows[0].is_active).toBe(true);
  });

  it('the perimeter rules apply to mutations as over REST', async () => {
    const staff = await gql(await env.login('staff'), activation, { id: env.ids.employees!.emma, active: false });
    expect(staff.body.errors[0].extensions.code).toBe('WF011');
    const admin = await gql(await env.login('admin'), activation, { id: env.ids.employees!.emma, active: false });
    expect(admin.body.errors).toBeUndefined();
    expect(admin.body.data.accountActivationSet.result).toEqual({
      id: env.ids.employees!.emma,
      account_id: env.ids.accounts!.emma,
      is_active: false,
    });
    await env.db.query('update app_public.accounts set is_active = true where id = $1', [env.ids.accounts!.emma]);
  });

  it('any other database error is masked', async () => {
    // An offset beyond the integer range: SQLSTATE 22003, outside our registry.
    const res = await gql(await env.login('admin'), '{ absenceTypesList(pPage: 2147483647, pPageSize: 200) }');
    expect(res.body.data.absenceTypesList).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].message).not.toMatch(/out of range/i);
    expect(res.body.errors[0].message).toMatch(/^An error occurred/);
    expect(res.body.errors[0].extensions?.code).toBeUndefined();
  });
});

describe('file metadata through GraphQL', () => {
  it('a staff account cannot point a document at a file it did not upload (WV402), nothing is written', async () => {
    const token = await env.login('root');
    const before = await env.db.query('select count(*)::int as n from app_public.absences');
    const forged = {
      employee: env.ids.employees!.alice,
      type: (await env.db.query("select id from app_public.absence_types where code = 'MAL'")).rows[0].id,
      date_start: '2026-11-17',
      date_end: '2026-11-17',
      add_documents: [{
        filename: 'autre.pdf', content_type: 'application/pdf', size_bytes: 1000,
        storage_key: 'a'.repeat(32), sha256: 'b'.repeat(64),
      }],
    };
    const res = await gql(token, 'mutation($body: JSON!) { absenceCreate(input: { pBody: $body }) { clientMutationId } }', { body: forged });
    expect(res.body.errors?.[0]?.extensions?.code, JSON.stringify(res.body)).toBe('WV402');
    const after = await env.db.query('select count(*)::int as n from app_public.absences');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });
});

describe('aggregates for reporting', () => {
  it('are offered on the reporting tables, under RLS, and not elsewhere', async () => {
    await env.db.query(
      `insert into app_public.absences (employee_id, type_id, date_start, date_end, status)
       select e, (select id from app_public.absence_types where code = 'FOR'), d, d, 'pending'
       from unnest($1::int[], array['2026-12-01', '2026-12-02']::date[]) as x(e, d)`,
      [[env.ids.employees!.alice, env.ids.employees!.david]],
    );
    const query = '{ allAbsences { totalCount aggregates { distinctCount { employeeId } } } }';
    const admin = await gql(await env.login('admin'), query);
    expect(admin.body.errors, JSON.stringify(admin.body.errors)).toBeUndefined();
    expect(admin.body.data.allAbsences.aggregates.distinctCount.employeeId).toBe('2');
    // The whole association for admin; staff (no role, no employee) sees no absence at all.
    const staff = await gql(await env.login('staff'), query);
    expect(staff.body.data.allAbsences.totalCount).toBe(0);
    const posts = await gql(await env.login('admin'), '{ allPosts { aggregates { __typename } } }');
    expect(posts.body.errors?.[0]?.message).toMatch(/aggregates/);
  });
});

describe('paging through GraphQL', () => {
  it('a page below 1 is refused by the function itself (WV003), not by a database error', async () => {
    const res = await gql(await env.login('admin'), '{ absenceTypesList(pPage: 0, pPageSize: 10) }');
    expect(res.body.errors[0].extensions.code).toBe('WV003');
    expect(res.body.errors[0].extensions.field).toBe('page');
  });
});
