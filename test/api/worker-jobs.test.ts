/**
 * `npm run job -- NAME` against a test database: the purge deletes only the lines older
 * than the retention, twice in a row safely; the reminders are sent once; an unknown name
 * lists the jobs and exits 1.
 */
import { spawn } from 'node:child_process';
import { access, mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/db/migrate.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let databaseName: string;

/** The business clock of the spawned jobs (set on the database in beforeAll). */
const FROZEN_NOW = '2026-11-16T10:00:00+01:00';

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The JSON object printed last on stdout. */
  outcome: Record<string, unknown> | null;
}

function npmJob(...args: string[]): Promise<RunResult> {
  return npmJobWith({}, ...args);
}

function npmJobWith(extraEnv: Record<string, string>, ...args: string[]): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'job', '--', ...args], {
      cwd: ROOT_DIR,
      env: {
        ...process.env,
        PATH: `${path.join(ROOT_DIR, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
        DATABASE_URL: env.config.databaseUrl,
        SMTP_URL: '',
        SMTP_FROM: '',
        ...extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').pop() ?? '';
      let outcome: Record<string, unknown> | null = null;
      try {
        outcome = JSON.parse(last) as Record<string, unknown>;
      } catch {
        outcome = null;
      }
      resolve({ code: code ?? 1, stdout, stderr, outcome });
    });
  });
}

beforeAll(async () => {
  env = await startTestEnv();
  databaseName = new URL(env.config.databaseUrl).pathname.slice(1);
  // The spawned job runs on the business clock of the suite: new sessions of this database
  // start with it frozen (the same setting the request transactions use).
  // Only the sessions opened afterwards get it: env.db's connection already open keeps the
  // real clock (and pg.Pool replaces it after 10 s idle), so a test that writes rows stamped
  // by app_hidden.now() for a job to read sets the same clock on its transaction.
  await env.db.query(`alter database ${databaseName} set app.frozen_now = '${FROZEN_NOW}'`);
});
afterAll(async () => {
  await env?.close();
});

describe('npm run job -- purge_audit_log', () => {
  it('deletes only the lines older than the retention, and a second run deletes nothing', async () => {
    // 1095 days before the frozen now, give or take a minute.
    await env.db.query(`
      insert into app_private.audit_log (at, verb, model, target_id, before, after)
      select '2026-11-16T10:00:00+01:00'::timestamptz - make_interval(days => 1095) + x.shift, 'Creation', 'absence', x.target, null, '{}'
      from (values (interval '-1 minute', 1), (interval '-400 days', 2), (interval '1 minute', 3), (interval '1000 days', 4)) x(shift, target)`);

    const first = await npmJob('purge_audit_log');
    expect(first.code, first.stderr).toBe(0);
    expect(first.outcome).toMatchObject({ job: 'purge_audit_log', result: 2 });
    const remaining = await env.db.query('select target_id from app_private.audit_log where model = $1 order by target_id', ['absence']);
    expect(remaining.rows.map((row) => Number(row.target_id))).toEqual([3, 4]);

    const second = await npmJob('purge_audit_log');
    expect(second.code, second.stderr).toBe(0);
    expect(second.outcome).toMatchObject({ job: 'purge_audit_log', result: 0 });
    const again = await env.db.query('select count(*)::int as n from app_private.audit_log where model = $1', ['absence']);
    expect(again.rows[0].n).toBe(2);

    const runs = await env.db.query(
      "select trigger, result from app_private.job_runs where job = 'purge_audit_log' order by id");
    expect(runs.rows).toEqual([
      { trigger: 'manual', result: { count: 2 } },
      { trigger: 'manual', result: { count: 0 } },
    ]);
  });
});

describe('npm run job -- send_missing_document_reminders', () => {
  it('sends the due reminders once; running it again sends nothing twice', async () => {
    await env.db.query(
      `insert into app_public.absences (employee_id, type_id, date_start, date_end)
       select $1, t.id, '2026-11-10', '2026-11-12' from app_public.absence_types t where t.code = 'MAL'`,
      [env.ids.employees!.alice],
    );
    const first = await npmJob('send_missing_document_reminders');
    expect(first.code, first.stderr).toBe(0);
    expect(first.outcome).toMatchObject({ job: 'send_missing_document_reminders', result: 2 });
    const second = await npmJob('send_missing_document_reminders');
    expect(second.outcome).toMatchObject({ result: 0 });
    const { rows } = await env.db.query(
      `select a.username, n.title from app_public.notifications n join app_public.accounts a on a.id = n.account_id order by a.username`);
    expect(rows).toEqual([
      { username: 'alice', title: 'Justificatif à transmettre' },
      { username: 'rh1', title: 'Justificatifs manquants' },
    ]);
    // Alice reads hers through the API.
    const list = await env.get('/api/notifications/', await env.login('alice'));
    expect(list.body.results[0].body).toMatch(/^Le justificatif de votre absence « Maladie » du 10\/11\/2026 au 12\/11\/2026/);
  });
});

describe('npm run job -- purge_rate_limit_windows', () => {
  it('removes the rate-limit windows that ended, keeps the live ones', async () => {
    await env.db.query('delete from app_private.rate_limit_windows');
    await env.db.query(`insert into app_private.rate_limit_windows (bucket, window_start, window_end, hits) values
      ('ip:ended', clock_timestamp() - interval '2 minutes', clock_timestamp() - interval '1 minute', 3),
      ('ip:live', clock_timestamp(), clock_timestamp() + interval '1 minute', 1)`);
    const result = await npmJob('purge_rate_limit_windows');
    expect(result.code, result.stderr).toBe(0);
    expect(result.outcome).toEqual({ job: 'purge_rate_limit_windows', result: 1 });
    const { rows } = await env.db.query('select bucket from app_private.rate_limit_windows order by bucket');
    expect(rows).toEqual([{ bucket: 'ip:live' }]);
  });
});

describe('npm run job with a bad name', () => {
  it('lists the jobs and exits with 1', async () => {
    const result = await npmJob('purge_audit');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Unknown job "purge_audit"');
    for (const name of ['send_missing_document_reminders', 'purge_audit_log', 'drain_email_outbox', 'purge_rate_limit_windows']) {
      expect(result.stderr).toContain(name);
    }
    const none = await npmJob();
    expect(none.code).toBe(1);
  });

  it('the outbox drain without SMTP settings sends nothing and leaves the mails', async () => {
    await env.post('/api/auth/password/reset/', null, { login: 'alice' });
    const result = await npmJob('drain_email_outbox');
    expect(result.code, result.stderr).toBe(0);
    // The reminders above went by e-mail too (issue 28): every mail stays, none attempted.
    const { rows } = await env.db.query('select kind, sent_at, attempts from app_private.email_outbox order by id');
    expect(result.outcome).toMatchObject({ job: 'drain_email_outbox', smtp: false, sent: 0, pending: rows.length });
    expect(rows.filter((row) => row.kind === 'password_reset')).toEqual([{ kind: 'password_reset', sent_at: null, attempts: 0 }]);
    expect(rows.every((row) => row.sent_at === null && row.attempts === 0)).toBe(true);
  });
});

describe('npm run job -- purge_storage_garbage', () => {
  it('also sweeps the files no row names once they are an hour old, as the scheduled task', async () => {
    const root = env.config.storageDir;
    const old = path.join(root, 'dd', 'd'.repeat(32));
    const young = path.join(root, 'ee', 'e'.repeat(32));
    for (const file of [old, young]) {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, '%PDF-1.4\n');
    }
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await utimes(old, twoHoursAgo, twoHoursAgo);
    const result = await npmJobWith({ STORAGE_DIR: root }, 'purge_storage_garbage');
    expect(result.code, result.stderr).toBe(0);
    expect(result.outcome).toEqual({ job: 'purge_storage_garbage', result: 0, orphans: 1 });
    await expect(access(old)).rejects.toThrow();
    await access(young);
  });
});


describe('npm run job -- send_notification_digests', () => {
  it('queues the digest of an account whose hour came, gathering its waiting notifications; a second run sends nothing twice', async () => {
    const mgr1 = env.ids.accounts!.mgr1!;
    // Digest of « to decide » at midnight, chosen long ago: due now, whatever the real time.
    await env.db.query(
      `insert into app_private.notification_preferences (account_id, decide, digest_hour, digest_since)
       values ($1, 'digest', 0, '2000-01-01') on conflict (account_id) do update set decide = 'digest', digest_hour = 0, digest_since = '2000-01-01'`,
      [mgr1],
    );
    // Notified on the jobs' clock: the digest at the job's now gathers what was notified up to
    // then (created_at <= now); notifications stamped with the real time, later than the
    // frozen now, would not be due yet (0 queued).
    const client = await env.db.connect();
    try {
      await client.query('begin');
      await client.query("select set_config('app.frozen_now', $1, true)", [FROZEN_NOW]);
      for (const title of ['Nouvelle demande d\'absence', 'Demande d\'annulation d\'absence']) {
        await client.query("select app_private.notify($1, $2, 'corps', 'info', 'absence', null)", [mgr1, title]);
      }
      await client.query('commit');
    } finally {
      client.release();
    }
    const first = await npmJob('send_notification_digests');
    expect(first.code, first.stderr).toBe(0);
    expect(first.outcome).toEqual({ job: 'send_notification_digests', result: 1 });
    const { rows } = await env.db.query(
      "select subject, body_text from app_private.email_outbox where kind = 'notification_digest' and account_id = $1", [mgr1]);
    expect(rows).toHaveLength(1);
    expect(rows[0].subject).toBe('Résumé de vos notifications : 2 nouvelles');
    expect(rows[0].body_text).toContain('Nouvelle demande d\'absence');
    expect(rows[0].body_text).toContain('Demande d\'annulation d\'absence');
    const second = await npmJob('send_notification_digests');
    expect(second.outcome).toEqual({ job: 'send_notification_digests', result: 0 });
  });
});
