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
import { smtpFromEnv, type SmtpSettings, type WorkerConfig } from './config.js';
import { createWorkerPool, type MailTransport } from './jobs.js';
import { makeDrainEmailOutboxTask } from './tasks/drain_email_outbox.js';
import purgeAuditLog from './tasks/purge_audit_log.js';
import consumeStartedAbsences from './tasks/consume_started_absences.js';
import purgeStorageGarbage from './tasks/purge_storage_garbage.js';
import sendMissingDocumentReminders from './tasks/send_missing_document_reminders.js';

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
    purge_storage_garbage: purgeStorageGarbage,
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

/** Starts the worker: migrations, tasks, crontab; with SMTP, drains what waits in the outbox. */
export async function startWorker(config: StartWorkerOptions): Promise<RunningWorker> {
  const logger = config.logger ?? pino({ level: process.env.LOG_LEVEL ?? 'info' });
  const smtp = config.smtp === undefined ? smtpFromEnv(process.env) : config.smtp;
  const concurrency = config.concurrency ?? 2;
  const pool = createWorkerPool(config, concurrency + 3);
  const gwLogger = graphileLogger(logger);
  try {
    // A database restarting at this moment is waited for, not a reason to die.
    await waitForDatabase(config.databaseUrl, { log: (line) => logger.warn(line) });
    await runMigrations({ pgPool: pool, logger: gwLogger });
    const runner = await run({
      pgPool: pool,
      concurrency,
      noHandleSignals: !config.handleSignals,
      pollInterval: config.pollInterval ?? 2000,
      logger: gwLogger,
      taskList: taskList(pool, smtp, config.mailTransport),
      crontab: await readFile(CRONTAB_FILE, 'utf8'),
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
