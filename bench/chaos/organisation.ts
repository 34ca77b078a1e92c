/**
 * The chaos run's organisation: one establishment, one team, one post; `users` employees who
 * file, one employee whose CT counter the creations drain, and two managers of the
 * establishment who decide (in parallel on the same items). Loaded with the org import.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { importOrganisation, type OrganisationDoc } from '../../src/org/import.js';

export const DRAINED_EMPLOYEE = 'drain';
export const DRAINED_COUNTER = { code: 'CT', year: 2027, acquired: 10 };
export const MANAGERS = ['mgr1', 'mgr2'];

export interface Organisation {
  password: string;
  employees: string[];
  /** Employee id by key (the account username is the key). */
  employeeIds: Record<string, number>;
}

const WEEK = { mon: 'E1-J', tue: 'E1-J', wed: 'E1-J', thu: 'E1-J', fri: 'E1-J', sat: null, sun: null };

function employee(key: string, index: number) {
  return {
    key,
    first_name: `Prénom${index}`,
    last_name: `Chaos${index}`,
    professional_email: null,
    main_establishment: 'E1',
    teams: ['T1'],
    contracts: [{ type: 'CDI', start: '2020-01-01', end: null, trial_end: null }],
    week: WEEK,
    counters: key === DRAINED_EMPLOYEE
      ? [{ code: DRAINED_COUNTER.code, year: DRAINED_COUNTER.year, acquired: DRAINED_COUNTER.acquired.toFixed(2) }]
      : [],
  };
}

export async function loadOrganisation(ownerUrl: string, users: number): Promise<Organisation> {
  const password = `Chaos-${randomBytes(9).toString('base64url')}`;
  const employees = Array.from({ length: users }, (_, i) => `emp${String(i + 1).padStart(2, '0')}`);
  const keys = [...employees, DRAINED_EMPLOYEE, ...MANAGERS];
  const doc: OrganisationDoc = {
    establishments: [{ key: 'E1', name: 'Foyer du chaos', count_base: 'ouvrables' }],
    teams: [{ key: 'T1', name: 'Équipe jour', establishments: ['E1'] }],
    posts: [{ key: 'E1-J', code: 'J', label: 'Journée', establishment: 'E1', start_time: '09:00', end_time: '17:00',
      break_start_time: '12:00', break_end_time: '12:30', break_paid: false }],
    employees: keys.map((key, i) => employee(key, i + 1)),
    accounts: keys.map((key) => ({
      key,
      username: key,
      password,
      employee: key,
      ...(MANAGERS.includes(key) ? { roles: [{ role: 'Manager n1', establishments: ['E1'] }] } : {}),
    })),
  };
  const client = new pg.Client({ connectionString: ownerUrl, application_name: 'wfm-chaos' });
  await client.connect();
  try {
    await client.query('begin');
    await importOrganisation(client, doc);
    await client.query('commit');
    const { rows } = await client.query<{ username: string; employee_id: number }>(
      'select username, employee_id from app_public.accounts where username = any($1::text[])', [keys],
    );
    return { password, employees, employeeIds: Object.fromEntries(rows.map((row) => [row.username, row.employee_id])) };
  } finally {
    await client.end();
  }
}
