/**
 * send_notification_digests: every hour (worker/crontab). Queues in the e-mail outbox the daily
 * digest of each account whose chosen hour came since its last digest (the rules:
 * app_private.send_notification_digests, sql/notifications/emails.sql); the outbox's trigger
 * enqueues their delivery. Idempotent: a notification goes into one digest only.
 */
import type { JobHelpers } from 'graphile-worker';
import { sendNotificationDigests } from '../jobs.js';

export default async function task(_payload: unknown, helpers: JobHelpers): Promise<void> {
  const queued = await helpers.withPgClient((client) => sendNotificationDigests(client));
  helpers.logger.info(`send_notification_digests: ${queued} digest(s) queued`);
}
