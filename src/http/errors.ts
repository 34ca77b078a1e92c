/**
 * Error envelope of the CONTRACT (section 3) and the mapping from PostgreSQL errors.
 *   400 {"<field>": ["message"], ...}  (non_field_errors when tied to no field)
 *   401/403/404/405/409/415/429 {"detail": "message"}
 */
import { isConnectionLoss } from '../db/connection-loss.js';

export type FieldErrors = Record<string, string[]>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof body.detail === 'string' ? body.detail : `HTTP ${status}`);
  }

  static badRequest(errors: FieldErrors): ApiError {
    return new ApiError(400, errors);
  }
  static field(field: string, message: string): ApiError {
    return new ApiError(400, { [field]: [message] });
  }
  static unauthorized(detail = "Informations d’authentification non fournies."): ApiError {
    return new ApiError(401, { detail }, { 'WWW-Authenticate': 'Bearer realm="api"' });
  }
  static forbidden(detail = "Vous n’avez pas la permission d’effectuer cette action."): ApiError {
    return new ApiError(403, { detail });
  }
  static notFound(detail = 'Ressource introuvable.'): ApiError {
    return new ApiError(404, { detail });
  }
  static methodNotAllowed(method: string, allow: string[]): ApiError {
    return new ApiError(405, { detail: `Méthode « ${method} » non autorisée.` }, { Allow: allow.join(', ') });
  }
  /** A body in another format than the route reads (JSON, or multipart/form-data on an upload route). */
  static unsupportedMediaType(detail: string): ApiError {
    return new ApiError(415, { detail });
  }
  static unavailable(): ApiError {
    return new ApiError(503, { detail: 'Service momentanément indisponible (base de données). Réessayez dans un instant.' },
      { 'Retry-After': '5' });
  }
  static tooManyRequests(retryAfterSeconds: number): ApiError {
    return new ApiError(
      429,
      { detail: `Trop de requêtes. Réessayez dans ${retryAfterSeconds} secondes.` },
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}

/** Statuses by SQLSTATE class of the registry (docs/error-codes.md). */
const STATUS_BY_CLASS: Record<string, number> = {
  WV: 400,
  WA: 401,
  WF: 403,
  WN: 404,
  WM: 405,
  WC: 409,
};

interface PgLikeError {
  code?: string;
  message: string;
  detail?: string;
  constraint?: string;
  column?: string;
}

function isPgError(error: unknown): error is PgLikeError {
  return typeof error === 'object' && error !== null && typeof (error as PgLikeError).code === 'string'
    && (error as PgLikeError).code!.length === 5;
}

/**
 * The key of a 400 envelope: a field name the client can correct, or non_field_errors for
 * a name that designates no field (missing, empty, or holding NUL, as a client may send).
 */
export function envelopeKey(name: string | null | undefined): string {
  return name && !name.includes('\u0000') ? name : 'non_field_errors';
}

/** DETAIL of a WV error: a field key, or a JSON object of field → messages. */
function fieldErrorsFromDetail(message: string, detail: string | undefined): FieldErrors {
  if (detail && detail.startsWith('{')) {
    try {
      const parsed = JSON.parse(detail) as Record<string, unknown>;
      const errors: FieldErrors = {};
      for (const [key, value] of Object.entries(parsed)) {
        errors[key] = Array.isArray(value) ? value.map(String) : [String(value)];
      }
      return errors;
    } catch {
      // fall through: not JSON after all
    }
  }
  return { [envelopeKey(detail)]: [message] };
}

/** Constraint violations that reach the client in plain words. */
const CONSTRAINT_MESSAGES: Record<string, [field: string, message: string]> = {
  absences_no_overlap: ['date_start', 'Cette période chevauche une autre absence du salarié.'],
  shift_change_requests_one_pending_key: ['date', 'Une demande de modification est déjà en attente pour cette date.'],
};

/** SQLSTATE of app_private.rate_limit_hit_or_fail over the limit; DETAIL: the seconds to wait. */
const RATE_LIMITED_SQLSTATE = 'WL429';

/**
 * The seconds to wait when `error` is a request's own rate-limit hit refused inside its transaction
 * (app_private.rate_limit_hit_or_fail), at least 1; else 0.
 */
export function rateLimitedWait(error: unknown): number {
  const { code, detail } = (error ?? {}) as { code?: unknown; detail?: unknown };
  if (code !== RATE_LIMITED_SQLSTATE) return 0;
  return Math.max(1, Number.parseInt(String(detail), 10) || 1);
}

/**
 * Maps an error thrown by a SQL call to an ApiError, or returns null for an unexpected
 * error (a 500, logged by the caller).
 */
export function apiErrorFromPg(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  // A path whose percent-encoding does not decode (Express: "Failed to decode param") names nothing.
  if (error instanceof URIError) return ApiError.notFound('Adresse inconnue.');
  if (isConnectionLoss(error)) return ApiError.unavailable();
  if (!isPgError(error)) return null;
  const code = error.code!;
  const wait = rateLimitedWait(error);
  if (wait > 0) return ApiError.tooManyRequests(wait);
  const status = STATUS_BY_CLASS[code.slice(0, 2)];
  if (status === 400) return ApiError.badRequest(fieldErrorsFromDetail(error.message, error.detail));
  if (status) return new ApiError(status, { detail: error.message });
  if (error.constraint && CONSTRAINT_MESSAGES[error.constraint]) {
    const [field, message] = CONSTRAINT_MESSAGES[error.constraint]!;
    return ApiError.field(field, message);
  }
  switch (code) {
    case '23P01': // exclusion (overlap)
    case '23505': // unique
    case '23514': // check
    case '23503': // foreign key
    case '23502': // not null
      return ApiError.field(error.column ?? 'non_field_errors', 'Valeur refusée par une règle de cohérence des données.');
    case '40001': // serialization failure
    case '40P01': // deadlock
      return new ApiError(409, { detail: 'Un autre traitement a modifié ces données en même temps. Rechargez et réessayez.' });
    case '42501': // insufficient privilege (RLS refusal on write)
      return ApiError.forbidden();
    default:
      // Class 22: data exceptions (bad date, number out of range, invalid text...): the input.
      if (code.startsWith('22')) return ApiError.field(error.column ?? 'non_field_errors', 'Valeur invalide.');
      return null;
  }
}
