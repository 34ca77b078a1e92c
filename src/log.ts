/**
 * The service's logs (docs/running.md, "Logs"): JSON lines (pino) in production, short human lines in
 * the embedded demo, where the console also shows the demo logins and the printed e-mails.
 *   LOG_FORMAT     json | human (default: human in the embedded demo, json with DATABASE_URL)
 *   LOG_LEVEL      pino level (default: info in JSON, warn in the human format)
 *   LOG_REQUESTS   1: one line per request; 0: none (only the failed ones, 5xx, always written).
 *                  Default: on in JSON at level info, off in the human format.
 */
import { pino, type DestinationStream, type Logger } from 'pino';

export type LogFormat = 'json' | 'human';

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

interface LogRecord {
  level?: number;
  time?: number;
  msg?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
  err?: { message?: string; type?: string; stack?: string };
  [key: string]: unknown;
}

/**
 * One short line for a pino record: "22:04:31 GET /api/absences/ 200 12 ms" for a request,
 * "22:04:31 error unhandled error: message" otherwise (the stack's first frame with DEBUG).
 */
export function humanLine(record: LogRecord, withStack = false): string {
  const time = new Date(record.time ?? Date.now()).toTimeString().slice(0, 8);
  const level = LEVEL_NAMES[record.level ?? 30] ?? String(record.level);
  const parts = [time];
  if (level !== 'info') parts.push(level);
  if (record.req?.method) {
    parts.push(`${record.req.method} ${record.req.url ?? ''}`);
    if (record.res?.statusCode) parts.push(String(record.res.statusCode));
    if (typeof record.responseTime === 'number') parts.push(`${Math.round(record.responseTime)} ms`);
    if (record.err?.message) parts.push(`: ${record.err.message}`);
    else if (level !== 'info' && record.msg) parts.push(`: ${record.msg}`);
  } else {
    parts.push(record.msg ?? '');
    if (record.err?.message) parts.push(`: ${record.err.message}`);
  }
  let line = parts.join(' ').replace(/ : /g, ': ');
  if (withStack && record.err?.stack) line += `\n${record.err.stack.split('\n').slice(1).join('\n')}`;
  return line;
}

/** A pino destination writing humanLine()s to `out`. */
export function humanDestination(out: { write(text: string): unknown } = process.stdout, withStack = false): DestinationStream {
  return {
    write(text: string) {
      for (const raw of text.split('\n')) {
        if (!raw) continue;
        let record: LogRecord;
        try {
          record = JSON.parse(raw) as LogRecord;
        } catch {
          out.write(`${raw}\n`);
          continue;
        }
        out.write(`${humanLine(record, withStack)}\n`);
      }
    },
  };
}

export interface LogSettings {
  logFormat: LogFormat;
  logLevel: string;
}

/** The service's logger in its format; secrets of request headers are never written. */
export function createLogger(settings: LogSettings, out?: { write(text: string): unknown }): Logger {
  const options = { level: settings.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] };
  if (settings.logFormat === 'human') return pino(options, humanDestination(out, Boolean(process.env.DEBUG)));
  return out ? pino(options, out as DestinationStream) : pino(options);
}
