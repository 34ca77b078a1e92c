/**
 * The back-office resource registry (the role Django's ModelAdmin plays): for each resource,
 * the route (or declared back-office call, calls.ts) it lists through, its filters, its columns, its row
 * detail with read-only related rows, its create and edit forms and its actions. The generic
 * views (views.ts) draw filters and form inputs and validate them from the JSON Schemas, call
 * the SQL function as the signed-in account, and show SQL errors under their field.
 */
import type pg from 'pg';
import type { JsonSchema } from '../http/schema.js';
import type { BackofficeCall } from './calls.js';
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

/**
 * A field of a form; its type and limits come from the form's JSON Schema. Default widget:
 * options or an enum give a select (a list of check boxes for an array), a boolean a check
 * box, a date or time its input, a string longer than 200 characters a textarea, else a text input.
 */
export interface FormField {
  key: string;
  label: string;
  hint?: string;
  /** hidden (version), textarea, checkbox, slots (the slot editor), text, select, multiselect; default: from the schema. */
  widget?: 'hidden' | 'textarea' | 'checkbox' | 'slots' | 'text' | 'select' | 'multiselect';
  /**
   * Choices read from the database as the signed-in account (foreign keys): a select or check
   * boxes. Row forms (edit, actions) pass the row: choices may depend on its state.
   */
  options?: (client: pg.PoolClient, row?: Record<string, unknown>) => Promise<Option[]>;
  /** Required by the rule even where the schema allows null (a refusal's reason): marked « obligatoire ». */
  required?: boolean;
  /** slots: an empty list is sent as null (no value) rather than []. */
  emptyAsNull?: boolean;
}

/** What the signed-in account may do on a row (a SQL function answers; the transitions check again). */
export type Abilities = Record<string, boolean>;

/** What every form of the registry declares (create, edit, actions). */
export interface FormSpec {
  title: string;
  submitLabel: string;
  intro?: string;
  /** A route of the manifest (its body schema and its SQL call) ... */
  operationId?: string;
  /**
   * ... or a declared call of a function the API does not expose (src/backoffice/calls.ts: the
   * row's id, the body's keys by name), with the body's schema.
   */
  call?: BackofficeCall;
  body?: JsonSchema;
  fields: FormField[];
  /** The success message after the redirect. */
  done: string;
  /**
   * The call may delete documents: their files are removed right after the commit, as the API does
   * (a manifest route's `purgeStorageAfterCommit` counts as well).
   */
  purgesFiles?: boolean;
}

export interface Action<Row> extends FormSpec {
  /** Path segment: POST /backoffice/<resource>/<id>/<slug>/. */
  slug: string;
  /** Initial values of the form. */
  initial: (row: Row) => Record<string, unknown>;
  allowed: (row: Row, abilities: Abilities) => boolean;
  danger?: boolean;
  /** 'list': the row is gone afterwards (a deletion), the redirect goes to the list. */
  afterwards?: 'list';
}

/** The create form (no row): GET and POST /backoffice/<resource>/nouveau/. */
export interface CreateForm extends FormSpec {
  initial?: () => Record<string, unknown>;
  /** Whether the signed-in account is offered the form (SQL refuses the others anyway). */
  allowed: (client: pg.PoolClient) => Promise<boolean>;
}

/** The edit form of a row: GET and POST /backoffice/<resource>/<id>/modifier/. */
export interface EditForm<Row> extends FormSpec {
  initial: (row: Row) => Record<string, unknown>;
  allowed: (row: Row, abilities: Abilities) => boolean;
}

/** A read-only block of rows tied to the row on its detail page (a counter's journal). */
export interface RelatedRows<Row> {
  title: string;
  empty: string;
  rows: (row: Row, client: pg.PoolClient) => Promise<Array<Record<string, unknown>>>;
  columns: Array<Column<Record<string, unknown>>>;
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
    /** operationId of a paginated GET route of the manifest ... */
    operationId?: string;
    /** ... or a declared call (its filters and PAGE_ARGS, src/backoffice/calls.ts) answering { count, results }, with the filters' schema. */
    call?: BackofficeCall;
    query?: JsonSchema;
    pageSize: number;
    filters: Filter[];
    columns: Array<Column<Row>>;
    caption: string;
    empty: string;
    /** Shown under the row, folded (<details>): keyboard-accessible without script. */
    rowDetail?: (row: Row, context: RowContext) => Html;
    /**
     * The API's export route of this list (CSV, XLSX), offered as links with the filters on
     * screen: the API accepts the back-office session on its GET routes, so no script is needed.
     */
    exportPath?: string;
  };
  /** Offered on the list page (a « Créer » link) to the accounts it allows. */
  create?: CreateForm;
  detail?: {
    /** operationId of the GET route reading one row by its {id} ... */
    operationId?: string;
    /** ... or a declared call reading it (the row's id). */
    read?: BackofficeCall;
    title: (row: Row) => string;
    abilities?: (client: pg.PoolClient, id: number) => Promise<Abilities>;
    /** The page's body above the action forms; `client` reads more as the same account (audit trail). */
    render: (row: Row, client: pg.PoolClient) => Promise<Html>;
    /** Read-only blocks under the body (a counter's journal). */
    related?: Array<RelatedRows<Row>>;
    /** Offered on the detail page (a « Modifier » link) when `allowed`. */
    edit?: EditForm<Row>;
    actions: Array<Action<Row>>;
  };
}

/** Registers a resource with its row type checked, stored untyped in the registry. */
export function defineResource<Row>(resource: Resource<Row>): Resource {
  return resource as unknown as Resource;
}
