import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { SIGNATURE_LENGTH, cleanFilename, detectDocumentType, filenameForType, type DocumentContentType } from './file-type.js';

/** Metadata handed to SQL for a stored upload (the row holds metadata, the disk holds bytes). */
export interface StoredFile {
  filename: string;
  content_type: DocumentContentType;
  size_bytes: number;
  storage_key: string;
  sha256: string;
}

export type UploadProblem = 'format' | 'size';

/**
 * Files live in a storage directory outside any web root, named by a random key and
 * sharded by its first two characters. They are only ever served by the protected routes.
 */
export class FileStorage {
  constructor(readonly root: string) {}

  pathOf(storageKey: string): string {
    if (!/^[0-9a-f]{32}$/.test(storageKey)) throw new Error('invalid storage key');
    return path.join(this.root, storageKey.slice(0, 2), storageKey);
  }

  /**
   * Streams an upload to disk, checking its type by content and its size on the fly.
   * Returns the stored file, or the problem (the partial file is removed).
   */
  async save(stream: Readable, rawFilename: string | undefined, maxBytes: number): Promise<StoredFile | UploadProblem> {
    // The upload may fail (a body cut short) before the loop below reads it: an 'error' with
    // no listener would end the process. Heard from here on, it surfaces in the loop instead.
    stream.on('error', () => undefined);
    const storageKey = randomBytes(16).toString('hex');
    const finalPath = this.pathOf(storageKey);
    await mkdir(path.dirname(finalPath), { recursive: true });
    const tempPath = `${finalPath}.part`;
    const hash = createHash('sha256');
    const out = createWriteStream(tempPath, { flags: 'wx', mode: 0o600 });
    let size = 0;
    let head = Buffer.alloc(0);
    let problem: UploadProblem | null = null;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        if (problem) continue; // drain the rest of the part
        size += chunk.length;
        if (size > maxBytes) {
          problem = 'size';
          continue;
        }
        if (head.length < SIGNATURE_LENGTH) head = Buffer.concat([head, chunk]).subarray(0, SIGNATURE_LENGTH);
        hash.update(chunk);
        if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      }
      await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
      const contentType = detectDocumentType(head);
      if (!problem && (size === 0 || !contentType)) problem = 'format';
      if (problem || !contentType) {
        await rm(tempPath, { force: true });
        return problem ?? 'format';
      }
      await rename(tempPath, finalPath);
      return {
        filename: filenameForType(cleanFilename(rawFilename), contentType),
        content_type: contentType,
        size_bytes: size,
        storage_key: storageKey,
        sha256: hash.digest('hex'),
      };
    } catch (error) {
      // The write stream opens its file asynchronously: removing it before the stream has
      // closed could run before the open and leave the .part file (and its descriptor) behind.
      const closed = out.closed ? Promise.resolve() : new Promise<void>((resolve) => out.once('close', () => resolve()));
      out.destroy();
      await closed;
      await rm(tempPath, { force: true });
      throw error;
    }
  }

  async remove(storageKeys: Iterable<string>): Promise<void> {
    await Promise.all([...storageKeys].map((key) => rm(this.pathOf(key), { force: true })));
  }

  /**
   * Stored files and partial uploads last modified before `before` (ms since the epoch):
   * complete files by key, partial ones by path (the orphan sweep, src/storage/garbage.ts).
   */
  async listOlderThan(before: number): Promise<{ keys: string[]; parts: string[] }> {
    const keys: string[] = [];
    const parts: string[] = [];
    for (const shard of await readdir(this.root).catch(() => [] as string[])) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      for (const name of await readdir(path.join(this.root, shard)).catch(() => [] as string[])) {
        const match = /^([0-9a-f]{32})(\.part)?$/.exec(name);
        if (!match || match[1]!.slice(0, 2) !== shard) continue;
        const info = await stat(path.join(this.root, shard, name)).catch(() => null);
        if (!info?.isFile() || info.mtimeMs >= before) continue;
        if (match[2]) parts.push(match[1]!);
        else keys.push(match[1]!);
      }
    }
    return { keys, parts };
  }

  /** Removes partial uploads (.part) by key. */
  async removePartial(storageKeys: Iterable<string>): Promise<void> {
    await Promise.all([...storageKeys].map((key) => rm(`${this.pathOf(key)}.part`, { force: true })));
  }

  async exists(storageKey: string): Promise<boolean> {
    try {
      return (await stat(this.pathOf(storageKey))).isFile();
    } catch {
      return false;
    }
  }

  open(storageKey: string): Readable {
    return createReadStream(this.pathOf(storageKey));
  }
}
