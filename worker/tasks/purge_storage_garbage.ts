/**
 * purge_storage_garbage: every 10 minutes (worker/crontab). Removes from the storage
 * directory the files of deleted document rows (absence documents, certificates,
 * attachments), after the deleting transaction committed. Idempotent: a file already gone is
 * skipped; a failed removal leaves its key queued for the next run.
 * Then sweeps the orphans: files no row names and partial uploads, older than an hour (left
 * by an upload whose commit outcome was unknown, or by a process killed mid-upload).
 * Storage directory: STORAGE_DIR (default ./.data/storage), as the server.
 */
import type { JobHelpers } from 'graphile-worker';
import { FileStorage } from '../../src/storage/storage.js';
import { purgeStorageGarbageIn, sweepOrphanFiles } from '../../src/storage/garbage.js';

export function storageFromEnv(): FileStorage {
  return new FileStorage(process.env.STORAGE_DIR ?? './.data/storage');
}

export default async function task(_payload: unknown, helpers: JobHelpers): Promise<void> {
  const storage = storageFromEnv();
  let total = 0;
  for (;;) {
    const purged = await helpers.withPgClient(async (client) => {
      await client.query('begin');
      try {
        const count = await purgeStorageGarbageIn(client, storage);
        await client.query('commit');
        return count;
      } catch (error) {
        await client.query('rollback');
        throw error;
      }
    });
    total += purged;
    if (purged < 500) break;
  }
  const orphans = await helpers.withPgClient((client) => sweepOrphanFiles(client, storage));
  helpers.logger.info(`purge_storage_garbage: ${total} file(s) removed${orphans ? `, ${orphans} orphan file(s) swept` : ''}`);
}
