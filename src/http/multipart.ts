import busboy from 'busboy';
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

  await new Promise<void>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // File names are UTF-8 (browsers, fetch); busboy's default (latin1) garbles accents.
        defParamCharset: 'utf8',
        limits: { fileSize: spec.maxFileBytes + 1, files: 20, fields: 100, fieldSize: 100_000 },
      });
    } catch {
      reject(ApiError.field('non_field_errors', 'Corps multipart illisible.'));
      return;
    }
    parser.on('field', (name, value) => {
      if (arrays.has(name)) {
        const list = (fields[name] as string[] | undefined) ?? [];
        list.push(value);
        fields[name] = list;
      } else {
        fields[name] = value;
      }
    });
    parser.on('file', (name, stream, info) => {
      if (!fileFields.has(name)) {
        stream.resume();
        addError(name, 'Ce champ n’accepte pas de fichier.');
        return;
      }
      const position = ordered.push(null) - 1;
      pending.push(
        storage.save(stream, info.filename, spec.maxFileBytes).then((result) => {
          if (result === 'format') addError(name, FORMAT_MESSAGE);
          else if (result === 'size') addError(name, sizeMessage(spec.maxFileBytes));
          else {
            storedKeys.push(result.storage_key);
            ordered[position] = { name, file: result };
          }
        }),
      );
    });
    parser.on('error', () => reject(ApiError.field('non_field_errors', 'Corps multipart illisible.')));
    parser.on('close', () => resolve());
    req.pipe(parser);
  }).catch(async (error) => {
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
