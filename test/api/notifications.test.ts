import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withRequestTransaction } from '../../src/db/transaction.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let alice: string;
let bruno: string;
const ids: Record<string, number> = {};

async function notify(account: string, title: string, createdAt: string, level = 'info', readAt: string | null = null): Promise<number> {
  const { rows } = await env.db.query<{ id: string }>(
    `insert into app_public.notifications (account_id, title, body, level, created_at, read_at)
     values ($1, $2, $3, $4, $5, $6) returning id`,
    [env.ids.accounts![account], title, `Corps de « ${title} »`, level, createdAt, readAt],
  );
  return Number(rows[0]!.id);
}

beforeAll(async () => {
  env = await startTestEnv();
  alice = await env.login('alice');
  bruno = await env.login('bruno');
  ids.first = await notify('alice', 'Demande de modification validée', '2026-11-14T09:00:00+01:00');
  ids.second = await notify('alice', 'Demande d’absence refusée', '2026-11-15T09:00:00+01:00', 'error');
  ids.third = await notify('alice', 'Nouvelle demande d’absence', '2026-11-16T09:00:00+01:00', 'info', '2026-11-16T09:30:00+01:00');
  ids.bruno = await notify('bruno', 'Pour Bruno', '2026-11-16T09:00:00+01:00');
});
afterAll(async () => {
  await env?.close();
});

describe('GET /api/notifications/', () => {
  it('needs an account', async () => {
    expect((await env.get('/api/notifications/')).status).toBe(401);
  });

  it('lists the caller’s own notifications, newest first, in the list envelope', async () => {
    const res = await env.get('/api/notifications/', alice);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['count', 'next', 'previous', 'results']);
    expect(res.body.count).toBe(3);
    expect(res.body.next).toBeNull();
    expect(res.body.results.map((n: { id: number }) => n.id)).toEqual([ids.third, ids.second, ids.first]);
    expect(res.body.results[1]).toEqual({
      id: ids.second,
      title: 'Demande d’absence refusée',
      body: 'Corps de « Demande d’absence refusée »',
      level: 'error',
      created_at: '2026-11-15T09:00:00+01:00',
      read_at: null,
      // About nothing in particular: the recipient's own, and no address to open (issue 28).
      kind: 'own',
      path: null,
    });
    expect(res.body.results[0].read_at).toBe('2026-11-16T09:30:00+01:00');
  });

  it('never shows another account’s notifications', async () => {
    const res = await env.get('/api/notifications/', bruno);
    expect(res.body.count).toBe(1);
    expect(res.body.results[0].id).toBe(ids.bruno);
  });

  it('filters unread=true (and unread=false)', async () => {
    const unread = await env.get('/api/notifications/?unread=true', alice);
    expect(unread.status).toBe(200);
    expect(unread.body.results.map((n: { id: number }) => n.id)).toEqual([ids.second, ids.first]);
    const read = await env.get('/api/notifications/?unread=false', alice);
    expect(read.body.results.map((n: { id: number }) => n.id)).toEqual([ids.third]);
  });

  it('refuses a filter that is not a boolean, under its name', async () => {
    const res = await env.get('/api/notifications/?unread=peut-etre', alice);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ unread: ['Un booléen (true ou false) est attendu.'] });
  });

  it('paginates', async () => {
    const page1 = await env.get('/api/notifications/?page_size=2', alice);
    expect(page1.body.count).toBe(3);
    expect(page1.body.results).toHaveLength(2);
    expect(page1.body.next).toMatch(/page=2/);
    const page2 = await env.get('/api/notifications/?page_size=2&page=2', alice);
    expect(page2.body.results.map((n: { id: number }) => n.id)).toEqual([ids.first]);
    expect(page2.body.previous).not.toBeNull();
  });
});

describe('POST /api/notifications/<id>/read/', () => {
  it('marks the caller’s notification read and answers it', async () => {
    const res = await env.post(`/api/notifications/${ids.first}/read/`, alice);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ids.first, title: 'Demande de modification validée', read_at: '2026-11-16T10:00:00+01:00' });
    const { rows } = await env.db.query('select read_at from app_public.notifications where id = $1', [ids.first]);
    expect(rows[0].read_at).not.toBeNull();
  });

  it('is idempotent: the first reading time stays', async () => {
    env.setNow('2026-11-16T11:00:00+01:00');
    try {
      const res = await env.post(`/api/notifications/${ids.first}/read/`, alice);
      expect(res.status).toBe(200);
      expect(res.body.read_at).toBe('2026-11-16T10:00:00+01:00');
    } finally {
      env.setNow('2026-11-16T10:00:00+01:00');
    }
  });

  it('answers 404 for another account’s notification, and leaves it unread', async () => {
    const res = await env.post(`/api/notifications/${ids.bruno}/read/`, alice);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Notification introuvable.' });
    const { rows } = await env.db.query('select read_at from app_public.notifications where id = $1', [ids.bruno]);
    expect(rows[0].read_at).toBeNull();
  });

  it('answers 404 for an unknown or malformed id, 401 without an account', async () => {
    expect((await env.post('/api/notifications/2147483000/read/', alice)).status).toBe(404);
    expect((await env.post('/api/notifications/abc/read/', alice)).status).toBe(404);
    expect((await env.post(`/api/notifications/${ids.second}/read/`, null)).status).toBe(401);
  });

  it('refuses a body that is not a JSON object with a documented 400, and leaves the notification unread', async () => {
    // The route declares no body, yet it reads one: the fuzz found this 400 missing from the OpenAPI document.
    const res = await env.request('POST', `/api/notifications/${ids.second}/read/`, { token: alice, rawBody: '"text"' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ non_field_errors: ['Un objet JSON est attendu.'] });
    const { rows } = await env.db.query('select read_at from app_public.notifications where id = $1', [ids.second]);
    expect(rows[0].read_at).toBeNull();
  });

  it('only POST is allowed on the read route', async () => {
    const res = await env.get(`/api/notifications/${ids.second}/read/`, alice);
    expect(res.status).toBe(405);
  });
});

describe('a filing whose notification fails is not written (failure injection)', () => {
  // A request-shaped write, run exactly as a route runs its SQL function: the request
  // transaction of src/db/transaction.ts (authenticator → visitor role, acting account), an
  // app_public security definer function owned by wfm_api (RLS applies) that inserts the
  // request and notifies its deciders through app_private.notify_filing.
  let authPool: pg.Pool;

  beforeAll(async () => {
    authPool = new pg.Pool({ connectionString: env.config.authDatabaseUrl, max: 2 });
    await env.db.query(`
      create policy test_insert on app_public.shift_change_requests for insert to wfm_api with check (true);
      create function app_public.test_file_request(p_date date) returns jsonb
      language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
      declare
        v_id int;
        v_has boolean;
      begin
        insert into app_public.shift_change_requests (employee_id, date, reason, author_account_id, is_remote)
        values (app_hidden.current_employee_id(), p_date, 'demande_personnelle', app_hidden.current_account_id(), true)
        returning id into v_id;
        v_has := app_private.notify_filing(app_hidden.current_employee_id(), p_date, 'planning.decide_shift_change',
                   app_hidden.current_account_id(), 'Nouvelle demande de modification', 'Alice Martin, ' || app_hidden.fr_date(p_date),
                   'Demande de modification sans valideur', 'Alice Martin', 'shift_change_request', v_id);
        return jsonb_build_object('id', v_id, 'has_recipient', v_has);
      end;
      $$;
      alter function app_public.test_file_request(date) owner to wfm_api;
      grant execute on function app_public.test_file_request(date) to wfm_visitor;
      create function public.test_fail_notification() returns trigger language plpgsql as $$
      begin
        raise exception using errcode = 'XX500', message = 'injected failure: notification refused';
      end;
      $$;`);
  });
  afterAll(async () => {
    await authPool?.end();
  });

  const file = (date: string) =>
    withRequestTransaction(authPool, { accountId: env.ids.accounts!.alice!, generation: 0 }, async (client) => {
      const { rows } = await client.query('select app_public.test_file_request($1) as result', [date]);
      return rows[0].result as { id: number; has_recipient: boolean };
    }, { frozenNow: '2026-11-16T10:00:00+01:00' });

  const requestsOn = async (date: string) =>
    Number((await env.db.query('select count(*) from app_public.shift_change_requests where employee_id = $1 and date = $2',
      [env.ids.employees!.alice, date])).rows[0].count);

  it('rolls the whole write back when inserting a notification fails', async () => {
    const before = Number((await env.db.query('select count(*) from app_public.notifications')).rows[0].count);
    await env.db.query(`create trigger _000_injected_failure before insert on app_public.notifications
                        for each row execute function public.test_fail_notification()`);
    try {
      await expect(file('2026-11-20')).rejects.toMatchObject({ code: 'XX500' });
    } finally {
      await env.db.query('drop trigger _000_injected_failure on app_public.notifications');
    }
    expect(await requestsOn('2026-11-20')).toBe(0);
    expect(Number((await env.db.query('select count(*) from app_public.notifications')).rows[0].count)).toBe(before);
  });

  it('writes the request and its notifications when nothing fails', async () => {
    const result = await file('2026-11-20');
    expect(result.has_recipient).toBe(true);
    expect(await requestsOn('2026-11-20')).toBe(1);
    const { rows } = await env.db.query(
      `select a.username from app_public.notifications n join app_public.accounts a on a.id = n.account_id
       where n.title = 'Nouvelle demande de modification' and n.target_id = $1`, [result.id]);
    expect(rows.map((r) => r.username)).toEqual(['mgr1']);
    // The decider reads it through the API.
    const mgr1 = await env.login('mgr1');
    const list = await env.get('/api/notifications/?unread=true', mgr1);
    expect(list.body.results[0]).toMatchObject({ title: 'Nouvelle demande de modification', body: 'Alice Martin, 20/11/2026', level: 'info' });
  });
});
