/**
 * Embedded mode has no SMTP server: every e-mail queued in app_private.email_outbox after
 * startup (invitations, password resets, ...) is printed to the console as it arrives, so
 * that links can be followed locally. Rows that existed at startup are never printed.
 * Printing does not mark a row as sent (delivery stays the worker's business).
 */
import pg from 'pg';

export interface OutboxRow {
  id: string;
  to_address: string;
  subject: string;
  body_text: string;
}

export function formatEmail(row: OutboxRow): string {
  const rule = '─'.repeat(60);
  return [
    `── E-mail #${row.id} ${rule.slice(12 + row.id.length)}`,
    `To: ${row.to_address}`,
    `Subject: ${row.subject}`,
    '',
    row.body_text.trimEnd(),
    rule,
    '',
  ].join('\n');
}

export class OutboxPrinter {
  private readonly pool: pg.Pool;
  private lastId = '0';
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private lastError: string | null = null;

  constructor(
    connectionString: string,
    private readonly write: (text: string) => void,
    private readonly intervalMs = 2000,
  ) {
    this.pool = new pg.Pool({ connectionString, max: 1, application_name: 'wfm-outbox-printer' });
    this.pool.on('error', () => {});
  }

  /** Remembers the last row present now, then polls. */
  async start(): Promise<void> {
    const { rows } = await this.pool.query<{ id: string }>('select coalesce(max(id), 0)::text as id from app_private.email_outbox');
    this.lastId = rows[0]!.id;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.poll().then(() => undefined).finally(() => {
        this.running = null;
        this.schedule();
      });
    }, this.intervalMs);
  }

  /** Prints the rows queued since the last poll; returns how many. */
  async poll(): Promise<number> {
    try {
      const { rows } = await this.pool.query<OutboxRow>(
        `select id::text as id, to_address, subject, body_text
         from app_private.email_outbox where id > $1::bigint order by id limit 200`,
        [this.lastId],
      );
      for (const row of rows) {
        this.write(formatEmail(row));
        this.lastId = row.id;
      }
      this.lastError = null;
      return rows.length;
    } catch (error) {
      // Said once per kind of failure (e.g. the database restarting), then retried.
      const message = (error as Error).message;
      if (message !== this.lastError && !this.stopped) this.write(`warning: cannot read the e-mail outbox: ${message}\n`);
      this.lastError = message;
      return 0;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.running) await this.running;
    await this.pool.end();
  }
}
