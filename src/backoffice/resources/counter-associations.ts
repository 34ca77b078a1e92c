/**
 * Counter associations (reason – counter), issue 13 point 4, under the orphan rules of SPEC
 * rule 17 (sql/counters/triggers.sql): an association is not deactivated, moved or deleted
 * while it would orphan an active counter. Staff accounts write them.
 */
import { s } from '../../http/schema.js';
import { html } from '../html.js';
import { defineResource, type FormField } from '../registry.js';
import { declareCall, inputArg, listCall, rowId } from '../calls.js';
import { YES_NO, isStaff, optionsFrom, staffAbilities } from './staff.js';

interface CounterAssociation {
  id: number;
  absence_type: number;
  absence_type_code: string;
  absence_type_name: string;
  absence_type_active: boolean;
  counter_code: string;
  counter_name: string;
  is_consumable: boolean;
  is_active: boolean;
}

/** Every absence type, the inactive ones marked. */
const TYPES = optionsFrom(
  declareCall('counter-associations: absence types', 'app_hidden.absence_type_choices', [inputArg('which', 'text')], { rows: true }),
  { body: { which: 'all' } });
/** The counter kinds, in their order (the counters' filter too). */
export const COUNTER_KINDS = optionsFrom(declareCall('counter kinds', 'app_hidden.counter_kind_choices', [], { rows: true }));

const GET = declareCall('counter-associations: read', 'app_public.counter_association_get', [rowId()]);
const SAVE = declareCall('counter-associations: save', 'app_public.counter_association_save',
  [rowId(), inputArg('absence_type', 'int'), inputArg('counter_code', 'text'), inputArg('is_active', 'boolean')]);
const DELETE = declareCall('counter-associations: delete', 'app_public.counter_association_delete', [rowId()]);

const BODY = s.object({ absence_type: s.id(), counter_code: s.text(16), is_active: s.bool() }, ['absence_type', 'counter_code', 'is_active']);
const FIELDS: FormField[] = [
  { key: 'absence_type', label: 'Motif d’absence', options: TYPES },
  { key: 'counter_code', label: 'Compteur', options: COUNTER_KINDS },
  { key: 'is_active', label: 'Association active', hint: 'Refusé si un compteur actif n’aurait plus aucun motif actif associé.' },
];

export const counterAssociationsResource = defineResource<CounterAssociation>({
  slug: 'counter-associations',
  title: 'Associations motif – compteur',
  summary: 'Quels motifs consomment quels compteurs ; règles des compteurs orphelins.',
  available: async () => true,
  list: {
    ...listCall('counter-associations: list', 'app_public.counter_associations_search',
      s.object({ counter_code: s.text(16), absence_type: s.id() })),
    pageSize: 50,
    caption: 'Associations, par compteur',
    empty: 'Aucune association ne correspond à ces filtres.',
    filters: [
      { key: 'counter_code', label: 'Compteur', options: COUNTER_KINDS },
      { key: 'absence_type', label: 'Motif', options: TYPES },
    ],
    columns: [
      { label: 'Compteur', rowHeader: true, value: (a) => html`<a href="/backoffice/counter-associations/${a.id}/">${a.counter_code}</a> — ${a.counter_name}` },
      { label: 'Motif', value: (a) => html`<a href="/backoffice/absence-types/${a.absence_type}/">${a.absence_type_code}</a> — ${a.absence_type_name}${a.absence_type_active ? '' : ' (inactif)'}` },
      { label: 'Association active', value: (a) => YES_NO(a.is_active) },
    ],
  },
  create: {
    title: 'Nouvelle association',
    submitLabel: 'Créer l’association',
    call: SAVE,
    body: BODY,
    fields: FIELDS,
    initial: () => ({ is_active: true }),
    allowed: isStaff,
    done: 'L’association a été créée.',
  },
  detail: {
    read: GET,
    title: (a) => `Association ${a.absence_type_code} → ${a.counter_code}`,
    abilities: staffAbilities,
    render: async (a) => html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">L’association</h2>
  <dl class="facts">
    <dt>Motif</dt><dd><a href="/backoffice/absence-types/${a.absence_type}/">${a.absence_type_code}</a> — ${a.absence_type_name} (${a.absence_type_active ? 'actif' : 'inactif'})</dd>
    <dt>Compteur</dt><dd>${a.counter_code} — ${a.counter_name}${a.is_consumable ? '' : ' (non consommable)'}</dd>
    <dt>Association active</dt><dd>${YES_NO(a.is_active)}</dd>
  </dl>
</section>`,
    edit: {
      title: 'Modifier l’association',
      submitLabel: 'Enregistrer',
      call: SAVE,
      body: BODY,
      fields: FIELDS,
      initial: (a) => ({ absence_type: a.absence_type, counter_code: a.counter_code, is_active: a.is_active }),
      allowed: (_a, can) => Boolean(can.edit),
      done: 'L’association a été enregistrée.',
    },
    actions: [
      {
        slug: 'supprimer',
        title: 'Supprimer l’association',
        intro: 'Refusé si un compteur actif n’aurait plus aucun motif actif associé.',
        call: DELETE,
        body: s.object({}),
        fields: [],
        initial: () => ({}),
        allowed: (_a, can) => Boolean(can.delete),
        submitLabel: 'Supprimer',
        done: 'L’association a été supprimée.',
        danger: true,
        afterwards: 'list',
      },
    ],
  },
});
