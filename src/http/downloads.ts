import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { ApiError } from './errors.js';
import type { HandlerContext, HandlerResult } from './route.js';

/** What the SQL function of a download route answers: the stored file's metadata (its rules passed). */
interface StoredFileMeta {
  filename: string;
  content_type: string;
  storage_key: string;
}

/** RFC 6266 Content-Disposition with an ASCII fallback and the UTF-8 name. */
export function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/**
 * The `render` of a file download route: its SQL function answered the file's metadata
 * (readers and perimeter checked there); the file is streamed with the headers of the SPEC
 * (its type, nosniff, private no-store, attachment). A row whose file is missing is 404.
 */
export async function sendStoredFile(ctx: HandlerContext, result: unknown): Promise<HandlerResult> {
  const meta = result as StoredFileMeta;
  let size: number;
  try {
    const info = await stat(ctx.storage.pathOf(meta.storage_key));
    if (!info.isFile()) throw new Error('not a file');
    size = info.size;
  } catch {
    throw ApiError.notFound('Fichier introuvable.');
  }
  const { res } = ctx;
  res.status(200);
  res.setHeader('Content-Type', meta.content_type);
  res.setHeader('Content-Length', String(size));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'private, no-store');
  res.setHeader('Content-Disposition', contentDisposition(meta.filename));
  try {
    await pipeline(ctx.storage.open(meta.storage_key), res);
  } catch (error) {
    ctx.req.log?.error({ err: error }, 'file download interrupted');
    res.destroy();
  }
  return { handled: true };
}
