/** The graphile-worker task of a scheduled job: runs it for the cron instant it was scheduled at. */
import type { Task } from 'graphile-worker';
import { cronInstant, runScheduledJob, type ScheduledJobName } from './jobs.js';

export function scheduledTask(job: ScheduledJobName): Task {
  return async (payload, helpers) => {
    // Cron jobs carry their scheduled instant; a job added by hand (no _cron) runs now.
    const scheduledAt = cronInstant(payload);
    const outcome = await helpers.withPgClient((client) => runScheduledJob(client, job, scheduledAt));
    if (outcome.status === 'done') {
      helpers.logger.info(`${job} (run ${outcome.runId}): ${outcome.message}`);
    } else if (outcome.reason === 'already_ran') {
      helpers.logger.info(`${job}: already ran for the period of ${outcome.scheduledAt}; nothing to do`);
    } else {
      helpers.logger.debug(`${job}: ${outcome.scheduledAt} is not its local time (other season's UTC line); skipped`);
    }
  };
}
