/**
 * Referentials of the organisation (issue 13, point 4): establishments (with the count base of
 * leave days), divisions and contract types. Readable by every account of the back-office;
 * written by staff accounts only (SPEC Permissions rule 6), through the same SQL functions as
 * /api/establishments/, /api/divisions/ and /api/contract-types/.
 */
import { html } from '../html.js';
import { defineResource, type Action, type FormField, type Option } from '../registry.js';
import { callRows, declareCall, inputArg } from '../calls.js';
import { isStaff, optionsFrom, staffAbilities } from './staff.js';
import { frenchFormat } from '../date-format.js';

interface Establishment {
  id: number;
  name: string;
  count_base: 'ouvrables' | 'ouvres';
  division: number | null;
  division_name: string | null;
  created_at: string;
  updated_at: string;
}

interface Division {
  id: number;
  name: string;
  establishments: number[];
}

interface ContractType {
  id: number;
  code: string;
  name: string;
  is_temporary_work: boolean;
}

export const COUNT_BASE_LABELS: Record<string, string> = {
  ouvrables: 'Jours ouvrables (lundi au samedi)',
  ouvres: 'Jours ouvrés (lundi au vendredi)',
};

const DATE_TIME = frenchFormat({ dateStyle: 'short', timeStyle: 'short', timeZone: 'Europe/Paris' });

/** Every back-office account reads the referentials. */
const readable = async () => true;

const countBaseOptions = async (): Promise<Option[]> => Object.entries(COUNT_BASE_LABELS).map(([value, label]) => ({ value, label }));

/** The deletion of a referential row (staff; SQL refuses a row still in use, under non_field_errors). */
function deleteAction<Row>(operationId: string, title: string, intro: string, done: string): Action<Row> {
  return {
    slug: 'supprimer', title, intro, operationId, fields: [], initial: () => ({}),
    allowed: (_row, can) => Boolean(can.delete), submitLabel: 'Supprimer', done, danger: true, afterwards: 'list',
  };
}

/** The divisions, by name. */
export const divisionOptions = optionsFrom(declareCall('divisions', 'app_hidden.division_choices', [], { rows: true }));

/** The establishments, by name (every select of an establishment). */
export const establishmentOptions = optionsFrom(declareCall('establishments', 'app_hidden.establishment_choices', [], { rows: true }));

/** The names of some establishments, by name (a division's, an employee's secondary ones). */
export const ESTABLISHMENTS_NAMED = declareCall('establishments named', 'app_hidden.establishments_named', [inputArg('ids', 'int[]')], { rows: true });

const ESTABLISHMENT_FIELDS: FormField[] = [
  { key: 'name', label: 'Nom' },
  { key: 'count_base', label: 'Base de décompte des congés', options: countBaseOptions, hint: 'Les jours comptés dans une absence en jours.' },
  { key: 'division', label: 'Division', options: divisionOptions, hint: 'Vide : sans division.' },
];

export const establishmentResource = defineResource<Establishment>({
  slug: 'establishments',
  title: 'Établissements',
  summary: 'Établissements de l’association, leur division et leur base de décompte des congés.',
  available: readable,
  list: {
    operationId: 'establishments_list',
    pageSize: 25,
    caption: 'Établissements, par ordre alphabétique',
    empty: 'Aucun établissement ne correspond à ces filtres.',
    filters: [{ key: 'division', label: 'Division', options: divisionOptions }],
    columns: [
      { label: 'Nom', rowHeader: true, value: (e) => html`<a href="/backoffice/establishments/${e.id}/">${e.name}</a>` },
      { label: 'Division', value: (e) => e.division_name ?? '—' },
      { label: 'Base de décompte', value: (e) => COUNT_BASE_LABELS[e.count_base] ?? e.count_base },
    ],
  },
  create: {
    title: 'Nouvel établissement',
    submitLabel: 'Créer l’établissement',
    operationId: 'establishments_create',
    fields: ESTABLISHMENT_FIELDS,
    initial: () => ({ count_base: 'ouvrables' }),
    allowed: isStaff,
    done: 'L’établissement a été créé.',
  },
  detail: {
    operationId: 'establishments_read',
    title: (e) => e.name,
    abilities: staffAbilities,
    edit: {
      title: 'Modifier l’établissement',
      submitLabel: 'Enregistrer',
      operationId: 'establishments_update',
      fields: ESTABLISHMENT_FIELDS,
      initial: (e) => ({ name: e.name, count_base: e.count_base, division: e.division }),
      allowed: (_e, can) => Boolean(can.edit),
      done: 'L’établissement a été enregistré.',
    },
    render: async (e) => html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">L’établissement</h2>
  <dl class="facts">
    <dt>Nom</dt><dd>${e.name}</dd>
    <dt>Division</dt><dd>${e.division_name ?? '—'}</dd>
    <dt>Base de décompte des congés</dt><dd>${COUNT_BASE_LABELS[e.count_base] ?? e.count_base}</dd>
    <dt>Modifié le</dt><dd>${DATE_TIME.format(new Date(e.updated_at))}</dd>
  </dl>
</section>`,
    actions: [deleteAction('establishments_delete', 'Supprimer l’établissement',
      'Possible seulement pour un établissement sans salarié, poste, équipe, attribution de rôle, astreinte ni événement.',
      'L’établissement a été supprimé.')],
  },
});

export const divisionResource = defineResource<Division>({
  slug: 'divisions',
  title: 'Divisions',
  summary: 'Regroupements d’établissements (pôles).',
  available: readable,
  list: {
    operationId: 'divisions_list',
    pageSize: 25,
    caption: 'Divisions, par ordre alphabétique',
    empty: 'Aucune division.',
    filters: [],
    columns: [
      { label: 'Nom', rowHeader: true, value: (d) => html`<a href="/backoffice/divisions/${d.id}/">${d.name}</a>` },
      { label: 'Établissements', value: (d) => d.establishments.length },
    ],
  },
  create: {
    title: 'Nouvelle division',
    submitLabel: 'Créer la division',
    operationId: 'divisions_create',
    fields: [{ key: 'name', label: 'Nom' }],
    allowed: isStaff,
    done: 'La division a été créée.',
  },
  detail: {
    operationId: 'divisions_read',
    title: (d) => d.name,
    abilities: staffAbilities,
    edit: {
      title: 'Modifier la division',
      submitLabel: 'Enregistrer',
      operationId: 'divisions_update',
      fields: [{ key: 'name', label: 'Nom' }],
      initial: (d) => ({ name: d.name }),
      allowed: (_d, can) => Boolean(can.edit),
      done: 'La division a été enregistrée.',
    },
    render: async (d, client) => {
      const rows = await callRows<{ id: number; name: string }>(client, ESTABLISHMENTS_NAMED, { body: { ids: d.establishments } });
      return html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">La division</h2>
  <dl class="facts">
    <dt>Nom</dt><dd>${d.name}</dd>
    <dt>Établissements</dt><dd>${rows.length === 0 ? 'aucun' : html`<ul>${rows.map((e) =>
      html`<li><a href="/backoffice/establishments/${e.id}/">${e.name}</a></li>`)}</ul>`}</dd>
  </dl>
</section>`;
    },
    actions: [deleteAction('divisions_delete', 'Supprimer la division', 'Ses établissements restent, sans division.',
      'La division a été supprimée.')],
  },
});

const CONTRACT_TYPE_FIELDS: FormField[] = [
  { key: 'code', label: 'Code', hint: 'Unique ; par exemple CDI.' },
  { key: 'name', label: 'Libellé' },
  { key: 'is_temporary_work', label: 'Contrat d’intérim', widget: 'checkbox' },
];

export const contractTypeResource = defineResource<ContractType>({
  slug: 'contract-types',
  title: 'Types de contrat',
  summary: 'CDI, CDD, intérim… et les types ajoutés.',
  available: readable,
  list: {
    operationId: 'contract_types_list',
    pageSize: 25,
    caption: 'Types de contrat, par ordre de création',
    empty: 'Aucun type de contrat.',
    filters: [],
    columns: [
      { label: 'Code', rowHeader: true, value: (t) => html`<a href="/backoffice/contract-types/${t.id}/">${t.code}</a>` },
      { label: 'Libellé', value: (t) => t.name },
      { label: 'Intérim', value: (t) => (t.is_temporary_work ? 'oui' : 'non') },
    ],
  },
  create: {
    title: 'Nouveau type de contrat',
    submitLabel: 'Créer le type',
    operationId: 'contract_types_create',
    fields: CONTRACT_TYPE_FIELDS,
    allowed: isStaff,
    done: 'Le type de contrat a été créé.',
  },
  detail: {
    operationId: 'contract_types_read',
    title: (t) => `${t.code} — ${t.name}`,
    abilities: staffAbilities,
    edit: {
      title: 'Modifier le type de contrat',
      submitLabel: 'Enregistrer',
      operationId: 'contract_types_update',
      fields: CONTRACT_TYPE_FIELDS,
      initial: (t) => ({ code: t.code, name: t.name, is_temporary_work: t.is_temporary_work }),
      allowed: (_t, can) => Boolean(can.edit),
      done: 'Le type de contrat a été enregistré.',
    },
    render: async (t) => html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">Le type de contrat</h2>
  <dl class="facts">
    <dt>Code</dt><dd>${t.code}</dd>
    <dt>Libellé</dt><dd>${t.name}</dd>
    <dt>Contrat d’intérim</dt><dd>${t.is_temporary_work ? 'oui' : 'non'}</dd>
  </dl>
</section>`,
    actions: [deleteAction('contract_types_delete', 'Supprimer le type de contrat',
      'Possible seulement pour un type sans contrat ni motif d’absence qui le vise.', 'Le type de contrat a été supprimé.')],
  },
});
