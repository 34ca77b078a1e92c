/**
 * The requests of the authorisation matrix (test/api/authorisation-matrix.test.ts): who calls,
 * on which record, and a minimal valid request per operation, so that the status answers the
 * question "may this caller do this to this record" and nothing else.
 */
import { randomBytes } from 'node:crypto';
import type { TestEnv } from '../helpers/server.js';
import { PDF, form } from './absence-helpers.js';

export type Role =
  | 'Admin' | 'RH n1' | 'RH n2' | 'DA' | 'Manager n1' | 'Manager n2' | 'Salarié' | 'Intérimaire' | 'Service Paie'
  | 'staff' | 'superuser';

export const ROLE_ORDER: Role[] = [
  'Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2', 'Salarié', 'Intérimaire', 'Service Paie', 'staff', 'superuser',
];

/**
 * own: the caller's own record; in / out: a record of an employee inside / outside the
 * caller's perimeter; noemp_in / noemp_out: the same role held by an account WITHOUT employee
 * record (restricted to E3: in = david, out = alice); closed: the caller's account closed.
 */
export type Situation = 'own' | 'in' | 'out' | 'noemp_in' | 'noemp_out' | 'closed';
export const SITUATIONS: Situation[] = ['own', 'in', 'out', 'noemp_in', 'noemp_out', 'closed'];

export interface Caller {
  role: Role;
  /** Fixture account key. */
  account: string;
  /** Fixture employee key of the account, or null. */
  employee: string | null;
  /** Staff status (referential writes, the e-mail outbox). */
  isStaff: boolean;
  in: string | null;
  out: string | null;
}

/** The fixture accounts of each role (test/fixtures/organisation.json) and their perimeters. */
export const CALLERS: Caller[] = [
  { role: 'Admin', account: 'admin', employee: 'admin', isStaff: true, in: 'alice', out: null },
  { role: 'RH n1', account: 'rh1', employee: 'rh1', isStaff: false, in: 'alice', out: null },
  { role: 'RH n2', account: 'rh2', employee: 'rh2', isStaff: false, in: 'chloe', out: 'alice' },
  // chloe works in E2 but belongs to team T2 (E1 + E2): inside E1's perimeter; gaelle (E2) is not.
  { role: 'DA', account: 'da', employee: 'da', isStaff: false, in: 'alice', out: 'gaelle' },
  { role: 'Manager n1', account: 'mgr1', employee: 'mgr1', isStaff: false, in: 'alice', out: 'gaelle' },
  { role: 'Manager n2', account: 'mgr2', employee: 'mgr2', isStaff: false, in: 'chloe', out: 'alice' },
  { role: 'Salarié', account: 'alice', employee: 'alice', isStaff: false, in: null, out: 'chloe' },
  { role: 'Intérimaire', account: 'emma', employee: 'emma', isStaff: false, in: null, out: 'chloe' },
  { role: 'Service Paie', account: 'paie', employee: 'paie', isStaff: false, in: 'alice', out: null },
  { role: 'staff', account: 'staff', employee: null, isStaff: true, in: null, out: 'alice' },
  { role: 'superuser', account: 'root', employee: null, isStaff: true, in: 'alice', out: null },
];

/** The same roles without employee record (restricted to E3 where the role has establishments). */
export const NOEMP_CALLERS: Caller[] = [
  ['Admin', 'admin_noemp'], ['RH n1', 'rh1_noemp'], ['RH n2', 'rh2_noemp'], ['DA', 'da_noemp'],
  ['Manager n1', 'mgr1_noemp'], ['Manager n2', 'mgr2_noemp'], ['Salarié', 'salarie_noemp'],
  ['Intérimaire', 'interim_noemp'], ['Service Paie', 'paie_noemp'],
].map(([role, account]) => {
  const restricted = role !== 'Salarié' && role !== 'Intérimaire';
  return { role: role as Role, account: account!, employee: null, isStaff: false, in: restricted ? 'david' : null, out: 'alice' };
});

/** What one cell sends. */
export interface CellRequest {
  path: string;
  body?: unknown;
  form?: FormData;
}

/** The record a cell acts on: the employee, and what the arrangement created for it. */
export interface Target {
  caller: Caller;
  situation: Situation;
  /** Employee key of the record (null for operations on no employee). */
  employee: string | null;
}

/** Establishment key of each target employee. */
const ESTABLISHMENT: Record<string, string> = {
  admin: 'E1', rh1: 'E1', rh2: 'E2', da: 'E1', mgr1: 'E1', mgr2: 'E2', alice: 'E1', emma: 'E1', paie: 'E1', chloe: 'E2', gaelle: 'E2', david: 'E3',
};
/** The manager account attached to each establishment (on-call periods are for manager accounts). */
const MANAGER_OF: Record<string, string> = { E1: 'mgr1', E2: 'mgr2', E3: 'mgr3' };

export const TARGET_EMPLOYEES = Object.keys(ESTABLISHMENT);

/**
 * Arrangements: the shared records each target employee has (read by many cells, written by
 * none) and factories of fresh records for the cells that write (one record per cell, so that
 * a cell never sees what another did).
 */
export class Arrangement {
  private nextDay = new Map<string, number>();
  private counter = 0;
  readonly absence: Record<string, number> = {};
  readonly document: Record<string, number> = {};
  readonly shiftChange: Record<string, number> = {};
  readonly event: Record<string, number> = {};
  readonly onCall: Record<string, number> = {};
  readonly team: Record<string, number> = {};
  readonly attachment: Record<string, number> = {};
  readonly notification: Record<string, number> = {};
  types: Record<string, number> = {};
  private tokens = new Map<string, string>();

  constructor(readonly env: TestEnv) {}

  employeeId(key: string): number {
    return this.env.ids.employees![key]!;
  }
  accountId(key: string): number {
    return this.env.ids.accounts![key]!;
  }
  establishmentOf(key: string): number {
    return this.env.ids.establishments![ESTABLISHMENT[key]!]!;
  }
  managerAccountOf(key: string): number {
    return this.accountId(MANAGER_OF[ESTABLISHMENT[key]!]!);
  }
  unique(prefix: string): string {
    this.counter += 1;
    return `${prefix} ${this.counter}`;
  }
  private feeds = new Map<string, Promise<string>>();
  /** A calendar feed of an account (inserted as the owner), once; its secret. */
  calendarFeed(account: string, kind: 'planning' | 'perimeter'): Promise<string> {
    const key = `${account}:${kind}`;
    if (!this.feeds.has(key)) {
      const secret = randomBytes(32).toString('hex');
      this.feeds.set(key, this.restoreCalendarFeed(account, kind, secret).then(() => secret));
    }
    return this.feeds.get(key)!;
  }
  /** Inserts the feed again if it is gone (a revocation consumed it). */
  async restoreCalendarFeed(account: string, kind: 'planning' | 'perimeter', secret = randomBytes(32).toString('hex')): Promise<void> {
    await this.env.db.query(
      `insert into app_private.calendar_feeds (account_id, kind, token_hash) values ($1, $2, public.digest($3, 'sha256'))
       on conflict (account_id, kind) do nothing`, [this.accountId(account), kind, secret]);
  }
  /** The List-Unsubscribe secret of an account's e-mails (its preferences row made if missing). */
  async unsubscribeToken(account: string): Promise<string> {
    const { rows } = await this.env.db.query<{ token: string }>(
      `with made as (insert into app_private.notification_preferences (account_id) values ($1) on conflict (account_id) do nothing)
       select app_private.notification_unsubscribe_token($1) as token`, [this.accountId(account)]);
    return rows[0]!.token;
  }
  async token(account: string): Promise<string> {
    if (!this.tokens.has(account)) this.tokens.set(account, await this.env.login(account));
    return this.tokens.get(account)!;
  }

  /** A fresh working day (Monday to Friday, from 4 January 2027) for an employee and a kind. */
  day(employee: string, kind: 'absence' | 'shift'): string {
    const key = `${employee}:${kind}`;
    let n = this.nextDay.get(key) ?? 0;
    const start = Date.UTC(kind === 'absence' ? 2027 : 2027, kind === 'absence' ? 0 : 5, kind === 'absence' ? 4 : 7);
    let date: Date;
    do {
      date = new Date(start + n * 86_400_000);
      n += 1;
    } while (date.getUTCDay() === 0 || date.getUTCDay() === 6);
    this.nextDay.set(key, n);
    return date.toISOString().slice(0, 10);
  }

  async freshAbsence(employee: string, status: 'pending' | 'validated' = 'pending', start?: string): Promise<number> {
    const date = start ?? this.day(employee, 'absence');
    const { rows } = await this.env.db.query<{ id: number }>(
      `insert into app_public.absences (employee_id, type_id, date_start, date_end, status, author_account_id)
       values ($1, $2, $3, $3, $4, $5) returning id`,
      [this.employeeId(employee), this.types.FOR, date, status, this.accountId(employee)],
    );
    return rows[0]!.id;
  }

  async freshShiftChange(employee: string): Promise<number> {
    const res = await this.env.post('/api/shift-change-requests/', await this.token(employee), {
      date: this.day(employee, 'shift'), reason: 'urgence', slots: [{ start_time: '07:15', end_time: '11:45' }],
    });
    if (res.status !== 201) throw new Error(`shift change of ${employee}: ${res.status} ${res.text}`);
    return res.body.id;
  }

  async freshTeam(employee: string): Promise<number> {
    const { rows } = await this.env.db.query<{ id: number }>('insert into app_public.teams (name) values ($1) returning id', [this.unique('Équipe matrice')]);
    await this.env.db.query('insert into app_public.team_establishments (team_id, establishment_id) values ($1, $2)', [rows[0]!.id, this.establishmentOf(employee)]);
    return rows[0]!.id;
  }

  eventBody(employee: string): Record<string, unknown> {
    return {
      title: this.unique('Réunion'), establishment: this.establishmentOf(employee),
      start_at: '2027-02-01T10:00:00+01:00', end_at: '2027-02-01T11:00:00+01:00', participants: [this.employeeId(employee)],
    };
  }

  async freshEvent(employee: string): Promise<number> {
    const res = await this.env.post('/api/events/', await this.token('root'), this.eventBody(employee));
    if (res.status !== 201) throw new Error(`event for ${employee}: ${res.status} ${res.text}`);
    return res.body.id;
  }

  onCallBody(employee: string): Record<string, unknown> {
    // Periods of one account may not overlap: each body gets an hour of its own.
    this.counter += 1;
    const start = Date.UTC(2027, 2, 1) + this.counter * 3_600_000;
    return {
      account: this.managerAccountOf(employee), establishments: [this.establishmentOf(employee)],
      start_at: new Date(start).toISOString(), end_at: new Date(start + 1_800_000).toISOString(),
    };
  }

  async freshOnCall(employee: string): Promise<number> {
    const body = this.onCallBody(employee);
    const { rows } = await this.env.db.query<{ id: number }>(
      'insert into app_public.on_call_periods (account_id, start_at, end_at) values ($1, $2, $3) returning id',
      [body.account, body.start_at, body.end_at],
    );
    await this.env.db.query('insert into app_public.on_call_period_establishments (period_id, establishment_id) values ($1, $2)',
      [rows[0]!.id, this.establishmentOf(employee)]);
    return rows[0]!.id;
  }

  /** A delegation given by the account of an employee (inserted as the owner) to farid, in force. */
  async freshDelegation(employee: string): Promise<number> {
    const { rows } = await this.env.db.query<{ id: number }>(
      `insert into app_public.delegations (delegator_account_id, delegate_account_id, start_date, end_date, kinds)
       values ($1, $2, '2026-11-16', '2026-11-20', 'absences') returning id`,
      [this.accountId(employee), this.accountId('farid')],
    );
    return rows[0]!.id;
  }

  async freshAttachment(employee: string): Promise<number> {
    const res = await this.env.request('POST', `/api/employees/${this.employeeId(employee)}/attachments/`, {
      token: await this.token('root'), form: form({ title: this.unique('Pièce') }, [['file', PDF, 'piece.pdf']]),
    });
    if (res.status !== 201) throw new Error(`attachment of ${employee}: ${res.status} ${res.text}`);
    return res.body.id;
  }

  async putCertificate(employee: string): Promise<void> {
    const cert = await this.env.request('PUT', `/api/employees/${this.employeeId(employee)}/honorability-certificate/`, {
      token: await this.token('root'), form: form({}, [['file', PDF, 'b3.pdf']]),
    });
    if (cert.status !== 200) throw new Error(`certificate of ${employee}: ${cert.status} ${cert.text}`);
  }

  async freshReferential(kind: 'divisions' | 'establishments' | 'contract-types'): Promise<number> {
    const name = this.unique('Matrice');
    const sql = {
      divisions: ['insert into app_public.divisions (name) values ($1) returning id', [name]],
      establishments: ["insert into app_public.establishments (name, count_base) values ($1, 'ouvres') returning id", [name]],
      'contract-types': ['insert into app_public.contract_types (code, name) values ($1, $2) returning id', [`M${this.counter}`, name]],
    }[kind] as [string, unknown[]];
    const { rows } = await this.env.db.query<{ id: number }>(sql[0], sql[1]);
    return rows[0]!.id;
  }

  /** The shared records of every target employee, and one notification per account. */
  async arrange(accounts: string[]): Promise<void> {
    const { rows } = await this.env.db.query<{ code: string; id: number }>('select code, id from app_public.absence_types');
    this.types = Object.fromEntries(rows.map((row) => [row.code, row.id]));
    await Promise.all(TARGET_EMPLOYEES.map(async (employee) => {
      this.absence[employee] = await this.freshAbsence(employee);
      const doc = await this.env.request('POST', `/api/absences/${this.absence[employee]}/documents/`, {
        token: await this.token('root'), form: form({}, [['add_documents', PDF, 'certificat.pdf']]),
      });
      if (doc.status !== 200) throw new Error(`document of ${employee}: ${doc.status} ${doc.text}`);
      this.document[employee] = doc.body.documents[0].id;
      await this.putCertificate(employee);
      this.shiftChange[employee] = await this.freshShiftChange(employee);
      this.event[employee] = await this.freshEvent(employee);
      this.onCall[employee] = await this.freshOnCall(employee);
      this.team[employee] = await this.freshTeam(employee);
      this.attachment[employee] = await this.freshAttachment(employee);
    }));
    for (const account of accounts) {
      const { rows: [note] } = await this.env.db.query<{ id: number }>(
        "insert into app_public.notifications (account_id, title, body, level) values ($1, 'Matrice', 'Matrice', 'info') returning id",
        [this.accountId(account)],
      );
      this.notification[account] = note!.id;
    }
  }
}

/**
 * How an operation relates to records: `employee`: it acts on a record of an employee (own,
 * in, out); `self`: on the caller's own record only, whatever the request says (the filing of
 * a day-change request); `none`: on no employee (referentials, own notifications list, login).
 */
export type Scope = 'employee' | 'self' | 'none';

export interface Operation {
  scope: Scope;
  /**
   * For an operation whose success consumes a shared record (the one honorability certificate
   * of an employee): restores it before each successful cell, which then run one at a time.
   */
  restore?: (t: Target, a: Arrangement) => Promise<void>;
  /** Does a success write (the cell then gets a fresh record and runs after the refusals)? */
  writes: boolean;
  request(t: Target, a: Arrangement): Promise<CellRequest>;
}

const E = (a: Arrangement, t: Target) => a.employeeId(t.employee!);
const read = (request: Operation['request'], scope: Scope = 'employee'): Operation => ({ scope, writes: false, request });
const write = (request: Operation['request'], scope: Scope = 'employee'): Operation => ({ scope, writes: true, request });
const absenceBody = (a: Arrangement, t: Target) => {
  const day = a.day(t.employee!, 'absence');
  return { employee: E(a, t), type: a.types.FOR, date_start: day, date_end: day };
};
const referential = (kind: 'divisions' | 'establishments' | 'contract-types', body: (a: Arrangement) => Record<string, unknown>) => ({
  list: read(async () => ({ path: `/api/${kind}/` }), 'none'),
  create: write(async (_t, a) => ({ path: `/api/${kind}/`, body: body(a) }), 'none'),
  read: read(async (_t, a) => ({ path: `/api/${kind}/${await a.freshReferential(kind)}/` }), 'none'),
  update: write(async (_t, a) => ({ path: `/api/${kind}/${await a.freshReferential(kind)}/`, body: body(a) }), 'none'),
  partial: write(async (_t, a) => ({ path: `/api/${kind}/${await a.freshReferential(kind)}/`, body: { name: a.unique('Matrice') } }), 'none'),
  delete: write(async (_t, a) => ({ path: `/api/${kind}/${await a.freshReferential(kind)}/` }), 'none'),
});
const divisions = referential('divisions', (a) => ({ name: a.unique('Division') }));
const establishments = referential('establishments', (a) => ({ name: a.unique('Établissement'), count_base: 'ouvres' }));
const contractTypes = referential('contract-types', (a) => ({ code: a.unique('C').replace(' ', ''), name: a.unique('Contrat') }));

/** One minimal valid request per operationId of the manifest. */
export const OPERATIONS: Record<string, Operation> = {
  health: read(async () => ({ path: '/api/health/' }), 'none'),
  settings: read(async () => ({ path: '/api/settings/' }), 'none'),
  auth_token: read(async (t) => ({ path: '/api/auth/token/', body: { username: t.caller.account, password: 'Fixture-Passw0rd!' } }), 'none'),
  auth_me: read(async () => ({ path: '/api/auth/me/' }), 'none'),
  auth_password_reset: write(async (t) => ({ path: '/api/auth/password/reset/', body: { login: t.caller.account } }), 'none'),
  auth_password_reset_confirm: read(async () => ({ path: '/api/auth/password/reset/confirm/', body: { token: 'x'.repeat(43), new_password: 'Un-Nouveau-Mot-2-Passe!' } }), 'none'),
  auth_impersonate: write(async (t, a) => ({ path: '/api/auth/impersonate/', body: { account: a.accountId(t.employee!) } })),
  auth_impersonate_end: write(async () => ({ path: '/api/auth/impersonate/end/' }), 'none'),
  absence_types_list: read(async () => ({ path: '/api/absence-types/' }), 'none'),
  absence_types_for_request: read(async (t, a) => ({ path: `/api/absence-types/requestable/?employee=${E(a, t)}` })),

  divisions_list: divisions.list,
  divisions_create: divisions.create,
  divisions_read: divisions.read,
  divisions_update: divisions.update,
  divisions_partial_update: divisions.partial,
  divisions_delete: divisions.delete,
  establishments_list: establishments.list,
  establishments_create: establishments.create,
  establishments_read: establishments.read,
  establishments_update: establishments.update,
  establishments_partial_update: establishments.partial,
  establishments_delete: establishments.delete,
  contract_types_list: contractTypes.list,
  contract_types_create: contractTypes.create,
  contract_types_read: contractTypes.read,
  contract_types_update: contractTypes.update,
  contract_types_partial_update: contractTypes.partial,
  contract_types_delete: contractTypes.delete,

  employees_list: read(async () => ({ path: '/api/employees/' }), 'none'),
  employees_create: write(async (t, a) => ({
    path: '/api/employees/', body: { first_name: 'Nouvel', last_name: a.unique('Agent'), main_establishment: a.establishmentOf(t.employee!) },
  })),
  employees_read: read(async (t, a) => ({ path: `/api/employees/${E(a, t)}/` })),
  employees_update: write(async (t, a) => {
    const { rows: [row] } = await a.env.db.query('select first_name, last_name from app_public.employees where id = $1', [E(a, t)]);
    const current = await a.env.get(`/api/employees/${E(a, t)}/`, await a.token('root'));
    const { first_name, last_name, professional_email, birth_date, is_polyvalent, main_establishment, secondary_establishments } = current.body;
    return { path: `/api/employees/${E(a, t)}/`, body: { first_name: row.first_name, last_name: row.last_name, professional_email, birth_date, is_polyvalent, main_establishment, secondary_establishments } };
  }),
  employees_partial_update: write(async (t, a) => {
    const { rows: [row] } = await a.env.db.query('select first_name from app_public.employees where id = $1', [E(a, t)]);
    return { path: `/api/employees/${E(a, t)}/`, body: { first_name: row.first_name } };
  }),
  employees_emergency_contacts_list: read(async (t, a) => ({ path: `/api/employees/${E(a, t)}/emergency-contacts/` })),
  employees_emergency_contacts_replace: write(async (t, a) => ({
    path: `/api/employees/${E(a, t)}/emergency-contacts/`, body: { contacts: [{ name: 'Proche', phone: '06 12 34 56 78' }] },
  })),
  employees_emergency_contacts_create: write(async (t, a) => ({
    path: `/api/employees/${E(a, t)}/emergency-contacts/`, body: { name: 'Proche', phone: '06 12 34 56 78' },
  })),
  employees_attachments_list: read(async (t, a) => ({ path: `/api/employees/${E(a, t)}/attachments/` })),
  employees_attachments_create: write(async (t, a) => ({
    path: `/api/employees/${E(a, t)}/attachments/`, form: form({ title: 'Diplôme' }, [['file', PDF, 'diplome.pdf']]),
  })),
  employees_attachments_update: write(async (t, a) => ({
    path: `/api/employees/${E(a, t)}/attachments/${await a.freshAttachment(t.employee!)}/`, body: { title: 'Diplôme' },
  })),
  employees_attachments_delete: write(async (t, a) => ({ path: `/api/employees/${E(a, t)}/attachments/${await a.freshAttachment(t.employee!)}/` })),
  employees_attachments_file: read(async (t, a) => ({ path: `/api/employees/${E(a, t)}/attachments/${a.attachment[t.employee!]}/file/` })),
  employee_account_activation: write(async (t, a) => ({ path: `/api/employees/${E(a, t)}/account-activation/`, body: { is_active: true } })),

  teams_list: read(async () => ({ path: '/api/teams/' }), 'none'),
  teams_create: write(async (t, a) => ({ path: '/api/teams/', body: { name: a.unique('Équipe'), establishments: [a.establishmentOf(t.employee!)] } })),
  teams_read: read(async (t, a) => ({ path: `/api/teams/${a.team[t.employee!]}/` })),
  teams_update: write(async (t, a) => ({
    path: `/api/teams/${await a.freshTeam(t.employee!)}/`, body: { name: a.unique('Équipe'), establishments: [a.establishmentOf(t.employee!)] },
  })),
  teams_partial_update: write(async (t, a) => ({ path: `/api/teams/${await a.freshTeam(t.employee!)}/`, body: { name: a.unique('Équipe') } })),
  teams_delete: write(async (t, a) => ({ path: `/api/teams/${await a.freshTeam(t.employee!)}/` })),
  teams_members_replace: write(async (t, a) => ({ path: `/api/teams/${await a.freshTeam(t.employee!)}/members/`, body: { members: [{ employee: E(a, t) }] } })),
  teams_members_add: write(async (t, a) => ({ path: `/api/teams/${await a.freshTeam(t.employee!)}/members/`, body: { employee: E(a, t) } })),

  planning_read: read(async (t, a) => ({ path: `/api/planning/?employee=${E(a, t)}&from=2026-11-16&to=2026-11-22` })),
  shift_change_requests_create: write(async (t, a) => ({
    path: '/api/shift-change-requests/',
    body: { date: t.caller.employee ? a.day(t.caller.employee, 'shift') : '2027-06-07', reason: 'urgence', slots: [{ start_time: '07:15', end_time: '11:45' }] },
  }), 'self'),
  planning_export: read(async (t, a) => ({ path: `/api/planning/export/?employee=${E(a, t)}&from=2026-11-16&to=2026-11-22&format=csv` })),
  planning_grid: read(async () => ({ path: '/api/planning/grid/?from=2026-11-16&to=2026-11-22' }), 'none'),
  shift_change_requests_export: read(async (t, a) => ({ path: `/api/shift-change-requests/export/?employee=${E(a, t)}&format=xlsx` })),
  shift_change_requests_list: read(async (t, a) => ({ path: `/api/shift-change-requests/?employee=${E(a, t)}` })),
  shift_change_requests_read: read(async (t, a) => ({ path: `/api/shift-change-requests/${a.shiftChange[t.employee!]}/` })),
  shift_change_requests_delete: write(async (t, a) => ({ path: `/api/shift-change-requests/${await a.freshShiftChange(t.employee!)}/` })),
  shift_change_requests_validate: write(async (t, a) => ({ path: `/api/shift-change-requests/${await a.freshShiftChange(t.employee!)}/validate/`, body: { version: 1 } })),
  shift_change_requests_refuse: write(async (t, a) => ({
    path: `/api/shift-change-requests/${await a.freshShiftChange(t.employee!)}/refuse/`, body: { version: 1, reason: 'Effectif insuffisant' },
  })),

  absences_list: read(async (t, a) => ({ path: `/api/absences/?employee=${E(a, t)}` })),
  absences_export: read(async (t, a) => ({ path: `/api/absences/export/?employee=${E(a, t)}&format=csv` })),
  absence_create: write(async (t, a) => ({ path: '/api/absences/', body: absenceBody(a, t) })),
  absence_preview: read(async (t, a) => ({ path: '/api/absences/preview/', body: absenceBody(a, t) })),
  absence_get: read(async (t, a) => ({ path: `/api/absences/${a.absence[t.employee!]}/` })),
  absence_update: write(async (t, a) => ({ path: `/api/absences/${await a.freshAbsence(t.employee!)}/`, body: { comment: 'Corrigée', version: 1 } })),
  absence_delete: write(async (t, a) => ({ path: `/api/absences/${await a.freshAbsence(t.employee!)}/` })),
  absence_preview_row: read(async (t, a) => {
    const body = absenceBody(a, t);
    return { path: `/api/absences/${a.absence[t.employee!]}/preview/`, body };
  }),
  absence_validate: write(async (t, a) => ({ path: `/api/absences/${await a.freshAbsence(t.employee!)}/validate/`, body: { version: 1 } })),
  absence_refuse: write(async (t, a) => ({ path: `/api/absences/${await a.freshAbsence(t.employee!)}/refuse/`, body: { version: 1, reason: 'Effectif insuffisant' } })),
  absence_request_cancellation: write(async (t, a) => ({
    path: `/api/absences/${await a.freshAbsence(t.employee!, 'validated')}/request-cancellation/`, body: { comment: 'Plus nécessaire' },
  })),
  absence_add_documents: write(async (t, a) => ({
    path: `/api/absences/${a.absence[t.employee!]}/documents/`, form: form({}, [['add_documents', PDF, 'complement.pdf']]),
  })),
  counters_read: read(async (t, a) => ({ path: `/api/counters/?employee=${E(a, t)}&year=2026` })),
  counters_establishment: read(async (t, a) => ({ path: `/api/counters/establishment/?establishment=${a.establishmentOf(t.employee!)}&year=2026` })),
  counters_establishment_export: read(async (t, a) => ({
    path: `/api/counters/establishment/export/?establishment=${a.establishmentOf(t.employee!)}&year=2026&format=xlsx`,
  })),
  absence_document_file: read(async (t, a) => ({ path: `/api/absence-documents/${a.document[t.employee!]}/file/` })),
  honorability_certificate_get: read(async (t, a) => ({ path: `/api/employees/${E(a, t)}/honorability-certificate/` })),
  honorability_certificate_put: write(async (t, a) => ({
    path: `/api/employees/${E(a, t)}/honorability-certificate/`, form: form({}, [['file', PDF, 'b3.pdf']]),
  })),
  honorability_certificate_delete: {
    ...write(async (t, a) => ({ path: `/api/employees/${E(a, t)}/honorability-certificate/` })),
    restore: (t, a) => a.putCertificate(t.employee!),
  },
  honorability_certificate_file: read(async (t, a) => ({ path: `/api/employees/${E(a, t)}/honorability-certificate/file/` })),

  events_list: read(async () => ({ path: '/api/events/' }), 'none'),
  events_create: write(async (t, a) => ({ path: '/api/events/', body: a.eventBody(t.employee!) })),
  events_participant_options: read(async () => ({ path: '/api/events/participant-options/' }), 'none'),
  events_read: read(async (t, a) => ({ path: `/api/events/${a.event[t.employee!]}/` })),
  events_update: write(async (t, a) => ({ path: `/api/events/${await a.freshEvent(t.employee!)}/`, body: a.eventBody(t.employee!) })),
  events_partial_update: write(async (t, a) => ({ path: `/api/events/${await a.freshEvent(t.employee!)}/`, body: { title: a.unique('Réunion') } })),
  events_delete: write(async (t, a) => ({ path: `/api/events/${await a.freshEvent(t.employee!)}/` })),

  delegations_list: read(async () => ({ path: '/api/delegations/' }), 'none'),
  delegations_create: write(async (_t, a) => ({
    path: '/api/delegations/', body: { delegate: a.accountId('farid'), start_date: '2026-11-16', end_date: '2026-11-20', kinds: 'absences' },
  }), 'none'),
  delegations_end: write(async (t, a) => ({ path: `/api/delegations/${await a.freshDelegation(t.employee!)}/end/` })),
  on_call_periods_list: read(async () => ({ path: '/api/on-call-periods/' }), 'none'),
  on_call_periods_create: write(async (t, a) => ({ path: '/api/on-call-periods/', body: a.onCallBody(t.employee!) })),
  on_call_periods_read: read(async (t, a) => ({ path: `/api/on-call-periods/${a.onCall[t.employee!]}/` })),
  on_call_periods_update: write(async (t, a) => ({ path: `/api/on-call-periods/${await a.freshOnCall(t.employee!)}/`, body: a.onCallBody(t.employee!) })),
  on_call_periods_partial_update: write(async (t, a) => ({ path: `/api/on-call-periods/${await a.freshOnCall(t.employee!)}/`, body: { comment: 'Renfort' } })),
  on_call_periods_delete: write(async (t, a) => ({ path: `/api/on-call-periods/${await a.freshOnCall(t.employee!)}/` })),

  payroll_options: read(async () => ({ path: '/api/payroll/options/' }), 'none'),
  payroll_lines: read(async (t, a) => ({ path: `/api/payroll/?month=2026-11&establishment=${a.establishmentOf(t.employee!)}` })),
  payroll_export: read(async (t, a) => ({ path: `/api/payroll/export/?month=2026-11&establishment=${a.establishmentOf(t.employee!)}&format=csv` })),
  notifications_list: read(async () => ({ path: '/api/notifications/' }), 'none'),
  notification_mark_read: write(async (t, a) => ({ path: `/api/notifications/${a.notification[t.employee!]}/read/` })),
  notifications_mark_all_read: write(async () => ({ path: '/api/notifications/read-all/' }), 'none'),
  notification_preferences_get: read(async () => ({ path: '/api/notifications/preferences/' }), 'none'),
  notification_preferences_set: write(async () => ({
    path: '/api/notifications/preferences/', body: { own: 'immediate', decide: 'immediate', planning: 'immediate', digest_hour: 7 },
  }), 'none'),
  // Public: the secret of another account's e-mails turns them off, whoever sends a session along.
  notification_unsubscribe: write(async (_t, a) => ({
    path: `/api/notifications/unsubscribe/?token=${await a.unsubscribeToken('bruno')}&kinds=planning`,
  }), 'none'),
  email_outbox_list: read(async () => ({ path: '/api/email-outbox/' }), 'none'),
  calendar_feeds_list: read(async () => ({ path: '/api/calendar-feeds/' }), 'none'),
  calendar_feeds_create: write(async () => ({ path: '/api/calendar-feeds/', body: { kind: 'perimeter' } }), 'none'),
  calendar_feeds_rotate: write(async (t, a) => {
    await a.calendarFeed(t.caller.account, 'planning');
    return { path: '/api/calendar-feeds/planning/rotate/' };
  }, 'none'),
  calendar_feeds_revoke: {
    ...write(async () => ({ path: '/api/calendar-feeds/planning/' }), 'none'),
    restore: (t, a) => a.restoreCalendarFeed(t.caller.account, 'planning'),
  },
  // Public: the secret of another account's feed opens it, whoever sends a session along.
  calendar_feed_read: read(async (_t, a) => ({ path: `/api/feeds/${await a.calendarFeed('bruno', 'planning')}.ics` }), 'none'),
  audit_log_list: read(async (t, a) => ({ path: `/api/audit-log/?model=absence&target_id=${a.absence[t.employee!]}` })),
  audit_log_export: read(async (t, a) => ({ path: `/api/audit-log/export/?model=absence&target_id=${a.absence[t.employee!]}&format=csv` })),
};
