import fc from 'fast-check';
import type { JsonSchema } from '../../src/http/schema.js';

/**
 * Request generators driven by the OpenAPI document: for each write route, bodies that are
 * valid in shape, slightly wrong, or hostile (wrong types, huge strings, odd dates,
 * negative and fractional numbers, malformed JSON).
 */
export interface WriteOperation {
  method: string;
  path: string;
  operationId: string;
  pathParams: string[];
  bodySchema: JsonSchema | null;
  /** Multipart-capable routes: their file fields and their other form fields. */
  multipart: { files: string[]; fields: string[] } | null;
  public: boolean;
}

function multipartOf(content: Record<string, { schema: JsonSchema }> | undefined): WriteOperation['multipart'] {
  const schema = content?.['multipart/form-data']?.schema;
  if (!schema) return null;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const isFile = (property: JsonSchema) => (property.items as JsonSchema | undefined)?.contentMediaType === 'application/octet-stream';
  return {
    files: Object.keys(properties).filter((name) => isFile(properties[name]!)),
    fields: Object.keys(properties).filter((name) => !isFile(properties[name]!)),
  };
}

export function writeOperations(openApi: JsonSchema): WriteOperation[] {
  const result: WriteOperation[] = [];
  const paths = openApi.paths as Record<string, Record<string, JsonSchema>>;
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
      const content = (op.requestBody as JsonSchema | undefined)?.content as Record<string, { schema: JsonSchema }> | undefined;
      result.push({
        method: method.toUpperCase(),
        path,
        operationId: String(op.operationId),
        pathParams: ((op.parameters as JsonSchema[] | undefined) ?? []).filter((p) => p.in === 'path').map((p) => String(p.name)),
        bodySchema: content?.['application/json']?.schema ?? null,
        multipart: multipartOf(content),
        public: Array.isArray(op.security) && (op.security as unknown[]).length === 0,
      });
    }
  }
  return result;
}

const hostileStrings = fc.constantFrom(
  '', ' ', '\u0000', 'null', 'true', '-1', '1e309', '💥🎉', "'; drop table app_public.absences; --",
  '<script>alert(1)</script>', '../../etc/passwd', '2026-02-30', '2026-13-01', '0000-00-00', '9999-12-31',
  '24:00', '12:60', '-01:00', 'NaN', 'x'.repeat(5000),
);

const oddDates = fc.oneof(
  fc.constantFrom('2026-02-29', '2026-02-30', '2024-02-29', '1900-01-01', '2100-12-31', '0001-01-01', '2026-1-1', '26-11-16', ''),
  fc.date({ min: new Date('1990-01-01'), max: new Date('2035-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
);

const oddTimes = fc.oneof(
  fc.constantFrom('00:00', '23:59', '24:00', '12:60', '7:5', '07:05:00', ''),
  fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })).map(([h, m]) =>
    `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`),
);

const oddNumbers = fc.oneof(
  fc.integer({ min: -5, max: 60 }),
  fc.constantFrom(0, -1, 0.5, 1.5, -0.25, 2147483648, -2147483649, 1e300, Number.MAX_SAFE_INTEGER),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
);

const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  oddNumbers,
  hostileStrings,
  fc.array(fc.oneof(fc.integer(), fc.string()), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.integer(), fc.string()), { maxKeys: 3 }),
);

function typeOf(schema: JsonSchema): string | undefined {
  const type = schema.type;
  if (Array.isArray(type)) return type.find((t) => t !== 'null');
  return typeof type === 'string' ? type : undefined;
}

/** Mostly plausible values for a schema, with hostile ones mixed in. */
export function valueFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return anyJson;
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as JsonSchema[]).map((s) => valueFor(s, depth + 1)));
  let plausible: fc.Arbitrary<unknown>;
  const type = typeOf(schema);
  if (schema.enum) plausible = fc.constantFrom(...(schema.enum as unknown[]));
  else if (type === 'integer') plausible = fc.oneof(fc.integer({ min: 1, max: 40 }), oddNumbers);
  else if (type === 'number') plausible = oddNumbers;
  else if (type === 'boolean') plausible = fc.boolean();
  else if (type === 'string' && schema.format === 'date') plausible = oddDates;
  else if (type === 'string' && schema.format === 'time-hm') plausible = oddTimes;
  else if (type === 'string' && schema.pattern === '^-?[0-9]+\\.[0-9]{2}$') {
    plausible = fc.oneof(fc.integer({ min: -100, max: 100 }).map((n) => `${n}.00`), fc.constantFrom('0.50', '1.5', '-3.00', 'abc'));
  } else if (type === 'string') plausible = fc.oneof(fc.string({ maxLength: 40 }), hostileStrings);
  else if (type === 'array') plausible = fc.array(valueFor(schema.items as JsonSchema, depth + 1), { maxLength: 4 });
  else if (type === 'object' || schema.properties) plausible = objectFor(schema, depth + 1);
  else plausible = anyJson;
  return fc.oneof({ arbitrary: plausible, weight: 4 }, { arbitrary: anyJson, weight: 1 });
}

export function objectFor(schema: JsonSchema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const keys = Object.keys(properties);
  if (keys.length === 0) return fc.dictionary(fc.string({ maxLength: 6 }), anyJson, { maxKeys: 3 });
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const key of keys) record[key] = valueFor(properties[key], depth);
  return fc.record(record, { requiredKeys: [] });
}

/** A whole request body: a generated object, or a malformed/non-object payload. */
export function bodyFor(schema: JsonSchema | null): fc.Arbitrary<{ raw: string }> {
  const generated = (schema ? objectFor(schema) : fc.constant({})).map((body) => ({ raw: JSON.stringify(body) }));
  const malformed = fc.constantFrom('{', '{"a":', 'not json', '[]', '[1,2]', '"text"', '42', 'null', '{"a":1}}', '\u0000')
    .map((raw) => ({ raw }));
  return fc.oneof({ arbitrary: generated, weight: 8 }, { arbitrary: malformed, weight: 1 });
}

/** Validates the CONTRACT's 400 envelope: keys are fields (or non_field_errors), values lists of messages. */
export function isFieldErrorEnvelope(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const entries = Object.entries(body as Record<string, unknown>);
  return entries.length > 0 && entries.every(([key, value]) =>
    typeof key === 'string' && key.length > 0 && Array.isArray(value) && value.length > 0
      && value.every((message) => typeof message === 'string' && message.length > 0));
}
