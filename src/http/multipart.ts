import busboy from 'busboy';
import { pipeline, type Readable } from 'node:stream';
import type { Request } from 'express';
import { ApiError, envelopeKey, type FieldErrors } from './errors.js';
import type { MultipartSpec } from './route.js';
import type { FileStorage, StoredFile } from '../storage/storage.js';

export interface ParsedMultipart {
  fields: Record<string, unknown>;
  files: Record<string, StoredFile[]>;
  storedKeys: string[];
}

const FORMAT_MESSAGE = 'Format de fichier non accepté : seuls les fichiers PDF, JPG et PNG sont acceptés.';
const sizeMessage = (maxBytes: number) =>
  `Fichier trop volumineux : ${Math.round(maxBytes / (1024 * 1024))} Mo au plus par fichier.`;

/** Limits of one multipart body: a part over them refuses the whole request (nothing is stored). */
export const MAX_FILES = 20;
export const MAX_FIELDS = 100;
export const MAX_FIELD_BYTES = 100_000;

const unreadable = () => ApiError.field('non_field_errors', 'Corps multipart illisible.');

export function isMultipart(req: Request): boolean {
  return (req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data');
}

/**
 * Parses a multipart body: plain fields (repeated ones become arrays when declared so),
 * and files streamed to storage, checked by content and size. Any refused file answers
 * 400 under its field after every stored file of the request was removed.
 */
export async function parseMultipart(req: Request, spec: MultipartSpec, storage: FileStorage): Promise<ParsedMultipart> {
  const fields: Record<string, unknown> = {};
  const files: Record<string, StoredFile[]> = {};
  const storedKeys: string[] = [];
  const errors: FieldErrors = {};
  const pending: Promise<void>[] = [];
  const arrays = new Set(spec.arrays ?? []);
  const fileFields = new Set(spec.files);
  // Files are stored concurrently; they are handed over in the order they were sent.
  const ordered: Array<{ name: string; file: StoredFile } | null> = [];

  const addError = (field: string, message: string) => {
    const list = (errors[envelopeKey(field)] ??= []);
    if (!list.includes(message)) list.push(message);
  };

  let fileCount = 0;
  let fieldCount = 0;
  // File streams being stored, and whether the body already failed: busboy may report a
  // malformed part and go on parsing, or leave a stream neither ended nor destroyed.
  const open = new Set<Readable>();
  let failed = false;
  await new Promise<void>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // File names are UTF-8 (browsers, fetch); busboy's default (latin1) garbles accents.
        defParamCharset: 'utf8',
        // One above each limit: the part over it is still seen, so its error names its field.
        limits: { fileSize: spec.maxFileBytes + 1, files: MAX_FILES + 1, fields: MAX_FIELDS + 1, fieldSize: MAX_FIELD_BYTES },
      });
    } catch {
      reject(unreadable());
      return;
    }
    parser.on('field', (name, value, info) => {
      fieldCount += 1;
      if (fieldCount > MAX_FIELDS) addError(name, `Au plus ${MAX_FIELDS} champs par requête.`);
      if (info.nameTruncated) addError('non_field_errors', 'Nom de champ trop long.');
      if (info.valueTruncated) addError(name, `Au plus ${MAX_FIELD_BYTES} octets par champ.`);
      if (arrays.has(name)) {
        const list = (fields[name] as string[] | undefined) ?? [];
        list.push(value);
        fields[name] = list;
      } else {
        fields[name] = value;
      }
    });
    parser.on('file', (name, stream, info) => {
      fileCount += 1;
      if (failed || !fileFields.has(name) || fileCount > MAX_FILES) {
        // Drained, never stored; a body cut short errors this stream too.
        stream.on('error', () => undefined);
        stream.resume();
        addError(name, fileFields.has(name) ? `Au plus ${MAX_FILES} fichiers par requête.` : 'Ce champ n’accepte pas de fichier.');
        return;
      }
      open.add(stream);
      stream.once('close', () => open.delete(stream));
      const position = ordered.push(null) - 1;
      const saving = storage.save(stream, info.filename, spec.maxFileBytes).then((result) => {
        if (result === 'format') addError(name, FORMAT_MESSAGE);
        else if (result === 'size') addError(name, sizeMessage(spec.maxFileBytes));
        else {
          storedKeys.push(result.storage_key);
          ordered[position] = { name, file: result };
        }
      });
      // Awaited once the body is read; until then a failed save must not count as unhandled.
      saving.catch(() => undefined);
      pending.push(saving);
    });
    parser.on('filesLimit', () => addError('non_field_errors', `Au plus ${MAX_FILES} fichiers par requête.`));
    parser.on('fieldsLimit', () => addError('non_field_errors', `Au plus ${MAX_FIELDS} champs par requête.`));
    // A body cut short (no closing boundary) or a client gone mid-upload destroys the parser,
    // which destroys the file stream in progress: its save removes the .part and closes it.
    pipeline(req, parser, (error) => (error ? reject(unreadable()) : resolve()));
  }).catch(async (error) => {
    failed = true;
    // Every save still reading ends now: it removes its .part and closes its descriptor.
    for (const stream of open) stream.destroy(new Error('multipart body refused'));
    await Promise.allSettled(pending);
    await storage.remove(storedKeys);
    throw error;
  });

  await Promise.all(pending).catch(async (error) => {
    await storage.remove(storedKeys);
    throw error;
  });
  if (Object.keys(errors).length > 0) {
    await storage.remove(storedKeys);
    throw ApiError.badRequest(errors);
  }
  for (const entry of ordered) {
    if (entry) (files[entry.name] ??= []).push(entry.file);
  }
  return { fields, files, storedKeys };
}
