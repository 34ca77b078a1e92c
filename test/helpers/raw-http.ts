/**
 * Requests written byte by byte on a socket, for bodies fetch() will not send: truncated
 * multipart bodies, a Content-Length the client never fulfils, paths with raw percent signs.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

export interface RawResponse {
  status: number;
  text: string;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Announced Content-Length (defaults to the body's length). */
  contentLength?: number;
  /**
   * After writing: 'wait' keeps the socket open for the answer; 'abort' closes the socket
   * at once (an upload cut off), resolving null.
   */
  then?: 'wait' | 'abort';
}

/** Sends one HTTP/1.1 request on a fresh connection; resolves the response, or null when none came. */
export function rawRequest(baseUrl: string, request: RawRequest, timeoutMs = 10_000): Promise<RawResponse | null> {
  const url = new URL(baseUrl);
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body ?? '', 'utf8');
  const headers: Record<string, string> = {
    host: url.host,
    connection: 'close',
    'content-length': String(request.contentLength ?? body.length),
    ...request.headers,
  };
  const head = `${request.method} ${request.path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to ${request.method} ${request.path} within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      const match = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (!match) {
        resolve(null);
        return;
      }
      resolve({ status: Number(match[1]), text: received.slice(received.indexOf('\r\n\r\n') + 4) });
    };
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', finish);
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]), () => {
      if (request.then === 'abort') socket.destroy();
    });
  });
}

/** A multipart body of one file part; `closed: false` leaves out the closing boundary. */
export function multipartBody(field: string, filename: string, bytes: Buffer, closed = true): { body: Buffer; contentType: string } {
  const boundary = '----wfmRawBoundary7MA4YWxkTrZu0gW';
  const parts = [
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\n` +
      'Content-Type: application/pdf\r\n\r\n', 'utf8'),
    bytes,
    Buffer.from(closed ? `\r\n--${boundary}--\r\n` : '', 'utf8'),
  ];
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Descriptors of process `pid` ('self' for this one), as the paths they point to. */
export async function openDescriptors(pid: number | 'self'): Promise<string[]> {
  const dir = `/proc/${pid}/fd`;
  const names = await readdir(dir);
  const targets = await Promise.all(names.map((name) => readlink(path.join(dir, name)).catch(() => '')));
  return targets.filter(Boolean);
}

/** Files left under a storage directory whose name ends with .part (an upload never finished). */
export async function partFiles(storageDir: string): Promise<string[]> {
  const entries = await readdir(storageDir, { recursive: true }).catch(() => [] as string[]);
  return entries.filter((entry) => entry.endsWith('.part'));
}

/** Polls `check` until it returns true (the server releases an aborted upload asynchronously). */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

/** Stored uploads under a storage directory (finished files, named by their 32-hex key). */
export async function storedFiles(storageDir: string): Promise<string[]> {
  const entries = await readdir(storageDir, { recursive: true }).catch(() => [] as string[]);
  return entries.filter((entry) => /[0-9a-f]{32}$/.test(entry)).sort();
}

/** The TCP endpoints of a process's sockets ("socket:[inode]" → "local → remote, state"), for a failure message. */
export async function socketEndpoints(pid: number): Promise<Record<string, string>> {
  const endpoints: Record<string, string> = {};
  const address = (hex: string) => {
    const [ip, port] = hex.split(':');
    const bytes = ip!.length === 8 ? ip!.match(/../g)!.reverse().map((byte) => parseInt(byte, 16)).join('.') : ip!;
    return `${bytes}:${parseInt(port!, 16)}`;
  };
  for (const table of ['tcp', 'tcp6']) {
    const text = await readFile(`/proc/${pid}/net/${table}`, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      endpoints[`socket:[${fields[9]}]`] = `${address(fields[1]!)} → ${address(fields[2]!)} state ${fields[3]}`;
    }
  }
  return endpoints;
}
