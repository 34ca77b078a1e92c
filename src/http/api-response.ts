/**
 * The headers of every answer of the API and of GraphQL (personal data: never cached by
 * intermediaries or browsers; nosniff; no framing), and how an API route that writes its own
 * answer sends them: in one writeHead with a header array (src/http/compress.ts, sendWhole)
 * instead of a setHeader each. src/server.ts either sets them at once (setApiHeaders) or, for a
 * route whose every answer goes through this module or the error handler, leaves them pending
 * (deferApiHeaders): whoever answers takes them (takeApiHeaders) or sets them (applyApiHeaders).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendWhole } from './compress.js';

/** The security headers of every answer (name, value, …). */
export const SECURITY_HEADERS = ['X-Content-Type-Options', 'nosniff', 'Referrer-Policy', 'same-origin', 'X-Frame-Options', 'DENY'] as const;

/** The headers of an answer under /api and /graphql: the security headers and no caching. */
export const API_HEADERS: readonly string[] = [...SECURITY_HEADERS, 'Cache-Control', 'no-store'];

const PENDING = Symbol('apiHeadersPending');
const SELF_COMPRESSED = Symbol('apiSelfCompressed');

type Marked = ServerResponse & { [PENDING]?: boolean; [SELF_COMPRESSED]?: boolean };

/** Sets `headers` (name, value, …) on `res`, one setHeader each. */
export function setHeaders(res: ServerResponse, headers: readonly string[]): void {
  for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i]!, headers[i + 1]!);
}

/** The API's headers are to be sent with the answer (takeApiHeaders / applyApiHeaders). */
export function deferApiHeaders(res: ServerResponse): void {
  (res as Marked)[PENDING] = true;
}

/** Sets the API's headers now if they are still pending. */
export function applyApiHeaders(res: ServerResponse): void {
  if (!(res as Marked)[PENDING]) return;
  (res as Marked)[PENDING] = false;
  setHeaders(res, API_HEADERS);
}

/** Whether the API's headers are still to be sent; the caller sends them (false after). */
export function takeApiHeaders(res: ServerResponse): boolean {
  if (!(res as Marked)[PENDING]) return false;
  (res as Marked)[PENDING] = false;
  return true;
}

/** This answer is compressed by the API itself (src/http/compress.ts), not by the middleware. */
export function markSelfCompressed(res: ServerResponse): void {
  (res as Marked)[SELF_COMPRESSED] = true;
}

export function isSelfCompressed(res: ServerResponse): boolean {
  return (res as Marked)[SELF_COMPRESSED] === true;
}

/**
 * `headers` (name, value, …) after `base`, a name of `headers` replacing the same name of `base`
 * (case-insensitive), as setHeader would: made once per route, not per answer.
 */
export function mergeHeaders(base: readonly string[], headers: Readonly<Record<string, string>> = {}): string[] {
  const names = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  const merged: string[] = [];
  for (let i = 0; i < base.length; i += 2) if (!names.has(base[i]!.toLowerCase())) merged.push(base[i]!, base[i + 1]!);
  for (const [name, value] of Object.entries(headers)) merged.push(name, value);
  return merged;
}

/**
 * Whether the request carries a conditional header: its answer goes through Express (its
 * freshness check), uncompressed; such a request never comes from the API's clients, and no
 * answer has an ETag or a date.
 */
export function isConditional(req: IncomingMessage): boolean {
  return req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined;
}

/**
 * Express's res.json of `body`. On a response the API compresses itself: the same text
 * (JSON.stringify, 'json spaces' 0) and type, compressed as negotiated; the API's headers if
 * pending.
 */
export function sendApiJson(req: IncomingMessage, res: ServerResponse & { json(body: unknown): unknown }, status: number,
                            body: unknown): Promise<void> {
  if (!isSelfCompressed(res)) {
    res.statusCode = status;
    res.json(body);
    return Promise.resolve();
  }
  const pending = takeApiHeaders(res);
  if (isConditional(req)) {
    if (pending) setHeaders(res, API_HEADERS);
    res.setHeader('Vary', 'Accept-Encoding');
    res.statusCode = status;
    res.json(body);
    return Promise.resolve();
  }
  return sendWhole(req, res, status, 'application/json; charset=utf-8', JSON.stringify(body) ?? '', pending ? [...API_HEADERS] : []);
}
