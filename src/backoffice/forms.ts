/**
 * Forms of the registry's actions: inputs drawn from the action's JSON Schema (the manifest
 * route's body, or the schema of a back-office-only function), the form data turned into the
 * JSON body that schema validates, and errors shown under their field.
 */
import type { FieldErrors } from '../http/errors.js';
import type { JsonSchema } from '../http/schema.js';
import { html, trusted, type Html } from './html.js';
import type { FormField } from './registry.js';

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

/** The inputs of a form (the CSRF token and the button are the caller's). */
export function formFields(prefix: string, fields: FormField[], schema: JsonSchema, values: Record<string, unknown>, errors: FieldErrors): Html {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return html`${fields.map((field) => {
    const id = `${prefix}-${field.key}`;
    const property = properties[field.key] ?? {};
    const value = values[field.key];
    const fieldErrors = errors[field.key];
    const aria = describedBy(id, Boolean(field.hint), Boolean(fieldErrors));
    const hint = field.hint ? html`<p class="hint" id="${id}-aide">${field.hint}</p>` : '';
    switch (field.widget) {
      case 'hidden':
        return html`<input type="hidden" name="${field.key}" value="${value == null ? '' : String(value)}">`;
      case 'slots':
        return slotEditor(prefix, field, Array.isArray(value) ? (value as Slot[]) : [], fieldErrors);
      case 'checkbox':
        return html`<div class="field check"><input type="checkbox" id="${id}" name="${field.key}" value="1"${value ? trusted(' checked') : ''}${aria}>
  <label for="${id}">${field.label}</label>${hint}${errorBlock(id, fieldErrors)}</div>`;
      default: {
        const maxLength = typeof property.maxLength === 'number' ? trusted(` maxlength="${property.maxLength}"`) : '';
        return html`<div class="field">
  <label for="${id}">${field.label}${field.required ? html` <span class="muted">(obligatoire)</span>` : ''}</label>${hint}
  <textarea id="${id}" name="${field.key}" rows="3"${maxLength}${field.required ? trusted(' aria-required="true"') : ''}${aria}>${value == null ? '' : String(value)}</textarea>
  ${errorBlock(id, fieldErrors)}
</div>`;
      }
    }
  })}`;
}

/** Form data → the JSON body of the schema: integers, booleans, slot lists; '' is null. */
export function formBody(fields: FormField[], schema: JsonSchema, form: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const text = (key: string) => (typeof form[key] === 'string' ? (form[key] as string).trim() : '');
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    const type = properties[field.key]?.type;
    if (field.widget === 'slots') {
      const slots = slotsFrom(field.key, form);
      body[field.key] = slots.length === 0 && field.emptyAsNull ? null : slots;
    } else if (field.widget === 'checkbox') {
      body[field.key] = text(field.key) !== '';
    } else if (type === 'integer' || (Array.isArray(type) && type.includes('integer'))) {
      const raw = text(field.key);
      body[field.key] = /^-?\d{1,9}$/.test(raw) ? Number(raw) : raw === '' ? null : raw;
    } else {
      body[field.key] = text(field.key) === '' ? null : text(field.key);
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
