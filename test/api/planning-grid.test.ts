/**
 * GET /api/planning/grid/ over HTTP (issue 29 point 6): the team month's compact grid. Its shape
 * (the response contract checks every answer against the OpenAPI schema), what it draws (expanded
 * back, the blocks of GET /api/planning/ as the grid shows them), the perimeter and the filters,
 * 401, the errors keyed by field, and a 200-employee month a fraction of the full read's size.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAgents, addLeaveWeek } from '../helpers/large-perimeter.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

function fixture(section: string, key: string): number {
  const value = env.ids[section]?.[key];
  if (value === undefined) throw new Error(`no fixture id ${section}.${key}`);
  return value;
}

async function read(path: string, username: string) {
  const res = await env.get(path, await env.login(username));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const addDays = (iso: string, days: number) => {
  const date = new Date(`${iso}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
};

/** What the grid draws of a block of GET /api/planning/. */
function drawnOf(block: any) {
  return {
    kind: block.kind,
    post_code: block.kind === 'work' ? block.post_code : null,
    post_label: block.kind === 'work' ? block.post_label : null,
    reason_code: block.absence?.type_code ?? null,
    reason_name: block.absence?.type_name ?? null,
    part: block.absence?.part ?? null,
    status: block.absence?.status ?? null,
    start_time: block.start_time,
    end_time: block.end_time,
    modified: block.modified,
    pending: block.pending_request ? (block.pending_request.is_cancellation ? 'cancellation' : 'request') : null,
  };
}

/** The grid expanded back: employee → date → the drawn blocks. */
function expand(grid: any): Map<number, Map<string, any[]>> {
  const out = new Map<number, Map<string, any[]>>();
  grid.rows.forEach((row: number[], index: number) => {
    const days = new Map<string, any[]>();
    row.forEach((cell, day) => {
      days.set(addDays(grid.from, day), grid.cells[cell].map((i: number) => {
        const block = grid.blocks[i];
        const post = block.post == null ? null : grid.posts[block.post];
        const reason = block.reason == null ? null : grid.reasons[block.reason];
        return {
          kind: block.kind, post_code: post?.code ?? null, post_label: post?.label ?? null,
          reason_code: reason?.code ?? null, reason_name: reason?.name ?? null, part: block.part, status: block.status,
          start_time: block.start_time, end_time: block.end_time, modified: block.modified, pending: block.pending,
        };
      }));
    });
    out.set(grid.employees[index].id, days);
  });
  return out;
}

/** The full read, as the grid would draw it. */
function drawn(planning: any): Map<number, Map<string, any[]>> {
  const out = new Map<number, Map<string, any[]>>();
  for (const employee of planning.employees) out.set(employee.id, new Map());
  for (const cell of planning.cells) out.get(cell.employee)!.set(cell.date, cell.blocks.map(drawnOf));
  return out;
}

async function absence(employee: number, code: string, start: string, end: string, status: string,
                       halves: { start?: string; end?: string } = {}, hours?: [string, string]) {
  await env.db.query(
    `insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, start_time, end_time, status)
     values ($1, (select id from app_public.absence_types where code = $2), $3, $4, $5, $6, $7, $8, $9)`,
    [employee, code, start, end, halves.start ?? null, halves.end ?? null, hours?.[0] ?? null, hours?.[1] ?? null, status],
  );
}

describe('GET /api/planning/grid/', () => {
  it('draws, cell by cell, what GET /api/planning/ gives the grid: absences, half-days, hours, pending requests, modified days', async () => {
    const alice = fixture('employees', 'alice');
    const bruno = fixture('employees', 'bruno');
    await absence(alice, 'CP', '2026-11-17', '2026-11-17', 'validated');
    await absence(alice, 'MAL', '2026-11-18', '2026-11-18', 'validated', { start: 'morning', end: 'morning' });
    await absence(alice, 'MAL', '2026-11-19', '2026-11-19', 'cancellation_requested', { start: 'afternoon', end: 'afternoon' });
    await absence(alice, 'DON', '2026-11-20', '2026-11-20', 'validated', {}, ['10:00', '11:30']);
    await absence(alice, 'CP', '2026-11-24', '2026-11-24', 'pending');
    await absence(bruno, 'CP', '2026-11-30', '2026-12-02', 'validated', { start: 'afternoon' });
    await env.db.query(
      `insert into app_public.day_modifications (employee_id, date, slots, comment)
       values ($1, '2026-11-23', array[row('07:00', '14:00', null, null, false, $2, $3, false)::app_public.slot], 'Remplacement'),
              ($4, '2026-11-25', '{}', 'Repos donné')`,
      [alice, fixture('posts', 'E1-M'), fixture('establishments', 'E1'), bruno]);
    await env.db.query(`insert into app_public.shift_change_requests (employee_id, date, reason) values ($1, '2026-11-27', 'urgence')`, [alice]);

    const query = '?from=2026-11-01&to=2026-11-30';
    const grid = await read(`/api/planning/grid/${query}`, 'mgr1');
    const planning = await read(`/api/planning/${query}`, 'mgr1');
    expect(Object.keys(grid)).toEqual(['from', 'to', 'employees', 'holidays', 'posts', 'reasons', 'blocks', 'cells', 'rows']);
    expect(grid.employees).toEqual(planning.employees.map((e: any) => ({ id: e.id, name: e.name })));
    expect(grid.holidays).toEqual(planning.holidays);
    expect(grid.rows.every((row: number[]) => row.length === 30)).toBe(true);
    expect(expand(grid)).toEqual(drawn(planning));
    // each post, reason, block and day once
    for (const list of [grid.posts, grid.reasons, grid.blocks, grid.cells]) {
      expect(new Set(list.map((item: unknown) => JSON.stringify(item))).size).toBe(list.length);
    }
    // a few cells read as the grid reads them
    const days = expand(grid).get(alice)!;
    expect(days.get('2026-11-18')!.map((b) => [b.kind, b.reason_code ?? b.post_code, b.part])).toEqual([['absence', 'MAL', 'morning'], ['work', 'J', null]]);
    expect(days.get('2026-11-19')!.map((b) => b.pending)).toEqual([null, 'cancellation']);
    expect(days.get('2026-11-24')!).toMatchObject([{ kind: 'work', pending: 'request' }]);
    expect(days.get('2026-11-23')!).toMatchObject([{ kind: 'work', post_code: 'M', modified: true, start_time: '07:00', end_time: '14:00' }]);
  });

  it('reads the perimeter of GET /api/planning/: never a row outside it; the filters narrow it; one\'s own row otherwise', async () => {
    const ids = (grid: any) => grid.employees.map((e: any) => e.id).sort((a: number, b: number) => a - b);
    const month = '?from=2026-11-01&to=2026-11-30';
    for (const username of ['mgr1', 'mgr2', 'rh1', 'mgr1_noemp', 'alice', 'paie']) {
      expect(ids(await read(`/api/planning/grid/${month}`, username)), username)
        .toEqual(ids(await read(`/api/planning/${month}`, username)));
    }
    expect(ids(await read(`/api/planning/grid/${month}`, 'mgr1'))).not.toContain(fixture('employees', 'david'));
    const e3 = ids(await read(`/api/planning/grid/${month}`, 'mgr1_noemp'));
    expect(e3).toContain(fixture('employees', 'david'));
    expect(e3).not.toContain(fixture('employees', 'alice'));
    expect(ids(await read(`/api/planning/grid/${month}`, 'alice'))).toEqual([fixture('employees', 'alice')]);
    const nobody = await read(`/api/planning/grid/${month}`, 'salarie_noemp');
    expect(nobody).toMatchObject({ employees: [], posts: [], reasons: [], blocks: [], cells: [], rows: [] });
    expect(ids(await read(`/api/planning/grid/${month}&establishment=${fixture('establishments', 'E3')}`, 'mgr1'))).toEqual([]);
    expect(ids(await read(`/api/planning/grid/${month}&team=${fixture('teams', 'T1')}`, 'rh1'))).toEqual([fixture('employees', 'alice')]);
  });

  it('401 without authentication or for a closed account; 400 keyed by field', async () => {
    expect((await env.get('/api/planning/grid/')).status).toBe(401);
    const token = await env.login('alice');
    const cases: Array<[string, string]> = [
      ['?from=2026-11-20&to=2026-11-19', 'to'],
      ['?from=2026-11-01&to=2027-01-02', 'to'],
      ['?from=16/11/2026', 'from'],
      ['?to=2026-02-30', 'to'],
      ['?establishment=abc', 'establishment'],
      ['?team=0', 'team'],
    ];
    for (const [query, field] of cases) {
      const res = await env.get(`/api/planning/grid/${query}`, token);
      expect(res.status, query).toBe(400);
      expect(Object.keys(res.body), query).toEqual([field]);
    }
    expect((await env.get('/api/planning/grid/?from=2026-11-01&to=2027-01-01', token)).body.rows[0]).toHaveLength(62);
    const week = await env.get('/api/planning/grid/', token);
    expect([week.body.from, week.body.to]).toEqual(['2026-11-16', '2026-11-22']);
    const closed = await env.login('farid');
    await env.db.query('update app_public.accounts set is_active = false where id = $1', [fixture('accounts', 'farid')]);
    expect((await env.get('/api/planning/grid/', closed)).status).toBe(401);
  });

  it('a month for a 200-employee perimeter: the same cells as the full read, in a fraction of its bytes', async () => {
    const agents = await addAgents(env.db, {
      establishment: fixture('establishments', 'E1'), evenPost: fixture('posts', 'E1-J'), oddPost: fixture('posts', 'E1-M'),
      lastName: 'Grille', team: fixture('teams', 'T1'),
    });
    await addLeaveWeek(env.db, agents);
    const token = await env.login('mgr1');
    const grid = await env.get('/api/planning/grid/?from=2026-12-01&to=2026-12-31', token);
    const planning = await env.get('/api/planning/?from=2026-12-01&to=2026-12-31', token);
    expect(grid.status).toBe(200);
    expect(grid.body.employees.length).toBeGreaterThanOrEqual(200);
    expect(expand(grid.body)).toEqual(drawn(planning.body));
    expect(grid.bytes.length * 20).toBeLessThan(planning.bytes.length);
    expect(gzipSync(grid.bytes).length).toBeLessThan(200 * 1024);
  });
});
