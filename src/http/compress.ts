/**
 * The API's own compression of the answers it holds whole (issue 31, point 5): the JSON text a
 * route's call returned, an error envelope. The `compression` middleware wrapped every answer
 * (res.write, res.end, res.on, a `close` listener and an on-headers hook per request, even for
 * the 300-byte ones it never compresses); the API decides on the body it already has, with the
 * same rules (src/server.ts mounts the middleware for everything else):
 *   - a compressible type (the API's are JSON) gets `Vary: Accept-Encoding`, whatever its size;
 *   - from 1 KB on (THRESHOLD), not for HEAD, the encoding negotiated from Accept-Encoding among
 *     br, gzip, deflate, identity (br then gzip preferred at equal quality), none without the header;
 *   - brotli at quality 4 (BROTLI_OPTIONS), gzip and deflate at zlib's default level;
 *   - a compressed answer carries no Content-Length (sent chunked, as the middleware sent it).
 * test/api/compress.test.ts compares the decisions with the middleware's on the same requests.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { brotliCompress, constants as zlibConstants, deflate, gzip, type BrotliOptions } from 'node:zlib';

/** Below this many bytes an answer is sent as it is (the middleware's default threshold). */
export const COMPRESSION_THRESHOLD = 1024;

/** Brotli at quality 4: at its default 11 a month of planning took ~100 ms of CPU to compress. */
export const BROTLI_OPTIONS: BrotliOptions = { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } };

export type Encoding = 'br' | 'gzip' | 'deflate';

const SUPPORTED = ['br', 'gzip', 'deflate', 'identity'] as const;
const PREFERRED = ['br', 'gzip'];

/*
 * Accept-Encoding negotiation, as negotiator 0.6.4 (the `compression` middleware's, MIT) does it:
 * same parsing, same implicit identity, same priorities and order.
 */
interface AcceptSpec { encoding: string; q: number; i: number }
interface Priority { encoding: string; i: number; o: number; q: number; s: number }

const SIMPLE_ENCODING = /^\s*([^\s;]+)\s*(?:;(.*))?$/;

function parseEncoding(text: string, i: number): AcceptSpec | null {
  const match = SIMPLE_ENCODING.exec(text);
  if (!match) return null;
  let q = 1;
  if (match[2]) {
    for (const param of match[2].split(';')) {
      const p = param.trim().split('=');
      if (p[0] === 'q') {
        q = parseFloat(p[1]!);
        break;
      }
    }
  }
  return { encoding: match[1]!, q, i };
}

function specify(encoding: string, spec: AcceptSpec, index: number): Priority | null {
  let s = 0;
  if (spec.encoding.toLowerCase() === encoding.toLowerCase()) s |= 1;
  else if (spec.encoding !== '*') return null;
  return { encoding, i: index, o: spec.i, q: spec.q, s };
}

function parseAcceptEncoding(accept: string): AcceptSpec[] {
  const parts = accept.split(',');
  const accepts: AcceptSpec[] = [];
  let hasIdentity = false;
  let minQuality = 1;
  for (let i = 0; i < parts.length; i++) {
    const encoding = parseEncoding(parts[i]!.trim(), i);
    if (encoding) {
      accepts.push(encoding);
      hasIdentity = hasIdentity || specify('identity', encoding, i) !== null;
      minQuality = Math.min(minQuality, encoding.q || 1);
    }
  }
  // An identity not named is acceptable, at the lowest quality the header gives.
  if (!hasIdentity) accepts.push({ encoding: 'identity', q: minQuality, i: parts.length });
  return accepts;
}

function priorityOf(encoding: string, accepted: AcceptSpec[], index: number): Priority {
  let priority: Priority = { encoding, i: index, o: -1, q: 0, s: 0 };
  for (const spec of accepted) {
    const found = specify(encoding, spec, index);
    if (found && (priority.s - found.s || priority.q - found.q || priority.o - found.o) < 0) priority = found;
  }
  return priority;
}

function comparePriorities(a: Priority, b: Priority): number {
  if (a.q !== b.q) return b.q - a.q;
  const aPreferred = PREFERRED.indexOf(a.encoding);
  const bPreferred = PREFERRED.indexOf(b.encoding);
  if (aPreferred === -1 && bPreferred === -1) return (b.s - a.s) || (a.o - b.o) || (a.i - b.i);
  if (aPreferred !== -1 && bPreferred !== -1) return aPreferred - bPreferred;
  return aPreferred === -1 ? 1 : -1;
}

/**
 * The encoding of an answer to a request with this Accept-Encoding header, as the `compression`
 * middleware negotiates it; null for identity (no header, identity preferred, nothing acceptable).
 */
export function negotiateEncoding(acceptEncoding: string | undefined): Encoding | null {
  // Without the header the middleware enforces identity.
  if (!acceptEncoding) return null;
  const accepted = parseAcceptEncoding(acceptEncoding);
  const priorities = SUPPORTED.map((encoding, index) => priorityOf(encoding, accepted, index)).filter((p) => p.q > 0);
  const best = priorities.sort(comparePriorities)[0];
  return best && best.encoding !== 'identity' ? (best.encoding as Encoding) : null;
}

function compressed(body: Buffer, encoding: Encoding): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, result: Buffer) => (error ? reject(error) : resolve(result));
    if (encoding === 'br') brotliCompress(body, BROTLI_OPTIONS, done);
    else if (encoding === 'gzip') gzip(body, done);
    else deflate(body, done);
  });
}

/**
 * Sends a whole answer of a compressible type (`contentType`, JSON for the API): `headers` (name,
 * value, name, value…) and the type in ONE writeHead with a header array (no setHeader per field),
 * then the body; compressed as negotiated from 1 KB on. Resolves once the answer is handed to the
 * socket (a compression error answers the body as it is).
 */
export async function sendWhole(req: IncomingMessage, res: ServerResponse, status: number, contentType: string,
                                body: Buffer | string, headers: string[] = []): Promise<void> {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const encoding = length >= COMPRESSION_THRESHOLD && req.method !== 'HEAD' && res.getHeader('Content-Encoding') === undefined
    ? negotiateEncoding(req.headers['accept-encoding'] as string | undefined) : null;
  if (encoding) {
    let packed: Buffer | null = null;
    try {
      packed = await compressed(typeof body === 'string' ? Buffer.from(body) : body, encoding);
    } catch {
      packed = null;
    }
    if (packed && !res.headersSent && !res.destroyed) {
      // Chunked, as the middleware sent a compressed answer (its length is the transfer's).
      res.removeHeader('Content-Length');
      res.writeHead(status, [...headers, 'Content-Type', contentType, 'Content-Encoding', encoding, 'Vary', varyWith(res)]);
      res.end(packed);
      return;
    }
    if (res.headersSent || res.destroyed) return;
  }
  res.writeHead(status, [...headers, 'Content-Type', contentType, 'Content-Length', String(length), 'Vary', varyWith(res)]);
  res.end(body);
}

/** The Vary header with Accept-Encoding added (once), as the middleware's `vary` adds it. */
function varyWith(res: ServerResponse): string {
  const current = res.getHeader('Vary');
  if (current === undefined) return 'Accept-Encoding';
  const text = Array.isArray(current) ? current.join(', ') : String(current);
  if (text.trim() === '*' || /(?:^|,)\s*accept-encoding\s*(?:,|$)/i.test(text)) return text;
  return `${text}, Accept-Encoding`;
}
