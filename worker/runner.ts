/**
 * startWorker(config): graphile-worker in-process (npm run worker, and npm start which runs
 * it next to the HTTP server). It runs graphile-worker's own migrations first (the schema
 * graphile_worker must exist before jobs are enqueued: until then the outbox trigger skips
 * the enqueue silently), then the tasks of worker/tasks with worker/crontab.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger as GraphileLogger, run, runMigrations, type Runner, type TaskList } from 'graphile-worker';
import { pino, type Logger } from 'pino';
import type pg from 'pg';
import { waitForDatabase } from '../src/db/reachable.js';
import { isConnectionLoss } from '../src/db/connection-loss.js';
import { smtpFromEnv, type SmtpSettings, type WorkerConfig } from './config.js';
import { createWorkerPool, type MailTransport } from './jobs.js';
import { makeDrainEmailOutboxTask } from './tasks/drain_email_outbox.js';
import purgeAuditLog from './tasks/purge_audit_log.js';
import consumeStartedAbsences from './tasks/consume_started_absences.js';
import openNextYearCounters from './tasks/open_next_year_counters.js';
import acquireMonthlyCounters from './tasks/acquire_monthly_counters.js';
import closeCounterYears from './tasks/close_counter_years.js';
import purgeStorageGarbage from './tasks/purge_storage_garbage.js';
import purgeRateLimitWindows from './tasks/purge_rate_limit_windows.js';
import sendMissingDocumentReminders from './tasks/send_missing_document_reminders.js';
import sendNotificationDigests from './tasks/send_notification_digests.js';

export const WORKER_DIR = path.dirname(fileURLToPath(import.meta.url));
export const CRONTAB_FILE = path.join(WORKER_DIR, 'crontab');

/** Routes graphile-worker's log lines to pino. */
export function graphileLogger(logger: Logger): GraphileLogger {
  return new GraphileLogger((scope) => (level, message, meta) => {
    const method = level === 'warning' ? 'warn' : level;
    logger[method]({ worker: scope, ...(meta ?? {}) }, message);
  });
}

/** Installs or upgrades graphile-worker's schema (idempotent). */
export async function ensureWorkerSchema(
  config: Pick<WorkerConfig, 'databaseUrl' | 'businessTimeZone' | 'publicUrl'>,
  logger: Logger = pino({ level: 'warn' }),
): Promise<void> {
  const pool = createWorkerPool(config, 2);
  try {
    await runMigrations({ pgPool: pool, logger: graphileLogger(logger) });
  } finally {
    await pool.end();
  }
}

export function taskList(pool: pg.Pool, smtp: SmtpSettings | null, transport?: () => MailTransport): TaskList {
  return {
    send_missing_document_reminders: sendMissingDocumentReminders,
    purge_audit_log: purgeAuditLog,
    consume_started_absences: consumeStartedAbsences,
    open_next_year_counters: openNextYearCounters,
    acquire_monthly_counters: acquireMonthlyCounters,
    close_counter_years: closeCounterYears,
    purge_storage_garbage: purgeStorageGarbage,
    purge_rate_limit_windows: purgeRateLimitWindows,
    send_notification_digests: sendNotificationDigests,
    drain_email_outbox: makeDrainEmailOutboxTask(pool, smtp, transport),
  };
}

export interface RunningWorker {
  runner: Runner;
  pool: pg.Pool;
  smtp: SmtpSettings | null;
  /** Stops taking jobs, waits for the running ones, closes the pool. */
  stop(): Promise<void>;
}

export interface StartWorkerOptions extends Pick<WorkerConfig, 'databaseUrl' | 'businessTimeZone' | 'publicUrl'> {
  smtp?: SmtpSettings | null;
  concurrency?: number;
  logger?: Logger;
  handleSignals?: boolean;
  pollInterval?: number;
  /** Tests: a mail transport instead of SMTP. */
  mailTransport?: () => MailTransport;
}

/**
 * graphile-worker 0.18 can leave a promise rejected and unhandled when the database goes away
 * while it records a job's failure (batchFailJobs, once its retries are spent). By Node's
 * default that ends the process, and the HTTP server with it (`npm start` runs both; found by
 * `npm run chaos`). A lost connection is logged and survived (the job stays locked and runs
 * again when its lock expires); any other unhandled rejection still ends the process.
 */
export function connectionLossRejectionHandler(logger: Pick<Logger, 'warn'>): (reason: unknown) => void {
  return (reason: unknown) => {
    if (!isConnectionLoss(reason)) throw reason;
    logger.warn({ err: reason }, 'worker: the database went away while a job was being recorded; it will run again');
  };
}

let rejectionHandlerInstalled = false;

/** Runs `attempt` again while it fails because the database is unreachable (restarting), for at most `timeoutMs`. */
async function retryWhileUnreachable<T>(databaseUrl: string, logger: Logger, attempt: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // A database restarting at this moment is waited for, not a reason to die.
    await waitForDatabase(databaseUrl, { log: (line) => logger.warn(line), timeoutMs: Math.max(0, deadline - Date.now()) });
    try {
      return await attempt();
    } catch (error) {
      if (!isConnectionLoss(error) || Date.now() > deadline) throw error;
      logger.warn({ err: error }, 'worker: the database went away during start-up; starting again');
    }
  }
}

/** Starts the worker: migrations, tasks, crontab; with SMTP, drains what waits in the outbox. */
export async function startWorker(config: StartWorkerOptions): Promise<RunningWorker> {
  const logger = config.logger ?? pino({ level: process.env.LOG_LEVEL ?? 'info' });
  const smtp = config.smtp === undefined ? smtpFromEnv(process.env) : config.smtp;
  const concurrency = config.concurrency ?? 2;
  const pool = createWorkerPool(config, concurrency + 3);
  const gwLogger = graphileLogger(logger);
  if (!rejectionHandlerInstalled) {
    process.on('unhandledRejection', connectionLossRejectionHandler(logger));
    rejectionHandlerInstalled = true;
  }
  try {
    const crontab = await readFile(CRONTAB_FILE, 'utf8');
    const runner = await retryWhileUnreachable(config.databaseUrl, logger, async () => {
      await runMigrations({ pgPool: pool, logger: gwLogger });
      return run({
        pgPool: pool,
        concurrency,
        noHandleSignals: !config.handleSignals,
        pollInterval: config.pollInterval ?? 2000,
        logger: gwLogger,
        taskList: taskList(pool, smtp, config.mailTransport),
        crontab,
      });
    });
    if (smtp) {
      await runner.addJob('drain_email_outbox', {}, { jobKey: 'drain_email_outbox' });
    } else {
      logger.info('worker: no SMTP settings (SMTP_URL, SMTP_FROM): e-mails stay in the outbox, visible to staff');
    }
    let stopped: Promise<void> | null = null;
    return {
      runner,
      pool,
      smtp,
      stop() {
        stopped ??= (async () => {
          await runner.stop();
          await pool.end();
        })();
        return stopped;
      },
    };
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
}
