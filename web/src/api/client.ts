import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type { paths };

/** The API client: typed by the generated schema, Bearer token from the session. */
export const api = createClient<paths>({ baseUrl: '' });

let currentToken: string | null = null;
let onUnauthorized: (() => void) | null = null;

/** The session sets the token it holds, and is told when the server no longer accepts it. */
export function bindSession(token: string | null, unauthorized: () => void): void {
  currentToken = token;
  onUnauthorized = unauthorized;
}

const auth: Middleware = {
  onRequest({ request }) {
    if (currentToken) request.headers.set('Authorization', `Bearer ${currentToken}`);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && request.headers.has('Authorization')) onUnauthorized?.();
    return response;
  },
};
api.use(auth);

/** Field errors of a 400 (`{"field": ["message"]}`), or `{detail}` of other errors. */
export type FieldErrors = Record<string, string[]>;

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(messageOf(body) ?? `Erreur ${status}`);
  }

  /** Messages by field: a 400's keys; any other error under non_field_errors. */
  get fields(): FieldErrors {
    if (this.status === 400 && this.body && typeof this.body === 'object' && !('detail' in this.body)) {
      const out: FieldErrors = {};
      for (const [key, value] of Object.entries(this.body as Record<string, unknown>)) {
        out[key] = Array.isArray(value) ? value.map(String) : [String(value)];
      }
      return out;
    }
    return { non_field_errors: [this.message] };
  }
}

function messageOf(body: unknown): string | null {
  if (body && typeof body === 'object' && 'detail' in body) return String((body as { detail: unknown }).detail);
  return null;
}

/** Unwraps an openapi-fetch answer: the data, or an ApiFailure carrying the status and body. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new ApiFailure(response.status, error);
  return data as T;
}
