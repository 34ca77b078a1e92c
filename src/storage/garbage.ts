import type pg from 'pg';
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
