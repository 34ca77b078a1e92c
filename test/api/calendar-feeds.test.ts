import { Writable } from 'node:stream';
import ICAL from 'ical.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let E: Record<string, number>;
let absence: { whole: number; afternoon: number; david: number };
const REASON = 'Formation, séminaire; « interne » \\ avec un nom assez long pour que la ligne soit repliée à 75 octets';

/** The path of a feed address (the answers carry the public URL http://wfm.test). */
const feedPath = (url: string) => new URL(url).pathname;

async function createFeed(user: string, kind: 'planning' | 'perimeter'): Promise<string> {
  const response = await env.post('/api/calendar-feeds/', await env.login(user), { kind });
  expect(response.status).toBe(201);
  return feedPath(response.body.url);
}

/** Parses a feed with ical.js, registering its VTIMEZONE, and returns its events. */
function parse(text: string) {
  const calendar = new ICAL.Component(ICAL.parse(text));
  const zones = calendar.getAllSubcomponents('vtimezone');
  for (const zone of zones) ICAL.TimezoneService.register(new ICAL.Timezone(zone));
  const events = calendar.getAllSubcomponents('vevent').map((component) => new ICAL.Event(component));
  return { calendar, zones, events };
}

async function insertAbsence(employee: number, start: string, end: string, startHalf: string | null): Promise<number> {
  const { rows } = await env.db.query<{ id: number }>(
    `insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, status, version)
     values ($1, (select id from app_public.absence_types where code = 'FOR'), $2, $3, $4, 'validated', 2) returning id`,
    [employee, start, end, startHalf]);
  return rows[0]!.id;
}

beforeAll(async () => {
  env = await startTestEnv();
  E = env.ids.employees!;
  await env.db.query(`update app_public.absence_types set name = $1 where code = 'FOR'`, [REASON]);
  absence = {
    whole: await insertAbsence(E.alice!, '2026-12-01', '2026-12-02', null),
    afternoon: await insertAbsence(E.alice!, '2026-12-10', '2026-12-10', 'afternoon'),
    david: await insertAbsence(E.david!, '2026-12-01', '2026-12-01', null),
  };
});
afterAll(async () => {
  await env?.close();
});

describe('calendar feeds', () => {
  it('lists the kinds the account may hold', async () => {
    const alice = await env.get('/api/calendar-feeds/', await env.login('bruno'));
    expect(alice.status).toBe(200);
    expect(alice.body.feeds).toEqual([
      { kind: 'planning', label: 'Mon planning', allowed: true, active: false, created_at: null },
      { kind: 'perimeter', label: 'Absences de mon périmètre', allowed: false, active: false, created_at: null },
    ]);
    const refused = await env.post('/api/calendar-feeds/', await env.login('bruno'), { kind: 'perimeter' });
    expect(refused.status).toBe(403);
    expect((await env.post('/api/calendar-feeds/', await env.login('bruno'), { kind: 'agenda' })).status).toBe(400);
    expect((await env.get('/api/calendar-feeds/')).status).toBe(401);
  });

  it('my planning parses with ical.js: every event, the Paris time zone, escaped and folded text', async () => {
    const path = await createFeed('alice', 'planning');
    expect(path).toMatch(/^\/api\/feeds\/[0-9a-f]{64}\.ics$/);
    const response = await env.get(path);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    expect(response.text).toMatch(/^BEGIN:VCALENDAR\r\n/);
    expect(response.text.split('\r\n').every((line) => Buffer.byteLength(line) <= 75)).toBe(true);

    const { zones, events } = parse(response.text);
    expect(zones.map((zone) => zone.getFirstPropertyValue('tzid'))).toEqual(['Europe/Paris']);
    // Every VEVENT of the text is an event, with a unique UID.
    expect(events.length).toBe(response.text.match(/^BEGIN:VEVENT\r$/gm)!.length);
    expect(new Set(events.map((event) => event.uid)).size).toBe(events.length);

    const byUid = new Map(events.map((event) => [event.uid, event]));
    const whole = byUid.get(`absence-${absence.whole}@calendrier.wfm`)!;
    expect(whole.summary).toBe(REASON);
    expect(whole.startDate.isDate).toBe(true);
    expect(whole.startDate.toString()).toBe('2026-12-01');
    expect(whole.endDate.toString()).toBe('2026-12-03');
    expect(whole.sequence).toBe(1);
    const afternoon = byUid.get(`absence-${absence.afternoon}@calendrier.wfm`)!;
    expect(afternoon.startDate.isDate).toBe(false);
    expect(afternoon.startDate.zone?.tzid).toBe('Europe/Paris');
    expect(afternoon.startDate.toJSDate().toISOString()).toBe('2026-12-10T11:00:00.000Z');
    expect(byUid.has(`absence-${absence.david}@calendrier.wfm`)).toBe(false);

    // Worked slots, in local time (summer and winter offsets both resolved by the VTIMEZONE).
    const work = events.filter((event) => event.uid.startsWith('work-'));
    expect(work.length).toBeGreaterThan(100);
    const monday = work.find((event) => event.startDate.toString().startsWith('2026-11-16'))!;
    expect(monday.startDate.zone?.tzid).toBe('Europe/Paris');
    const local = monday.startDate.toString().slice(11, 16);
    const utcHour = monday.startDate.toJSDate().getUTCHours();
    expect(Number(local.slice(0, 2)) - utcHour).toBe(1);
    const june = work.find((event) => event.startDate.toString().startsWith('2027-06'))!;
    expect(Number(june.startDate.toString().slice(11, 13)) - june.startDate.toJSDate().getUTCHours()).toBe(2);
    // No worked slot on a day covered by a whole-day absence.
    expect(work.some((event) => event.startDate.toString().startsWith('2026-12-01'))).toBe(false);
  });

  it('UIDs and bodies are stable across reads; ETag and If-None-Match answer 304', async () => {
    const path = await createFeed('chloe', 'planning');
    const first = await env.get(path);
    const second = await env.get(path);
    expect(second.text).toBe(first.text);
    expect(parse(second.text).events.map((e) => e.uid)).toEqual(parse(first.text).events.map((e) => e.uid));
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(second.headers.get('etag')).toBe(etag);
    expect(first.headers.get('cache-control')).toBe('private, max-age=300');

    const notModified = await env.get(path, null, { headers: { 'if-none-match': etag } });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag);
    expect((await env.get(path, null, { headers: { 'if-none-match': '"autre"' } })).status).toBe(200);

    // A change of the owner's absences changes the body and its ETag.
    await insertAbsence(E.chloe!, '2027-01-05', '2027-01-05', null);
    const changed = await env.get(path, null, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('rotation and revocation: the old address answers 404', async () => {
    const token = await env.login('gaelle');
    const old = await createFeed('gaelle', 'planning');
    const again = await env.post('/api/calendar-feeds/', token, { kind: 'planning' });
    expect(again.status).toBe(400);
    expect(again.body.kind).toHaveLength(1);

    const rotated = await env.post('/api/calendar-feeds/planning/rotate/', token);
    expect(rotated.status).toBe(200);
    const fresh = feedPath(rotated.body.url);
    expect(fresh).not.toBe(old);
    expect((await env.get(old)).status).toBe(404);
    expect((await env.get(fresh)).status).toBe(200);

    expect((await env.delete('/api/calendar-feeds/planning/', token)).status).toBe(204);
    expect((await env.get(fresh)).status).toBe(404);
    expect((await env.delete('/api/calendar-feeds/planning/', token)).status).toBe(404);
    expect((await env.post('/api/calendar-feeds/planning/rotate/', token)).status).toBe(404);
    expect((await env.delete('/api/calendar-feeds/agenda/', token)).status).toBe(404);

    // Each write is audited, refusals are not; no line holds the hash of a secret.
    const audit = await env.get('/api/audit-log/?model=calendar_feed&actor=gaelle', await env.login('rh1'));
    expect(audit.status).toBe(200);
    const lines = [...audit.body.results].reverse();
    expect(lines.map((line: { verb: string }) => line.verb)).toEqual(['Creation', 'Modification', 'Suppression']);
    expect(JSON.stringify(lines)).not.toContain('token_hash');
    expect(lines[0].after.kind).toBe('planning');
  });

  it('unknown addresses and a closed owner answer 404', async () => {
    expect((await env.get(`/api/feeds/${'0'.repeat(64)}.ics`)).status).toBe(404);
    expect((await env.get('/api/feeds/abc.ics')).status).toBe(404);
    const path = await createFeed('emma', 'planning');
    await env.db.query(`update app_public.accounts set is_active = false where username = 'emma'`);
    try {
      expect((await env.get(path)).status).toBe(404);
    } finally {
      await env.db.query(`update app_public.accounts set is_active = true where username = 'emma'`);
    }
    expect((await env.get(path)).status).toBe(200);
  });

  it('perimeter feed: the decider reads the reason, the DA « Absent(e) », nobody outside the perimeter', async () => {
    const summaries = async (user: string) => {
      const response = await env.get(await createFeed(user, 'perimeter'));
      expect(response.status).toBe(200);
      return new Map(parse(response.text).events.map((event) => [event.uid, event.summary]));
    };
    const manager = await summaries('mgr1');
    expect(manager.get(`absence-${absence.whole}@calendrier.wfm`)).toBe(`Alice Martin – ${REASON}`);
    expect(manager.has(`absence-${absence.david}@calendrier.wfm`)).toBe(false);
    const da = await summaries('da');
    expect(da.get(`absence-${absence.whole}@calendrier.wfm`)).toBe('Alice Martin – Absent(e)');
    expect([...da.values()].some((summary) => summary.includes('Formation'))).toBe(false);
  });

  it('the secret never reaches the request log', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
    const app = await createApp(env.config, { logger: pino({ level: 'info' }, sink) });
    const running = await app.listen(0, '127.0.0.1');
    try {
      const path = await createFeed('david', 'planning');
      const secret = path.slice('/api/feeds/'.length, -'.ics'.length);
      expect((await fetch(`${running.url}${path}`)).status).toBe(200);
      expect((await fetch(`${running.url}/api/feeds/${'1'.repeat(64)}.ics?x=1`)).status).toBe(404);
      const log = lines.join('');
      expect(log).toContain('/api/feeds/[secret].ics');
      expect(log).not.toContain(secret);
      expect(log).not.toContain('1'.repeat(64));
    } finally {
      await running.close();
    }
  });
});
