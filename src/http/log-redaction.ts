/**
 * The secret of a calendar feed address (/api/feeds/<secret>.ics) is the only key to the feed:
 * it never reaches the logs. Request lines show /api/feeds/[secret].ics instead.
 */
const FEED_SECRET = /(\/api\/feeds\/)[^/?#]+?(\.ics)?(?=[/?#]|$)/gi;

export function redactUrl(url: string): string {
  return url.replace(FEED_SECRET, (_match, prefix: string, suffix: string | undefined) => `${prefix}[secret]${suffix ?? ''}`);
}

interface SerializedRequest {
  url?: string;
  params?: Record<string, unknown>;
  [key: string]: unknown;
}

/** pino-http's request serializer (wrapped: it receives the serialized request). */
export function redactRequest(req: SerializedRequest): SerializedRequest {
  const params = req.params && 'token' in req.params ? { ...req.params, token: '[secret]' } : req.params;
  return { ...req, ...(req.url ? { url: redactUrl(req.url) } : {}), ...(params ? { params } : {}) };
}
