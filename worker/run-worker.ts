/** `npm run worker` (through worker/run.ts): the graphile-worker process with the crontab (worker/crontab). */
import { pino } from 'pino';
import { WorkerConfigError, workerConfigFromEnv } from './config.js';
import { startWorker } from './runner.js';

const logger = pino({ level: process.env.LOG_LEVEL ?? 'info' });
try {
  const config = workerConfigFromEnv();
  const worker = await startWorker({ ...config, logger, handleSignals: false });
  logger.info('worker started: send_missing_document_reminders daily 05:37, consume_started_absences daily 00:07, open_next_year_counters 01:17, acquire_monthly_counters 01:27 and close_counter_years 01:37 daily, send_notification_digests hourly, purge_audit_log Sunday 03:47 (Europe/Paris); purge_storage_garbage and purge_rate_limit_windows every 10 minutes');
  const shutdown = (signal: string) => {
    logger.info(`worker: ${signal}, stopping`);
    worker.stop().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, 'worker: stop failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  await worker.runner.promise;
} catch (error) {
  if (error instanceof WorkerConfigError) {
    console.error(`worker: ${error.message}`);
  } else {
    logger.error({ err: error }, 'worker: failed');
  }
  process.exit(1);
}
