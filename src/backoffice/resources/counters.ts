/**
 * Counters (balances), issue 13 point 4: the counters the account reads (row-level security),
 * each with its journal read-only, its activation under the rule of SPEC rule 17 and a manual
 * adjustment written as one journal movement with its reason (sql/counters/balances.sql).
 * Written by holders of employee.change_employee_record on the employee, or staff (SPEC,
 * Permissions: « write the employee record, contracts, assignments, counters »).
 */
import { s } from '../../http/schema.js';
import { INPUT_CONTRACT } from '../../http/input-contract.js';
import { html } from '../html.js';
import { defineResource } from '../registry.js';
import { COUNTER_KINDS } from './counter-associations.js';
import { anyOf, callValue, declareCall, holds, inputArg, isStaff, listCall, rowId } from '../calls.js';
import { YES_NO, optionsFrom } from './staff.js';
import { frenchFormat } from '../date-format.js';

interface Counter {
  id: number;
  employee: number;
  employee_name: string;
  code: string;
  name: string;
  unit: 'day' | 'hour';
  is_consumable: boolean;
  year: number;
  is_active: boolean;
  acquired: string;
  taken: string;
  planned: string;
  remaining: string;
  may_write?: boolean;
}

const BUCKET_LABELS: Record<string, string> = { acquired: 'Acquis', taken: 'Pris', planned: 'Planifiés' };
const KIND_LABELS: Record<string, string> = {
  grant: 'Attribution', adjustment: 'Ajustement manuel', reservation: 'Réservation', release: 'Libération',
  consumption: 'Consommation', restitution: 'Restitution', start: 'Début d’absence', compensation: 'Compensation',
  acquisition: 'Acquisition', carry_over: 'Report', expiry: 'Expiration',
};
const DATE_TIME = frenchFormat({ dateStyle: 'short', timeStyle: 'short', timeZone: 'Europe/Paris' });
const amount = (value: string) => value.replace('.', ',');
const unitOf = (c: Counter) => (c.unit === 'day' ? 'j' : 'h');

/** The employees whose counters the account reads (RLS on counters). */
const EMPLOYEES = optionsFrom(
  declareCall('counters: employees', 'app_hidden.employee_choices', [inputArg('having', 'text')], { rows: true }),
  { body: { having: 'counters' } });

const readsCounters = anyOf(isStaff, holds('employee.change_employee_record'), holds('absences.view_absence_queue'));

const GET = declareCall('counters: read', 'app_public.counter_get', [rowId()]);
const JOURNAL = declareCall('counters: journal', 'app_public.counter_journal', [rowId()]);
const SET_ACTIVE = declareCall('counters: activation', 'app_public.counter_set_active', [rowId(), inputArg('is_active', 'boolean')]);
const ADJUST = declareCall('counters: adjustment', 'app_public.counter_adjust',
  [rowId(), inputArg('bucket', 'text'), inputArg('quantity', 'numeric'), inputArg('reason', 'text')]);

export const countersResource = defineResource<Counter>({
  slug: 'counters',
  title: 'Compteurs',
  summary: 'Soldes des salariés, journal des mouvements, ajustement manuel motivé.',
  available: readsCounters,
  list: {
    ...listCall('counters: list', 'app_public.counters_search',
      s.object({ employee: s.id(), code: s.text(16), year: s.int({ minimum: 2000, maximum: 2100 }) })),
    pageSize: 50,
    caption: 'Compteurs, année la plus récente d’abord',
    empty: 'Aucun compteur ne correspond à ces filtres.',
    filters: [
      { key: 'employee', label: 'Salarié', options: EMPLOYEES },
      { key: 'code', label: 'Compteur', options: COUNTER_KINDS },
      { key: 'year', label: 'Année', hint: 'Par exemple 2026.' },
    ],
    columns: [
      { label: 'Salarié', rowHeader: true, value: (c) => html`<a href="/backoffice/counters/${c.id}/">${c.employee_name}</a>` },
      { label: 'Compteur', value: (c) => `${c.code} ${c.year}` },
      { label: 'Acquis', value: (c) => amount(c.acquired) },
      { label: 'Pris', value: (c) => amount(c.taken) },
      { label: 'Planifiés', value: (c) => amount(c.planned) },
      { label: 'Restant', value: (c) => `${amount(c.remaining)} ${unitOf(c)}` },
      { label: 'Actif', value: (c) => YES_NO(c.is_active) },
    ],
  },
  detail: {
    read: GET,
    title: (c) => `Compteur ${c.code} ${c.year} — ${c.employee_name}`,
    render: async (c) => html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">Le compteur</h2>
  <dl class="facts">
    <dt>Salarié</dt><dd>${c.employee_name}</dd>
    <dt>Compteur</dt><dd>${c.code} — ${c.name} (${c.unit === 'day' ? 'jours' : 'heures'})</dd>
    <dt>Année</dt><dd>${c.year}</dd>
    <dt>Acquis</dt><dd>${amount(c.acquired)}</dd>
    <dt>Pris</dt><dd>${amount(c.taken)}</dd>
    <dt>Planifiés</dt><dd>${amount(c.planned)}</dd>
    <dt>Restant</dt><dd><strong>${amount(c.remaining)} ${unitOf(c)}</strong></dd>
    <dt>Actif</dt><dd>${YES_NO(c.is_active)}</dd>
  </dl>
</section>`,
    related: [
      {
        title: 'Journal des mouvements (lecture seule)',
        empty: 'Aucun mouvement.',
        rows: async (c, client) => callValue<Array<Record<string, unknown>>>(client, JOURNAL, { id: c.id }),
        columns: [
          { label: 'Date', rowHeader: true, value: (m) => DATE_TIME.format(new Date(String(m.at))) },
          { label: 'Mouvement', value: (m) => KIND_LABELS[String(m.kind)] ?? String(m.kind) },
          { label: 'Colonne', value: (m) => BUCKET_LABELS[String(m.bucket)] ?? String(m.bucket) },
          { label: 'Quantité', value: (m) => amount(String(m.quantity)) },
          { label: 'Absence', value: (m) => (m.absence == null ? '—' : `n° ${String(m.absence)}`) },
          { label: 'Motif', value: (m) => (m.comment == null ? '—' : String(m.comment)) },
          { label: 'Auteur', value: (m) => (m.actor_name == null ? '—' : String(m.actor_name)) },
        ],
      },
    ],
    edit: {
      title: 'Ouvrir ou fermer le compteur',
      intro: 'Un compteur consommable ne s’ouvre que si un motif actif lui est associé par une association active.',
      submitLabel: 'Enregistrer',
      call: SET_ACTIVE,
      body: s.object({ is_active: s.bool() }, ['is_active']),
      fields: [{ key: 'is_active', label: 'Compteur actif' }],
      initial: (c) => ({ is_active: c.is_active }),
      allowed: (c) => Boolean(c.may_write),
      done: 'Le compteur a été enregistré.',
    },
    actions: [
      {
        slug: 'ajuster',
        title: 'Ajustement manuel',
        intro: 'Écrit un mouvement du journal, avec son motif ; le journal reste la seule façon de faire bouger un solde.',
        call: ADJUST,
        body: s.object({
          bucket: s.enum(['acquired', 'taken']),
          quantity: { type: 'number' },
          reason: s.text(INPUT_CONTRACT.adjustmentReasonMaxLength),
        }, ['bucket', 'quantity', 'reason']),
        fields: [
          { key: 'bucket', label: 'Colonne', options: async () => [{ value: 'acquired', label: 'Acquis' }, { value: 'taken', label: 'Pris' }] },
          { key: 'quantity', label: 'Quantité', hint: 'Positive ou négative, deux décimales au plus (virgule acceptée).' },
          { key: 'reason', label: 'Motif de l’ajustement', widget: 'textarea', hint: 'Conservé dans le journal et le journal d’audit.' },
        ],
        initial: () => ({ bucket: 'acquired' }),
        allowed: (c) => Boolean(c.may_write),
        submitLabel: 'Enregistrer l’ajustement',
        done: 'L’ajustement a été écrit dans le journal.',
      },
    ],
  },
});
