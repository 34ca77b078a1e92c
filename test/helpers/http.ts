import { checkResponse } from './response-contract.js';

/**
 * A small HTTP client for tests: JSON in, JSON (or text, and the raw bytes) out, status and headers kept. Every answer
 * is checked against the OpenAPI document (response-contract.ts) unless the request says why not.
 */
export interface HttpResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
  /** The body's bytes as received (a file download: CSV with its BOM, XLSX). */
  bytes: Buffer;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  form?: FormData;
  headers?: Record<string, string>;
  rawBody?: string;
  /** Why this answer is not checked against the OpenAPI document (a fault injected on purpose). */
  uncheckedBecause?: string;
}

export function makeClient(baseUrl: string) {
  async function request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: RequestInit['body'];
    if (options.form) body = options.form;
    else if (options.rawBody !== undefined) {
      body = options.rawBody;
      headers['content-type'] ??= 'application/json';
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const bytes = Buffer.from(await response.arrayBuffer());
    const text = bytes.toString('utf8');
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    if (!options.uncheckedBecause) checkResponse(method, path, response.status, response.headers, parsed, text);
    return { status: response.status, body: parsed as T, headers: response.headers, text, bytes };
  }
  return {
    request,
    get: <T = any>(path: string, token?: string | null, options: RequestOptions = {}) => request<T>('GET', path, { ...options, token }),
    post: <T = any>(path: string, token?: string | null, body?: unknown, options: RequestOptions = {}) =>
      request<T>('POST', path, { ...options, token, body }),
    put: <T = any>(path: string, token?: string | null, body?: unknown, options: RequestOptions = {}) =>
      request<T>('PUT', path, { ...options, token, body }),
    patch: <T = any>(path: string, token?: string | null, body?: unknown, options: RequestOptions = {}) =>
      request<T>('PATCH', path, { ...options, token, body }),
    delete: <T = any>(path: string, token?: string | null, options: RequestOptions = {}) => request<T>('DELETE', path, { ...options, token }),
  };
}

export type HttpClient = ReturnType<typeof makeClient>;
