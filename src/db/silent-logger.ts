import { Logger } from 'graphile-migrate';

/** graphile-migrate logs every step; keep only warnings and errors. */
export function makeSilentLogger(): Logger {
  return new Logger(() => (level, message) => {
    if (level === 'error' || level === 'warning') {
      process.stderr.write(`[migrate] ${message}\n`);
    }
  });
}
