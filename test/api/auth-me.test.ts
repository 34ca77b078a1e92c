/**
 * GET /api/auth/me/ (CONTRACT section 2, SPEC "Account"): id, username, employee_id, the
 * displayed role (fixed precedence among the roles actually held today, absent when none)
 * and four interface booleans.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const FLAGS = ['can_view_absence_queue', 'can_decide_absences', 'can_decide_shift_changes', 'can_view_payroll'] as const;
// can_impersonate is false for everyone here: impersonation is off (test/api/impersonation.test.ts turns it on).
// can_delegate_absences / can_delegate_shift_changes: the decisions held by the account itself
// (issue 30); without any delegation in the fixture they equal the two decision flags.
const KEYS = ['id', 'username', 'employee_id', 'display_name', 'roles', 'role', 'can_impersonate', 'can_delegate_absences', 'can_delegate_shift_changes', ...FLAGS].sort();

type Expected = { role: string | null; flags: [boolean, boolean, boolean, boolean]; employee: boolean };

/** Every fixture account: role shown and [queue, decide absences, decide shift changes, payroll]. */
const EXPECTED: Record<string, Expected> = {
  root: { role: null, flags: [true, true, true, true], employee: false },
  staff: { role: null, flags: [false, false, false, false], employee: false },
  admin: { role: 'Admin', flags: [true, true, true, true], employee: true },
  rh1: { role: 'RH n1', flags: [true, true, true, true], employee: true },
  rh2: { role: 'RH n2', flags: [true, true, true, true], employee: true },
  da: { role: 'DA', flags: [true, false, false, false], employee: true },
  mgr1: { role: 'Manager n1', flags: [true, true, true, false], employee: true },
  mgr2: { role: 'Manager n2', flags: [true, true, true, false], employee: true },
  mgr3: { role: 'Manager n1', flags: [true, true, true, false], employee: true },
  // CONTRACT section 2: precedence is the order of the list, where Salarié comes before Service Paie.
  paie: { role: 'Salarié', flags: [false, false, false, true], employee: true },
  alice: { role: 'Salarié', flags: [false, false, false, false], employee: true },
  bruno: { role: 'Salarié', flags: [false, false, false, false], employee: true },
  chloe: { role: 'Salarié', flags: [false, false, false, false], employee: true },
  david: { role: 'Salarié', flags: [false, false, false, false], employee: true },
  emma: { role: 'Salarié', flags: [false, false, false, false], employee: true },
  farid: { role: 'Salarié', flags: [false, false, false, false], employee: true },
  gaelle: { role: 'Salarié', flags: [false, false, false, false], employee: true },
  // Each role held by an account without employee record (restricted to E3 where it can be).
  admin_noemp: { role: 'Admin', flags: [true, true, true, true], employee: false },
  rh1_noemp: { role: 'RH n1', flags: [true, true, true, true], employee: false },
  rh2_noemp: { role: 'RH n2', flags: [true, true, true, true], employee: false },
  da_noemp: { role: 'DA', flags: [true, false, false, false], employee: false },
  mgr1_noemp: { role: 'Manager n1', flags: [true, true, true, false], employee: false },
  mgr2_noemp: { role: 'Manager n2', flags: [true, true, true, false], employee: false },
  salarie_noemp: { role: 'Salarié', flags: [false, false, false, false], employee: false },
  interim_noemp: { role: 'Intérimaire', flags: [false, false, false, false], employee: false },
  paie_noemp: { role: 'Service Paie', flags: [false, false, false, true], employee: false },
};

async function me(username: string) {
  const res = await env.get('/api/auth/me/', await env.login(username));
  expect(res.status).toBe(200);
  return res.body;
}

async function grant(username: string, role: string, start: string | null, end: string | null): Promise<number> {
  const { rows } = await env.db.query<{ id: number }>(
    `insert into app_public.role_attributions (account_id, role_id, start_date, end_date)
     select $1, r.id, $3, $4 from app_public.roles r where r.name = $2 returning id`,
    [env.ids.accounts![username], role, start, end],
  );
  return rows[0]!.id;
}

describe('GET /api/auth/me/', () => {
  it('covers every fixture account', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(Object.keys(env.ids.accounts!).sort());
  });

  for (const [username, expected] of Object.entries(EXPECTED)) {
    it(`${username}: ${expected.role ?? 'no role'}, flags ${expected.flags.join('/')}`, async () => {
      const body = await me(username);
      expect(Object.keys(body).sort()).toEqual(expected.role ? KEYS : KEYS.filter((k) => k !== 'role'));
      expect(body.id).toBe(env.ids.accounts![username]);
      expect(body.username).toBe(username);
      expect(body.employee_id).toBe(expected.employee ? env.ids.employees![username] : null);
      if (expected.role) expect(body.role).toBe(expected.role);
      else expect(body).not.toHaveProperty('role');
      // roles: every role held, in precedence, the shown role first; display_name: the person, else the username.
      expect(body.roles[0] ?? null).toBe(expected.role);
      if (!expected.employee) expect(body.display_name).toBe(username);
      else expect(body.display_name).not.toBe(username);
      expect(FLAGS.map((flag) => body[flag])).toEqual(expected.flags);
      expect(body.can_impersonate).toBe(false);
      expect([body.can_delegate_absences, body.can_delegate_shift_changes]).toEqual([expected.flags[1], expected.flags[2]]);
    });
  }

  it('roles names every role held: the payroll account is « Salarié » and « Service Paie », with its person’s name', async () => {
    const paie = await me('paie');
    expect(paie.roles).toEqual(['Salarié', 'Service Paie']);
    const { rows } = await env.db.query<{ name: string }>(
      "select first_name || ' ' || last_name as name from app_public.employees where id = $1", [env.ids.employees!.paie]);
    expect(paie.display_name).toBe(rows[0]!.name);
    expect((await me('mgr1')).roles).toEqual(['Manager n1', 'Salarié']);
    expect((await me('root')).roles).toEqual([]);
  });

  it('employee accounts, including Intérimaire, show Salarié: it precedes Intérimaire', async () => {
    // emma holds Salarié (granted when the account was opened) and Intérimaire.
    const { rows } = await env.db.query<{ name: string }>(
      `select r.name from app_public.role_attributions ra join app_public.roles r on r.id = ra.role_id
       where ra.account_id = $1 order by r.name`,
      [env.ids.accounts!.emma],
    );
    expect(rows.map((r) => r.name)).toEqual(['Intérimaire', 'Salarié']);
    expect((await me('emma')).role).toBe('Salarié');
  });

  it('an account holding Manager n1 and Salarié shows Manager n1', async () => {
    const { rows } = await env.db.query<{ name: string }>(
      `select r.name from app_public.role_attributions ra join app_public.roles r on r.id = ra.role_id
       where ra.account_id = $1 order by r.precedence`,
      [env.ids.accounts!.mgr1],
    );
    expect(rows.map((r) => r.name)).toEqual(['Manager n1', 'Salarié']);
    expect((await me('mgr1')).role).toBe('Manager n1');
  });

  it('an account holding RH n2 and DA shows RH n2, whatever the order of attribution', async () => {
    const id = await grant('rh2', 'DA', null, null);
    try {
      const body = await me('rh2');
      expect(body.role).toBe('RH n2');
      expect(body.can_decide_absences).toBe(true);
    } finally {
      await env.db.query('delete from app_public.role_attributions where id = $1', [id]);
    }
    // And the other way round: DA first, RH n2 granted later.
    const da = await grant('da', 'RH n2', null, null);
    try {
      expect((await me('da')).role).toBe('RH n2');
    } finally {
      await env.db.query('delete from app_public.role_attributions where id = $1', [da]);
    }
  });

  it('a role whose end_date is past no longer shows, nor opens its permissions', async () => {
    // Today is 2026-11-16: Manager n1 ended yesterday.
    const ended = await grant('alice', 'Manager n1', '2026-01-01', '2026-11-15');
    try {
      const body = await me('alice');
      expect(body.role).toBe('Salarié');
      expect(FLAGS.map((flag) => body[flag])).toEqual([false, false, false, false]);
    } finally {
      await env.db.query('delete from app_public.role_attributions where id = $1', [ended]);
    }
  });

  it('a role ending today still shows; one starting tomorrow does not yet', async () => {
    const endsToday = await grant('bruno', 'Manager n2', '2026-01-01', '2026-11-16');
    try {
      const body = await me('bruno');
      expect(body.role).toBe('Manager n2');
      expect(body.can_decide_shift_changes).toBe(true);
    } finally {
      await env.db.query('delete from app_public.role_attributions where id = $1', [endsToday]);
    }
    const startsTomorrow = await grant('bruno', 'Admin', '2026-11-17', null);
    try {
      expect((await me('bruno')).role).toBe('Salarié');
      // The frozen clock moves: tomorrow the role is held.
      env.setNow('2026-11-17T08:00:00+01:00');
      const tomorrow = await me('bruno');
      expect(tomorrow.role).toBe('Admin');
      expect(tomorrow.can_view_payroll).toBe(true);
    } finally {
      env.setNow('2026-11-16T10:00:00+01:00');
      await env.db.query('delete from app_public.role_attributions where id = $1', [startsTomorrow]);
    }
  });

  it('an account without any role (all roles ended) has no role key', async () => {
    await env.db.query("update app_public.role_attributions set end_date = '2026-11-01', start_date = '2026-01-01' where account_id = $1",
      [env.ids.accounts!.farid]);
    const body = await me('farid');
    expect(body).not.toHaveProperty('role');
    expect(body.employee_id).toBe(env.ids.employees!.farid);
  });

  it('an explicit permission alone opens its hint (audit is not one of them)', async () => {
    await env.db.query(
      "insert into app_public.account_permissions (account_id, permission_code) values ($1, 'employee.view_payroll')",
      [env.ids.accounts!.staff],
    );
    const body = await me('staff');
    expect(FLAGS.map((flag) => body[flag])).toEqual([false, false, false, true]);
    expect(body).not.toHaveProperty('role');
  });

  it('answers 401 without a token', async () => {
    const res = await env.get('/api/auth/me/');
    expect(res.status).toBe(401);
    expect(Object.keys(res.body)).toEqual(['detail']);
  });
});
