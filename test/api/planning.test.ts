/**
 * GET /api/planning/ over HTTP: window, branch by directory permission, the blocks of a
 * cell (template, day modification, granted absences, pending requests, on-call), and a
 * month for a 200-employee perimeter.
 */
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

/** Id of a fixture key (test/fixtures/organisation.json). */
function fixture(section: string, key: string): number {
  const value = env.ids[section]?.[key];
  if (value === undefined) throw new Error(`no fixture id ${section}.${key}`);
  return value;
}

const BLOCK_KEYS = ['absence', 'break_end_time', 'break_paid', 'break_start_time', 'comment', 'end_time', 'establishment',
  'is_offsite', 'is_remote', 'kind', 'minutes', 'modified', 'on_call', 'pending_request', 'post', 'post_code', 'post_label',
  'start_time'];

async function planning(username: string, query = '') {
  const res = await env.get(`/api/planning/${query}`, await env.login(username));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

function blocksOf(body: any, employee: number, date: string): any[] {
  return body.cells.find((c: any) => c.employee === employee && c.date === date)!.blocks;
}

async function absence(employee: number, code: string, start: string, end: string, status: string,
                       halves: { start?: string; end?: string } = {}, hours?: [string, string]) {
  const { rows } = await env.db.query<{ id: number }>(
    `insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, start_time, end_time, status)
     values ($1, (select id from app_public.absence_types where code = $2), $3, $4, $5, $6, $7, $8, $9) returning id`,
    [employee, code, start, end, halves.start ?? null, halves.end ?? null, hours?.[0] ?? null, hours?.[1] ?? null, status],
  );
  return rows[0]!.id;
}

describe('GET /api/planning/', () => {
  it('without from/to: the caller\'s current week, cells with blocks as the CONTRACT says', async () => {
    const body = await planning('alice');
    expect(body.from).toBe('2026-11-16');
    expect(body.to).toBe('2026-11-22');
    expect(body.employees).toEqual([{ id: fixture('employees', 'alice'), name: 'Alice Martin', first_name: 'Alice', last_name: 'Martin',
                                      main_establishment: fixture('establishments', 'E1') }]);
    expect(body.cells.map((c: any) => c.date)).toEqual(
      ['2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21', '2026-11-22']);
    const monday = blocksOf(body, fixture('employees', 'alice'), '2026-11-16');
    expect(monday).toHaveLength(1);
    expect(Object.keys(monday[0]).sort()).toEqual(BLOCK_KEYS);
    expect(monday[0]).toMatchObject({
      kind: 'work', post: fixture('posts', 'E1-J'), post_code: 'J', post_label: 'Journée', establishment: fixture('establishments', 'E1'),
      start_time: '09:00', end_time: '17:00', break_start_time: '12:00', break_end_time: '12:30', break_paid: false,
      minutes: 450, modified: false, absence: null, pending_request: null, on_call: [],
    });
    expect(blocksOf(body, fixture('employees', 'alice'), '2026-11-21')).toMatchObject([{ kind: 'rest', minutes: 0, absence: null }]);
  });

  it('the employee\'s own week carries the on-call periods of their teams', async () => {
    const body = await planning('alice');
    expect(blocksOf(body, fixture('employees', 'alice'), '2026-11-19')[0].on_call).toEqual([]);
    const friday = blocksOf(body, fixture('employees', 'alice'), '2026-11-20')[0].on_call;
    expect(friday).toEqual([{
      id: expect.any(Number), account: fixture('accounts', 'mgr3'), name: 'Paul Fontaine',
      start: '2026-11-20T18:00:00+01:00', end: '2026-11-23T08:00:00+01:00', establishments: [fixture('establishments', 'E1')],
      comment: 'Astreinte du week-end',
    }]);
    expect(blocksOf(body, fixture('employees', 'alice'), '2026-11-22')[0].on_call).toHaveLength(1);
    const david = await planning('david');
    expect(david.cells.every((c: any) => c.blocks[0].on_call.length === 0)).toBe(true);
  });

  it('the branch depends on the directory permission, never on the perimeter size', async () => {
    const names = (body: any) => body.employees.map((e: any) => e.name);
    expect(names(await planning('paie'))).toEqual(['Isabelle Girard']);
    expect(names(await planning('emma'))).toEqual(['Emma Faure']);
    const mgr1 = await planning('mgr1');
    expect(names(mgr1)).toEqual(['Chloé Bernard', 'Claire Dubois', 'Emma Faure', 'Hélène Garnier', 'Isabelle Girard',
      'Bruno Lambert', 'Alice Martin', 'Antoine Moreau', 'Julien Petit']);
    expect(mgr1.cells).toHaveLength(9 * 7);
    expect(names(await planning('mgr3'))).toEqual(['Paul Fontaine', 'David Mercier']);
    expect(names(await planning('da'))).toContain('Alice Martin');
    expect((await planning('admin')).employees).toHaveLength(Object.keys(env.ids.employees!).length);
    expect((await planning('staff')).employees).toEqual([]);
  });

  it('employee narrows to one readable employee; anyone else answers 404', async () => {
    const bruno = await planning('mgr1', `?employee=${fixture('employees', 'bruno')}`);
    expect(bruno.employees.map((e: any) => e.id)).toEqual([fixture('employees', 'bruno')]);
    expect(blocksOf(bruno, fixture('employees', 'bruno'), '2026-11-16')[0]).toMatchObject({ post_code: 'N', start_time: '21:00', end_time: '07:00', minutes: 600 });
    expect(blocksOf(bruno, fixture('employees', 'bruno'), '2026-11-19')[0].kind).toBe('rest');
    for (const [username, employee] of [['mgr1', 'david'], ['alice', 'chloe'], ['mgr2', 'alice']] as const) {
      const res = await env.get(`/api/planning/?employee=${fixture('employees', employee)}`, await env.login(username));
      expect(res.status, `${username} → ${employee}`).toBe(404);
    }
  });

  it('establishment and team narrow the perimeter (never widen it); the holidays of the window come along', async () => {
    const names = (body: any) => body.employees.map((e: any) => e.name).sort();
    const november = '?from=2026-11-01&to=2026-11-30';
    const e2 = await planning('rh1', `${november}&establishment=${fixture('establishments', 'E2')}`);
    expect(names(e2)).toEqual(['Bruno Lambert', 'Chloé Bernard', 'Gaëlle Chevalier', 'Nadia Roux', 'Sophie Lefèvre'].sort());
    expect(e2.cells).toHaveLength(5 * 30);
    expect(names(await planning('rh1', `${november}&team=${fixture('teams', 'T1')}`))).toEqual(['Alice Martin']);
    expect(names(await planning('mgr1', `${november}&establishment=${fixture('establishments', 'E3')}`))).toEqual([]);
    expect(names(await planning('alice', `${november}&establishment=${fixture('establishments', 'E2')}`))).toEqual([]);
    expect(e2.holidays).toEqual([{ date: '2026-11-01', name: 'Toussaint' }, { date: '2026-11-11', name: 'Armistice 1918' }]);
    const bad = await env.get('/api/planning/?team=abc', await env.login('rh1'));
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toEqual(['team']);
  });

  it('400 under to: reversed window or more than 62 days; 400 on a malformed date; 401 without authentication', async () => {
    const token = await env.login('alice');
    let res = await env.get('/api/planning/?from=2026-11-20&to=2026-11-19', token);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['to']);
    res = await env.get('/api/planning/?from=2026-11-01&to=2027-01-02', token);
    expect(res.status).toBe(400);
    expect(res.body.to[0]).toMatch(/62 jours/);
    res = await env.get('/api/planning/?from=2026-11-01&to=2027-01-01', token);
    expect(res.status).toBe(200);
    expect(res.body.cells).toHaveLength(62);
    res = await env.get('/api/planning/?from=16/11/2026', token);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['from']);
    res = await env.get('/api/planning/?employee=abc', token);
    expect(res.status).toBe(400);
    expect((await env.get('/api/planning/')).status).toBe(401);
  });

  it('granted absences prevail; a half-day absence gives two blocks; pending requests show as pending_request', async () => {
    const alice = fixture('employees', 'alice');
    const whole = await absence(alice, 'CP', '2026-11-23', '2026-11-23', 'validated');
    const morning = await absence(alice, 'MAL', '2026-11-24', '2026-11-24', 'validated', { start: 'morning', end: 'morning' });
    const cancelling = await absence(alice, 'MAL', '2026-11-25', '2026-11-25', 'cancellation_requested', { start: 'afternoon', end: 'afternoon' });
    const pending = await absence(alice, 'CP', '2026-11-26', '2026-11-26', 'pending');
    await absence(alice, 'CP', '2026-11-27', '2026-11-27', 'refused');
    await absence(alice, 'DON', '2026-11-30', '2026-11-30', 'validated', {}, ['14:00', '15:30']);
    const request = await env.post('/api/shift-change-requests/', await env.login('alice'), { date: '2026-12-01', reason: 'urgence', is_remote: true });
    expect(request.status).toBe(201);

    const body = await planning('mgr1', `?from=2026-11-23&to=2026-12-01&employee=${alice}`);
    const day = (date: string) => blocksOf(body, alice, date);
    expect(day('2026-11-23')).toHaveLength(1);
    expect(day('2026-11-23')[0]).toMatchObject({ kind: 'absence', post: null, minutes: null, pending_request: null });
    expect(day('2026-11-23')[0].absence).toMatchObject({ id: whole, type_code: 'CP', date_start: '2026-11-23', date_end: '2026-11-23',
                                                        start_half: null, end_half: null, part: 'day' });
    expect(day('2026-11-24').map((b) => b.kind)).toEqual(['absence', 'work']);
    expect(day('2026-11-24')[0].absence).toMatchObject({ id: morning, start_half: 'morning', end_half: 'morning', part: 'morning' });
    expect(day('2026-11-24')[1].absence).toBeNull();
    expect(day('2026-11-25').map((b) => b.kind)).toEqual(['work', 'absence']);
    expect(day('2026-11-25')[1].pending_request).toEqual({ kind: 'absence', id: cancelling, is_cancellation: true });
    expect(day('2026-11-25')[0].pending_request).toBeNull();
    expect(day('2026-11-26')).toMatchObject([{ kind: 'work', absence: null, pending_request: { kind: 'absence', id: pending, is_cancellation: false } }]);
    expect(day('2026-11-27')).toMatchObject([{ kind: 'work', absence: null, pending_request: null }]);
    expect(day('2026-11-30').map((b) => [b.kind, b.start_time, b.minutes])).toEqual([['work', '09:00', 450], ['absence', '14:00', 90]]);
    expect(day('2026-12-01')[0].pending_request).toEqual({ kind: 'shift_change', id: request.body.id, is_cancellation: false });

    // The employee reads the same cells of their own planning.
    const own = await planning('alice', '?from=2026-11-23&to=2026-12-01');
    expect(own.cells).toEqual(body.cells);
  });

  it('an answer cut in parts where a 64 KiB boundary falls inside a character arrives whole', async () => {
    // The route sends planning_read_chunks' parts as they come; the driver reads each value as
    // UTF-8 text before handing its bytes over, so a part ending in the middle of a character
    // became replacement characters. RH n1, 53 days: byte 196 608 of the text is inside one.
    const client = await env.db.connect();
    let text: string;
    try {
      await client.query('begin');
      await client.query("select app_private.begin_request((select id from app_public.accounts where username = 'rh1'))");
      await client.query('set local role wfm_visitor');
      text = (await client.query<{ t: string }>("select app_public.planning_read_text('2026-11-30', '2027-01-21') as t")).rows[0]!.t;
    } finally {
      await client.query('rollback');
      client.release();
    }
    const bytes = Buffer.from(text);
    const inside = (at: number) => at < bytes.length && (bytes[at]! & 0xc0) === 0x80;
    expect(Array.from({ length: Math.floor(bytes.length / 65536) }, (_, i) => (i + 1) * 65536).some(inside)).toBe(true);
    const res = await env.get('/api/planning/?from=2026-11-30&to=2027-01-21', await env.login('rh1'));
    expect(res.status).toBe(200);
    expect(res.text.includes('\uFFFD')).toBe(false);
    expect(res.bytes.equals(bytes)).toBe(true);
    // Compressed (the client accepts it), the length is the transfer's; otherwise the text's.
    if (res.headers.get('content-encoding')) expect(res.headers.get('content-length')).toBeNull();
    else expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
  });

  it('a month for a 200-employee perimeter in one call', async () => {
    const agents = await addAgents(env.db, {
      establishment: fixture('establishments', 'E1'), evenPost: fixture('posts', 'E1-J'), oddPost: fixture('posts', 'E1-M'),
      lastName: 'Charge', team: fixture('teams', 'T1'),
    });
    await addLeaveWeek(env.db, agents);

    const token = await env.login('mgr1');
    const res = await env.get('/api/planning/?from=2026-12-01&to=2026-12-31', token);
    expect(res.status).toBe(200);
    expect(res.body.employees).toHaveLength(200);
    expect(res.body.cells).toHaveLength(200 * 31);
    const someone = res.body.employees.find((e: any) => e.name === 'Agent Charge 010').id;
    const monday = blocksOf(res.body, someone, '2026-12-07')[0];
    expect(monday.kind).toBe(someone % 5 === 0 ? 'absence' : 'work');
    expect(blocksOf(res.body, someone, '2026-12-05')[0].kind).toBe('rest');
  });
});
