/**
 * The scenarios of the bench: what each HTTP request is (route, caller, body), drawn from
 * the generated organisation so that writes use distinct employees and dates and each
 * decision targets a distinct pending item with its current version.
 */
import type pg from 'pg';
import { signAccessToken } from '../../src/auth/jwt.js';
import { BackofficeSecrets } from '../../src/auth/secrets.js';
import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE } from '../../src/auth/sessions.js';
import { BENCH_PASSWORD } from './dataset.js';
import type { RequestSpec } from './load.js';

export interface BenchContext {
  db: pg.Pool;
  jwtSecret: string;
  today: string;
  windows: { writes_from: string; planning_from: string; planning_to: string };
  employees: Array<{ idx: number; id: number; account_id: number; username: string; establishment_idx: number }>;
  admin: { account_id: number; employee_id: number };
  rh1: { account_id: number };
  managerN2: { account_id: number; perimeter: number };
  /** Manager n1 accounts by establishment index (first one). */
  managersN1: Map<number, number>;
  cpTypeId: number;
  writeDays: string[];
  /** Next free slot of the writes window (employee × weekday), shared by every writer. */
  absenceSlot: number;
  shiftSlot: number;
}

/** export: whole downloads one at a time (bench/lib/export.ts), not a load of many requests. */
export type Target = 'api' | 'bare' | 'graphql' | 'pgbench' | 'export';

export interface Scenario {
  key: string;
  label: string;
  target: Target;
  /** What the targets of issue 7 expect of it. */
  goal: 'interactive' | 'planning' | 'throughput' | 'cpu' | 'baseline' | 'export';
  connections?: number;
  /** Builds the request generator right before the phase (reads the database as it is then). */
  prepare?: (ctx: BenchContext) => Promise<{ next: () => RequestSpec | null; supply?: number; note?: string }>;
}

const tokens = new Map<number, string>();
export function tokenFor(ctx: BenchContext, accountId: number): string {
  let token = tokens.get(accountId);
  if (!token) {
    token = signAccessToken(ctx.jwtSecret, accountId);
    tokens.set(accountId, token);
  }
  return token;
}

/** Cycles through a list forever. */
function cycle<T>(items: T[], make: (item: T) => RequestSpec): () => RequestSpec {
  let i = 0;
  return () => make(items[i++ % items.length]!);
}

/** Takes each item once; null when exhausted. */
function once<T>(items: T[], make: (item: T) => RequestSpec): () => RequestSpec | null {
  let i = 0;
  return () => (i < items.length ? make(items[i++]!) : null);
}

function monthWindow(today: string): { from: string; to: string } {
  const [y, m] = today.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  const mm = String(m).padStart(2, '0');
  return { from: `${y}-${mm}-01`, to: `${y}-${mm}-${String(last).padStart(2, '0')}` };
}

type Slot = { employee: BenchContext['employees'][number]; day: string };

/**
 * Writes, one per free (employee, weekday) of the writes window, employees rotating fastest:
 * distinct employees and dates, so no write meets another's rules.
 */
function slotWrites(ctx: BenchContext, kind: 'absenceSlot' | 'shiftSlot', request: (slot: Slot) => RequestSpec) {
  const total = ctx.employees.length * ctx.writeDays.length;
  return {
    supply: total - ctx[kind],
    next: (): RequestSpec | null => {
      const slot = ctx[kind]++;
      const day = ctx.writeDays[Math.floor(slot / ctx.employees.length)];
      return day ? request({ employee: ctx.employees[slot % ctx.employees.length]!, day }) : null;
    },
  };
}

/**
 * The next free slots of the writes window once writers have run (the HTTP phases, pgbench): the
 * weekday after the last one holding an absence (a day-change request), whoever wrote it.
 */
export async function slotsAfterWrites(db: pg.Pool | pg.ClientBase, employees: number): Promise<{ absences: number; shifts: number }> {
  const { rows } = await db.query<{ absences: number | null; shifts: number | null }>(
    `select (select max(w.n)::int from app_public.absences a join bench.write_days w on w.day = a.date_start) as absences,
            (select max(w.n)::int from app_public.shift_change_requests r join bench.write_days w on w.day = r.date) as shifts`,
  );
  return { absences: ((rows[0]!.absences ?? -1) + 1) * employees, shifts: ((rows[0]!.shifts ?? -1) + 1) * employees };
}

async function planningRequests(ctx: BenchContext) {
  const token = tokenFor(ctx, ctx.managerN2.account_id);
  const { from, to } = monthWindow(ctx.today);
  return {
    next: (): RequestSpec => ({ method: 'GET', path: `/api/planning/?from=${from}&to=${to}`, token }),
    note: `${from} → ${to}, ${ctx.managerN2.perimeter} employees`,
  };
}

/** The team month's compact grid of the same month and perimeter as planningRequests. */
async function planningGridRequests(ctx: BenchContext) {
  const token = tokenFor(ctx, ctx.managerN2.account_id);
  const { from, to } = monthWindow(ctx.today);
  return {
    next: (): RequestSpec => ({ method: 'GET', path: `/api/planning/grid/?from=${from}&to=${to}`, token }),
    note: `${from} → ${to}, ${ctx.managerN2.perimeter} employees`,
  };
}

/** The team planning screen: the same month narrowed to the establishment holding most of the perimeter. */
async function teamPlanningRequests(ctx: BenchContext) {
  const token = tokenFor(ctx, ctx.managerN2.account_id);
  const { from, to } = monthWindow(ctx.today);
  const { rows } = await ctx.db.query<{ establishment: number; employees: number }>(
    `select e.main_establishment_id as establishment, count(*)::int as employees
     from app_hidden.perimeter_employee_ids('absences.view_absence_queue', $1) p
     join app_public.employees e on e.id = p
     where e.main_establishment_id is not null
     group by 1 order by 2 desc, 1 limit 1`,
    [ctx.managerN2.account_id],
  );
  const { establishment, employees } = rows[0]!;
  return {
    next: (): RequestSpec => ({ method: 'GET', path: `/api/planning/?from=${from}&to=${to}&establishment=${establishment}`, token }),
    note: `${from} → ${to}, establishment ${establishment} (${employees} employees with it as main workplace)`,
  };
}

/** The whole absence list of the association (RH n1): every absence of the dataset, streamed. */
function absenceExport(format: 'csv' | 'xlsx'): Scenario {
  return {
    key: `export_absences_${format}`,
    label: `GET /api/absences/export/?format=${format} (RH n1, every absence)`,
    target: 'export',
    goal: 'export',
    connections: 1,
    prepare: async (ctx) => {
      const token = tokenFor(ctx, ctx.rh1.account_id);
      const { rows } = await ctx.db.query<{ n: number }>('select count(*)::int as n from app_public.absences');
      return { next: () => ({ method: 'GET', path: `/api/absences/export/?format=${format}`, token }), note: `${rows[0]!.n} absences` };
    },
  };
}

export const SCENARIOS: Scenario[] = [
  {
    key: 'me',
    label: 'GET /api/auth/me/',
    target: 'api',
    goal: 'interactive',
    prepare: async (ctx) => {
      const token = tokenFor(ctx, ctx.admin.account_id);
      return { next: () => ({ method: 'GET', path: '/api/auth/me/', token }) };
    },
  },
  {
    key: 'bare_me',
    label: 'bare node:http + pg, same read (1 message)',
    target: 'bare',
    goal: 'baseline',
    prepare: async (ctx) => ({ next: () => ({ method: 'GET', path: `/me?account=${ctx.admin.account_id}` }) }),
  },
  {
    key: 'bare_me_hit',
    label: 'bare node:http + pg, same read and the rate-limit hit (1 message)',
    target: 'bare',
    goal: 'baseline',
    prepare: async (ctx) => ({ next: () => ({ method: 'GET', path: `/me-hit?account=${ctx.admin.account_id}` }) }),
  },
  {
    key: 'bare_express_me_hit',
    label: 'Express with that one route, same read and the rate-limit hit (1 message)',
    target: 'bare',
    goal: 'baseline',
    prepare: async (ctx) => ({ next: () => ({ method: 'GET', path: `/express/me-hit?account=${ctx.admin.account_id}` }) }),
  },
  {
    key: 'graphql_me',
    label: 'PostGraphile POST /graphql { me }',
    target: 'graphql',
    goal: 'baseline',
    prepare: async (ctx) => {
      // /graphql takes no bearer token: a back-office session of the Admin (staff) past its
      // second factor, opened in the database as the TOTP step opens it, with its CSRF token.
      const session = BackofficeSecrets.newSessionToken();
      await ctx.db.query("select app_private.backoffice_session_open($1, $2, 'full', 'totp')",
        [BackofficeSecrets.tokenHash(session), ctx.admin.account_id]);
      const csrf = new BackofficeSecrets(ctx.jwtSecret).csrfToken(session);
      const headers = {
        cookie: `${SESSION_COOKIE}=${encodeURIComponent(session)}; ${CSRF_COOKIE}=${encodeURIComponent(csrf)}`,
        [CSRF_HEADER]: csrf,
      };
      return { next: () => ({ method: 'POST', path: '/graphql', headers, body: { query: '{ me }' } }) };
    },
  },
  { key: 'pgbench_me', label: 'pgbench: app_public.me() (same transaction)', target: 'pgbench', goal: 'baseline' },
  {
    key: 'queue_rh',
    label: 'GET /api/absences/?status=pending (RH n1, whole association)',
    target: 'api',
    goal: 'interactive',
    prepare: async (ctx) => {
      const token = tokenFor(ctx, ctx.rh1.account_id);
      return { next: () => ({ method: 'GET', path: '/api/absences/?status=pending', token }) };
    },
  },
  {
    key: 'queue_manager',
    label: 'GET /api/absences/?status=pending (Manager n1, one establishment)',
    target: 'api',
    goal: 'interactive',
    prepare: async (ctx) => {
      const managers = [...ctx.managersN1.values()].map((account) => tokenFor(ctx, account));
      return { next: cycle(managers, (token) => ({ method: 'GET', path: '/api/absences/?status=pending', token })) };
    },
  },
  {
    key: 'absence_detail',
    label: 'GET /api/absences/<id>/ (Manager n1, its perimeter)',
    target: 'api',
    goal: 'interactive',
    prepare: async (ctx) => {
      const { rows } = await ctx.db.query<{ id: number; establishment_idx: number }>(
        `select a.id, b.establishment_idx from app_public.absences a join bench.employees b on b.id = a.employee_id
         order by bench.rnd(a.id) limit 5000`,
      );
      return {
        next: cycle(rows, (row) => ({
          method: 'GET',
          path: `/api/absences/${row.id}/`,
          token: tokenFor(ctx, ctx.managersN1.get(row.establishment_idx)!),
        })),
      };
    },
  },
  {
    // A month of 200 employees is a report (some 6 000 cells, 2.5 MB) a manager opens: its
    // latency (the p50 target) is measured one request at a time, its throughput with 10
    // connections (the next phase).
    key: 'planning',
    label: 'GET /api/planning/ one month, 200-employee perimeter (Manager n2)',
    target: 'api',
    goal: 'planning',
    connections: 1,
    prepare: planningRequests,
  },
  {
    key: 'planning_c10',
    label: 'GET /api/planning/ one month, 200 employees, 10 connections',
    target: 'api',
    goal: 'throughput',
    prepare: planningRequests,
  },
  {
    // The team month's compact grid (issue 29 point 6): the same month, perimeter and manager as
    // planning_c10, what the team planning screen reads since.
    key: 'planning_grid_c10',
    label: 'GET /api/planning/grid/ one month, 200 employees, 10 connections (team month, compact)',
    target: 'api',
    goal: 'throughput',
    prepare: planningGridRequests,
  },
  {
    key: 'planning_establishment',
    label: 'GET /api/planning/?establishment= one month (team planning screen, Manager n2)',
    target: 'api',
    goal: 'planning',
    connections: 1,
    prepare: teamPlanningRequests,
  },
  {
    key: 'counters',
    label: 'GET /api/counters/?employee= (Manager n1, its perimeter)',
    target: 'api',
    goal: 'interactive',
    prepare: async (ctx) => ({
      next: cycle(ctx.employees, (e) => ({
        method: 'GET',
        path: `/api/counters/?employee=${e.id}`,
        token: tokenFor(ctx, ctx.managersN1.get(e.establishment_idx)!),
      })),
    }),
  },
  {
    key: 'absence_create',
    label: 'POST /api/absences/ (employee, 1 day of CP, all rules)',
    target: 'api',
    goal: 'interactive',
    prepare: async (ctx) => {
      return slotWrites(ctx, 'absenceSlot', (slot) => ({
        method: 'POST',
        path: '/api/absences/',
        token: tokenFor(ctx, slot.employee.account_id),
        body: { employee: slot.employee.id, type: ctx.cpTypeId, date_start: slot.day, comment: 'Congé posé par le banc d’essai' },
      }));
    },
  },
  { key: 'pgbench_absence_create', label: 'pgbench: app_public.absence_create (same transaction)', target: 'pgbench', goal: 'baseline' },
  // The same rows written without any rule (bench/pgbench/absence_create_floor.sql).
  { key: 'pgbench_absence_floor', label: 'pgbench: the rows of a creation without rules (floor)', target: 'pgbench', goal: 'baseline' },
  {
    key: 'absence_validate',
    label: 'POST /api/absences/<id>/validate/ (Manager n1, distinct pending requests)',
    target: 'api',
    goal: 'interactive',
    prepare: async (ctx) => {
      const { rows } = await ctx.db.query<{ id: number; version: number; decider: number }>(
        `select a.id, a.version, d.account_id as decider
         from app_public.absences a
         join bench.employees b on b.id = a.employee_id
         join bench.deciders d on d.establishment_idx = b.establishment_idx
                              and d.local_idx = case when b.local_idx = 0 then 1 else 0 end
         where a.status = 'pending' and a.author_account_id = b.account_id
         order by bench.rnd(a.id)`,
      );
      return {
        supply: rows.length,
        next: once(rows, (row) => ({
          method: 'POST',
          path: `/api/absences/${row.id}/validate/`,
          token: tokenFor(ctx, row.decider),
          body: { version: row.version },
        })),
      };
    },
  },
  {
    key: 'shift_change_create',
    label: 'POST /api/shift-change-requests/ (employee, own day)',
    target: 'api',
    goal: 'interactive',
    prepare: async (ctx) => {
      return slotWrites(ctx, 'shiftSlot', (slot) => ({
        method: 'POST',
        path: '/api/shift-change-requests/',
        token: tokenFor(ctx, slot.employee.account_id),
        body: { date: slot.day, reason: 'demande_personnelle', comment: 'Rendez-vous', slots: [{ start_time: '07:45', end_time: '15:15' }] },
      }));
    },
  },
  {
    key: 'shift_change_validate',
    label: 'POST /api/shift-change-requests/<id>/validate/ (Manager n1, the requests just filed first)',
    target: 'api',
    goal: 'interactive',
    prepare: async (ctx) => {
      const { rows } = await ctx.db.query<{ id: number; version: number; decider: number }>(
        `select r.id, r.version, d.account_id as decider
         from app_public.shift_change_requests r
         join bench.employees b on b.id = r.employee_id
         join bench.deciders d on d.establishment_idx = b.establishment_idx
                              and d.local_idx = case when b.local_idx = 0 then 1 else 0 end
         where r.status = 'pending'
         order by r.date >= $1::date desc, r.id`,
        [ctx.windows.writes_from],
      );
      return {
        supply: rows.length,
        next: once(rows, (row) => ({
          method: 'POST',
          path: `/api/shift-change-requests/${row.id}/validate/`,
          token: tokenFor(ctx, row.decider),
          body: { version: row.version },
        })),
      };
    },
  },
  {
    key: 'login',
    label: 'POST /api/auth/token/ (argon2id verify, CPU-bound)',
    target: 'api',
    goal: 'cpu',
    prepare: async (ctx) => ({
      next: cycle(ctx.employees, (e) => ({ method: 'POST', path: '/api/auth/token/', body: { username: e.username, password: BENCH_PASSWORD } })),
    }),
  },
  absenceExport('csv'),
  absenceExport('xlsx'),
];
