/**
 * `npm run job -- NAME`: runs one job now, once, and exits. The last line of the output is
 * a JSON object with the outcome. An unknown name lists the jobs and exits with 1.
 */
import '../src/check-node.js';
import { WorkerConfigError, workerConfigFromEnv } from './config.js';
import {
  JOB_NAMES,
  createWorkerPool,
  drainEmailOutbox,
  isJobName,
  isScheduledJob,
  runScheduledJob,
  sendNotificationDigests,
} from './jobs.js';
import { purgeStorageGarbage, sweepOrphanFiles } from '../src/storage/garbage.js';
import { storageFromEnv } from './tasks/purge_storage_garbage.js';
import { purgeRateLimitWindows } from './tasks/purge_rate_limit_windows.js';

const name = process.argv[2];
if (!isJobName(name) || process.argv.length > 3) {
  console.error(name ? `Unknown job "${process.argv.slice(2).join(' ')}".` : 'Name the job to run: npm run job -- NAME');
  console.error(`Jobs:\n${JOB_NAMES.map((job) => `  ${job}`).join('\n')}`);
  process.exit(1);
}

let exitCode = 0;
try {
  const config = workerConfigFromEnv();
  const pool = createWorkerPool(config, 2);
  try {
    if (isScheduledJob(name)) {
      const client = await pool.connect();
      try {
        const outcome = await runScheduledJob(client, name, null);
        if (outcome.status === 'done') {
          console.error(`${name}: ${outcome.message}`);
          console.log(JSON.stringify({ job: name, run_id: outcome.runId, result: outcome.result }));
        }
      } finally {
        client.release();
      }
    } else if (name === 'purge_storage_garbage') {
      const storage = storageFromEnv();
      const removed = await purgeStorageGarbage(pool, storage);
      // As the scheduled task: then the orphans (no row, or partial) older than an hour.
      const client = await pool.connect();
      let orphans: number;
      try {
        orphans = await sweepOrphanFiles(client, storage);
      } finally {
        client.release();
      }
      console.error(`${name}: ${removed} file(s) removed, ${orphans} orphan file(s) swept`);
      console.log(JSON.stringify({ job: name, result: removed, orphans }));
    } else if (name === 'purge_rate_limit_windows') {
      const removed = await purgeRateLimitWindows(pool);
      console.error(`${name}: ${removed} window(s) removed`);
      console.log(JSON.stringify({ job: name, result: removed }));
    } else if (name === 'send_notification_digests') {
      const queued = await sendNotificationDigests(pool);
      console.error(`${name}: ${queued} digest(s) queued`);
      console.log(JSON.stringify({ job: name, result: queued }));
    } else {
      const outcome = await drainEmailOutbox(pool, config.smtp ?? null);
      console.error(
        outcome.smtp
          ? `${name}: ${outcome.sent} sent, ${outcome.failed} failed, ${outcome.pending} waiting`
          : `${name}: no SMTP settings (SMTP_URL, SMTP_FROM); ${outcome.pending} e-mail(s) stay in the outbox`,
      );
      console.log(JSON.stringify({ job: name, ...outcome }));
      if (outcome.failed > 0) exitCode = 1;
    }
  } finally {
    await pool.end();
  }
} catch (error) {
  console.error(error instanceof WorkerConfigError ? `${name}: ${error.message}` : error);
  exitCode = 1;
}
process.exit(exitCode);
