/**
 * PostGraphile at /graphql: a back-office surface. Off unless GRAPHQL is set; when on, staff
 * accounts only, through the back-office session past its second factor (never a bearer token;
 * POST needs X-CSRFToken), and it offers the API functions (what REST's own SQL functions return, under
 * the same rules), never the tables: a reader gets there exactly what REST gives them.
 * Errors of our SQLSTATE registry reach the client, other errors are masked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { BackofficeVisitor, enrolAs, totp } from '../helpers/backoffice.js';
import { checkGraphqlData } from '../helpers/response-contract.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ graphql: true });
});
afterAll(async () => {
  await env?.close();
});

/** Back-office sessions past the second factor (enrolment), one per account, kept between tests. */
const signedIn = new Map<string, { visitor: BackofficeVisitor; secret: string }>();
async function signIn(username: string): Promise<BackofficeVisitor> {
  let entry = signedIn.get(username);
  if (!entry) {
    const { visitor, secret } = await enrolAs(env, username);
    entry = { visitor, secret };
    signedIn.set(username, entry);
  }
  return entry.visitor;
}

function csrfOf(visitor: BackofficeVisitor): string {
  return decodeURIComponent(visitor.cookies.get('wfm_csrftoken') ?? '');
}

interface Answer { status: number; headers: Headers; text: string; body: any }

/** POST /graphql with a back-office session and its X-CSRFToken header (or anonymously). */
async function gql(who: BackofficeVisitor | null, query: string, variables?: Record<string, unknown>,
  { csrf = true }: { csrf?: boolean } = {}): Promise<Answer> {
  const json = { query, ...(variables ? { variables } : {}) };
  const page = await (who ?? new BackofficeVisitor(env.url)).request('POST', '/graphql', {
    json, headers: who && csrf ? { 'x-csrftoken': csrfOf(who) } : {},
  });
  let body: any = null;
  try {
    body = JSON.parse(page.text);
  } catch {
    // Not JSON: the assertions read `text`.
  }
  // What a function answers here is what its REST routes document (test/helpers/response-contract.ts).
  if (page.status === 200) checkGraphqlData(query, body?.data);
  return { status: page.status, headers: page.headers, text: page.text, body };
}

/** POST /graphql with a bearer token (refused: GraphQL goes through the back-office session). */
function gqlBearer(token: string, query: string) {
  return env.post('/graphql', token, { query });
}

describe('the surface is off unless enabled (finding 8)', () => {
  const base = { DATABASE_URL: 'postgres:///x', JWT_SECRET: 'x'.repeat(32) };

  it('GRAPHQL unset, empty or off leaves /graphql unmounted; on/1/true mounts it', () => {
    for (const value of [undefined, '', 'off', '0', 'no']) {
      expect(loadConfig({ ...base, ...(value === undefined ? {} : { GRAPHQL: value }) }).graphql, String(value)).toBe(false);
    }
    for (const value of ['on', '1', 'true']) expect(loadConfig({ ...base, GRAPHQL: value }).graphql, value).toBe(true);
  });

  it('a server started without it answers 404 on /graphql, even to a superuser', async () => {
    const off = await startTestEnv();
    try {
      const res = await off.post('/graphql', await off.login('root'), { query: '{ me }' });
      expect(res.status).toBe(404);
    } finally {
      await off.close();
    }
  });
});

describe('every /graphql answer is no-store and nosniff (finding 8)', () => {
  it('200, 401 and 403 alike', async () => {
    const answers = [
      await gql(await signIn('root'), '{ me }'),
      await gql(null, '{ me }'),
      await gql(await signIn('rh1'), '{ me }'),
      await gqlBearer(await env.login('staff'), '{ me }'),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 401, 403, 403]);
    for (const res of answers) {
      expect(res.headers.get('cache-control'), String(res.status)).toBe('no-store');
      expect(res.headers.get('x-content-type-options'), String(res.status)).toBe('nosniff');
    }
  });
});

describe('no table, no column beyond what REST gives (finding 8)', () => {
  it('the schema has no table type, no row field and no table mutation; impersonation is not offered', async () => {
    const res = await gql(await signIn('root'), '{ __schema { queryType { fields { name } } mutationType { fields { name } } types { name kind } } }');
    const query: string[] = res.body.data.__schema.queryType.fields.map((f: any) => f.name);
    const mutation: string[] = res.body.data.__schema.mutationType.fields.map((f: any) => f.name);
    const types = new Set<string>(res.body.data.__schema.types.map((t: any) => t.name));
    for (const table of ['Absence', 'AbsenceDocument', 'Employee', 'EmployeeSocialSecurityNumber', 'Account', 'HonorabilityCertificate', 'ShiftChangeRequest', 'Counter']) {
      expect(types.has(table), table).toBe(false);
    }
    expect(query.filter((name) => /^all[A-Z]|By[A-Z]/.test(name))).toEqual([]);
    expect(mutation.filter((name) => /^(create|update|delete)[A-Z]/.test(name))).toEqual([]);
    expect(mutation).not.toContain('impersonationStart');
    // Reading a calendar feed makes its owner the acting account: REST only (its own transaction).
    expect([...query, ...mutation].filter((name) => /^calendarFeedRead/.test(name))).toEqual([]);
    // The API functions are what the surface offers.
    expect(query).toEqual(expect.arrayContaining(['me', 'absencesList', 'absenceGet', 'payrollLines']));
  });

  it('a staff account holding Service Paie reads no comment, decision reason or document name that REST hides', async () => {
    const { rows: [absence] } = await env.db.query(
      `insert into app_public.absences (employee_id, type_id, date_start, date_end, status, comment, decision_reason)
       values ($1, (select id from app_public.absence_types where code = 'FOR'), '2026-12-03', '2026-12-03', 'refused',
               'Commentaire-confidentiel', 'Motif-confidentiel') returning id`,
      [env.ids.employees!.alice],
    );
    await env.db.query('update app_public.accounts set is_staff = true where id = $1', [env.ids.accounts!.paie]);
    try {
      const token = await env.login('paie');
      const session = (await enrolAs(env, 'paie')).visitor;
      const attempts = [
        '{ allAbsences { nodes { comment decisionReason } } }',
        '{ allAbsenceDocuments { nodes { filename } } }',
        `{ absenceByRowId(rowId: ${absence.id}) { comment decisionReason } }`,
        '{ absencesList(pPage: 1, pPageSize: 200) }',
        `{ absenceGet(pId: ${absence.id}, pPublicUrl: "http://wfm.test") }`,
        '{ payrollLines(pQuery: {month: "2026-12"}) }',
      ];
      for (const query of attempts) {
        const res = await gql(session, query);
        expect(res.text, query).not.toMatch(/confidentiel/);
      }
      // What the API functions give is what REST gives the same caller.
      const rest = await env.get('/api/absences/?page_size=200', token);
      const graph = await gql(session, '{ absencesList(pPage: 1, pPageSize: 200) }');
      expect(graph.body.data.absencesList.results).toEqual(rest.body.results);
      const restOne = await env.get(`/api/absences/${absence.id}/`, token);
      const graphOne = await gql(session, `{ absenceGet(pId: ${absence.id}, pPublicUrl: "http://wfm.test") }`);
      expect(restOne.status).toBe(404);
      expect(graphOne.body.errors[0].extensions.code).toMatch(/^WN/);
    } finally {
      await env.db.query('update app_public.accounts set is_staff = false where id = $1', [env.ids.accounts!.paie]);
    }
  });
});

describe('functions without a REST route keep the SPEC rules (finding 8)', () => {
  const correct = 'mutation($id: Int!, $version: Int!, $slots: JSON!) { shiftChangeCorrect(input: {pId: $id, pVersion: $version, pSlots: $slots}) { result } }';
  const slots = [{ start_time: '09:30', end_time: '17:30', break_start_time: '12:00', break_end_time: '12:30' }];

  it('impersonationStart is not reachable and writes no audit line, impersonation being off', async () => {
    const res = await gql(await signIn('root'), 'mutation($a: Int!) { impersonationStart(input: {pAccount: $a}) { result } }', { a: env.ids.accounts!.alice });
    expect(res.body.data ?? null).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    const { rows } = await env.db.query("select count(*)::int as n from app_private.audit_log where verb = 'Impersonation'");
    expect(rows[0].n).toBe(0);
  });

  it('the back-office correction is refused to staff and to a superuser without an HR role, and to HR on its own request', async () => {
    const filed = await env.post('/api/shift-change-requests/', await env.login('alice'), { date: '2026-12-10', reason: 'urgence', slots: [{ start_time: '10:00', end_time: '18:00', break_start_time: '12:00', break_end_time: '12:30' }] });
    expect(filed.status, filed.text).toBe(201);
    // staff (no role, no employee) does not even see the request; root sees it but is no HR account.
    for (const [username, code] of [['staff', 'WN101'], ['root', 'WF104']]) {
      const res = await gql(await signIn(username!), correct, { id: filed.body.id, version: 1, slots });
      expect(res.body.errors?.[0]?.extensions?.code, `${username}: ${res.text}`).toBe(code);
    }
    const { rows } = await env.db.query('select version, corrected_by from app_public.shift_change_requests where id = $1', [filed.body.id]);
    expect(rows[0]).toEqual({ version: 1, corrected_by: null });
    // admin is staff and holds employee.change_employee_record on alice: the back-office correction.
    const ok = await gql(await signIn('admin'), correct, { id: filed.body.id, version: 1, slots });
    expect(ok.body.errors, ok.text).toBeUndefined();
    expect(ok.body.data.shiftChangeCorrect.result).toMatchObject({ version: 2, corrected_by: env.ids.accounts!.admin });
    // admin's own request: refused.
    const own = await env.post('/api/shift-change-requests/', await env.login('admin'), { date: '2026-12-10', reason: 'urgence', slots: [{ start_time: '10:00', end_time: '18:00' }] });
    expect(own.status, own.text).toBe(201);
    const res = await gql(await signIn('admin'), correct, { id: own.body.id, version: 1, slots });
    expect(res.body.errors?.[0]?.extensions?.code).toBe('WF105');
  });
});

describe('who reaches /graphql', () => {
  it('anonymous → 401 {"detail"}', async () => {
    const res = await gql(null, '{ me }');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: "Informations d’authentification non fournies." });
  });

  it('an invalid token → 401; the session of a closed account, staff or not, → 401 (before the staff refusal)', async () => {
    expect((await gqlBearer('garbage', '{ me }')).status).toBe(401);
    for (const username of ['staff', 'rh1']) {
      const session = await signIn(username);
      await env.db.query('update app_public.accounts set is_active = false where id = $1', [env.ids.accounts![username]]);
      try {
        const res = await gql(session, '{ me }');
        expect(res.status, username).toBe(401);
        expect(Object.keys(res.body)).toEqual(['detail']);
      } finally {
        await env.db.query('update app_public.accounts set is_active = true where id = $1', [env.ids.accounts![username]]);
        // The closed account's session is gone: sign in afresh next time.
        signedIn.delete(username);
      }
    }
  });

  it('the session of an account without staff status (HR without it, past its second factor) → 403', async () => {
    const rh1 = await signIn('rh1');
    // The session is a full one: the API answers it.
    expect((await rh1.get('/api/auth/me/')).status).toBe(200);
    const res = await gql(rh1, '{ me }');
    expect(res.status).toBe(403);
    // The refusal of the request prelude in SQL (WF002), word for word the REST staff routes' one.
    expect(res.body).toEqual({ detail: 'Réservé aux comptes du personnel d’administration.' });
    expect(res.text).not.toContain('"data"');
  });

  it('a superuser without staff status gets in (the prelude counts a superuser as staff)', async () => {
    const root = await signIn('root');
    await env.db.query('update app_public.accounts set is_staff = false where id = $1', [env.ids.accounts!.root]);
    try {
      const res = await gql(root, '{ me }');
      expect(res.status, res.text).toBe(200);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.me.username).toBe('root');
    } finally {
      await env.db.query('update app_public.accounts set is_staff = true where id = $1', [env.ids.accounts!.root]);
    }
  });


  it('a bearer token is refused, even a staff or superuser one (403: GraphQL goes through the back-office session)', async () => {
    for (const username of ['staff', 'root', 'alice']) {
      const res = await gqlBearer(await env.login(username), '{ me }');
      expect(res.status, username).toBe(403);
      expect(Object.keys(res.body)).toEqual(['detail']);
      expect(res.body.detail).toMatch(/session du back-office avec son second facteur/);
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('a pre-authentication cookie (password given, second factor not yet) → 401', async () => {
    await signIn('admin');
    const pre = new BackofficeVisitor(env.url);
    const login = await pre.login('admin');
    expect(login.location).toBe('/backoffice/login/verify/');
    expect(pre.cookies.get('wfm_session')).toBeTruthy();
    const res = await gql(pre, '{ me }');
    expect(res.status).toBe(401);
    expect(Object.keys(res.body)).toEqual(['detail']);
    expect((await gql(pre, '{ __typename }')).status).toBe(401);
  });

  it('POST with the session needs X-CSRFToken (a missing or foreign one → 403, nothing runs); with it, it runs', async () => {
    const admin = await signIn('admin');
    const activation = 'mutation($id: Int!, $active: Boolean!) { accountActivationSet(input: {pEmployeeId: $id, pIsActive: $active}) { result } }';
    const variables = { id: env.ids.employees!.emma, active: false };
    const without = await gql(admin, activation, variables, { csrf: false });
    expect(without.status).toBe(403);
    expect(without.body.detail).toContain('CSRF');
    const other = await signIn('root');
    const foreign = await admin.request('POST', '/graphql', { json: { query: activation, variables }, headers: { 'x-csrftoken': csrfOf(other) } });
    expect(foreign.status).toBe(403);
    const { rows } = await env.db.query('select is_active from app_public.accounts where id = $1', [env.ids.accounts!.emma]);
    expect(rows[0].is_active).toBe(true);
    // GET needs no CSRF token, so it must not write: PostGraphile (grafserv) answers no GET at
    // all, neither a mutation nor a query (405), and nothing runs.
    const overGet = await admin.get(`/graphql?query=${encodeURIComponent(activation)}&variables=${encodeURIComponent(JSON.stringify(variables))}`);
    const readGet = await admin.get(`/graphql?query=${encodeURIComponent('{ me }')}`);
    for (const res of [overGet, readGet]) {
      expect(res.status, res.text).toBe(405);
      expect(res.text).not.toContain('"data"');
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    const after = await env.db.query('select is_active from app_public.accounts where id = $1', [env.ids.accounts!.emma]);
    expect(after.rows[0].is_active).toBe(true);
    const withToken = await gql(admin, '{ me }');
    expect(withToken.status).toBe(200);
    expect(withToken.body.data.me.username).toBe('admin');
  });

  it('staff, admin (staff) and root (superuser) get data', async () => {
    for (const username of ['staff', 'admin', 'root']) {
      const res = await gql(await signIn(username), '{ me }');
      expect(res.status, username).toBe(200);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.me.username).toBe(username);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});

describe('the second factor reaches SQL as in the back-office', () => {
  it('a superuser past its second factor manages authenticators over GraphQL, as on its pages', async () => {
    const root = await signIn('root');
    expect((await root.get('/backoffice/authenticators/')).status).toBe(200);
    const res = await gql(root, '{ backofficeFactorAccounts }');
    expect(res.status).toBe(200);
    expect(res.body.errors, res.text).toBeUndefined();
    expect(res.body.data.backofficeFactorAccounts.map((a: any) => a.username)).toContain('root');
  });

  it('the DEBUG password-only session gets in, but SQL sees no second factor (WF072), as on its pages', async () => {
    const debugEnv = await startTestEnv({ graphql: true, configOverrides: { debug: true, backofficePasswordOnly: true, backofficeLoginAttempts: 1000 } });
    try {
      const v = new BackofficeVisitor(debugEnv.url);
      expect((await v.login('root')).location).toBe('/backoffice/');
      expect((await v.get('/backoffice/authenticators/')).status).toBe(403);
      const post = (query: string) => v.request('POST', '/graphql', { json: { query }, headers: { 'x-csrftoken': csrfOf(v) } });
      const me = await post('{ me }');
      expect(me.status, me.text).toBe(200);
      expect(JSON.parse(me.text).data.me.username).toBe('root');
      const factors = JSON.parse((await post('{ backofficeFactorAccounts }')).text);
      expect(factors.data?.backofficeFactorAccounts ?? null).toBeNull();
      expect(factors.errors?.[0]?.extensions?.code).toBe('WF072');
    } finally {
      await debugEnv.close();
    }
  });
});

describe('row-level security applies', () => {
  it('staff (no role, no employee) sees no employee whereas admin sees them all, as over REST', async () => {
    const query = '{ employeesList(pPage: 1, pPageSize: 200) }';
    const staff = await gql(await signIn('staff'), query);
    expect(staff.status).toBe(200);
    expect(staff.body.data.employeesList).toMatchObject({ count: 0, results: [] });
    const admin = await gql(await signIn('admin'), query);
    expect(admin.body.data.employeesList.results.map((n: any) => n.id).sort((a: number, b: number) => a - b)).toEqual(
      Object.values(env.ids.employees!).sort((a, b) => a - b),
    );
  });

  it('social security numbers stay hidden from staff, shown to admin, as over REST', async () => {
    const query = `{ employeeGet(pId: ${env.ids.employees!.alice}) }`;
    const staff = await gql(await signIn('staff'), query);
    expect(staff.body.errors?.[0]?.extensions?.code).toMatch(/^WN/);
    const admin = await gql(await signIn('admin'), query);
    expect(admin.body.data.employeeGet.social_security_number).toMatch(/^\d{13}$/);
  });

  it('private tables are not part of the schema', async () => {
    const res = await gql(await signIn('root'), '{ __schema { queryType { fields { name } } types { name } } }');
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
      const staff = await signIn('staff');
      const before = await gql(staff, '{ me }');
      expect(before.body.data.me).not.toHaveProperty('role');
      expect(before.body.data.me.can_view_payroll).toBe(false);
      env.setNow('2026-11-17T09:00:00+01:00');
      // A day later the first session has expired: a new one, with a code of that time.
      const later = new BackofficeVisitor(env.url);
      expect((await later.login('staff')).location).toBe('/backoffice/login/verify/');
      const verified = await later.submit('/backoffice/login/verify/', { code: await totp(signedIn.get('staff')!.secret, Date.parse('2026-11-17T09:00:00+01:00') / 1000) });
      expect(verified.location).toBe('/backoffice/');
      // As a browser would: the redirect's page gives the CSRF token of the new session.
      expect((await later.get('/backoffice/')).status).toBe(200);
      const after = await gql(later, '{ me }');
      expect(after.body.data.me.role).toBe('Admin');
    } finally {
      env.setNow('2026-11-16T10:00:00+01:00');
      signedIn.delete('staff');
      await env.db.query('delete from app_public.role_attributions where account_id = $1 and role_id = 1', [env.ids.accounts!.staff]);
    }
  });
});

describe('errors', () => {
  const activation = 'mutation($id: Int!, $active: Boolean!) { accountActivationSet(input: {pEmployeeId: $id, pIsActive: $active}) { result } }';

  it('a rule of our registry reaches the client with its message and code (own account)', async () => {
    const res = await gql(await signIn('admin'), activation, { id: env.ids.employees!.admin, active: false });
    expect(res.status).toBe(200);
    expect(res.body.data.accountActivationSet).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].message).toBe('Vous ne pouvez pas ouvrir ou fermer votre propre compte.');
    expect(res.body.errors[0].extensions.code).toBe('WF010');
    const { rows } = await env.db.query('select is_active from app_public.accounts where id = $1', [env.ids.accounts!.admin]);
    expect(rows[0].is_active).toBe(true);
  });

  it('the perimeter rules apply to mutations as over REST', async () => {
    // Staff without a role has no perimeter: the record is out of its reach, not found (as over REST).
    const staff = await gql(await signIn('staff'), activation, { id: env.ids.employees!.emma, active: false });
    expect(staff.body.errors[0].extensions.code).toBe('WN001');
    const admin = await gql(await signIn('admin'), activation, { id: env.ids.employees!.emma, active: false });
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
    const res = await gql(await signIn('admin'), '{ absenceTypesList(pPage: 2147483647, pPageSize: 200) }');
    expect(res.body.data.absenceTypesList).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].message).not.toMatch(/out of range/i);
    expect(res.body.errors[0].message).toMatch(/^An error occurred/);
    expect(res.body.errors[0].extensions?.code).toBeUndefined();
  });
});

describe('file metadata through GraphQL', () => {
  it('a staff account cannot point a document at a file it did not upload (WV402), nothing is written', async () => {
    const root = await signIn('root');
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
    const res = await gql(
      root,
      'mutation($employee: Int!, $type: Int!, $start: Date!, $end: Date, $files: JSON) ' +
        '{ absenceCreate(input: { pEmployee: $employee, pType: $type, pDateStart: $start, pDateEnd: $end, pAddDocuments: $files }) { clientMutationId } }',
      { employee: forged.employee, type: forged.type, start: forged.date_start, end: forged.date_end, files: forged.add_documents },
    );
    expect(res.body.errors?.[0]?.extensions?.code, JSON.stringify(res.body)).toBe('WV402');
    const after = await env.db.query('select count(*)::int as n from app_public.absences');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });
});

describe('typed arguments through GraphQL', () => {
  // No route schema stands in front of GraphQL: the functions refuse what ajv would have, under the field.
  it('a null required argument and a text over its limit are refused by the function, under their field', async () => {
    const admin = await signIn('admin');
    const noDate = await gql(admin, 'mutation { shiftChangeCreate(input: { pDate: null, pReason: "urgence", pIsRemote: true }) { result } }');
    expect(noDate.body.errors?.[0]?.extensions?.code, JSON.stringify(noDate.body)).toBe('WV002');
    expect(JSON.parse(noDate.body.errors[0].extensions.field)).toEqual({ date: ['Ce champ est obligatoire.'] });

    const type = (await env.db.query("select id from app_public.absence_types where code = 'FOR'")).rows[0].id;
    const longComment = await gql(
      admin,
      'mutation($employee: Int!, $type: Int!, $comment: String) ' +
        '{ absenceCreate(input: { pEmployee: $employee, pType: $type, pDateStart: "2026-12-07", pComment: $comment }) { result } }',
      { employee: env.ids.employees!.alice, type, comment: 'x'.repeat(2001) },
    );
    expect(longComment.body.errors?.[0]?.extensions?.code, JSON.stringify(longComment.body)).toBe('WV200');
    expect(JSON.parse(longComment.body.errors[0].extensions.field)).toEqual({ comment: ['Au plus 2000 caractères.'] });
  });

  it('the validation takes typed arguments; its hours stay JSON values, whose format SQL checks', async () => {
    const type = (await env.db.query("select id from app_public.absence_types where code = 'FOR'")).rows[0].id;
    const filed = await env.post('/api/absences/', await env.login('alice'), { employee: env.ids.employees!.alice, type, date_start: '2026-12-22' });
    expect(filed.status, JSON.stringify(filed.body)).toBe(201);
    const admin = await signIn('admin');
    const validate = 'mutation($id: Int!, $version: Int, $reason: String, $end: Date, $start: JSON) ' +
      '{ absenceValidate(input: { pId: $id, pVersion: $version, pReason: $reason, pDateEnd: $end, pStartTime: $start }) { result } }';
    const noVersion = await gql(admin, validate, { id: filed.body.id });
    expect(noVersion.body.errors?.[0]?.extensions, JSON.stringify(noVersion.body)).toEqual({ code: 'WV001', field: 'version' });
    const badHour = await gql(admin, validate, { id: filed.body.id, version: 1, start: '9h' });
    expect(badHour.body.errors?.[0]?.message).toBe('Heure invalide : format attendu HH:MM.');
    expect(badHour.body.errors?.[0]?.extensions).toEqual({ code: 'WV001', field: 'start_time' });
    const granted = await gql(admin, validate, { id: filed.body.id, version: 1, end: '2026-12-23', reason: 'Deux jours' });
    expect(granted.body.errors, JSON.stringify(granted.body)).toBeUndefined();
    expect(granted.body.data.absenceValidate.result).toMatchObject({ status: 'validated', date_end: '2026-12-23', decision_reason: 'Deux jours' });
  });
});

describe('typed arguments of a PATCH through GraphQL', () => {
  // REST passes the body's keys in p_sent; a GraphQL caller that gives none sends the arguments it gives non-null.
  const update = 'mutation($id: Int!, $last: String, $birth: Date, $sent: [String]) ' +
    '{ employeeUpdate(input: { pId: $id, pLastName: $last, pBirthDate: $birth, pSent: $sent }) { result } }';

  it('without p_sent, the arguments given are written and the others kept; with p_sent, a key sent without a value is cleared', async () => {
    const admin = await signIn('admin');
    const chloe = env.ids.employees!.chloe!;
    const { rows: [before] } = await env.db.query('select last_name, birth_date from app_public.employees where id = $1', [chloe]);
    try {
      const written = await gql(admin, update, { id: chloe, last: 'Renommée', birth: '1990-05-04' });
      expect(written.body.errors, written.text).toBeUndefined();
      expect(written.body.data.employeeUpdate.result).toMatchObject({ first_name: 'Chloé', last_name: 'Renommée', birth_date: '1990-05-04' });
      const cleared = await gql(admin, update, { id: chloe, sent: ['birth_date'] });
      expect(cleared.body.errors, cleared.text).toBeUndefined();
      expect(cleared.body.data.employeeUpdate.result).toMatchObject({ last_name: 'Renommée', birth_date: null });
      // A required key sent without a value is refused under its field, as over REST.
      const noName = await gql(admin, update, { id: chloe, sent: ['last_name'] });
      expect(noName.body.errors?.[0]?.extensions, noName.text).toEqual({ code: 'WV501', field: expect.stringContaining('last_name') });
    } finally {
      await env.db.query('update app_public.employees set last_name = $2, birth_date = $3 where id = $1', [chloe, before.last_name, before.birth_date]);
    }
  });

  it('a list of ids with an id twice is refused under its field, as the route schema would', async () => {
    const admin = await signIn('admin');
    const E1 = env.ids.establishments!.E1;
    const res = await gql(admin, 'mutation($id: Int!, $ids: [Int]) { teamUpdate(input: { pId: $id, pEstablishments: $ids }) { result } }',
      { id: env.ids.teams!.T1, ids: [E1, E1] });
    expect(res.body.errors?.[0]?.message, res.text).toBe('La liste contient des doublons.');
    expect(res.body.errors[0].extensions).toEqual({ code: 'WV001', field: 'establishments' });
  });
});

describe('paging through GraphQL', () => {
  it('a page below 1 is refused by the function itself (WV003), not by a database error', async () => {
    const res = await gql(await signIn('admin'), '{ absenceTypesList(pPage: 0, pPageSize: 10) }');
    expect(res.body.errors[0].extensions.code).toBe('WV003');
    expect(res.body.errors[0].extensions.field).toBe('page');
  });
});
