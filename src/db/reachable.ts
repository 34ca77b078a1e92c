/**
 * Waiting for the database at start-up. A PostgreSQL that is restarting, not started yet or
 * out of connection slots is a reason to wait, not to die: the server and the worker retry
 * until it answers. A refusal that waiting cannot cure (bad password, unknown database) stops
 * at once, and so does a database still unreachable after `timeoutMs`.
 */
import pg from 'pg';
import { isConnectionLoss } from './connection-loss.js';

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Told once, when the first attempt fails. */
  log?: (line: string) => void;
}

export async function waitForDatabase(connectionString: string, options: WaitOptions = {}): Promise<void> {
  const { timeoutMs = 120_000, intervalMs = 500, log } = options;
  const started = Date.now();
  let told = false;
  for (;;) {
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2000, application_name: 'wfm-start' });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (error) {
      const timedOut = /timeout/i.test((error as Error).message ?? '');
      if (!isConnectionLoss(error) && !timedOut) throw error;
      if (Date.now() - started >= timeoutMs) {
        throw new Error(`The database is still unreachable after ${Math.round(timeoutMs / 1000)} s: ${(error as Error).message}`);
      }
      if (!told) {
        log?.(`The database is unreachable (${(error as Error).message}): retrying every ${intervalMs} ms.`);
        told = true;
      }
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
