/**
 * The jobs of the worker. Each scheduled job is ONE SQL function (the rules live in SQL);
 * this module only claims the run, calls the function and records the result, in one
 * transaction, so that a job that fails leaves no trace and is retried, and a job never
 * runs twice for the same period (app_private.job_runs).
 */
import pg from 'pg';
import nodemailer from 'nodemailer';
import { sessionOptions } from '../src/db/pool.js';
import type { SmtpSettings, WorkerConfig } from './config.js';

/** Scheduled jobs: name → the SQL call (its result is a count) and how to say it. */
export const SCHEDULED_JOBS = {
  send_missing_document_reminders: {
    sql: 'select app_private.send_missing_document_reminders(app_hidden.now()) as result',
    describe: (count: number) => `${count} notification(s) de justificatif manquant envoyée(s)`,
  },
  purge_audit_log: {
    sql: 'select app_private.purge_audit_log(app_hidden.now()) as result',
    describe: (count: number) => `${count} ligne(s) du journal d’audit supprimée(s) (au-delà de la rétention)`,
  },
  consume_started_absences: {
    sql: 'select app_private.consume_started_absences(app_hidden.today()) as result',
    describe: (count: number) => `${count} absence(s) commencée(s) passée(s) de Planifiés à Pris`,
  },
  open_next_year_counters: {
    sql: 'select app_private.open_next_year_counters(app_hidden.today()) as result',
    describe: (count: number) => `${count} compteur(s) de l’année suivante ouvert(s)`,
  },
  acquire_monthly_counters: {
    sql: 'select app_private.acquire_monthly_counters(app_hidden.today()) as result',
    describe: (count: number) => `${count} acquisition(s) mensuelle(s) écrite(s) au journal des compteurs`,
  },
  close_counter_years: {
    sql: 'select app_private.close_counter_years(app_hidden.today()) as result',
    describe: (count: number) => `${count} compteur(s) reporté(s) ou expiré(s) et avis d’expiration envoyé(s)`,
  },
} as const;

export type ScheduledJobName = keyof typeof SCHEDULED_JOBS;

/**
 * send_notification_digests (every hour, worker/crontab; by hand: npm run job): the daily
 * digests due at `at` (default: the database's business now), one e-mail per account whose
 * digest hour came (app_private.send_notification_digests). Returns how many were queued.
 */
export async function sendNotificationDigests(db: pg.Pool | pg.ClientBase, at?: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'select app_private.send_notification_digests(coalesce($1::timestamptz, app_hidden.now())) as n',
    [at ?? null],
  );
  return rows[0]?.n ?? 0;
}

/** Every job `npm run job -- NAME` knows. */
export const JOB_NAMES = [
  'send_missing_document_reminders',
  'send_notification_digests',
  'purge_audit_log',
  'consume_started_absences',
  'open_next_year_counters',
  'acquire_monthly_counters',
  'close_counter_years',
  'drain_email_outbox',
  'purge_storage_garbage',
  'purge_rate_limit_windows',
] as const;
export type JobName = (typeof JOB_NAMES)[number];

export function isJobName(name: string | undefined): name is JobName {
  return (JOB_NAMES as readonly string[]).includes(name ?? '');
}

export function isScheduledJob(name: string): name is ScheduledJobName {
  return Object.prototype.hasOwnProperty.call(SCHEDULED_JOBS, name);
}

/** A pool on the owner connection with the same session settings as the server's. */
export function createWorkerPool(config: Pick<WorkerConfig, 'databaseUrl' | 'businessTimeZone' | 'publicUrl'>, max = 5): pg.Pool {
  const pool = new pg.Pool({
    connectionString: config.databaseUrl,
    max,
    options: sessionOptions(config),
    application_name: 'wfm-worker',
  });
  // An idle client that errors (e.g. terminated by the server) must not crash the process;
  // the next query reports the problem.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** The scheduled instant of a cron job (graphile-worker's payload._cron.ts), or null. */
export function cronInstant(payload: unknown): string | null {
  const cron = (payload as { _cron?: { ts?: unknown } } | null)?._cron;
  return typeof cron?.ts === 'string' ? cron.ts : null;
}

export type JobOutcome =
  | { job: ScheduledJobName; status: 'done'; runId: number; result: number; message: string }
  | { job: ScheduledJobName; status: 'skipped'; reason: 'not_due' | 'already_ran'; scheduledAt: string };

/**
 * Runs a scheduled job once. scheduledAt null: a run by hand (always runs). Otherwise the
 * cron instant: skipped when it is not the job's local time (the other UTC line of the
 * crontab) or when the job already ran for that local date.
 */
export async function runScheduledJob(client: pg.ClientBase, job: ScheduledJobName, scheduledAt: string | null): Promise<JobOutcome> {
  await client.query('begin');
  try {
    const { rows } = await client.query<{ run_id: string | null; due: boolean }>(
      'select app_private.job_claim($1, $2::timestamptz) as run_id, app_private.job_is_due($1, $2::timestamptz) as due',
      [job, scheduledAt],
    );
    const runId = rows[0]?.run_id ?? null;
    if (runId === null) {
      await client.query('commit');
      return { job, status: 'skipped', reason: rows[0]?.due ? 'already_ran' : 'not_due', scheduledAt: scheduledAt ?? '' };
    }
    const { rows: resultRows } = await client.query<{ result: number }>(SCHEDULED_JOBS[job].sql);
    const result = Number(resultRows[0]?.result ?? 0);
    await client.query('select app_private.job_finish($1, $2::jsonb)', [runId, JSON.stringify({ count: result })]);
    await client.query('commit');
    return { job, status: 'done', runId: Number(runId), result, message: SCHEDULED_JOBS[job].describe(result) };
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  }
}

export interface DrainOutcome {
  smtp: boolean;
  sent: number;
  failed: number;
  /** Mails still waiting after the drain. */
  pending: number;
}

/** One mail as the outbox holds it: text, and for a notification an HTML part and headers (List-Unsubscribe). */
export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  headers?: Record<string, string>;
}

export interface MailTransport {
  sendMail(mail: OutgoingMail): Promise<unknown>;
  close(): void;
}

export function smtpTransport(smtp: SmtpSettings): MailTransport {
  return nodemailer.createTransport({
    url: smtp.url,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 30_000,
  });
}

/**
 * Writes into the outbox the e-mails of the notifications sent at once that are not there yet
 * (app_private.queue_notification_emails, 500 a transaction); returns how many.
 */
export async function queueNotificationEmails(db: pg.Pool | pg.ClientBase): Promise<number> {
  let total = 0;
  for (;;) {
    const { rows } = await db.query<{ n: number }>('select app_private.queue_notification_emails(500) as n');
    const queued = rows[0]?.n ?? 0;
    total += queued;
    if (queued < 500) return total;
  }
}

/**
 * Delivers the unsent mails of the outbox, oldest first, one transaction per mail (the row
 * is locked while it is sent, so that two drains never send it twice). Without SMTP
 * settings nothing is sent: the mails stay in the outbox, visible to staff.
 */
export async function drainEmailOutbox(
  pool: pg.Pool,
  smtp: SmtpSettings | null,
  transport: MailTransport | null = smtp ? smtpTransport(smtp) : null,
): Promise<DrainOutcome> {
  const pendingCount = async () =>
    Number((await pool.query<{ n: string }>('select app_private.email_outbox_pending_count() as n')).rows[0]?.n ?? 0);
  // First the e-mails of the notifications sent at once, written into the outbox now (with or
  // without SMTP: staff see them there, and the embedded mode prints them).
  await queueNotificationEmails(pool);
  if (!smtp || !transport) return { smtp: false, sent: 0, failed: 0, pending: await pendingCount() };
  let sent = 0;
  let failed = 0;
  let afterId = 0;
  try {
    for (;;) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const { rows } = await client.query<{
          id: string;
          to_address: string;
          subject: string;
          body_text: string;
          body_html: string | null;
          headers: Record<string, string> | null;
        }>(
          'select * from app_private.email_outbox_next($1)',
          [afterId],
        );
        const mail = rows[0];
        if (!mail) {
          await client.query('commit');
          break;
        }
        afterId = Number(mail.id);
        try {
          await transport.sendMail({
            from: smtp.from,
            to: mail.to_address,
            subject: mail.subject,
            text: mail.body_text,
            ...(mail.body_html ? { html: mail.body_html } : {}),
            ...(mail.headers && Object.keys(mail.headers).length ? { headers: mail.headers } : {}),
          });
          await client.query('select app_private.email_outbox_sent($1)', [mail.id]);
          sent += 1;
        } catch (error) {
          await client.query('select app_private.email_outbox_failed($1, $2)', [mail.id, errorMessage(error)]);
          failed += 1;
        }
        await client.query('commit');
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    }
  } finally {
    transport.close();
  }
  return { smtp: true, sent, failed, pending: await pendingCount() };
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const response = (error as { response?: unknown }).response;
    return typeof response === 'string' && response ? `${error.message} (${response})` : error.message;
  }
  return String(error);
}
