/**
 * Whether an error means the database is unreachable or the connection was lost mid-work:
 * the request answers 503, the rate limiter lets the request through, start-up and the
 * worker wait and retry. It belongs to the database layer, which every caller sits above.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    // 08: connection exceptions; 57P01-57P03: terminated, crashed, not accepting; 53300: too many connections.
    if (code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code)) return true;
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'].includes(code)) return true;
  }
  return typeof message === 'string' && /Connection terminated|Client has encountered a connection error/.test(message);
}
