import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { envelopeKey, type FieldErrors } from './errors.js';
import { TIME_PATTERN, type JsonSchema } from './schema.js';

/**
 * Ajv (and ajv-formats) is loaded at the first validator compiled, not at start-up: loading it and
 * making its two instances took about a tenth of a start (BENCHMARKS.md, "Start-up (issue 31)").
 * Required (both are CommonJS) so that compiling stays synchronous.
 */
const require = createRequire(import.meta.url);

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const { Ajv: AjvClass } = require('ajv') as typeof import('ajv');
  const addFormats = require('ajv-formats') as (ajv: Ajv, formats?: string[]) => Ajv;
  // strictNumbers: Infinity (1e400 in JSON, or a coerced form field) is no number nor integer.
  const ajv = new AjvClass({ allErrors: true, coerceTypes, strict: false, strictNumbers: true, useDefaults: false });
  addFormats(ajv, ['date', 'date-time', 'uri', 'email']);
  ajv.addFormat('time-hm', new RegExp(TIME_PATTERN));
  return ajv;
}

/** JSON bodies: types as sent (never coerced). Query strings and multipart form fields: strings coerced. */
let jsonAjv: Ajv | null = null;
let coercingAjv: Ajv | null = null;
const ajvFor = (coerce: boolean): Ajv => (coerce ? (coercingAjv ??= makeAjv('array')) : (jsonAjv ??= makeAjv(false)));

/** The validators not compiled yet (compilePendingValidators). */
const pending = new Set<() => void>();

/**
 * A validator compiled at its first use, not at start-up: compiling the ~300 schemas of the routes
 * and the back-office took 0.44 s of each start (BENCHMARKS.md, "Start-up"). Each compiles once;
 * `errors` is the compiled function's, as with Ajv.
 */
export function compileValidator(schema: JsonSchema, coerce: boolean): ValidateFunction {
  let compiled: ValidateFunction | null = null;
  const compile = () => {
    compiled ??= ajvFor(coerce).compile(schema);
    pending.delete(compile);
    return compiled;
  };
  pending.add(compile);
  const validate = ((data: unknown) => {
    const fn = compiled ?? compile();
    const valid = fn(data);
    validate.errors = fn.errors;
    return valid;
  }) as ValidateFunction;
  validate.errors = null;
  return validate;
}

/** Compiles every validator not used yet (a schema Ajv refuses throws here); returns how many. */
export function compilePendingValidators(): number {
  const count = pending.size;
  for (const compile of [...pending]) compile();
  return count;
}

const TYPE_MESSAGES: Record<string, string> = {
  integer: 'Un nombre entier est attendu.',
  number: 'Un nombre est attendu.',
  boolean: 'Un booléen (true ou false) est attendu.',
  string: 'Une chaîne de caractères est attendue.',
  array: 'Une liste est attendue.',
  object: 'Un objet est attendu.',
  null: 'La valeur null est attendue.',
};

function messageFor(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'Ce champ est obligatoire.';
    case 'type': {
      const types = String(p.type).split(',').filter((t) => t !== 'null');
      return TYPE_MESSAGES[types[0] ?? ''] ?? 'Type de valeur invalide.';
    }
    case 'format':
      if (p.format === 'date') return 'Date invalide : format attendu AAAA-MM-JJ.';
      if (p.format === 'time-hm') return 'Heure invalide : format attendu HH:MM.';
      if (p.format === 'date-time') return 'Horodatage invalide : format ISO 8601 attendu.';
      if (p.format === 'email') return 'Adresse e-mail invalide.';
      return 'Format invalide.';
    case 'enum':
      return `Choix invalide. Valeurs possibles : ${(p.allowedValues as unknown[]).join(', ')}.`;
    case 'minLength':
      return p.limit === 1 ? 'Ce champ ne peut pas être vide.' : `Au moins ${p.limit} caractères.`;
    case 'maxLength':
      return `Au plus ${p.limit} caractères.`;
    case 'minimum':
      return `La valeur doit être supérieure ou égale à ${p.limit}.`;
    case 'maximum':
      return `La valeur doit être inférieure ou égale à ${p.limit}.`;
    case 'exclusiveMinimum':
      return `La valeur doit être strictement supérieure à ${p.limit}.`;
    case 'minItems':
      return `Au moins ${p.limit} élément(s).`;
    case 'maxItems':
      return `Au plus ${p.limit} élément(s).`;
    case 'pattern':
      return 'Format invalide.';
    case 'additionalProperties':
      return `Champ inconnu : ${String(p.additionalProperty)}.`;
    case 'anyOf':
    case 'oneOf':
      return 'Valeur invalide.';
    default:
      return 'Valeur invalide.';
  }
}

/**
 * ajv errors → CONTRACT envelope. Nested errors are keyed by the top-level field
 * (slots, add_documents, ...); an error on the root object goes to non_field_errors.
 */
export function toFieldErrors(errors: ErrorObject[] | null | undefined): FieldErrors {
  const result: FieldErrors = {};
  for (const error of errors ?? []) {
    // anyOf/oneOf summary errors duplicate their branches' messages.
    if ((error.keyword === 'anyOf' || error.keyword === 'oneOf') && (errors?.length ?? 0) > 1) continue;
    const segments = error.instancePath.split('/').filter(Boolean);
    let field = segments[0];
    if (!field && error.keyword === 'required') field = String((error.params as { missingProperty: string }).missingProperty);
    if (!field && error.keyword === 'additionalProperties') {
      field = String((error.params as { additionalProperty: string }).additionalProperty);
    }
    const key = envelopeKey(field);
    const message = messageFor(error);
    const list = (result[key] ??= []);
    if (!list.includes(message)) list.push(message);
  }
  return result;
}

/**
 * PostgreSQL text cannot hold the NUL character: refuse it where it appears, under the
 * top-level field that carries it.
 */
export function nulCharacterErrors(value: Record<string, unknown>): FieldErrors {
  const errors: FieldErrors = {};
  const contains = (v: unknown): boolean => {
    if (typeof v === 'string') return v.includes('\u0000');
    if (Array.isArray(v)) return v.some(contains);
    if (v && typeof v === 'object') return Object.entries(v).some(([k, inner]) => k.includes('\u0000') || contains(inner));
    return false;
  };
  for (const [key, inner] of Object.entries(value)) {
    if (key.includes('\u0000') || contains(inner)) {
      errors[envelopeKey(key)] = ['Ce texte contient un caractère interdit (caractère nul).'];
    }
  }
  return errors;
}

/** Nesting a JSON body may have: deeper ones are refused before anything recurses into them. */
export const MAX_JSON_DEPTH = 32;

/**
 * Checks a parsed JSON body without recursion: its depth (thousands of levels would overflow
 * the stack of the checks that follow) and its numbers (1e400 parses as Infinity, which no
 * rule can use and JSON.stringify would turn into null). Errors go under the top-level field.
 */
export function jsonBodyErrors(body: Record<string, unknown>): FieldErrors {
  const errors: FieldErrors = {};
  const add = (field: string, message: string) => {
    const list = (errors[envelopeKey(field)] ??= []);
    if (!list.includes(message)) list.push(message);
  };
  const stack: Array<[value: unknown, depth: number, field: string]> = Object.entries(body).map(([key, value]) => [value, 1, key]);
  while (stack.length > 0) {
    const [value, depth, field] = stack.pop()!;
    if (typeof value === 'number' && !Number.isFinite(value)) {
      add(field, 'Nombre hors des limites représentables.');
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_JSON_DEPTH) {
        add('non_field_errors', `Corps JSON trop imbriqué : ${MAX_JSON_DEPTH} niveaux au plus.`);
        continue;
      }
      for (const inner of Object.values(value)) stack.push([inner, depth + 1, field]);
    }
  }
  return errors;
}
