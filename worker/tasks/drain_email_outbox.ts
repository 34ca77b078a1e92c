/**
 * drain_email_outbox: delivers the e-mail outbox. Enqueued (job key drain_email_outbox) by
 * the transaction that writes a mail or a notification sent by e-mail at once, and when the
 * worker starts with SMTP settings. It first writes the e-mails of those notifications into
 * the outbox (app_private.queue_notification_emails), with or without SMTP settings.
 * Without SMTP settings it sends nothing: the mails stay in the outbox, visible to staff.
 * A mail that fails counts an attempt and keeps its last error; the job then fails so that
 * graphile-worker retries it later (with backoff), until email_max_attempts.
 */
import type { Task } from 'graphile-worker';
import type pg from 'pg';
import type { SmtpSettings } from '../config.js';
import { drainEmailOutbox, type MailTransport } from '../jobs.js';

export function makeDrainEmailOutboxTask(pool: pg.Pool, smtp: SmtpSettings | null, transport?: () => MailTransport): Task {
  return async (_payload, helpers) => {
    const outcome = await drainEmailOutbox(pool, smtp, transport ? transport() : undefined);
    if (!outcome.smtp) {
      if (outcome.pending) {
        helpers.logger.info(`drain_email_outbox: no SMTP settings (SMTP_URL, SMTP_FROM); ${outcome.pending} e-mail(s) stay in the outbox`);
      }
      return;
    }
    helpers.logger.info(`drain_email_outbox: ${outcome.sent} sent, ${outcome.failed} failed, ${outcome.pending} waiting`);
    if (outcome.failed > 0) {
      throw new Error(`${outcome.failed} e-mail(s) could not be sent; see app_private.email_outbox.last_error`);
    }
  };
}
