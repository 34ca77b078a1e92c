import type pg from 'pg';
import { withAuthenticatorTransaction } from '../db/transaction.js';
import type { FileStorage } from './storage.js';

/**
 * Removes the files whose rows were deleted (app_private.storage_garbage), after the
 * deleting transaction committed. The keys are taken and the files removed inside one
 * transaction: if a removal fails, the transaction rolls back and the keys stay queued for
 * the next run. Returns the number of files purged.
 *
 * `client` must be inside a transaction, connected as the owner (worker) or the
 * authenticator (request handlers), both allowed to call app_private.storage_garbage_take.
 */
export async function purgeStorageGarbageIn(client: pg.ClientBase, storage: FileStorage, limit = 500): Promise<number> {
  const { rows } = await client.query<{ key: string }>('select app_private.storage_garbage_take($1) as key', [limit]);
  const keys = rows.map((row) => row.key).filter((key) => /^[0-9a-f]{32}$/.test(key));
  await storage.remove(keys);
  return keys.length;
}

/**
 * After a committed write that deleted rows naming files (a route's `purgeStorageAfterCommit`,
 * a back-office action's `purgesFiles`): removes their files now, as the authenticator, rather
 * than waiting for the worker. A failure only delays the removal (the keys stay queued).
 */
export async function purgeAfterCommit(
  pool: pg.Pool,
  storage: FileStorage,
  options: { frozenNow?: string | null; log?: { warn: (details: object, message: string) => void } },
): Promise<void> {
  try {
    await withAuthenticatorTransaction(pool, (client) => purgeStorageGarbageIn(client, storage), { frozenNow: options.frozenNow });
  } catch (error) {
    options.log?.warn({ err: error }, 'storage purge left to the worker');
  }
}

/** Purges in a transaction of its own on a pool (the worker task). */
export async function purgeStorageGarbage(pool: pg.Pool, storage: FileStorage, limit = 500): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const count = await purgeStorageGarbageIn(client, storage, limit);
    await client.query('commit');
    return count;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Files the sweep leaves alone: an upload in flight is never this old (requests time out long before). */
export const ORPHAN_MIN_AGE_MS = 60 * 60 * 1000;

/**
 * Removes stored files that no row names, and partial (.part) files, older than
 * `olderThanMs`. They are left by uploads whose transaction outcome the server could not know
 * (the connection died at COMMIT: the files are kept, since the rows may exist) and by a
 * process killed mid-upload. Which keys are unreferenced is SQL's answer
 * (app_private.storage_keys_unreferenced). Returns the number of files removed.
 */
export async function sweepOrphanFiles(
  client: pg.ClientBase,
  storage: FileStorage,
  { olderThanMs = ORPHAN_MIN_AGE_MS, batch = 1000 }: { olderThanMs?: number; batch?: number } = {},
): Promise<number> {
  const { keys, parts } = await storage.listOlderThan(Date.now() - olderThanMs);
  let removed = 0;
  for (let i = 0; i < keys.length; i += batch) {
    const { rows } = await client.query<{ key: string }>(
      'select app_private.storage_keys_unreferenced($1::text[]) as key', [keys.slice(i, i + batch)],
    );
    await storage.remove(rows.map((row) => row.key));
    removed += rows.length;
  }
  await storage.removePartial(parts);
  return removed + parts.length;
}
