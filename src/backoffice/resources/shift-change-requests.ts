/**
 * Day-change requests (issue point 2): list with filters, detail (planned day, requested
 * slots, current day, warnings, audit trail), the HR correction of a pending request and the
 * two decisions, through the same SQL functions as the API (same rules, same notifications).
 */
import { slotInput } from '../../http/routes/shift-change-requests.js';
import { s } from '../../http/schema.js';
import { html, message, type Html } from '../html.js';
import { defineResource } from '../registry.js';
import { callValue, declareCall, holds, inputArg, rowId } from '../calls.js';
import { auditTrail } from './audit-log.js';
import { establishmentOptions } from './referentials.js';
import { optionsFrom } from './staff.js';
import { frenchFormat } from '../date-format.js';

const ABILITIES = declareCall('shift-change-requests: abilities', 'app_public.shift_change_abilities', [rowId()]);
const CORRECT = declareCall('shift-change-requests: correction', 'app_public.shift_change_correct',
  [rowId(), inputArg('version', 'int'), inputArg('slots', 'jsonb'), inputArg('is_remote', 'boolean'), inputArg('is_offsite', 'boolean')]);
/** The employees who filed a request the account reads. */
const EMPLOYEES = optionsFrom(
  declareCall('shift-change-requests: employees', 'app_hidden.employee_choices', [inputArg('having', 'text')], { rows: true }),
  { body: { having: 'shift_change_requests' } });

interface Slot {
  start_time: string;
  end_time: string;
  break_start_time: string | null;
  break_end_time: string | null;
  break_paid: boolean;
  post: number | null;
  post_code: string | null;
  post_label: string | null;
  establishment: number | null;
  is_remote: boolean;
  minutes: number;
}

interface ShiftChangeRequest {
  id: number;
  employee: number;
  employee_name: string | null;
  date: string;
  reason: string;
  reason_label: string | null;
  comment: string | null;
  is_remote: boolean;
  is_offsite: boolean;
  slots: Slot[];
  status: 'pending' | 'validated' | 'refused';
  version: number;
  planned_description: string;
  planned_minutes: number;
  requested_minutes: number;
  decided_by_name: string | null;
  decided_at: string | null;
  decision_reason: string | null;
  corrected_by: number | null;
  corrected_by_name: string | null;
  corrected_at: string | null;
  granted_slots: Slot[] | null;
  granted_minutes: number | null;
  granted_gap_minutes: number | null;
  current_day?: { label: string; minutes: number; slots: Slot[]; is_remote: boolean; is_offsite: boolean; modified: boolean; comment: string | null };
  warnings?: string[] | null;
}

const STATUS_LABELS: Record<string, string> = { pending: 'En attente', validated: 'Validée', refused: 'Refusée' };
const DATE = frenchFormat({ weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
const DATE_TIME = frenchFormat({ dateStyle: 'short', timeStyle: 'short', timeZone: 'Europe/Paris' });

const frDate = (iso: string) => DATE.format(new Date(`${iso}T00:00:00Z`));
const hours = (minutes: number) => `${Math.floor(minutes / 60)} h ${String(Math.abs(minutes) % 60).padStart(2, '0')}`;

function slotsTable(caption: string, slots: Slot[]): Html {
  if (slots.length === 0) return html`<p><strong>${caption}</strong> : aucun créneau (horaires de la journée inchangés).</p>`;
  return html`<div class="table-wrap"><table>
  <caption>${caption}</caption>
  <thead><tr><th scope="col">Poste</th><th scope="col">Horaires</th><th scope="col">Pause</th><th scope="col">Durée nette</th></tr></thead>
  <tbody>${slots.map((slot) => html`<tr>
    <th scope="row">${slot.post_code ? `${slot.post_code} — ${slot.post_label ?? ''}` : 'Poste prévu'}${slot.is_remote ? ' (télétravail)' : ''}</th>
    <td>${slot.start_time}–${slot.end_time}</td>
    <td>${slot.break_start_time ? `${slot.break_start_time}–${slot.break_end_time}${slot.break_paid ? ' (payée)' : ''}` : 'aucune'}</td>
    <td>${hours(slot.minutes)}</td>
  </tr>`)}</tbody>
</table></div>`;
}

function options(request: { is_remote: boolean; is_offsite: boolean }): string {
  const list = [request.is_remote ? 'télétravail' : '', request.is_offsite ? 'hors de l’établissement' : ''].filter(Boolean);
  return list.length ? list.join(', ') : 'aucune';
}

const version = { key: 'version', label: 'Version', widget: 'hidden' } as const;

export const shiftChangeResource = defineResource<ShiftChangeRequest>({
  slug: 'shift-change-requests',
  title: 'Demandes de modification',
  summary: 'Demandes de modification de journée : correction RH, validation et refus.',
  available: holds('absences.view_absence_queue'),
  list: {
    operationId: 'shift_change_requests_list',
    pageSize: 25,
    caption: 'Demandes de modification, date concernée la plus récente d’abord',
    empty: 'Aucune demande ne correspond à ces filtres.',
    filters: [
      { key: 'status', label: 'Statut', options: async () => Object.entries(STATUS_LABELS).map(([value, label]) => ({ value, label })) },
      {
        key: 'establishment', label: 'Établissement', options: establishmentOptions,
      },
      {
        key: 'employee', label: 'Salarié', options: EMPLOYEES,
      },
      { key: 'from', label: 'Du' },
      { key: 'to', label: 'Au' },
    ],
    columns: [
      { label: 'Jour', rowHeader: true, value: (r) => html`<a href="/backoffice/shift-change-requests/${r.id}/">${frDate(r.date)}</a>` },
      { label: 'Salarié', value: (r) => r.employee_name },
      { label: 'Motif', value: (r) => r.reason_label ?? r.reason },
      { label: 'Prévu → demandé', value: (r) => `${hours(r.planned_minutes)} → ${hours(r.requested_minutes)}` },
      { label: 'Statut', value: (r) => html`${STATUS_LABELS[r.status]}${r.corrected_by ? html`<br><span class="muted">corrigée</span>` : ''}` },
    ],
  },
  detail: {
    operationId: 'shift_change_requests_read',
    title: (r) => `Demande n° ${r.id} — ${r.employee_name ?? ''}`,
    abilities: async (client, id) => callValue<Record<string, boolean>>(client, ABILITIES, { id }),
    render: async (r, client) => html`
<p><a href="/file/journees/${r.id}">Voir dans l’application</a> (le volet de décision de la file, à la même adresse que les notifications)</p>
<section class="card" aria-labelledby="demande">
  <h2 id="demande">La demande</h2>
  <dl class="facts">
    <dt>Jour concerné</dt><dd>${frDate(r.date)}</dd>
    <dt>Statut</dt><dd>${STATUS_LABELS[r.status]} (version ${r.version})</dd>
    <dt>Motif</dt><dd>${r.reason_label ?? r.reason}</dd>
    <dt>Commentaire</dt><dd>${r.comment ?? '—'}</dd>
    <dt>Options de la journée</dt><dd>${options(r)}</dd>
    <dt>Journée prévue au dépôt</dt><dd>${r.planned_description} (${hours(r.planned_minutes)})</dd>
    <dt>Durée demandée</dt><dd>${hours(r.requested_minutes)}</dd>
    <dt>Corrigée par</dt><dd>${r.corrected_by_name ? `${r.corrected_by_name}, le ${DATE_TIME.format(new Date(r.corrected_at!))}` : '—'}</dd>
    <dt>Décidée par</dt><dd>${r.decided_by_name ? `${r.decided_by_name}, le ${DATE_TIME.format(new Date(r.decided_at!))}` : '—'}</dd>
    <dt>Motif de la décision</dt><dd>${r.decision_reason ?? '—'}</dd>
  </dl>
  ${slotsTable('Créneaux demandés', r.slots)}
  ${r.granted_slots ? html`${slotsTable('Journée accordée', r.granted_slots)}
  <p>Accordé : ${hours(r.granted_minutes!)} (écart ${r.granted_gap_minutes! >= 0 ? '+' : '−'}${hours(Math.abs(r.granted_gap_minutes!))}).</p>` : ''}
</section>
${r.warnings?.length ? html`<section class="card" aria-labelledby="avertissements"><h2 id="avertissements">Avertissements</h2>
  <ul>${r.warnings.map((w) => html`<li>${w}</li>`)}</ul></section>` : ''}
${r.current_day ? html`<section class="card" aria-labelledby="actuelle">
  <h2 id="actuelle">La journée telle que prévue aujourd’hui</h2>
  <p>${r.current_day.label} (${hours(r.current_day.minutes)})${r.current_day.modified ? ' — journée déjà modifiée' : ''} ; options : ${options(r.current_day)}.</p>
  ${r.current_day.comment ? html`<p>Commentaire : ${r.current_day.comment}</p>` : ''}
</section>` : ''}
${r.status !== 'pending' ? message('info', 'Cette demande est décidée : elle ne se modifie plus.') : ''}
${await auditTrail(client, 'shift_change_request', r.id)}`,
    actions: [
      {
        slug: 'correct',
        title: 'Corriger la demande (RH)',
        intro: 'Les créneaux corrigés remplacent ceux demandés ; la demande reste en attente et sa validation demandera un motif.',
        call: CORRECT,
        body: s.object({
          version: s.int({ minimum: 1 }),
          slots: s.array(slotInput, { maxItems: 9 }),
          is_remote: s.bool(),
          is_offsite: s.bool(),
        }, ['version', 'slots', 'is_remote', 'is_offsite']),
        fields: [
          version,
          { key: 'slots', label: 'Créneaux de la journée', widget: 'slots', hint: 'Heures au format HH:MM. Videz les heures d’un créneau pour le retirer ; remplissez une ligne « Ajout » pour en ajouter un.' },
          { key: 'is_remote', label: 'Télétravail', widget: 'checkbox' },
          { key: 'is_offsite', label: 'Hors de l’établissement', widget: 'checkbox' },
        ],
        initial: (r) => ({ version: r.version, slots: r.slots, is_remote: r.is_remote, is_offsite: r.is_offsite }),
        allowed: (r, can) => r.status === 'pending' && Boolean(can.correct),
        submitLabel: 'Enregistrer la correction',
        done: 'La demande a été corrigée (version suivante) ; sa validation demandera un motif.',
      },
      {
        slug: 'validate',
        title: 'Valider',
        operationId: 'shift_change_requests_validate',
        fields: [
          version,
          { key: 'reason', label: 'Motif', hint: 'Obligatoire si la demande a été corrigée ou si vous accordez une autre journée.' },
          { key: 'adjusted_slots', label: 'Journée accordée', widget: 'slots', emptyAsNull: true, hint: 'Laissez les créneaux demandés pour les accorder tels quels ; modifiez-les pour accorder une autre journée.' },
        ],
        initial: (r) => ({ version: r.version, reason: null, adjusted_slots: r.slots }),
        allowed: (r, can) => r.status === 'pending' && Boolean(can.decide),
        submitLabel: 'Valider la demande',
        done: 'La demande a été validée ; le salarié est notifié.',
      },
      {
        slug: 'refuse',
        title: 'Refuser',
        operationId: 'shift_change_requests_refuse',
        fields: [version, { key: 'reason', label: 'Motif du refus', required: true, hint: 'Le salarié le reçoit à la fin de la notification.' }],
        initial: (r) => ({ version: r.version, reason: null }),
        allowed: (r, can) => r.status === 'pending' && Boolean(can.decide),
        submitLabel: 'Refuser la demande',
        done: 'La demande a été refusée ; le salarié est notifié.',
        danger: true,
      },
    ],
  },
});
