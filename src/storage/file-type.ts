/** Content types accepted for documents, recognised by their first bytes (never by name). */
export const DOCUMENT_CONTENT_TYPES = ['application/pdf', 'image/jpeg', 'image/png'] as const;
export type DocumentContentType = (typeof DOCUMENT_CONTENT_TYPES)[number];

const SIGNATURES: Array<{ type: DocumentContentType; bytes: number[] }> = [
  { type: 'application/pdf', bytes: [0x25, 0x50, 0x44, 0x46, 0x2d] }, // %PDF-
  { type: 'image/png', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: 'image/jpeg', bytes: [0xff, 0xd8, 0xff] },
];

/** Bytes needed to recognise every accepted type. */
export const SIGNATURE_LENGTH = Math.max(...SIGNATURES.map((sig) => sig.bytes.length));

export function detectDocumentType(head: Uint8Array): DocumentContentType | null {
  for (const { type, bytes } of SIGNATURES) {
    if (head.length >= bytes.length && bytes.every((byte, i) => head[i] === byte)) return type;
  }
  return null;
}

/** File name extensions of each accepted type; the first is the one given to a name without it. */
const EXTENSIONS: Record<DocumentContentType, string[]> = {
  'application/pdf': ['pdf'],
  'image/png': ['png'],
  'image/jpeg': ['jpg', 'jpeg'],
};

/**
 * The name a document is stored under: its extension is the detected type's, so that a
 * polyglot (a PDF sent as x.html) is never offered back under the uploader's extension.
 * A last extension that is not the type's (letters and digits, up to 5) is replaced.
 */
export function filenameForType(name: string, type: DocumentContentType): string {
  const dot = name.lastIndexOf('.');
  const extension = dot === -1 ? '' : name.slice(dot + 1);
  if (EXTENSIONS[type].includes(extension.toLowerCase())) return name;
  const replaced = /^(?=.*[a-z])[a-z0-9]{1,5}$/i.test(extension);
  const stem = (replaced ? name.slice(0, dot) : name) || 'document';
  const suffix = `.${EXTENSIONS[type][0]}`;
  return `${stem.slice(0, 255 - suffix.length)}${suffix}`;
}

/** A display filename: no path, no control characters, at most 255 characters. */
export function cleanFilename(raw: string | undefined): string {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const cleaned = base.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return (cleaned || 'document').slice(0, 255);
}
