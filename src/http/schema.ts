/**
 * JSON Schema builders for the route manifest. The same schemas validate requests (ajv)
 * and document them (OpenAPI 3.1, whose schema dialect is JSON Schema 2020-12).
 */
import { INPUT_CONTRACT } from './input-contract.js';

export type JsonSchema = Record<string, unknown>;

/** HH:MM, the input contract's (app_hidden.time_pattern(), compared at start-up). */
export const TIME_PATTERN = INPUT_CONTRACT.timePattern;

export const s = {
  int: (extra: JsonSchema = {}): JsonSchema => ({ type: 'integer', ...extra }),
  /** A row id: a PostgreSQL integer (a path id beyond it names no row: 404; elsewhere 400 under its field). */
  id: (description?: string): JsonSchema => ({ type: 'integer', minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) }),
  string: (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', ...extra }),
  text: (maxLength: number, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', maxLength, ...extra }),
  bool: (extra: JsonSchema = {}): JsonSchema => ({ type: 'boolean', ...extra }),
  date: (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', format: 'date', ...extra }),
  time: (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', format: 'time-hm', ...extra }),
  dateTime: (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', format: 'date-time', ...extra }),
  decimal: (extra: JsonSchema = {}): JsonSchema => ({
    type: 'string',
    pattern: '^-?[0-9]+\\.[0-9]{2}$',
    description: 'Décimal à deux décimales, en chaîne.',
    ...extra,
  }),
  enum: (values: readonly string[], extra: JsonSchema = {}): JsonSchema => ({ type: 'string', enum: [...values], ...extra }),
  array: (items: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({ type: 'array', items, ...extra }),
  nullable: (schema: JsonSchema): JsonSchema => {
    const type = schema.type;
    // An enum lists every value allowed, so null joins the list as well as the types.
    const values = Array.isArray(schema.enum) ? { enum: [...(schema.enum as unknown[]), null] } : {};
    if (typeof type === 'string') return { ...schema, type: [type, 'null'], ...values };
    return { anyOf: [schema, { type: 'null' }] };
  },
  object: (properties: Record<string, JsonSchema>, required: string[] = [], extra: JsonSchema = {}): JsonSchema => ({
    type: 'object',
    properties,
    ...(required.length ? { required } : {}),
    ...extra,
  }),
  /** Any JSON object (documented loosely: a record whose keys are described elsewhere). */
  anyObject: (description?: string): JsonSchema => ({ type: 'object', ...(description ? { description } : {}) }),
  ref: (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` }),
};

/** Paginated list envelope of CONTRACT section 3. */
export function paginated(item: JsonSchema): JsonSchema {
  return s.object(
    {
      count: s.int({ minimum: 0 }),
      next: s.nullable(s.string({ format: 'uri' })),
      previous: s.nullable(s.string({ format: 'uri' })),
      results: s.array(item),
    },
    ['count', 'next', 'previous', 'results'],
  );
}
