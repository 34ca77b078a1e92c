/**
 * The back-office resource registry (the role Django's ModelAdmin plays): for each resource,
 * the manifest route it lists through, its filters, its columns and its row detail. The
 * generic views (views.ts) draw filters and validate them from the route's own JSON Schema,
 * call the route's SQL function as the signed-in account, and show SQL errors under their field.
 */
import type pg from 'pg';
import type { JsonSchema } from '../http/schema.js';
import type { Html } from './html.js';

export interface Option {
  value: string;
  label: string;
}

export interface Filter {
  /** A query parameter of the route (its JSON Schema gives the input type, the choices and the validation). */
  key: string;
  label: string;
  hint?: string;
  /** Choices read from the database, as the signed-in account (a select instead of a text input). */
  options?: (client: pg.PoolClient) => Promise<Option[]>;
}

export interface Column<Row> {
  label: string;
  value: (row: Row, context: RowContext) => Html | string | number | null;
  /** The row's heading cell (th scope=row). */
  rowHeader?: boolean;
}

export interface RowContext {
  /** The choices of each filter, to show labels instead of codes. */
  options: Record<string, Option[]>;
  /** Link to the same list with these filters (and no others). */
  filterLink: (filters: Record<string, string | number>) => string;
}

/** A field of an action's form; its type and limits come from the action's JSON Schema. */
export interface FormField {
  key: string;
  label: string;
  hint?: string;
  /** hidden (version), textarea, checkbox, slots (the slot editor); default: from the schema. */
  widget?: 'hidden' | 'textarea' | 'checkbox' | 'slots';
  /** Required by the rule even where the schema allows null (a refusal's reason): marked « obligatoire ». */
  required?: boolean;
  /** slots: an empty list is sent as null (no value) rather than []. */
  emptyAsNull?: boolean;
}

/** What the signed-in account may do on a row (a SQL function answers; the transitions check again). */
export type Abilities = Record<string, boolean>;

export interface Action<Row> {
  /** Path segment: POST /backoffice/<resource>/<id>/<slug>/. */
  slug: string;
  title: string;
  submitLabel: string;
  intro?: string;
  /** A route of the manifest (its body schema and its SQL call) ... */
  operationId?: string;
  /**
   * ... or a SQL call the manifest does not hold as such: SQL text with $1 = id, then the body's
   * keys in order; or, with `jsonBody`, $2 = the whole body as jsonb and $3 = the public URL (an
   * API function whose route has a handler, e.g. to purge files after the commit).
   */
  call?: { body: JsonSchema; sql: string; keys: string[]; jsonBody?: boolean };
  /** The call may delete documents: their files are removed right after the commit, as the API does. */
  purgesFiles?: boolean;
  fields: FormField[];
  /** Initial values of the form. */
  initial: (row: Row) => Record<string, unknown>;
  allowed: (row: Row, abilities: Abilities) => boolean;
  done: string;
  danger?: boolean;
}

export interface Resource<Row = Record<string, unknown>> {
  /** Path under /backoffice/ and key of the registry. */
  slug: string;
  title: string;
  /** One sentence on the home page. */
  summary: string;
  /** Whether the signed-in account may open it (the SQL function refuses the others anyway). */
  available: (client: pg.PoolClient) => Promise<boolean>;
  list: {
    /** operationId of a paginated GET route of the manifest. */
    operationId: string;
    pageSize: number;
    filters: Filter[];
    columns: Array<Column<Row>>;
    caption: string;
    empty: string;
    /** Shown under the row, folded (<details>): keyboard-accessible without script. */
    rowDetail?: (row: Row, context: RowContext) => Html;
  };
  detail?: {
    /** operationId of the GET route reading one row by its {id}. */
    operationId: string;
    title: (row: Row) => string;
    abilities?: (client: pg.PoolClient, id: number) => Promise<Abilities>;
    /** The page's body above the action forms; `client` reads more as the same account (audit trail). */
    render: (row: Row, client: pg.PoolClient) => Promise<Html>;
    actions: Array<Action<Row>>;
  };
}

/** Registers a resource with its row type checked, stored untyped in the registry. */
export function defineResource<Row>(resource: Resource<Row>): Resource {
  return resource as unknown as Resource;
}
