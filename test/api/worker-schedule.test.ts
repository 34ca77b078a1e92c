/**
 * The crontab runs in UTC; the jobs are meant for Europe/Paris. Deterministic proof, with no
 * waiting: every minute of chosen UTC days goes through graphile-worker's own matcher for
 * worker/crontab, then through the scheduling decision (app_private.job_is_due) the tasks
 * apply; exactly the intended Paris times remain, in winter, in summer and on both DST days.
 */
import { readFile } from 'node:fs/promises';
import { parseCrontab, type ParsedCronItem } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRONTAB_FILE } from '../../worker/runner.js';
import { cronInstant, runScheduledJob } from '../../worker/jobs.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let items: ParsedCronItem[];

beforeAll(async () => {
  env = await startTestEnv();
  items = parseCrontab(await readFile(CRONTAB_FILE, 'utf8'));
});
afterAll(async () => {
  await env?.close();
});

/** Every minute of a UTC day that a crontab line of the task matches. */
function cronInstants(task: string, utcDay: string): string[] {
  const result: string[] = [];
  const start = Date.parse(`${utcDay}T00:00:00Z`);
  for (let minute = 0; minute < 24 * 60; minute++) {
    const ts = new Date(start + minute * 60_000);
    const digest = { min: ts.getUTCMinutes(), hour: ts.getUTCHours(), date: ts.getUTCDate(), month: ts.getUTCMonth() + 1, dow: ts.getUTCDay() };
    for (const item of items) if (item.task === task && item.match(digest)) result.push(ts.toISOString());
  }
  return result;
}

/** The instants among `instants` at which the task actually runs (the task's decision). */
async function dueInstants(job: string, instants: string[]): Promise<string[]> {
  const { rows } = await env.db.query<{ ts: Date }>(
    'select ts from unnest($2::timestamptz[]) ts where app_private.job_is_due($1, ts) order by ts',
    [job, instants],
  );
  return rows.map((row) => row.ts.toISOString());
}

const paris = (iso: string) =>
  new Intl.DateTimeFormat('fr-FR', { timeZone: 'Europe/Paris', weekday: 'long', hour: '2-digit', minute: '2-digit' }).format(new Date(iso));

describe('worker/crontab', () => {
  it('parses, with a stable id and its own job key on every line', () => {
    expect(items.map((item) => item.task).sort()).toEqual([
      'acquire_monthly_counters', 'acquire_monthly_counters', 'close_counter_years', 'close_counter_years',
      'consume_started_absences', 'consume_started_absences', 'open_next_year_counters', 'open_next_year_counters',
      'purge_audit_log', 'purge_audit_log',
      'purge_rate_limit_windows', 'purge_storage_garbage', 'send_missing_document_reminders', 'send_missing_document_reminders',
      'send_notification_digests',
    ]);
    const identifiers = items.map((item) => item.identifier);
    expect(new Set(identifiers).size).toBe(items.length);
    for (const item of items) {
      expect(item.identifier).not.toBe(item.task);
      expect(item.options.jobKey).toBe(item.identifier);
      expect(item.options.backfillPeriod).toBeGreaterThan(0);
    }
  });

  const reminderDays: Array<[string, string]> = [
    ['winter', '2026-01-15'],
    ['summer', '2026-07-15'],
    ['spring DST Sunday', '2026-03-29'],
    ['autumn DST Sunday', '2026-10-25'],
  ];
  for (const [season, day] of reminderDays) {
    it(`send_missing_document_reminders runs once, at 05:37 in Paris (${season}, ${day})`, async () => {
      const scheduled = cronInstants('send_missing_document_reminders', day);
      expect(scheduled).toHaveLength(2); // both UTC candidates are scheduled...
      const due = await dueInstants('send_missing_document_reminders', scheduled);
      expect(due).toHaveLength(1); // ...and only one is the Paris time
      expect(paris(due[0]!)).toMatch(/ 05:37$/);
    });
  }

  const sundays: Array<[string, string]> = [
    ['winter', '2026-01-11'],
    ['summer', '2026-07-12'],
    ['spring DST Sunday', '2026-03-29'],
    ['autumn DST Sunday', '2026-10-25'],
  ];
  for (const [season, day] of sundays) {
    it(`purge_audit_log runs once, on Sunday at 03:47 in Paris (${season}, ${day})`, async () => {
      const due = await dueInstants('purge_audit_log', cronInstants('purge_audit_log', day));
      expect(due).toHaveLength(1);
      expect(paris(due[0]!)).toBe('dimanche 03:47');
    });
  }

  for (const [season, day] of reminderDays) {
    it(`consume_started_absences runs once a night, at 00:07 in Paris (UTC day ${day}, ${season})`, async () => {
      const scheduled = cronInstants('consume_started_absences', day);
      expect(scheduled).toHaveLength(2);
      const due = await dueInstants('consume_started_absences', scheduled);
      expect(due).toHaveLength(1);
      expect(paris(due[0]!)).toMatch(/ 00:07$/);
    });
  }

  const leaveYearJobs: Array<[string, string]> = [
    ['open_next_year_counters', '01:17'], ['acquire_monthly_counters', '01:27'], ['close_counter_years', '01:37'],
  ];
  const parisDate = (iso: string) => new Intl.DateTimeFormat('fr-CA', { timeZone: 'Europe/Paris' }).format(new Date(iso));
  for (const [job, time] of leaveYearJobs) {
    for (const [season, day] of reminderDays) {
      it(`${job} runs once a night, at ${time} in Paris (Paris day ${day}, ${season})`, async () => {
        // The two UTC days that can hold that Paris night.
        const before = new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
        const scheduled = [...cronInstants(job, before), ...cronInstants(job, day)];
        expect(scheduled).toHaveLength(4);
        const due = (await dueInstants(job, scheduled)).filter((iso) => parisDate(iso) === day);
        expect(due).toHaveLength(1);
        expect(paris(due[0]!)).toMatch(new RegExp(` ${time}$`));
      });
    }
  }

  it('purge_storage_garbage runs every 10 minutes, whatever the season', () => {
    expect(cronInstants('purge_storage_garbage', '2026-01-15')).toHaveLength(144);
    expect(cronInstants('purge_storage_garbage', '2026-07-15')).toHaveLength(144);
  });

  it('purge_rate_limit_windows runs every 10 minutes, between the storage purges', () => {
    const instants = cronInstants('purge_rate_limit_windows', '2026-01-15');
    expect(instants).toHaveLength(144);
    expect(instants.every((iso) => new Date(iso).getUTCMinutes() % 10 === 5)).toBe(true);
  });

  it('send_notification_digests runs every hour, 3 past: each whole hour of Paris, winter and summer, has its run', async () => {
    for (const day of ['2026-01-15', '2026-07-15', '2026-03-29', '2026-10-25']) {
      const instants = cronInstants('send_notification_digests', day);
      expect(instants, day).toHaveLength(24);
      expect(instants.every((iso) => new Date(iso).getUTCMinutes() === 3)).toBe(true);
    }
    // A digest hour of 8 in Paris is served by the run at 07:03 UTC in winter and 06:03 UTC in summer.
    const { rows } = await env.db.query<{ winter: Date; summer: Date }>(
      `select app_hidden.last_digest_instant('2026-01-15T07:03:00Z', 8) as winter,
              app_hidden.last_digest_instant('2026-07-15T06:03:00Z', 8) as summer`);
    expect(rows[0]!.winter.toISOString()).toBe('2026-01-15T07:00:00.000Z');
    expect(rows[0]!.summer.toISOString()).toBe('2026-07-15T06:00:00.000Z');
  });

  it('purge_audit_log does not run on other days', async () => {
    for (const day of ['2026-01-10', '2026-01-12', '2026-07-11', '2026-07-13']) {
      expect(await dueInstants('purge_audit_log', cronInstants('purge_audit_log', day)), day).toEqual([]);
    }
  });
});

describe('scheduled task decision', () => {
  it('reads the scheduled instant from the cron payload', () => {
    expect(cronInstant({ _cron: { ts: '2026-07-12T01:47:00.000Z', backfilled: false } })).toBe('2026-07-12T01:47:00.000Z');
    expect(cronInstant({})).toBeNull();
    expect(cronInstant(null)).toBeNull();
  });

  it('skips the other season’s line, runs the due one once per local date', async () => {
    const client = await env.db.connect();
    try {
      expect(await runScheduledJob(client, 'purge_audit_log', '2026-07-12T02:47:00.000Z'))
        .toMatchObject({ status: 'skipped', reason: 'not_due' });
      expect(await runScheduledJob(client, 'purge_audit_log', '2026-07-12T01:47:00.000Z'))
        .toMatchObject({ status: 'done', result: 0 });
      expect(await runScheduledJob(client, 'purge_audit_log', '2026-07-12T01:47:00.000Z'))
        .toMatchObject({ status: 'skipped', reason: 'already_ran' });
      expect(await runScheduledJob(client, 'purge_audit_log', '2026-07-19T01:47:00.000Z'))
        .toMatchObject({ status: 'done' });
      const { rows } = await client.query(
        "select period, trigger, result from app_private.job_runs where job = 'purge_audit_log' order by id");
      expect(rows).toEqual([
        { period: '2026-07-12', trigger: 'cron', result: { count: 0 } },
        { period: '2026-07-19', trigger: 'cron', result: { count: 0 } },
      ]);
    } finally {
      client.release();
    }
  });

  it('a job that fails leaves no claim, so that its retry runs', async () => {
    const client = await env.db.connect();
    try {
      await client.query("update app_private.settings set value = '0' where key = 'audit_retention_days'");
      await expect(runScheduledJob(client, 'purge_audit_log', '2026-07-26T01:47:00.000Z')).rejects.toThrow(/audit_retention_days/);
      await client.query("update app_private.settings set value = '1095' where key = 'audit_retention_days'");
      expect(await runScheduledJob(client, 'purge_audit_log', '2026-07-26T01:47:00.000Z')).toMatchObject({ status: 'done' });
    } finally {
      client.release();
    }
  });
});
