/**
 * Forms of the registry (create, edit, actions): inputs drawn from the form's JSON Schema (the
 * manifest route's body, or the schema of a back-office-only function), choices read from the
 * database, the form data turned into the JSON body that schema validates, and errors shown
 * under their field.
 */
import type { FieldErrors } from '../http/errors.js';
import type { JsonSchema } from '../http/schema.js';
import { html, trusted, type Html } from './html.js';
import type { FormField, Option } from './registry.js';

const SLOT_TIMES = [
  ['start_time', 'Début'],
  ['end_time', 'Fin'],
  ['break_start_time', 'Début de pause'],
  ['break_end_time', 'Fin de pause'],
] as const;
/** Slot keys carried as they are (post and establishment of a slot, its telework option). */
const SLOT_KEPT = ['post', 'establishment', 'is_remote'] as const;
/** Empty rows offered under the slots of a day, to add a slot. */
const EXTRA_SLOT_ROWS = 2;

type Slot = Record<string, unknown>;

function errorBlock(id: string, errors: string[] | undefined): Html {
  return errors ? html`<p class="field-error" id="${id}-erreur">${errors.join(' ')}</p>` : html``;
}

function describedBy(id: string, hint: boolean, errors: boolean): Html {
  const ids = [hint ? `${id}-aide` : '', errors ? `${id}-erreur` : ''].filter(Boolean).join(' ');
  return trusted(`${ids ? ` aria-describedby="${ids}"` : ''}${errors ? ' aria-invalid="true"' : ''}`);
}

function slotEditor(prefix: string, field: FormField, slots: Slot[], errors: string[] | undefined): Html {
  const rows: Slot[] = [...slots, ...Array.from({ length: EXTRA_SLOT_ROWS }, (): Slot => ({}))];
  const id = `${prefix}-${field.key}`;
  return html`<fieldset class="slots" id="${id}"${describedBy(id, Boolean(field.hint), Boolean(errors))}>
  <legend>${field.label}</legend>
  ${field.hint ? html`<p class="hint" id="${id}-aide">${field.hint}</p>` : ''}
  <div class="table-wrap"><table>
    <thead><tr><th scope="col">Créneau</th>${SLOT_TIMES.map(([, label]) => html`<th scope="col">${label}</th>`)}<th scope="col">Pause payée</th></tr></thead>
    <tbody>${rows.map((slot, i) => html`<tr>
      <th scope="row">${i < slots.length ? `n° ${i + 1}` : 'Ajout'}${SLOT_KEPT.map((key) => slot[key] == null ? '' :
        html`<input type="hidden" name="${field.key}.${i}.${key}" value="${String(slot[key])}">`)}</th>
      ${SLOT_TIMES.map(([key, label]) => html`<td><input type="time" name="${field.key}.${i}.${key}" value="${(slot[key] as string | null) ?? ''}"
        aria-label="${label} du créneau ${i + 1}"></td>`)}
      <td><input type="checkbox" name="${field.key}.${i}.break_paid" value="1"${slot.break_paid ? trusted(' checked') : ''}
        aria-label="Pause payée du créneau ${i + 1}"></td>
    </tr>`)}</tbody>
  </table></div>
  ${errorBlock(id, errors)}
</fieldset>`;
}

/** The properties of an object schema, a nullable one (anyOf [schema, null]) read as its schema. */
function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return Object.fromEntries(Object.entries(properties).map(([key, property]) => {
    const members = Array.isArray(property.anyOf) ? (property.anyOf as JsonSchema[]) : null;
    const inner = members?.find((m) => m.type !== 'null');
    return [key, members && inner ? { ...inner, type: [...typesOf(inner), 'null'] } : property];
  }));
}

/** Longest string still typed in a one-line input. */
const ONE_LINE_MAX = 200;

/** The types a schema admits (['integer', 'null'] for a nullable integer). */
function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as JsonSchema[]).flatMap(typesOf);
  const type = schema.type;
  return Array.isArray(type) ? (type as string[]) : typeof type === 'string' ? [type] : [];
}

function enumOf(schema: JsonSchema): string[] | null {
  return Array.isArray(schema.enum) ? (schema.enum as unknown[]).filter((v): v is string => typeof v === 'string') : null;
}

type Widget = NonNullable<FormField['widget']> | 'number' | 'date' | 'time';

/** The widget of a field: declared, or drawn from its schema (see FormField). */
function widgetOf(field: FormField, property: JsonSchema): Widget {
  if (field.widget) return field.widget;
  const types = typesOf(property);
  if (types.includes('array')) return 'multiselect';
  if (field.options || enumOf(property)) return 'select';
  if (types.includes('boolean')) return 'checkbox';
  if (types.includes('integer') || types.includes('number')) return 'number';
  if (property.format === 'date') return 'date';
  if (property.format === 'time-hm') return 'time';
  if (typeof property.maxLength === 'number' && property.maxLength <= ONE_LINE_MAX) return 'text';
  return 'textarea';
}

/** The choices of a select: the field's options (read from the database) or the schema's enum. */
function choicesOf(field: FormField, property: JsonSchema, options: Record<string, Option[]>): Option[] {
  const items = (property.items ?? {}) as JsonSchema;
  return options[field.key] ?? (enumOf(property) ?? enumOf(items) ?? []).map((v) => ({ value: v, label: v }));
}

/** Loads the choices of the fields that read them from the database, keyed by field. */
export async function loadOptions(fields: FormField[], client: import('pg').PoolClient, row?: Record<string, unknown>): Promise<Record<string, Option[]>> {
  const options: Record<string, Option[]> = {};
  for (const field of fields) if (field.options) options[field.key] = await field.options(client, row);
  return options;
}

const asText = (value: unknown) => (value == null ? '' : String(value));

/** The inputs of a form (the CSRF token and the button are the caller's). */
export function formFields(prefix: string, fields: FormField[], schema: JsonSchema, values: Record<string, unknown>, errors: FieldErrors,
  options: Record<string, Option[]> = {}): Html {
  const properties = propertiesOf(schema);
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return html`${fields.map((field) => {
    const id = `${prefix}-${field.key}`;
    const property = properties[field.key] ?? {};
    const value = values[field.key];
    const fieldErrors = errors[field.key];
    const aria = describedBy(id, Boolean(field.hint), Boolean(fieldErrors));
    const hint = field.hint ? html`<p class="hint" id="${id}-aide">${field.hint}</p>` : '';
    const mandatory = field.required || (required.has(field.key) && !typesOf(property).includes('null'));
    const label = html`<label for="${id}">${field.label}${mandatory ? html` <span class="muted">(obligatoire)</span>` : ''}</label>`;
    const ariaRequired = mandatory ? trusted(' aria-required="true"') : '';
    switch (widgetOf(field, property)) {
      case 'hidden':
        return html`<input type="hidden" name="${field.key}" value="${value == null ? '' : String(value)}">`;
      case 'slots':
        return slotEditor(prefix, field, Array.isArray(value) ? (value as Slot[]) : [], fieldErrors);
      case 'checkbox':
        return html`<div class="field check"><input type="checkbox" id="${id}" name="${field.key}" value="1"${value ? trusted(' checked') : ''}${aria}>
  <label for="${id}">${field.label}</label>${hint}${errorBlock(id, fieldErrors)}</div>`;
      case 'select': {
        const current = asText(value);
        return html`<div class="field">${label}${hint}
  <select id="${id}" name="${field.key}"${ariaRequired}${aria}>
    <option value="">${mandatory ? '— choisir —' : '(aucun)'}</option>
    ${choicesOf(field, property, options).map((c) => html`<option value="${c.value}"${c.value === current ? trusted(' selected') : ''}>${c.label}</option>`)}
  </select>
  ${errorBlock(id, fieldErrors)}
</div>`;
      }
      case 'multiselect': {
        const chosen = new Set((Array.isArray(value) ? value : []).map(asText));
        return html`<fieldset class="choices" id="${id}"${aria}>
  <legend>${field.label}</legend>${hint}
  ${choicesOf(field, property, options).map((c, i) => html`<div class="check"><input type="checkbox" id="${id}-${i}" name="${field.key}" value="${c.value}"${chosen.has(c.value) ? trusted(' checked') : ''}>
    <label for="${id}-${i}">${c.label}</label></div>`)}
  ${errorBlock(id, fieldErrors)}
</fieldset>`;
      }
      case 'number':
        return html`<div class="field">${label}${hint}
  <input type="text" inputmode="${typesOf(property).includes('integer') ? 'numeric' : 'decimal'}" id="${id}" name="${field.key}" value="${asText(value)}"${ariaRequired}${aria}>
  ${errorBlock(id, fieldErrors)}
</div>`;
      case 'date':
      case 'time':
        return html`<div class="field">${label}${hint}
  <input type="${widgetOf(field, property)}" id="${id}" name="${field.key}" value="${asText(value)}"${ariaRequired}${aria}>
  ${errorBlock(id, fieldErrors)}
</div>`;
      case 'text': {
        const maxLength = typeof property.maxLength === 'number' ? trusted(` maxlength="${property.maxLength}"`) : '';
        return html`<div class="field">${label}${hint}
  <input type="text" id="${id}" name="${field.key}" value="${asText(value)}"${maxLength}${ariaRequired}${aria}>
  ${errorBlock(id, fieldErrors)}
</div>`;
      }
      default: {
        const maxLength = typeof property.maxLength === 'number' ? trusted(` maxlength="${property.maxLength}"`) : '';
        return html`<div class="field">${label}${hint}
  <textarea id="${id}" name="${field.key}" rows="3"${maxLength}${ariaRequired}${aria}>${asText(value)}</textarea>
  ${errorBlock(id, fieldErrors)}
</div>`;
      }
    }
  })}`;
}

/** A form value as the schema's scalar: integers and decimals parsed (a decimal comma accepted), '' is null. */
function scalar(raw: string, schema: JsonSchema): unknown {
  const types = typesOf(schema);
  if (raw === '') return null;
  if (types.includes('integer')) return /^-?\d{1,9}$/.test(raw) ? Number(raw) : raw;
  if (types.includes('number')) return /^-?\d{1,9}([.,]\d{1,6})?$/.test(raw) ? Number(raw.replace(',', '.')) : raw;
  return raw;
}

/** Form data → the JSON body of the schema: integers, booleans, slot lists; '' is null. */
export function formBody(fields: FormField[], schema: JsonSchema, form: Record<string, unknown>): Record<string, unknown> {
  const properties = propertiesOf(schema);
  const text = (key: string) => (typeof form[key] === 'string' ? (form[key] as string).trim() : '');
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    const property = properties[field.key] ?? {};
    const widget = widgetOf(field, property);
    if (widget === 'slots') {
      const slots = slotsFrom(field.key, form);
      body[field.key] = slots.length === 0 && field.emptyAsNull ? null : slots;
    } else if (widget === 'checkbox') {
      body[field.key] = text(field.key) !== '';
    } else if (widget === 'multiselect') {
      // A repeated name arrives as a list, a single one as a string, none as nothing.
      const raw = form[field.key];
      const items = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((v): v is string => typeof v === 'string');
      const itemSchema = (property.items ?? {}) as JsonSchema;
      body[field.key] = items.map((v) => v.trim()).filter((v) => v !== '').map((v) => scalar(v, itemSchema));
    } else {
      body[field.key] = scalar(text(field.key), property);
    }
  }
  return body;
}

function slotsFrom(key: string, form: Record<string, unknown>): Slot[] {
  const rows = new Map<number, Slot>();
  for (const [name, raw] of Object.entries(form)) {
    const match = new RegExp(`^${key}\\.(\\d{1,2})\\.([a-z_]+)$`).exec(name);
    if (!match || typeof raw !== 'string') continue;
    const slot = rows.get(Number(match[1])) ?? {};
    const value = raw.trim();
    const field = match[2]!;
    if (field === 'break_paid') slot.break_paid = value !== '';
    else if (field === 'is_remote') slot.is_remote = value === 'true';
    else if (field === 'post' || field === 'establishment') slot[field] = /^\d{1,9}$/.test(value) ? Number(value) : null;
    else if (SLOT_TIMES.some(([k]) => k === field)) slot[field] = value === '' ? null : value;
    rows.set(Number(match[1]), slot);
  }
  // A row without any hour is no slot (the empty rows offered to add one).
  return [...rows.entries()].sort(([a], [b]) => a - b).map(([, slot]) => slot)
    .filter((slot) => SLOT_TIMES.some(([k]) => slot[k] != null));
}
