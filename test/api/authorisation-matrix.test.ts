/**
 * The authorisation matrix: every route of the manifest × every role × {own record, record in
 * the perimeter, record outside it, the role held by an account without employee record (on a
 * record in and out of its perimeter), closed account}, over HTTP, with the status the SPEC and
 * the CONTRACT give. The table (EXPECTED) is written by hand from them, keyed by operationId;
 * a route added to the manifest without its rows fails the first test, naming it.
 *
 * Requests are minimal and valid (test/api/authorisation-matrix.ts), so that the status answers
 * "may this caller do this to this record". A cell that writes gets a record of its own. Every
 * cell expected to be refused runs between two fingerprints of the database: a refusal writes
 * nothing. One server and one database serve the whole matrix.
 *
 * The session dimension (issue 25): every unsafe route × {bearer token, back-office session cookie
 * with its X-CSRFToken, the cookie without it, the cookie and its token with a body that is not JSON}
 * × the path's letter case (as written, upper, mixed), as the superuser: the token and the cookie
 * with its token get the matrix's status; the cookie without its token 403 and a text/plain body
 * 415, whatever the case, writing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { routes } from '../../src/http/routes/index.js';
import type { RouteSpec } from '../../src/http/route.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { databaseFingerprint } from '../helpers/fingerprint.js';
import { enrolAs } from '../helpers/backoffice.js';
import {
  Arrangement, CALLERS, NOEMP_CALLERS, OPERATIONS, ROLE_ORDER, type Caller, type CellRequest, type Role, type Situation, type Target,
} from './authorisation-matrix.js';

/**
 * Cells that fail today because of a finding of issue 11 being fixed on another branch. Each
 * entry names the finding; the cell is run as an expected failure (it.fails) until the fix is
 * merged, then its line is removed here. Nothing else belongs in this list.
 */
const KNOWN_FINDINGS: Array<{ op: string; situation: Situation; role: Role; finding: number }> = [];
function findingCells(finding: number, op: string, situation: Situation, roles: Role[]) {
  return roles.map((role) => ({ op, situation, role, finding }));
}

/**
 * Expected statuses, one row per situation, one column per role in this order:
 *   Admin, RH n1, RH n2, DA, Manager n1, Manager n2, Salarié, Intérimaire, Service Paie, staff (no role), superuser.
 * `-` = the situation does not exist for that caller (no own record without employee record; no
 * record outside a perimeter that is the whole association; staff and superuser have no
 * variant without employee record: they have none anyway).
 * Fixture perimeters: admin, rh1, paie, root: the whole association; rh2, mgr2: E2; da, mgr1: E1;
 * the no-employee variants: E3 (in = david, out = alice). Closed accounts: 401 on every route
 * but the public ones (SPEC Authentication rules 1 and 2), see CLOSED.
 *
 * Readings of the SPEC where it names no status (kept consistent across routes):
 * - lists answer 200 to every account and filter their rows; the matrix reads records;
 * - encadrement reads the whole directory (employees, their events, honorability metadata:
 *   "without scope=perimeter lists are entire"); a write, a file read or an activation on a
 *   record outside every perimeter of the caller answers 404 (SPEC Errors: "row outside
 *   perimeter or a colleague's row"), whether or not it holds the right; inside, without the
 *   right, 403;
 * - a creation that names an establishment outside the caller's perimeter (employee, team,
 *   event, on-call period, absence of an employee outside) is refused under that field: 400;
 * - DA and Service Paie declare no absence for somebody else: 400 under employee (rule 12);
 * - a superuser holds every permission over the whole association; impersonation is off: 404.
 */
type Row = string;
const EXPECTED: Record<string, Partial<Record<Exclude<Situation, 'closed'>, Row>> & { any?: Row; noemp?: Row }> = {
  health: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  settings: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  auth_token: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  auth_me: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  auth_password_reset: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  auth_password_reset_confirm: {
    any:       '400 400 400 400 400 400 400 400 400 400 400',
    noemp:     '400 400 400 400 400 400 400 400 400   -   -',
  },
  auth_impersonate: {
    own:       '404 404 404 404 404 404 404 404 404   -   -',
    in:        '404 404 404 404 404 404   -   - 404   - 404',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '404 404 404 404 404 404   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  // Impersonation is off in the matrix's server (ALLOW_IMPERSONATION): the route does not exist.
  auth_impersonate_end: {
    any:       '404 404 404 404 404 404 404 404 404 404 404',
    noemp:     '404 404 404 404 404 404 404 404 404   -   -',
  },
  absence_types_list: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  // Issue 29: who may file for the employee (as absence_create), reading instead of writing.
  absence_types_for_request: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 400 200 200   -   - 400   - 200',
    out:       '  -   - 400 400 400 400 400 400   - 400   -',
    noemp_in:  '200 200 200 400 200 200   -   - 400   -   -',
    noemp_out: '400 400 400 400 400 400 400 400 400   -   -',
  },
  divisions_list: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  divisions_create: {
    any:       '201 403 403 403 403 403 403 403 403 201 201',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  divisions_read: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  divisions_update: {
    any:       '200 403 403 403 403 403 403 403 403 200 200',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  divisions_partial_update: {
    any:       '200 403 403 403 403 403 403 403 403 200 200',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  divisions_delete: {
    any:       '204 403 403 403 403 403 403 403 403 204 204',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  establishments_list: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  establishments_create: {
    any:       '201 403 403 403 403 403 403 403 403 201 201',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  establishments_read: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  establishments_update: {
    any:       '200 403 403 403 403 403 403 403 403 200 200',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  establishments_partial_update: {
    any:       '200 403 403 403 403 403 403 403 403 200 200',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  establishments_delete: {
    any:       '204 403 403 403 403 403 403 403 403 204 204',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  contract_types_list: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  contract_types_create: {
    any:       '201 403 403 403 403 403 403 403 403 201 201',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  contract_types_read: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  contract_types_update: {
    any:       '200 403 403 403 403 403 403 403 403 200 200',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  contract_types_partial_update: {
    any:       '200 403 403 403 403 403 403 403 403 200 200',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  contract_types_delete: {
    any:       '204 403 403 403 403 403 403 403 403 204 204',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  employees_list: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  employees_create: {
    own:       '201 201 201 403 403 403 403 403 403   -   -',
    in:        '201 201 201 403 403 403   -   - 403   - 201',
    out:       '  -   - 400 403 403 403 403 403   - 403   -',
    noemp_in:  '201 201 201 403 403 403   -   - 403   -   -',
    noemp_out: '400 400 400 403 403 403 403 403 403   -   -',
  },
  employees_read: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 200   - 200',
    out:       '  -   - 200 200 200 200 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 200   -   -',
    noemp_out: '200 200 200 200 200 200 404 404 404   -   -',
  },
  employees_update: {
    own:       '200 200 200 403 403 403 403 403 403   -   -',
    in:        '200 200 200 403 403 403   -   - 403   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 403 403 403   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  employees_partial_update: {
    own:       '200 200 200 403 403 403 403 403 403   -   -',
    in:        '200 200 200 403 403 403   -   - 403   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 403 403 403   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  employees_emergency_contacts_list: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 403   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  employees_emergency_contacts_replace: {
    own:       '200 200 200 403 403 403 403 403 403   -   -',
    in:        '200 200 200 403 403 403   -   - 403   - 200',
    out:       '  -   - 404 403 403 403 404 404   - 404   -',
    noemp_in:  '200 200 200 403 403 403   -   - 403   -   -',
    noemp_out: '404 404 404 403 403 403 404 404 404   -   -',
  },
  employees_emergency_contacts_create: {
    own:       '201 201 201 403 403 403 403 403 403   -   -',
    in:        '201 201 201 403 403 403   -   - 403   - 201',
    out:       '  -   - 404 403 403 403 404 404   - 404   -',
    noemp_in:  '201 201 201 403 403 403   -   - 403   -   -',
    noemp_out: '404 404 404 403 403 403 404 404 404   -   -',
  },
  employees_attachments_list: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 403 403 403   -   - 403   - 200',
    out:       '  -   - 404 403 403 403 404 404   - 404   -',
    noemp_in:  '200 200 200 403 403 403   -   - 403   -   -',
    noemp_out: '404 404 404 403 403 403 404 404 404   -   -',
  },
  employees_attachments_create: {
    own:       '201 201 201 403 403 403 403 403 403   -   -',
    in:        '201 201 201 403 403 403   -   - 403   - 201',
    out:       '  -   - 404 403 403 403 404 404   - 404   -',
    noemp_in:  '201 201 201 403 403 403   -   - 403   -   -',
    noemp_out: '404 404 404 403 403 403 404 404 404   -   -',
  },
  employees_attachments_update: {
    own:       '200 200 200 403 403 403 403 403 403   -   -',
    in:        '200 200 200 403 403 403   -   - 403   - 200',
    out:       '  -   - 404 403 403 403 404 404   - 404   -',
    noemp_in:  '200 200 200 403 403 403   -   - 403   -   -',
    noemp_out: '404 404 404 403 403 403 404 404 404   -   -',
  },
  employees_attachments_delete: {
    own:       '204 204 204 403 403 403 403 403 403   -   -',
    in:        '204 204 204 403 403 403   -   - 403   - 204',
    out:       '  -   - 404 403 403 403 404 404   - 404   -',
    noemp_in:  '204 204 204 403 403 403   -   - 403   -   -',
    noemp_out: '404 404 404 403 403 403 404 404 404   -   -',
  },
  employees_attachments_file: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 403 403 403   -   - 403   - 200',
    out:       '  -   - 404 403 403 403 404 404   - 404   -',
    noemp_in:  '200 200 200 403 403 403   -   - 403   -   -',
    noemp_out: '404 404 404 403 403 403 404 404 404   -   -',
  },
  employee_account_activation: {
    own:       '403 403 403 403 403 403 403 403 403   -   -',
    in:        '200 200 200 403 403 403   -   - 403   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 403 403 403   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  teams_list: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  teams_create: {
    own:       '201 201 201 201 201 201 403 403 403   -   -',
    in:        '201 201 201 201 201 201   -   - 403   - 201',
    out:       '  -   - 400 400 400 400 403 403   - 403   -',
    noemp_in:  '201 201 201 201 201 201   -   - 403   -   -',
    noemp_out: '400 400 400 400 400 400 403 403 403   -   -',
  },
  teams_read: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 200   - 200',
    out:       '  -   - 200 200 200 200 200 200   - 200   -',
    noemp_in:  '200 200 200 200 200 200   -   - 200   -   -',
    noemp_out: '200 200 200 200 200 200 200 200 200   -   -',
  },
  teams_update: {
    own:       '200 200 200 200 200 200 403 403 403   -   -',
    in:        '200 200 200 200 200 200   -   - 403   - 200',
    out:       '  -   - 404 404 404 404 403 403   - 403   -',
    noemp_in:  '200 200 200 200 200 200   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 403 403 403   -   -',
  },
  teams_partial_update: {
    own:       '200 200 200 200 200 200 403 403 403   -   -',
    in:        '200 200 200 200 200 200   -   - 403   - 200',
    out:       '  -   - 404 404 404 404 403 403   - 403   -',
    noemp_in:  '200 200 200 200 200 200   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 403 403 403   -   -',
  },
  teams_delete: {
    own:       '204 204 204 204 204 204 403 403 403   -   -',
    in:        '204 204 204 204 204 204   -   - 403   - 204',
    out:       '  -   - 404 404 404 404 403 403   - 403   -',
    noemp_in:  '204 204 204 204 204 204   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 403 403 403   -   -',
  },
  teams_members_replace: {
    own:       '200 200 200 200 200 200 403 403 403   -   -',
    in:        '200 200 200 200 200 200   -   - 403   - 200',
    out:       '  -   - 404 404 404 404 403 403   - 403   -',
    noemp_in:  '200 200 200 200 200 200   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 403 403 403   -   -',
  },
  teams_members_add: {
    own:       '201 201 201 201 201 201 403 403 403   -   -',
    in:        '201 201 201 201 201 201   -   - 403   - 201',
    out:       '  -   - 404 404 404 404 403 403   - 403   -',
    noemp_in:  '201 201 201 201 201 201   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 403 403 403   -   -',
  },
  planning_read: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  planning_export: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  // The team month's grid (issue 29 point 6): like a list, 200 to every account, its rows the perimeter's
  // (or one's own); what it reads is test/api/planning-grid.test.ts's and test/db/96-planning-grid.sql's.
  planning_grid: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  shift_change_requests_create: {
    any:       '201 201 201 201 201 201 201 201 201 403 403',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  shift_change_requests_list: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 200   - 200',
    out:       '  -   - 200 200 200 200 200 200   - 200   -',
    noemp_in:  '200 200 200 200 200 200   -   - 200   -   -',
    noemp_out: '200 200 200 200 200 200 200 200 200   -   -',
  },
  shift_change_requests_export: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 200   - 200',
    out:       '  -   - 200 200 200 200 200 200   - 200   -',
    noemp_in:  '200 200 200 200 200 200   -   - 200   -   -',
    noemp_out: '200 200 200 200 200 200 200 200 200   -   -',
  },
  shift_change_requests_read: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  shift_change_requests_delete: {
    own:       '204 204 204 204 204 204 204 204 204   -   -',
    in:        '403 403 403 403 403 403   -   - 404   - 403',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '403 403 403 403 403 403   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  shift_change_requests_validate: {
    own:       '403 403 403 403 403 403 403 403 403   -   -',
    in:        '200 200 200 403 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 403 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  shift_change_requests_refuse: {
    own:       '403 403 403 403 403 403 403 403 403   -   -',
    in:        '200 200 200 403 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 403 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  absences_list: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 200   - 200',
    out:       '  -   - 200 200 200 200 200 200   - 200   -',
    noemp_in:  '200 200 200 200 200 200   -   - 200   -   -',
    noemp_out: '200 200 200 200 200 200 200 200 200   -   -',
  },
  absences_export: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 200   - 200',
    out:       '  -   - 200 200 200 200 200 200   - 200   -',
    noemp_in:  '200 200 200 200 200 200   -   - 200   -   -',
    noemp_out: '200 200 200 200 200 200 200 200 200   -   -',
  },
  absence_create: {
    own:       '201 201 201 201 201 201 201 201 201   -   -',
    in:        '201 201 201 400 201 201   -   - 400   - 201',
    out:       '  -   - 400 400 400 400 400 400   - 400   -',
    noemp_in:  '201 201 201 400 201 201   -   - 400   -   -',
    noemp_out: '400 400 400 400 400 400 400 400 400   -   -',
  },
  absence_preview: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 200   - 200',
    out:       '  -   - 200 200 200 200 200 200   - 200   -',
    noemp_in:  '200 200 200 200 200 200   -   - 200   -   -',
    noemp_out: '200 200 200 200 200 200 200 200 200   -   -',
  },
  absence_get: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  absence_update: {
    own:       '403 403 403 403 403 403 403 403 403   -   -',
    in:        '200 200 200 403 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 403 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  absence_delete: {
    own:       '204 204 204 204 204 204 204 204 204   -   -',
    in:        '403 403 403 403 403 403   -   - 404   - 403',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '403 403 403 403 403 403   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  absence_preview_row: {
    own:       '403 403 403 403 403 403 403 403 403   -   -',
    in:        '200 200 200 200 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  absence_validate: {
    own:       '403 403 403 403 403 403 403 403 403   -   -',
    in:        '200 200 200 403 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 403 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  absence_refuse: {
    own:       '403 403 403 403 403 403 403 403 403   -   -',
    in:        '200 200 200 403 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 403 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  absence_request_cancellation: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '403 403 403 403 403 403   -   - 404   - 403',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '403 403 403 403 403 403   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  absence_add_documents: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  counters_read: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  counters_establishment: {
    own:       '200 200 200 200 200 200 404 404 404   -   -',
    in:        '200 200 200 200 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  counters_establishment_export: {
    own:       '200 200 200 200 200 200 404 404 404   -   -',
    in:        '200 200 200 200 200 200   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  absence_document_file: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 403 403 403   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 403 403 403   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  honorability_certificate_get: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 200   - 200',
    out:       '  -   - 200 200 200 200 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 200   -   -',
    noemp_out: '200 200 200 200 200 200 404 404 404   -   -',
  },
  honorability_certificate_put: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 403   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  honorability_certificate_delete: {
    own:       '204 204 204 204 204 204 204 204 204   -   -',
    in:        '204 204 204 204 204 204   -   - 403   - 204',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '204 204 204 204 204 204   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  honorability_certificate_file: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 403 403 403   -   - 403   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 403 403 403   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  events_list: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  events_create: {
    own:       '201 201 201 201 201 201 403 403 403   -   -',
    in:        '201 201 201 201 201 201   -   - 403   - 201',
    out:       '  -   - 400 400 400 400 403 403   - 403   -',
    noemp_in:  '201 201 201 201 201 201   -   - 403   -   -',
    noemp_out: '400 400 400 400 400 400 403 403 403   -   -',
  },
  events_participant_options: {
    any:       '200 200 200 200 200 200 403 403 403 403 200',
    noemp:     '200 200 200 200 200 200 403 403 403   -   -',
  },
  events_read: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 200 200 200   -   - 404   - 200',
    out:       '  -   - 200 200 200 200 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 404   -   -',
    noemp_out: '200 200 200 200 200 200 404 404 404   -   -',
  },
  events_update: {
    own:       '200 200 200 200 200 200 403 403 403   -   -',
    in:        '200 200 200 200 200 200   -   - 404   - 200',
    out:       '  -   - 403 403 403 403 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 404   -   -',
    noemp_out: '403 403 403 403 403 403 404 404 404   -   -',
  },
  events_partial_update: {
    own:       '200 200 200 200 200 200 403 403 403   -   -',
    in:        '200 200 200 200 200 200   -   - 404   - 200',
    out:       '  -   - 403 403 403 403 404 404   - 404   -',
    noemp_in:  '200 200 200 200 200 200   -   - 404   -   -',
    noemp_out: '403 403 403 403 403 403 404 404 404   -   -',
  },
  events_delete: {
    own:       '204 204 204 204 204 204 403 403 403   -   -',
    in:        '204 204 204 204 204 204   -   - 404   - 204',
    out:       '  -   - 403 403 403 403 404 404   - 404   -',
    noemp_in:  '204 204 204 204 204 204   -   - 404   -   -',
    noemp_out: '403 403 403 403 403 403 404 404 404   -   -',
  },
  on_call_periods_list: {
    any:       '200 200 200 200 200 200 403 403 200 403 200',
    noemp:     '200 200 200 200 200 200 403 403 200   -   -',
  },
  on_call_periods_create: {
    own:       '201 201 201 201 201 201 403 403 403   -   -',
    in:        '201 201 201 201 201 201   -   - 403   - 201',
    out:       '  -   - 400 400 400 400 403 403   - 403   -',
    noemp_in:  '201 201 201 201 201 201   -   - 403   -   -',
    noemp_out: '400 400 400 400 400 400 403 403 403   -   -',
  },
  on_call_periods_read: {
    own:       '200 200 200 200 200 200 403 403 200   -   -',
    in:        '200 200 200 200 200 200   -   - 200   - 200',
    out:       '  -   - 404 404 404 404 403 403   - 403   -',
    noemp_in:  '200 200 200 200 200 200   -   - 200   -   -',
    noemp_out: '404 404 404 404 404 404 403 403 404   -   -',
  },
  on_call_periods_update: {
    own:       '200 200 200 200 200 200 403 403 403   -   -',
    in:        '200 200 200 200 200 200   -   - 403   - 200',
    out:       '  -   - 404 404 404 404 403 403   - 403   -',
    noemp_in:  '200 200 200 200 200 200   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 403 403 404   -   -',
  },
  on_call_periods_partial_update: {
    own:       '200 200 200 200 200 200 403 403 403   -   -',
    in:        '200 200 200 200 200 200   -   - 403   - 200',
    out:       '  -   - 404 404 404 404 403 403   - 403   -',
    noemp_in:  '200 200 200 200 200 200   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 403 403 404   -   -',
  },
  on_call_periods_delete: {
    own:       '204 204 204 204 204 204 403 403 403   -   -',
    in:        '204 204 204 204 204 204   -   - 403   - 204',
    out:       '  -   - 404 404 404 404 403 403   - 403   -',
    noemp_in:  '204 204 204 204 204 204   -   - 403   -   -',
    noemp_out: '404 404 404 404 404 404 403 403 404   -   -',
  },
  delegations_list: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  // Only a decider delegates (its own decisions); the staff account holds none.
  delegations_create: {
    any:       '201 201 201 403 201 201 403 403 403 403 201',
    noemp:     '201 201 201 403 201 201 403 403 403   -   -',
  },
  // own: the caller's own delegation (its delegator); in / out: one given by the employee's account:
  // ended by Admin, RH and superusers over their perimeter, unseen (404) by the others.
  delegations_end: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '200 200 200 404 404 404   -   - 404   - 200',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '200 200 200 404 404 404   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  payroll_options: {
    any:       '200 200 200 403 403 403 403 403 200 403 200',
    noemp:     '200 200 200 403 403 403 403 403 200   -   -',
  },
  payroll_lines: {
    own:       '200 200 200 403 403 403 403 403 200   -   -',
    in:        '200 200 200 403 403 403   -   - 200   - 200',
    out:       '  -   - 403 403 403 403 403 403   - 403   -',
    noemp_in:  '200 200 200 403 403 403   -   - 200   -   -',
    noemp_out: '403 403 403 403 403 403 403 403 403   -   -',
  },
  payroll_export: {
    own:       '200 200 200 403 403 403 403 403 200   -   -',
    in:        '200 200 200 403 403 403   -   - 200   - 200',
    out:       '  -   - 403 403 403 403 403 403   - 403   -',
    noemp_in:  '200 200 200 403 403 403   -   - 200   -   -',
    noemp_out: '403 403 403 403 403 403 403 403 403   -   -',
  },
  notifications_list: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  notification_mark_read: {
    own:       '200 200 200 200 200 200 200 200 200   -   -',
    in:        '404 404 404 404 404 404   -   - 404   - 404',
    out:       '  -   - 404 404 404 404 404 404   - 404   -',
    noemp_in:  '404 404 404 404 404 404   -   - 404   -   -',
    noemp_out: '404 404 404 404 404 404 404 404 404   -   -',
  },
  // E-mail notifications (issue 28): every account its own preferences and notifications; the
  // unsubscribe address is public (its secret is the authentication).
  notifications_mark_all_read: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  notification_preferences_get: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  notification_preferences_set: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  notification_unsubscribe: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  email_outbox_list: {
    any:       '200 403 403 403 403 403 403 403 403 200 200',
    noemp:     '403 403 403 403 403 403 403 403 403   -   -',
  },
  audit_log_list: {
    own:       '403 200 403 403 403 403 403 403 403   -   -',
    in:        '403 200 403 403 403 403   -   - 403   - 200',
    out:       '  -   - 403 403 403 403 403 403   - 403   -',
    noemp_in:  '403 403 403 403 403 403   -   - 403   -   -',
    noemp_out: '403 403 403 403 403 403 403 403 403   -   -',
  },
  // Calendar feeds (issue 16): any account holds « planning »; « perimeter » is for the queue
  // readers (absences.view_absence_queue; a superuser holds every permission).
  calendar_feeds_list: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  calendar_feeds_create: {
    any:       '201 201 201 201 201 201 403 403 403 403 201',
    noemp:     '201 201 201 201 201 201 403 403 403   -   -',
  },
  calendar_feeds_rotate: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  calendar_feeds_revoke: {
    any:       '204 204 204 204 204 204 204 204 204 204 204',
    noemp:     '204 204 204 204 204 204 204 204 204   -   -',
  },
  calendar_feed_read: {
    any:       '200 200 200 200 200 200 200 200 200 200 200',
    noemp:     '200 200 200 200 200 200 200 200 200   -   -',
  },
  audit_log_export: {
    own:       '403 200 403 403 403 403 403 403 403   -   -',
    in:        '403 200 403 403 403 403   -   - 403   - 200',
    out:       '  -   - 403 403 403 403 403 403   - 403   -',
    noemp_in:  '403 403 403 403 403 403   -   - 403   -   -',
    noemp_out: '403 403 403 403 403 403 403 403 403   -   -',
  },
};

/** A closed account's token: 401 everywhere but on the public routes (SPEC Authentication 1-2). */
const CLOSED: Record<string, number> = {
  health: 200,
  auth_token: 401, // the closed account's own credentials
  auth_password_reset: 200, // the same answer whoever asks
  auth_password_reset_confirm: 400, // an unknown reset token
  calendar_feed_read: 200, // the feed's secret opens it, not the session sent along
  notification_unsubscribe: 200, // the e-mail's secret turns it off, not the session sent along
};
const closedStatus = (op: string) => CLOSED[op] ?? 401;

interface Cell {
  op: string;
  route: RouteSpec;
  caller: Caller;
  situation: Situation;
  expected: number;
  target: Target;
  request?: CellRequest;
  status?: number;
  text?: string;
  known?: number;
}

function parseRow(row: string, what: string): Array<number | null> {
  const items = row.trim().split(/\s+/);
  if (items.length !== ROLE_ORDER.length) throw new Error(`${what}: ${items.length} columns, ${ROLE_ORDER.length} expected`);
  return items.map((item) => (item === '-' ? null : Number(item)));
}

function expectedFor(op: string, situation: Situation, caller: Caller): number | null {
  if (situation === 'closed') return closedStatus(op);
  const rows = EXPECTED[op];
  if (!rows) return null;
  const key = OPERATIONS[op]!.scope === 'employee' ? situation : situation.startsWith('noemp') ? 'noemp' : 'any';
  const row = rows[key as keyof typeof rows];
  if (!row) return null;
  return parseRow(row, `${op}.${key}`)[ROLE_ORDER.indexOf(caller.role)] ?? null;
}

/** Situations a caller meets for an operation, and the target employee of each. */
function situationsOf(op: string, caller: Caller, noemp: boolean): Array<[Situation, string | null]> {
  const scope = OPERATIONS[op]!.scope;
  if (noemp) {
    if (scope !== 'employee') return [['noemp_in', null]];
    return [['noemp_in', caller.in], ['noemp_out', caller.out]].filter(([, e]) => e !== null) as Array<[Situation, string]>;
  }
  if (scope === 'none') return [['in', null]];
  if (scope === 'self') return caller.employee ? [['own', caller.employee]] : [['in', null]];
  return [['own', caller.employee], ['in', caller.in], ['out', caller.out]].filter(([, e]) => e !== null) as Array<[Situation, string]>;
}

/** The modes of the session dimension. */
const SESSION_MODES = ['bearer', 'cookie+csrf', 'cookie', 'cookie+text'] as const;
type SessionMode = typeof SESSION_MODES[number];
const LETTER_CASES = ['lower', 'upper', 'mixed'] as const;
type LetterCase = typeof LETTER_CASES[number];

interface SessionCell {
  op: string;
  route: RouteSpec;
  mode: SessionMode;
  letters: LetterCase;
  expected: number;
  target: Target;
  request?: CellRequest;
  path?: string;
  status?: number;
  text?: string;
}
const sessionCells: SessionCell[] = [];
let sessionFingerprints: [string, string] = ['', ''];

/**
 * `path` (a cell's concrete path, query string included) with the literal segments of its route's
 * template in another letter case; parameter values and the query string keep theirs.
 */
function inLetterCase(route: RouteSpec, path: string, letters: LetterCase): string {
  if (letters === 'lower') return path;
  const [pathname, query] = [path.split('?')[0]!, path.includes('?') ? path.slice(path.indexOf('?')) : ''];
  const template = route.path.split('/');
  const concrete = pathname.split('/');
  if (template.length !== concrete.length) throw new Error(`${path} does not follow ${route.path}`);
  let flip = false;
  const change = (text: string) => (letters === 'upper' ? text.toUpperCase()
    : [...text].map((c) => ((flip = !flip) ? c.toUpperCase() : c.toLowerCase())).join(''));
  return concrete.map((segment, i) => (template[i]!.includes('{') ? segment : change(segment))).join('/') + query;
}

function sessionExpected(mode: SessionMode, matrixStatus: number): number {
  if (mode === 'cookie') return 403;
  if (mode === 'cookie+text') return 415;
  return matrixStatus;
}

const RECORD = process.env.MATRIX_RECORD;
let env: TestEnv;
let arrangement: Arrangement;
const cells: Cell[] = [];
let fingerprints: [string, string] = ['', ''];

async function pool<T>(items: T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: size }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

async function send(cell: Cell, token: string): Promise<void> {
  const req = cell.request!;
  const res = await env.request(cell.route.method.toUpperCase(), req.path, {
    token, ...(req.form ? { form: req.form } : req.body !== undefined ? { body: req.body } : {}),
  });
  cell.status = res.status;
  cell.text = res.text.slice(0, 300);
}

/**
 * The session dimension, as the superuser (root): a back-office session past its second factor
 * (its cookie and CSRF token) and its bearer token. A cell expected to succeed gets a fresh record
 * (and its restore); the refusals run between two fingerprints.
 */
async function runSessionDimension(tokens: Record<string, string>): Promise<void> {
  const caller = CALLERS.find((c) => c.role === 'superuser')!;
  const { visitor } = await enrolAs(env, caller.account);
  const cookie = visitor.cookieHeader();
  const csrf = decodeURIComponent(visitor.cookies.get('wfm_csrftoken')!);
  for (const route of routes.filter((r) => r.method !== 'get' && OPERATIONS[r.operationId])) {
    const op = route.operationId;
    const [situation, employee] = situationsOf(op, caller, false)[0]!;
    const matrixStatus = expectedFor(op, situation, caller);
    if (matrixStatus === null) continue;
    for (const mode of SESSION_MODES) {
      for (const letters of LETTER_CASES) {
        sessionCells.push({ op, route, mode, letters, expected: sessionExpected(mode, matrixStatus), target: { caller, situation, employee } });
      }
    }
  }
  const succeeds = (c: SessionCell) => c.expected >= 200 && c.expected < 300;
  const refusals = sessionCells.filter((c) => !OPERATIONS[c.op]!.writes || !succeeds(c));
  const rest = sessionCells.filter((c) => !refusals.includes(c));
  // A refused cell needs no record of its own: one request per operation serves them all.
  const shared = new Map<string, Promise<CellRequest>>();
  await pool(refusals, 4, async (cell) => {
    if (!shared.has(cell.op)) shared.set(cell.op, OPERATIONS[cell.op]!.request(cell.target, arrangement));
    cell.request = await shared.get(cell.op)!;
  });
  await pool(rest, 4, async (cell) => {
    cell.request = await OPERATIONS[cell.op]!.request(cell.target, arrangement);
  });
  const sendSession = async (cell: SessionCell) => {
    const req = cell.request!;
    cell.path = inLetterCase(cell.route, req.path, cell.letters);
    const headers: Record<string, string> = {};
    if (cell.mode === 'bearer') headers.authorization = `Bearer ${tokens[caller.account]}`;
    else headers.cookie = cookie;
    if (cell.mode === 'cookie+csrf' || cell.mode === 'cookie+text') headers['x-csrftoken'] = csrf;
    let body: string | FormData | undefined;
    if (cell.mode === 'cookie+text') {
      // A plain HTML form's body (text/plain) spelling the JSON of the request.
      headers['content-type'] = 'text/plain';
      body = JSON.stringify(req.body ?? {});
    } else if (req.form) {
      body = req.form;
    } else if (req.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.body);
    }
    const response = await fetch(`${env.url}${cell.path}`, { method: cell.route.method.toUpperCase(), headers, body, redirect: 'manual' });
    cell.status = response.status;
    cell.text = (await response.text()).slice(0, 300);
  };
  sessionFingerprints[0] = await databaseFingerprint(env.db);
  await pool(refusals, 4, sendSession);
  sessionFingerprints[1] = await databaseFingerprint(env.db);
  const restore = (op: string) => OPERATIONS[op]!.restore ?? SESSION_RESTORE[op];
  await pool(rest.filter((c) => !restore(c.op)), 4, sendSession);
  for (const cell of rest.filter((c) => restore(c.op))) {
    await restore(cell.op)!(cell.target, arrangement);
    await sendSession(cell);
  }
}

/**
 * The session dimension succeeds several times where the matrix succeeds once per caller: the
 * calendar feeds (one per account and kind) are put back in the state each success needs.
 */
const SESSION_RESTORE: Record<string, (t: Target, a: Arrangement) => Promise<void>> = {
  calendar_feeds_create: async (t) => {
    await env.db.query("delete from app_private.calendar_feeds where account_id = $1 and kind = 'perimeter'", [env.ids.accounts![t.caller.account]]);
  },
  calendar_feeds_rotate: (t, a) => a.restoreCalendarFeed(t.caller.account, 'planning'),
};

beforeAll(async () => {
  const started = Date.now();
  env = await startTestEnv();
  arrangement = new Arrangement(env);
  const accounts = [...new Set([...CALLERS, ...NOEMP_CALLERS].map((c) => c.account).concat(Object.keys(env.ids.employees!).filter((k) => env.ids.accounts![k])))];
  await arrangement.arrange(accounts);
  for (const route of routes) {
    const op = route.operationId;
    if (!OPERATIONS[op]) continue;
    for (const [callers, noemp] of [[CALLERS, false], [NOEMP_CALLERS, true]] as const) {
      for (const caller of callers) {
        for (const [situation, employee] of situationsOf(op, caller, noemp)) {
          const expected = expectedFor(op, situation, caller);
          if (expected === null && !RECORD) continue;
          const known = KNOWN_FINDINGS.find((k) => k.op === op && k.situation === situation && k.role === caller.role)?.finding;
          const target = { caller, situation, employee };
          cells.push({ op, route, caller, situation, expected: expected ?? 0, known, target });
        }
      }
    }
    // Closed: each role's own account (with its own record, else one of its perimeter), closed.
    for (const caller of CALLERS) {
      const employee = OPERATIONS[op]!.scope === 'none' ? null : caller.employee ?? caller.in ?? caller.out;
      const target = { caller, situation: 'closed' as const, employee };
      cells.push({ op, route, caller, situation: 'closed', expected: closedStatus(op), target });
    }
  }
  const arranged = Date.now();
  await pool(cells.filter((c) => c.situation !== 'closed'), 4, async (cell) => {
    cell.request = await OPERATIONS[cell.op]!.request(cell.target, arrangement);
  });
  // A closed account is refused before anything is read: it sends the request of one of its open cells.
  await pool(cells.filter((c) => c.situation === 'closed'), 4, async (cell) => {
    const open = cells.find((c) => c.op === cell.op && c.caller === cell.caller && c.situation !== 'closed');
    cell.request = open?.request ?? await OPERATIONS[cell.op]!.request(cell.target, arrangement);
  });
  const built = Date.now();
  const tokens: Record<string, string> = {};
  for (const caller of [...CALLERS, ...NOEMP_CALLERS]) tokens[caller.account] = await arrangement.token(caller.account);
  const open = cells.filter((c) => c.situation !== 'closed');
  // Between the fingerprints: the reads, and the writes expected to be refused (known findings aside).
  const refusals = open.filter((c) => !OPERATIONS[c.op]!.writes
    || (!RECORD && c.known === undefined && !(c.expected >= 200 && c.expected < 300)));
  const rest = open.filter((c) => !refusals.includes(c));
  fingerprints[0] = await databaseFingerprint(env.db);
  await pool(refusals, 4, (cell) => send(cell, tokens[cell.caller.account]!));
  fingerprints[1] = await databaseFingerprint(env.db);
  await pool(rest.filter((c) => !OPERATIONS[c.op]!.restore), 4, (cell) => send(cell, tokens[cell.caller.account]!));
  for (const cell of rest.filter((c) => OPERATIONS[c.op]!.restore)) {
    await OPERATIONS[cell.op]!.restore!(cell.target, arrangement);
    await send(cell, tokens[cell.caller.account]!);
  }
  await runSessionDimension(tokens);
  await env.db.query('update app_public.accounts set is_active = false where id = any ($1)', [CALLERS.map((c) => env.ids.accounts![c.account])]);
  await pool(cells.filter((c) => c.situation === 'closed'), 4, (cell) => send(cell, tokens[cell.caller.account]!));
  if (process.env.MATRIX_TIMES) console.log({ arrange: arranged - started, build: built - arranged, run: Date.now() - built, cells: cells.length });
  if (RECORD) writeFileSync(RECORD, record());
}, 600_000);

afterAll(async () => {
  await env?.close();
});

/** MATRIX_RECORD=<file>: the observed statuses in the layout of EXPECTED, for review against the SPEC. */
function record(): string {
  const out: string[] = [];
  for (const op of Object.keys(OPERATIONS)) {
    out.push(`  ${op}: {`);
    const keys = OPERATIONS[op]!.scope === 'employee' ? ['own', 'in', 'out', 'noemp_in', 'noemp_out'] : ['any', 'noemp'];
    for (const key of keys) {
      const row = ROLE_ORDER.map((role) => {
        const cell = cells.find((c) => c.op === op && c.caller.role === role && c.situation !== 'closed'
          && (key === 'any' ? !c.situation.startsWith('noemp') : key === 'noemp' ? c.situation.startsWith('noemp') : c.situation === key));
        return cell?.status === undefined ? '-' : String(cell.status);
      });
      out.push(`    ${(key + ':').padEnd(10)} '${row.map((s) => s.padStart(3)).join(' ')}',`);
    }
    out.push('  },');
  }
  return out.join('\n') + '\n';
}

const describeCell = (c: Cell) => `${c.op} ${c.situation} ${c.caller.role} (${c.caller.account}) ${c.route.method.toUpperCase()} ${c.request?.path}`;

describe('the authorisation matrix', () => {
  it('every operation of the manifest has a request and rows of expected statuses', () => {
    const missing = routes.map((r) => r.operationId).filter((op) => !OPERATIONS[op] || !EXPECTED[op]);
    expect(missing, `routes without a row in the authorisation matrix: ${missing.join(', ')}`).toEqual([]);
    const stale = Object.keys(EXPECTED).filter((op) => !routes.some((r) => r.operationId === op));
    expect(stale, 'rows of operations the manifest no longer has').toEqual([]);
  });

  it('a refused request writes nothing (one fingerprint before and after every refusal)', () => {
    expect(fingerprints[1]).toBe(fingerprints[0]);
  });

  for (const route of routes) {
    it(`${route.operationId}: ${route.method.toUpperCase()} ${route.path}`, () => {
      const mine = cells.filter((c) => c.op === route.operationId && c.known === undefined);
      const wrong = mine.filter((c) => c.status !== c.expected).map((c) => `${describeCell(c)}: expected ${c.expected}, got ${c.status} ${c.text}`);
      expect(wrong).toEqual([]);
      expect(mine.length).toBeGreaterThan(0);
    });
  }

  describe('the session dimension: every unsafe route × {bearer, cookie + X-CSRFToken, cookie alone, cookie + text/plain} × path letter case', () => {
    it('covers every unsafe route of the manifest, in three letter cases and four modes', () => {
      const unsafe = routes.filter((r) => r.method !== 'get').map((r) => r.operationId);
      const covered = new Set(sessionCells.map((c) => c.op));
      expect(unsafe.filter((op) => !covered.has(op)), 'unsafe routes without session cells').toEqual([]);
      expect(sessionCells.length).toBe(unsafe.length * SESSION_MODES.length * LETTER_CASES.length);
    });

    it('a refused request of the session dimension writes nothing (cookie without its token, a body that is not JSON)', () => {
      expect(sessionFingerprints[1]).toBe(sessionFingerprints[0]);
    });

    for (const mode of SESSION_MODES) {
      it(`${mode}: ${mode === 'cookie' ? '403 on every unsafe route' : mode === 'cookie+text' ? '415 on every unsafe route' : 'the matrix’s status on every unsafe route'}, whatever the letter case of the path`, () => {
        const mine = sessionCells.filter((c) => c.mode === mode);
        const wrong = mine.filter((c) => c.status !== c.expected)
          .map((c) => `${c.op} ${c.letters} ${c.route.method.toUpperCase()} ${c.path}: expected ${c.expected}, got ${c.status} ${c.text}`);
        expect(wrong).toEqual([]);
        expect(mine.length).toBeGreaterThan(0);
      });
    }
  });

  for (const known of KNOWN_FINDINGS) {
    it.fails(`finding ${known.finding}: ${known.op} ${known.situation} ${known.role}`, () => {
      const cell = cells.find((c) => c.op === known.op && c.situation === known.situation && c.caller.role === known.role)!;
      expect(cell.status, describeCell(cell)).toBe(cell.expected);
    });
  }
});
