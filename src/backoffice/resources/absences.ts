/**
 * Absences (issue 13, point 3): list with the API list's filters, detail (period, count,
 * decision read-only, cancellation, documents, the employee's counters, audit trail) and the
 * decisions, cancellation decisions and cancel action, through the API's own SQL functions
 * (same rules, messages and notifications).
 */
import type pg from 'pg';
import type { RouteSpec } from '../../http/route.js';
import { routes } from '../../http/routes/index.js';
import { s, type JsonSchema } from '../../http/schema.js';
import { html, message, type Html } from '../html.js';
import { defineResource, type FormField, type Option } from '../registry.js';
import {
  PUBLIC_URL, SENT_KEYS, callRows, callValue, callValueOrNull, declareCall, holds, inputArg, rowId,
} from '../calls.js';
import { auditTrail } from './audit-log.js';
import { establishmentOptions } from './referentials.js';
import { optionsFrom } from './staff.js';
import { frenchFormat } from '../date-format.js';

interface AbsenceDocument {
  id: number;
  filename: string;
  content_type: string;
  size_bytes: number;
  uploaded_at: string;
  uploaded_by: string;
  /** Only for readers allowed to read the content (the API's download route). */
  file?: string;
}

interface CounterEffect {
  counter: string;
  year: number;
  direction: 'debit' | 'credit';
  quantity: string;
  column: 'planned' | 'taken';
}

export interface Absence {
  id: number;
  employee: number;
  employee_name: string | null;
  type: number;
  type_code: string;
  type_name: string;
  date_start: string;
  date_end: string;
  start_half: 'morning' | 'afternoon' | null;
  end_half: 'morning' | 'afternoon' | null;
  start_time: string | null;
  end_time: string | null;
  comment: string | null;
  status: 'pending' | 'validated' | 'refused' | 'cancellation_requested' | 'cancelled';
  status_label: string;
  version: number;
  counted_quantity: string | null;
  counted_unit: 'day' | 'hour' | null;
  author: number | null;
  submitted_at: string | null;
  decided_by: number | null;
  decided_at: string | null;
  decision_reason: string | null;
  corrected_by: number | null;
  cancellation_comment: string | null;
  cancellation_requested_at: string | null;
  cancellation_decided_at: string | null;
  cancellation_decision_reason: string | null;
  cancellation_counter_effects: CounterEffect[] | null;
  cancelled_by: number | null;
  cancelled_at: string | null;
  warnings: string[] | null;
  documents: AbsenceDocument[];
}

interface Counter {
  code: string;
  name: string;
  unit: 'day' | 'hour';
  acquired: string;
  taken: string;
  planned: string;
  remaining: string;
}

export const STATUS_LABELS: Record<Absence['status'], string> = {
  pending: 'En attente',
  validated: 'Validée',
  refused: 'Refusée',
  cancellation_requested: 'Annulation demandée',
  cancelled: 'Annulée',
};

const DATE = frenchFormat({ day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
const DATE_TIME = frenchFormat({ dateStyle: 'short', timeStyle: 'short', timeZone: 'Europe/Paris' });
const HALVES = { morning: 'matin', afternoon: 'après-midi' } as const;

const frDate = (iso: string) => DATE.format(new Date(`${iso}T00:00:00Z`));
const frDateTime = (iso: string | null) => (iso ? DATE_TIME.format(new Date(iso)) : '—');
/** « 1 jour », « 1,5 jour », « 3 jours », « 2,5 h » (as the application writes them; never « 1,00 jour »). */
const unitLabel = (unit: 'day' | 'hour' | null, quantity: string) =>
  `${Number(quantity).toLocaleString('fr-FR', { maximumFractionDigits: 2 })} ${unit === 'hour' ? 'h' : Math.abs(Number(quantity)) >= 2 ? 'jours' : 'jour'}`;

/** "du 30 novembre 2026 (après-midi) au 2 décembre 2026", "le 4 décembre 2026 de 09:00 à 11:30". */
export function periodLabel(a: Pick<Absence, 'date_start' | 'date_end' | 'start_half' | 'end_half' | 'start_time' | 'end_time'>): string {
  if (a.start_time) return `le ${frDate(a.date_start)} de ${a.start_time} à ${a.end_time}`;
  if (a.date_start === a.date_end) {
    return `le ${frDate(a.date_start)}${a.start_half && a.start_half === a.end_half ? ` (${HALVES[a.start_half]})` : ''}`;
  }
  return `du ${frDate(a.date_start)}${a.start_half ? ` (${HALVES[a.start_half]})` : ''} au ${frDate(a.date_end)}${a.end_half ? ` (${HALVES[a.end_half]})` : ''}`;
}

/** The body schema of a manifest route (the back-office validates with the API's own schema). */
function bodyOf(operationId: string): JsonSchema {
  const route: RouteSpec | undefined = routes.find((r) => r.operationId === operationId);
  if (!route?.body) throw new Error(`back-office absences: ${operationId} has no body schema`);
  return route.body;
}

const ACCOUNT_NAMES = declareCall('absences: account names', 'app_hidden.account_display_names', [inputArg('ids', 'int[]')], { rows: true });
const COUNTERS = declareCall('absences: counters', 'app_public.counters_read', [inputArg('employee', 'int'), inputArg('year', 'int')]);
const ABILITIES = declareCall('absences: abilities', 'app_public.absence_abilities', [rowId()]);
const SAVE = declareCall('absences: correction', 'app_public.absence_backoffice_save', [rowId(), inputArg('version', 'int'),
  inputArg('status', 'text'), inputArg('type', 'int'), inputArg('date_start', 'date'), inputArg('date_end', 'date'),
  inputArg('start_half', 'text'), inputArg('end_half', 'text'), inputArg('start_time', 'time'), inputArg('end_time', 'time'),
  inputArg('comment', 'text'), SENT_KEYS, PUBLIC_URL]);
const TYPES = declareCall('absences: absence types', 'app_hidden.absence_type_choices',
  [inputArg('which', 'text'), inputArg('kept', 'int')], { rows: true });
const EMPLOYEES = optionsFrom(
  declareCall('absences: employees', 'app_hidden.employee_choices', [inputArg('having', 'text')], { rows: true }),
  { body: { having: 'absences' } });

/** Names of the accounts a record refers to (decided, corrected, cancelled by). */
async function accountNames(client: pg.PoolClient, ids: Array<number | null>): Promise<Map<number, string>> {
  const wanted = ids.filter((id): id is number => id !== null);
  if (wanted.length === 0) return new Map();
  const rows = await callRows<{ id: number; name: string }>(client, ACCOUNT_NAMES, { body: { ids: wanted } });
  return new Map(rows.map((row) => [row.id, row.name]));
}

/** The employee's counters for the year of the absence, as the same reader sees them. */
async function countersSection(client: pg.PoolClient, a: Absence): Promise<Html> {
  const year = Number(a.date_start.slice(0, 4));
  // A reader who may not read these counters sees the absence without them.
  const read = await callValueOrNull<Record<string, Counter>>(client, COUNTERS, { body: { employee: a.employee, year } });
  if (read === null) return html``;
  const counters = Object.values(read);
  return html`<section class="card" aria-labelledby="compteurs">
  <h2 id="compteurs">Compteurs de ${a.employee_name ?? 'ce salarié'} (${year})</h2>
  ${counters.length === 0 ? html`<p>Aucun compteur ouvert pour ${year}.</p>` : html`<div class="table-wrap"><table id="table-compteurs">
    <caption>Soldes tirés du journal des compteurs</caption>
    <thead><tr><th scope="col">Compteur</th><th scope="col">Acquis</th><th scope="col">Pris</th><th scope="col">Planifiés</th><th scope="col">Restant</th></tr></thead>
    <tbody>${counters.map((c) => html`<tr data-counter="${c.code}">
      <th scope="row">${c.code} — ${c.name}</th>
      <td>${unitLabel(c.unit, c.acquired)}</td><td>${unitLabel(c.unit, c.taken)}</td>
      <td>${unitLabel(c.unit, c.planned)}</td><td class="remaining">${unitLabel(c.unit, c.remaining)}</td>
    </tr>`)}</tbody>
  </table></div>`}
</section>`;
}

function documentsSection(a: Absence): Html {
  return html`<section class="card" aria-labelledby="justificatifs">
  <h2 id="justificatifs">Justificatifs</h2>
  ${a.documents.length === 0 ? html`<p>Aucun justificatif${a.status === 'cancelled' ? ' (ceux d’une absence annulée sont supprimés)' : ''}.</p>` : html`<ul class="documents">
    ${a.documents.map((d) => html`<li>${d.file
      ? html`<a href="${d.file}">${d.filename}</a>`
      : html`<span>${d.filename}</span> <span class="muted">(contenu réservé aux RH et au salarié)</span>`}
      — déposé le ${frDateTime(d.uploaded_at)} par ${d.uploaded_by}</li>`)}
  </ul>`}
</section>`;
}

function effectsList(effects: CounterEffect[]): Html {
  if (effects.length === 0) return html`<p>Aucun compteur à recréditer.</p>`;
  return html`<ul>${effects.map((e) => html`<li>${e.counter} ${e.year} : ${e.quantity.replace('.', ',')} recrédité(s) en ${e.column === 'taken' ? 'Pris' : 'Planifiés'}</li>`)}</ul>`;
}

async function render(a: Absence, client: pg.PoolClient): Promise<Html> {
  const names = await accountNames(client, [a.decided_by, a.corrected_by, a.cancelled_by, a.author]);
  const by = (id: number | null, at: string | null) => (id === null ? '—' : `${names.get(id) ?? `compte n° ${id}`}${at ? `, le ${frDateTime(at)}` : ''}`);
  const cancellation = a.cancellation_requested_at || a.cancelled_at;
  return html`
<p><a href="/file/absences/${a.id}">Voir dans l’application</a> (le volet de décision de la file, à la même adresse que les notifications)</p>
<section class="card" aria-labelledby="absence">
  <h2 id="absence">L’absence</h2>
  <dl class="facts">
    <dt>Salarié</dt><dd>${a.employee_name ?? '—'}</dd>
    <dt>Motif</dt><dd>${a.type_code} — ${a.type_name}</dd>
    <dt>Période</dt><dd>${periodLabel(a)}</dd>
    <dt>Décompte</dt><dd>${a.counted_quantity ? unitLabel(a.counted_unit, a.counted_quantity) : '—'}</dd>
    <dt>Statut</dt><dd><strong>${STATUS_LABELS[a.status]}</strong> (version ${a.version})</dd>
    <dt>Commentaire</dt><dd>${a.comment ?? '—'}</dd>
    <dt>Déposée par</dt><dd>${by(a.author, a.submitted_at)}${a.submitted_at ? '' : ' (déclaration)'}</dd>
    <dt>Décidée par</dt><dd>${by(a.decided_by, a.decided_at)}</dd>
    <dt>Motif de la décision</dt><dd>${a.decision_reason ?? '—'}</dd>
    <dt>Corrigée par</dt><dd>${by(a.corrected_by, null)}</dd>
  </dl>
  <p class="hint">« Décidée par » et sa date sont écrits par la décision : ils ne se modifient pas ici.</p>
</section>
${cancellation ? html`<section class="card" aria-labelledby="annulation">
  <h2 id="annulation">Annulation</h2>
  <dl class="facts">
    <dt>Demandée le</dt><dd>${frDateTime(a.cancellation_requested_at)}</dd>
    <dt>Commentaire du salarié</dt><dd>${a.cancellation_comment ?? '—'}</dd>
    <dt>Décidée le</dt><dd>${frDateTime(a.cancellation_decided_at)}</dd>
    <dt>Motif du refus</dt><dd>${a.cancellation_decision_reason ?? '—'}</dd>
    <dt>Annulée par</dt><dd>${by(a.cancelled_by, a.cancelled_at)}</dd>
  </dl>
</section>` : ''}
${a.cancellation_counter_effects && a.status === 'cancellation_requested' ? html`<section class="card" aria-labelledby="effets">
  <h2 id="effets">Accorder l’annulation recréditerait</h2>${effectsList(a.cancellation_counter_effects)}</section>` : ''}
${a.warnings?.length ? html`<section class="card" aria-labelledby="avertissements"><h2 id="avertissements">Avertissements</h2>
  <ul>${a.warnings.map((w) => html`<li>${w}</li>`)}</ul></section>` : ''}
${documentsSection(a)}
${await countersSection(client, a)}
${a.status === 'refused' || a.status === 'cancelled' ? message('info', `Cette absence est ${a.status === 'refused' ? 'refusée' : 'annulée'} : elle reste au dossier.`) : ''}
${a.status === 'cancellation_requested' ? message('info', 'Une demande d’annulation est en cours : le statut et la période ne se modifient pas avant sa décision.') : ''}
${await auditTrail(client, 'absence', a.id)}`;
}

const version: FormField = { key: 'version', label: 'Version', widget: 'hidden' };

/** Absence types offered in a form: the active ones, and the absence's own type. */
async function typeOptions(client: pg.PoolClient, row?: Record<string, unknown>): Promise<Option[]> {
  return optionsFrom(TYPES, { body: { which: 'kept', kept: row?.type ?? null } })(client);
}

const HALF_OPTIONS: Option[] = [{ value: 'morning', label: 'Matin' }, { value: 'afternoon', label: 'Après-midi' }];

/**
 * The status field of the form (SPEC, absence state table): the current state, and « En
 * attente » for a decided absence (the technical state set back to pending). It never offers
 * « Annulation demandée » nor « Annulée »: in those states the form is not offered at all.
 */
export function statusOptions(row?: Record<string, unknown>): Option[] {
  const current = row?.status as Absence['status'] | undefined;
  const values: Array<Absence['status']> = current === 'validated' || current === 'refused' ? [current, 'pending'] : ['pending'];
  return values.map((value) => ({ value, label: value === current ? `${STATUS_LABELS[value]} (actuel)` : STATUS_LABELS[value] }));
}

/** The form's body: the manager-side correction of PATCH /api/absences/<id>/ and the status field. */
const patchProperties = ((bodyOf('absence_update').properties ?? {}) as Record<string, JsonSchema>);
const EDIT_BODY = s.object({
  ...Object.fromEntries(Object.entries(patchProperties).filter(([key]) => key !== 'remove_document_ids')),
  version: s.int({ minimum: 1, description: 'Version lue ; périmée : 409.' }),
  status: s.enum(['pending', 'validated', 'refused'], { description: 'Seule la remise « En attente » d’une absence décidée écrit quelque chose.' }),
}, ['version']);

const EDIT_FIELDS: FormField[] = [
  version,
  {
    key: 'status', label: 'Statut', options: async (_client, row) => statusOptions(row), required: true,
    hint: 'Une absence validée ou refusée peut être remise « En attente » (sa décision est effacée, le journal d’audit la garde) ; les décisions se prennent avec les actions de la fiche.',
  },
  { key: 'type', label: 'Motif', options: typeOptions, required: true },
  { key: 'date_start', label: 'Premier jour', required: true },
  { key: 'date_end', label: 'Dernier jour', required: true },
  { key: 'start_half', label: 'Demi-journée de début', options: async () => HALF_OPTIONS, hint: '« (aucun) » : la journée entière.' },
  { key: 'end_half', label: 'Demi-journée de fin', options: async () => HALF_OPTIONS, hint: '« (aucun) » : la journée entière.' },
  { key: 'start_time', label: 'Heure de début', hint: 'Motifs en heures seulement (une seule date).' },
  { key: 'end_time', label: 'Heure de fin', hint: 'Motifs en heures seulement (une seule date).' },
  { key: 'comment', label: 'Commentaire' },
];

export const absenceResource = defineResource<Absence>({
  slug: 'absences',
  title: 'Absences',
  summary: 'Absences et demandes d’absence : décisions, annulations, justificatifs.',
  available: holds('absences.view_absence_queue'),
  list: {
    operationId: 'absences_list',
    pageSize: 25,
    caption: 'Absences, premier jour le plus récent d’abord',
    empty: 'Aucune absence ne correspond à ces filtres.',
    filters: [
      { key: 'status', label: 'Statut', options: async () => Object.entries(STATUS_LABELS).map(([value, label]) => ({ value, label })) },
      {
        key: 'establishment', label: 'Établissement', options: establishmentOptions,
      },
      {
        key: 'type', label: 'Motif', options: optionsFrom(TYPES, { body: { which: 'filed' } }),
      },
      {
        key: 'employee', label: 'Salarié', options: EMPLOYEES,
      },
      { key: 'from', label: 'Du', hint: 'Absences qui chevauchent la période.' },
      { key: 'to', label: 'Au' },
    ],
    columns: [
      { label: 'Période', rowHeader: true, value: (a) => html`<a href="/backoffice/absences/${a.id}/">${periodLabel(a)}</a>` },
      { label: 'Salarié', value: (a) => a.employee_name },
      { label: 'Motif', value: (a) => `${a.type_code} — ${a.type_name}` },
      { label: 'Décompte', value: (a) => (a.counted_quantity ? unitLabel(a.counted_unit, a.counted_quantity) : '—') },
      { label: 'Statut', value: (a) => STATUS_LABELS[a.status] },
    ],
  },
  detail: {
    operationId: 'absence_get',
    title: (a) => `Absence n° ${a.id} — ${a.employee_name ?? ''}`,
    abilities: async (client, id) => (await callValue<Record<string, boolean> | null>(client, ABILITIES, { id })) ?? {},
    render,
    edit: {
      title: 'Modifier l’absence',
      submitLabel: 'Enregistrer',
      intro: 'Les corrections rejouent toutes les règles de déclaration et compensent les compteurs, comme la correction de l’API. « Décidée par » et sa date sont écrits par la décision : ils ne se modifient pas ici.',
      call: SAVE,
      body: EDIT_BODY,
      fields: EDIT_FIELDS,
      initial: (a) => ({
        version: a.version, status: a.status, type: a.type, date_start: a.date_start, date_end: a.date_end,
        start_half: a.start_half, end_half: a.end_half, start_time: a.start_time, end_time: a.end_time, comment: a.comment,
      }),
      allowed: (a, can) => Boolean(can.correct) && (a.status === 'pending' || a.status === 'validated' || a.status === 'refused'),
      done: 'L’absence a été enregistrée.',
    },
    actions: [
      {
        slug: 'validate',
        title: 'Valider la demande',
        operationId: 'absence_validate',
        fields: [
          version,
          { key: 'date_end', label: 'Dernier jour accordé', hint: 'Le modifier corrige la demande : un motif est alors obligatoire.' },
          { key: 'type', label: 'Motif d’absence accordé', options: typeOptions, hint: 'Le changer requalifie la demande : un motif est alors obligatoire.' },
          { key: 'reason', label: 'Motif de la décision', hint: 'Facultatif si la demande est validée telle quelle ; transmis au salarié avec la notification.' },
        ],
        initial: (a) => ({ version: a.version, date_end: a.date_end, type: a.type, reason: null }),
        allowed: (a, can) => a.status === 'pending' && Boolean(can.decide),
        submitLabel: 'Valider la demande',
        done: 'La demande a été validée ; le salarié est notifié.',
      },
      {
        slug: 'refuse',
        title: 'Refuser la demande',
        operationId: 'absence_refuse',
        fields: [version, { key: 'reason', label: 'Motif du refus', required: true, hint: 'Le salarié le reçoit à la fin de la notification.' }],
        initial: (a) => ({ version: a.version, reason: null }),
        allowed: (a, can) => a.status === 'pending' && Boolean(can.decide),
        submitLabel: 'Refuser la demande',
        done: 'La demande a été refusée ; le salarié est notifié.',
        danger: true,
      },
      {
        slug: 'grant-cancellation',
        title: 'Accorder l’annulation',
        intro: 'L’absence est annulée : compteurs recrédités, justificatifs supprimés ; elle reste au dossier.',
        operationId: 'absence_validate',
        fields: [version],
        initial: (a) => ({ version: a.version }),
        allowed: (a, can) => a.status === 'cancellation_requested' && Boolean(can.decide),
        submitLabel: 'Accorder l’annulation',
        done: 'L’annulation est accordée ; le salarié est notifié.',
      },
      {
        slug: 'refuse-cancellation',
        title: 'Refuser l’annulation',
        intro: 'L’absence est maintenue.',
        operationId: 'absence_refuse',
        fields: [version, { key: 'reason', label: 'Motif du refus', required: true, hint: 'Le salarié le reçoit à la fin de la notification.' }],
        initial: (a) => ({ version: a.version, reason: null }),
        allowed: (a, can) => a.status === 'cancellation_requested' && Boolean(can.decide),
        submitLabel: 'Refuser l’annulation',
        done: 'L’annulation est refusée ; l’absence est maintenue et le salarié est notifié.',
        danger: true,
      },
      {
        slug: 'cancel',
        title: 'Annuler l’absence',
        intro: 'L’absence accordée est annulée : compteurs recrédités, justificatifs supprimés, elle reste au dossier et le salarié est notifié (« Absence annulée »).',
        operationId: 'absence_delete',
        fields: [],
        initial: () => ({}),
        allowed: (a, can) => a.status === 'validated' && Boolean(can.decide),
        submitLabel: 'Annuler l’absence',
        done: 'L’absence est annulée ; le salarié est notifié.',
        danger: true,
      },
    ],
  },
});
