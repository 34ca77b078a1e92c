import fc from 'fast-check';
import type { WriteOperation } from './fuzz.js';

/**
 * How a fuzz case's body travels, beyond a JSON text: nested thousands of levels deep,
 * behind a path whose encoding is odd, or as a multipart body that may be truncated (no
 * closing boundary), cut off before its Content-Length, or over the multipart limits.
 */
export type BodyShape =
  | { kind: 'json' }
  | { kind: 'deep-json'; levels: number; bracket: '[' | '{' }
  | { kind: 'path'; segment: string }
  | { kind: 'multipart'; parts: FilePart[]; ending: 'closed' | 'truncated' | 'aborted'; overflow: Overflow };

export interface FilePart {
  field: string;
  filename: string;
  content: 'pdf' | 'png' | 'jpg' | 'html' | 'empty';
  padding: number;
}

/** Beyond the multipart limits: 21 files, 101 fields, a field over 100 000 bytes, a file over 10 MB. */
type Overflow = 'none' | 'files' | 'fields' | 'field-size' | 'file-size';

// Sent raw on the request line: only bytes a client can put there (a space would be Node's own 400).
const ODD_SEGMENTS = [
  '%zz', '%', '%E0%A4%A', '%00', '%2e%2e', '..%2f..%2fetc', '%F0%9F%92%A5', '1%20', '+1', '0x10', '1e3', '%31',
  '-0', '%D9%A1', '2147483648', '99999999999999999999', '1.0', '%20%201', '%C0%AF', 'x'.repeat(3000),
];

const FILENAMES = ['certificat.pdf', 'x.html', 'scan', 'photo.JPG', '../../etc/passwd', 'a\u0001b.png', '', '💥.pdf', `${'n'.repeat(300)}.pdf`];

function partArbitrary(fields: string[]): fc.Arbitrary<FilePart> {
  return fc.record({
    field: fc.constantFrom(...fields, 'comment', ''),
    filename: fc.constantFrom(...FILENAMES),
    content: fc.constantFrom('pdf', 'png', 'jpg', 'html', 'empty'),
    padding: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 70_000 })),
  });
}

export function shapeFor(op: WriteOperation): fc.Arbitrary<BodyShape> {
  const shapes: Array<{ arbitrary: fc.Arbitrary<BodyShape>; weight: number }> = [
    { arbitrary: fc.constant({ kind: 'json' } as const), weight: 12 },
    {
      arbitrary: fc.record({ kind: fc.constant('deep-json' as const), levels: fc.integer({ min: 20, max: 6000 }), bracket: fc.constantFrom('[' as const, '{' as const) }),
      weight: 1,
    },
  ];
  if (op.pathParams.length > 0) {
    shapes.push({ arbitrary: fc.record({ kind: fc.constant('path' as const), segment: fc.constantFrom(...ODD_SEGMENTS) }), weight: 1 });
  }
  if (op.multipart) {
    shapes.push({
      arbitrary: fc.record({
        kind: fc.constant('multipart' as const),
        parts: fc.array(partArbitrary(op.multipart.files), { maxLength: 3 }),
        ending: fc.constantFrom('closed' as const, 'closed' as const, 'truncated' as const, 'aborted' as const),
        overflow: fc.oneof(
          { arbitrary: fc.constant('none' as const), weight: 40 },
          { arbitrary: fc.constantFrom('files' as const, 'fields' as const, 'field-size' as const), weight: 3 },
          { arbitrary: fc.constant('file-size' as const), weight: 1 },
        ),
      }),
      weight: 10,
    });
  }
  return fc.oneof(...shapes);
}

const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const CONTENT: Record<FilePart['content'], Buffer> = {
  pdf: PDF,
  png: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  jpg: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46]),
  html: Buffer.from('<html><script>alert(1)</script></html>'),
  empty: Buffer.alloc(0),
};

const BOUNDARY = '----wfmFuzzBoundary3x9Q';

/** The multipart body of a shape: the JSON body's keys as form fields, then the file parts. */
export function multipartBytes(shape: Extract<BodyShape, { kind: 'multipart' }>, rawJson: string, fileField: string): Buffer {
  const chunks: Buffer[] = [];
  const field = (name: string, value: string) =>
    chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`, 'utf8'));
  const file = (part: FilePart) => {
    chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.field}"; filename="${part.filename.replace(/"/g, '')}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n', 'utf8'));
    chunks.push(CONTENT[part.content], Buffer.alloc(part.content === 'empty' ? 0 : part.padding, 0x20), Buffer.from('\r\n'));
  };
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(rawJson);
  } catch {
    // a malformed JSON case: no form fields
  }
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
    for (const [name, value] of Object.entries(parsed)) {
      for (const item of Array.isArray(value) ? value : [value]) field(name, typeof item === 'string' ? item : JSON.stringify(item) ?? '');
    }
  }
  for (const part of shape.parts) file(part);
  if (shape.overflow === 'files') for (let i = 0; i < 21; i += 1) file({ field: fileField, filename: `p${i}.pdf`, content: 'pdf', padding: 0 });
  if (shape.overflow === 'fields') for (let i = 0; i < 101; i += 1) field(`extra_${i}`, 'x');
  if (shape.overflow === 'field-size') field('comment', 'x'.repeat(100_001));
  if (shape.overflow === 'file-size') file({ field: fileField, filename: 'big.pdf', content: 'pdf', padding: 10 * 1024 * 1024 });
  const body = Buffer.concat(chunks);
  // A truncated or aborted body stops in the middle of its last part, without closing boundary.
  if (shape.ending !== 'closed') return body.subarray(0, Math.max(1, body.length - 7));
  return Buffer.concat([body, Buffer.from(`--${BOUNDARY}--\r\n`)]);
}

export const MULTIPART_CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

/** A JSON text nested `levels` deep under one key. */
export function deepJson(levels: number, bracket: '[' | '{'): string {
  const [open, close] = bracket === '[' ? ['[', ']'] : ['{"a":', '}'];
  return `{"comment":${open.repeat(levels)}${bracket === '[' ? '' : '1'}${close.repeat(levels)}}`;
}
