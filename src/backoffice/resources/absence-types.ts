/**
 * Absence types (reasons), issue 13 point 4: every field of the SPEC's table, read by every
 * back-office account, written by staff accounts only (sql/reference/administration.sql). The
 * code is refused when a post holds it (case-insensitively); the cap is > 0 or empty; a
 * deactivation that would orphan an active counter is refused under « Actif ».
 */
import { s } from '../../http/schema.js';
import { INPUT_CONTRACT } from '../../http/input-contract.js';
import { html } from '../html.js';
import { defineResource, type FormField, type Option } from '../registry.js';
import { declareCall, inputArg, listCall, rowId } from '../calls.js';
import { YES_NO, isStaff, optionsFrom, staffAbilities } from './staff.js';

interface Association {
  id: number;
  counter_code: string;
  is_active: boolean;
}

interface AbsenceType {
  id: number;
  code: string;
  name: string;
  category: string;
  subcategory: string | null;
  category_id: number;
  category_label: string;
  unit: 'day' | 'hour';
  paid: boolean;
  splittable: boolean;
  annual_cap: string | null;
  cap_overrun: 'refuse' | 'warn';
  contract_types: string[];
  contract_type_ids: number[];
  is_active: boolean;
  employee_requestable: boolean;
  half_day_allowed: boolean;
  documents_expected: boolean;
  validation_required: boolean;
  annualisation_effect: 'none' | 'neutralise' | 'impute';
  counter_codes: string[];
  associations: Association[];
  position: number;
  absences: number;
}

const labelled = (labels: Record<string, string>) => async (): Promise<Option[]> =>
  Object.entries(labels).map(([value, label]) => ({ value, label }));

export const UNIT_LABELS: Record<string, string> = { day: 'Jour', hour: 'Heure' };
const OVERRUN_LABELS: Record<string, string> = { refuse: 'Refuser', warn: 'Avertir' };
const EFFECT_LABELS: Record<string, string> = {
  none: 'Aucun',
  neutralise: 'Neutralise le temps théorique',
  impute: 'Imputé sur l’annualisation',
};

/** Every category, sub-categories under their parent (« Congés › Congés payés »). */
const CATEGORIES = optionsFrom(declareCall('absence-types: categories', 'app_hidden.absence_category_choices', [], { rows: true }));
/** The contract types by code. */
const CONTRACT_TYPES = optionsFrom(
  declareCall('absence-types: contract types', 'app_hidden.contract_type_choices', [inputArg('by_code', 'boolean')], { rows: true }),
  { body: { by_code: true } });

const GET = declareCall('absence-types: read', 'app_public.absence_type_get', [rowId()]);
const SAVE = declareCall('absence-types: save', 'app_public.absence_type_save', [rowId(), inputArg('code', 'text'),
  inputArg('name', 'text'), inputArg('category', 'int'), inputArg('unit', 'text'), inputArg('paid', 'boolean'),
  inputArg('splittable', 'boolean'), inputArg('annual_cap', 'numeric'), inputArg('cap_overrun', 'text'),
  inputArg('contract_types', 'int[]'), inputArg('half_day_allowed', 'boolean'), inputArg('documents_expected', 'boolean'),
  inputArg('validation_required', 'boolean'), inputArg('annualisation_effect', 'text'), inputArg('is_active', 'boolean'),
  inputArg('employee_requestable', 'boolean'), inputArg('position', 'int')]);
const DELETE = declareCall('absence-types: delete', 'app_public.absence_type_delete', [rowId()]);

const BODY = s.object({
  code: s.text(16),
  name: s.text(INPUT_CONTRACT.nameMaxLength),
  category: s.id(),
  unit: s.enum(['day', 'hour']),
  paid: s.bool(),
  splittable: s.bool(),
  // Strictly positive or empty: the rule is SQL's (absence_type_save), its message under the field.
  annual_cap: s.nullable({ type: 'number' }),
  cap_overrun: s.enum(['refuse', 'warn']),
  contract_types: s.array(s.id(), { maxItems: 50 }),
  half_day_allowed: s.bool(),
  documents_expected: s.bool(),
  validation_required: s.bool(),
  annualisation_effect: s.enum(['none', 'neutralise', 'impute']),
  is_active: s.bool(),
  employee_requestable: s.bool(),
  position: s.int({ minimum: 0, maximum: 999 }),
}, ['code', 'name', 'category', 'unit', 'paid', 'splittable', 'annual_cap', 'cap_overrun', 'contract_types', 'half_day_allowed',
  'documents_expected', 'validation_required', 'annualisation_effect', 'is_active', 'employee_requestable', 'position']);

const FIELDS: FormField[] = [
  { key: 'code', label: 'Code', hint: 'Unique ; comparé sans tenir compte de la casse avec les codes des postes.' },
  { key: 'name', label: 'Libellé' },
  { key: 'category', label: 'Catégorie', hint: 'Catégorie ou sous-catégorie (deux niveaux).', options: CATEGORIES },
  { key: 'unit', label: 'Unité de saisie', options: labelled(UNIT_LABELS) },
  { key: 'paid', label: 'Rémunéré' },
  { key: 'splittable', label: 'Fractionnable', hint: 'Sinon, une seconde période dans l’année séparée par un intervalle donne un avertissement.' },
  { key: 'annual_cap', label: 'Plafond annuel', hint: 'Strictement positif, dans l’unité du motif, sur l’année civile ; vide : pas de plafond.' },
  { key: 'cap_overrun', label: 'Dépassement du plafond', options: labelled(OVERRUN_LABELS) },
  { key: 'contract_types', label: 'Types de contrat concernés', hint: 'Aucun coché : tous les contrats.', options: CONTRACT_TYPES },
  { key: 'half_day_allowed', label: 'Demi-journée possible' },
  { key: 'documents_expected', label: 'Justificatif attendu' },
  { key: 'validation_required', label: 'Validation requise' },
  { key: 'annualisation_effect', label: 'Effet sur l’annualisation', options: labelled(EFFECT_LABELS) },
  { key: 'is_active', label: 'Actif', hint: 'Un motif inactif n’est plus proposé par l’API.' },
  {
    key: 'employee_requestable', label: 'Demandable par le salarié',
    hint: 'Proposé dans le formulaire de demande du salarié ; sinon seuls l’encadrement et les RH le déclarent.',
  },
  { key: 'position', label: 'Ordre d’affichage' },
];

const initial = (t: AbsenceType) => ({
  code: t.code, name: t.name, category: t.category_id, unit: t.unit, paid: t.paid, splittable: t.splittable,
  annual_cap: t.annual_cap, cap_overrun: t.cap_overrun, contract_types: t.contract_type_ids, half_day_allowed: t.half_day_allowed,
  documents_expected: t.documents_expected, validation_required: t.validation_required,
  annualisation_effect: t.annualisation_effect, is_active: t.is_active, employee_requestable: t.employee_requestable, position: t.position,
});

const capText = (t: AbsenceType) => (t.annual_cap ? `${t.annual_cap.replace('.', ',')} ${t.unit === 'day' ? 'j' : 'h'}` : 'aucun');

export const absenceTypesResource = defineResource<AbsenceType>({
  slug: 'absence-types',
  title: 'Motifs d’absence',
  summary: 'Motifs d’absence : unité, plafond, contrats, justificatifs, annualisation, activité.',
  available: async () => true,
  list: {
    ...listCall('absence-types: list', 'app_public.absence_types_search', s.object({ category: s.id(), active: s.bool() })),
    pageSize: 50,
    caption: 'Motifs d’absence, dans l’ordre d’affichage',
    empty: 'Aucun motif ne correspond à ces filtres.',
    filters: [
      { key: 'category', label: 'Catégorie', options: CATEGORIES },
      { key: 'active', label: 'Activité', options: labelled({ true: 'Actifs', false: 'Inactifs' }) },
    ],
    columns: [
      { label: 'Code', rowHeader: true, value: (t) => html`<a href="/backoffice/absence-types/${t.id}/">${t.code}</a>` },
      { label: 'Libellé', value: (t) => t.name },
      { label: 'Catégorie', value: (t) => t.category_label },
      { label: 'Unité', value: (t) => UNIT_LABELS[t.unit] ?? t.unit },
      { label: 'Plafond', value: (t) => (t.annual_cap ? `${capText(t)} (${OVERRUN_LABELS[t.cap_overrun]})` : 'aucun') },
      { label: 'Compteurs', value: (t) => t.counter_codes.join(', ') || '—' },
      { label: 'Demandable par le salarié', value: (t) => YES_NO(t.employee_requestable) },
      { label: 'Actif', value: (t) => YES_NO(t.is_active) },
    ],
  },
  create: {
    title: 'Nouveau motif',
    submitLabel: 'Créer le motif',
    call: SAVE,
    body: BODY,
    fields: FIELDS,
    initial: () => ({
      unit: 'day', splittable: true, cap_overrun: 'refuse', contract_types: [], half_day_allowed: true,
      validation_required: true, annualisation_effect: 'none', is_active: true, employee_requestable: true, position: 0,
    }),
    allowed: isStaff,
    done: 'Le motif a été créé.',
  },
  detail: {
    read: GET,
    title: (t) => `Motif ${t.code} — ${t.name}`,
    abilities: staffAbilities,
    render: async (t) => html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">Le motif</h2>
  <dl class="facts">
    <dt>Code</dt><dd>${t.code}</dd>
    <dt>Libellé</dt><dd>${t.name}</dd>
    <dt>Catégorie</dt><dd>${t.category_label}</dd>
    <dt>Unité de saisie</dt><dd>${UNIT_LABELS[t.unit]}</dd>
    <dt>Rémunéré</dt><dd>${YES_NO(t.paid)}</dd>
    <dt>Fractionnable</dt><dd>${YES_NO(t.splittable)}</dd>
    <dt>Plafond annuel</dt><dd>${capText(t)}</dd>
    <dt>Dépassement du plafond</dt><dd>${OVERRUN_LABELS[t.cap_overrun]}</dd>
    <dt>Types de contrat concernés</dt><dd>${t.contract_types.join(', ') || 'tous'}</dd>
    <dt>Demi-journée possible</dt><dd>${YES_NO(t.half_day_allowed)}</dd>
    <dt>Justificatif attendu</dt><dd>${YES_NO(t.documents_expected)}</dd>
    <dt>Validation requise</dt><dd>${YES_NO(t.validation_required)}</dd>
    <dt>Effet sur l’annualisation</dt><dd>${EFFECT_LABELS[t.annualisation_effect]}</dd>
    <dt>Demandable par le salarié</dt><dd>${YES_NO(t.employee_requestable)}</dd>
    <dt>Actif</dt><dd>${YES_NO(t.is_active)}</dd>
    <dt>Absences enregistrées</dt><dd>${t.absences}</dd>
  </dl>
</section>`,
    related: [
      {
        title: 'Compteurs associés',
        empty: 'Ce motif ne consomme aucun compteur.',
        rows: async (t) => t.associations as unknown as Array<Record<string, unknown>>,
        columns: [
          { label: 'Compteur', rowHeader: true, value: (a) => html`<a href="/backoffice/counter-associations/${String(a.id)}/">${String(a.counter_code)}</a>` },
          { label: 'Association active', value: (a) => YES_NO(a.is_active) },
        ],
      },
    ],
    edit: {
      title: 'Modifier le motif',
      submitLabel: 'Enregistrer',
      call: SAVE,
      body: BODY,
      fields: FIELDS,
      initial,
      allowed: (_t, can) => Boolean(can.edit),
      done: 'Le motif a été enregistré.',
    },
    actions: [
      {
        slug: 'supprimer',
        title: 'Supprimer le motif',
        intro: 'Possible seulement pour un motif qu’aucune absence n’utilise ; ses associations à des compteurs sont supprimées avec lui, si aucun compteur actif n’en dépend.',
        call: DELETE,
        body: s.object({}),
        fields: [],
        initial: () => ({}),
        allowed: (t, can) => Boolean(can.delete) && t.absences === 0,
        submitLabel: 'Supprimer',
        done: 'Le motif a été supprimé.',
        danger: true,
        afterwards: 'list',
      },
    ],
  },
});
