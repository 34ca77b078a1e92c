/**
 * Configuration of the worker (graphile-worker in the same database), read from the
 * environment by `npm run worker` and `npm run job`, or handed over by the server process
 * (startWorker(config) accepts the server's Config).
 */
import type { Logger } from 'pino';
import { withOperatingSystemUser } from '../src/config.js';

/** SMTP delivery of the e-mail outbox: SMTP_URL (smtp://user:pass@host:587 or smtps://…) and SMTP_FROM. */
export interface SmtpSettings {
  url: string;
  from: string;
}

export interface WorkerConfig {
  /** Owner connection (DATABASE_URL): the worker's schema, the outbox and the job functions. */
  databaseUrl: string;
  /** TZ_BUSINESS: the session time zone, so that app_hidden.today() is the business date. */
  businessTimeZone: string;
  /** PUBLIC_URL, carried by the sessions like the server's (links written by SQL). */
  publicUrl: string;
  /** SMTP settings; undefined = read SMTP_URL / SMTP_FROM from the environment; null = no SMTP. */
  smtp?: SmtpSettings | null;
  /** Jobs run at once (default 2). */
  concurrency?: number;
  logger?: Logger;
  /** Install SIGINT/SIGTERM handlers (npm run worker); the server handles its own signals. */
  handleSignals?: boolean;
  /** Polling interval of graphile-worker in ms (new jobs also arrive by LISTEN/NOTIFY). */
  pollInterval?: number;
}

export class WorkerConfigError extends Error {}

/** SMTP settings from the environment: both SMTP_URL and SMTP_FROM, or neither. */
export function smtpFromEnv(env: NodeJS.ProcessEnv = process.env): SmtpSettings | null {
  const url = env.SMTP_URL?.trim() ?? '';
  const from = env.SMTP_FROM?.trim() ?? '';
  if (!url && !from) return null;
  if (!url) throw new WorkerConfigError('SMTP_FROM is set but SMTP_URL is missing (e.g. smtp://user:pass@host:587).');
  if (!from) throw new WorkerConfigError('SMTP_URL is set but SMTP_FROM (the sender address) is missing.');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WorkerConfigError('SMTP_URL is not a valid URL (e.g. smtp://user:pass@host:587).');
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') {
    throw new WorkerConfigError(`SMTP_URL must start with smtp:// or smtps:// (got ${parsed.protocol}//).`);
  }
  if (!/^[^@\s<>]+@[^@\s<>]+$/.test(from) && !/<[^@\s<>]+@[^@\s<>]+>$/.test(from)) {
    throw new WorkerConfigError('SMTP_FROM must be an e-mail address, e.g. "Planning <planning@example.org>".');
  }
  return { url, from };
}

/** The worker's configuration from the environment (DATABASE_URL is required). */
export function workerConfigFromEnv(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    throw new WorkerConfigError(
      'DATABASE_URL is required (the owner connection of the service database). ' +
        '`npm start` runs the worker in-process, including with the embedded database.',
    );
  }
  const concurrency = env.WORKER_CONCURRENCY ? Number(env.WORKER_CONCURRENCY) : undefined;
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1)) {
    throw new WorkerConfigError(`WORKER_CONCURRENCY must be a positive integer (got "${env.WORKER_CONCURRENCY}").`);
  }
  return {
    databaseUrl: withOperatingSystemUser(databaseUrl, env),
    businessTimeZone: env.TZ_BUSINESS ?? 'Europe/Paris',
    publicUrl: env.PUBLIC_URL ?? `http://localhost:${env.PORT ?? 8000}`,
    smtp: smtpFromEnv(env),
    concurrency,
  };
}
