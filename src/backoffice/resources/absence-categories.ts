/**
 * Absence categories (issue 13, point 4): a tree of two levels (category, sub-category), read
 * by every back-office account, written by staff accounts only; its sub-categories and its
 * absence types shown on its page.
 */
import { s } from '../../http/schema.js';
import { INPUT_CONTRACT } from '../../http/input-contract.js';
import { html } from '../html.js';
import { defineResource, type FormField } from '../registry.js';
import { callRows, declareCall, inputArg, listCall, rowId } from '../calls.js';
import { isStaff, optionsFrom, staffAbilities } from './staff.js';

interface AbsenceCategory {
  id: number;
  code: string;
  name: string;
  parent: number | null;
  parent_name: string | null;
  position: number;
  children: number;
  types: number;
}

const BODY = s.object({
  code: s.text(32),
  name: s.text(INPUT_CONTRACT.nameMaxLength),
  parent: s.nullable(s.id()),
  position: s.int({ minimum: 0, maximum: 999 }),
}, ['code', 'name', 'parent', 'position']);
const SAVE_ARGS = [rowId(), inputArg('code', 'text'), inputArg('name', 'text'), inputArg('parent', 'int'), inputArg('position', 'int')];

const GET = declareCall('absence-categories: read', 'app_public.absence_category_get', [rowId()]);
const SAVE = declareCall('absence-categories: save', 'app_public.absence_category_save', SAVE_ARGS);
const DELETE = declareCall('absence-categories: delete', 'app_public.absence_category_delete', [rowId()]);
const ROOTS = declareCall('absence-categories: roots', 'app_hidden.absence_category_choices', [inputArg('roots_only', 'boolean')], { rows: true });
const CHILDREN = declareCall('absence-categories: sub-categories', 'app_hidden.absence_category_children', [rowId()], { rows: true });
const TYPES = declareCall('absence-categories: types', 'app_hidden.absence_category_types', [rowId()], { rows: true });
const rootOptions = optionsFrom(ROOTS, { body: { roots_only: true } });

const FIELDS: FormField[] = [
  { key: 'code', label: 'Code', hint: 'Majuscules, chiffres et _ ; par exemple CONGES.' },
  { key: 'name', label: 'Libellé' },
  { key: 'parent', label: 'Catégorie parente', hint: 'Vide pour une catégorie de premier niveau ; l’arbre a deux niveaux au plus.', options: rootOptions },
  { key: 'position', label: 'Ordre d’affichage' },
];

const initial = (c: AbsenceCategory) => ({ code: c.code, name: c.name, parent: c.parent, position: c.position });

export const absenceCategoriesResource = defineResource<AbsenceCategory>({
  slug: 'absence-categories',
  title: 'Catégories d’absence',
  summary: 'Catégories et sous-catégories des motifs d’absence (deux niveaux).',
  available: async () => true,
  list: {
    ...listCall('absence-categories: list', 'app_public.absence_categories_search', s.object({ parent: s.id() })),
    pageSize: 50,
    caption: 'Catégories, chacune suivie de ses sous-catégories',
    empty: 'Aucune catégorie.',
    filters: [{ key: 'parent', label: 'Sous-catégories de', options: rootOptions }],
    columns: [
      { label: 'Code', rowHeader: true, value: (c) => html`<a href="/backoffice/absence-categories/${c.id}/">${c.code}</a>` },
      { label: 'Libellé', value: (c) => (c.parent ? html`<span class="muted">↳</span> ${c.name}` : c.name) },
      { label: 'Catégorie parente', value: (c) => c.parent_name ?? '—' },
      { label: 'Motifs', value: (c) => c.types },
    ],
  },
  create: {
    title: 'Nouvelle catégorie',
    submitLabel: 'Créer la catégorie',
    call: SAVE,
    body: BODY,
    fields: FIELDS,
    initial: () => ({ position: 0 }),
    allowed: isStaff,
    done: 'La catégorie a été créée.',
  },
  detail: {
    read: GET,
    title: (c) => `Catégorie ${c.code} — ${c.name}`,
    abilities: staffAbilities,
    render: async (c) => html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">La catégorie</h2>
  <dl class="facts">
    <dt>Code</dt><dd>${c.code}</dd>
    <dt>Libellé</dt><dd>${c.name}</dd>
    <dt>Catégorie parente</dt><dd>${c.parent_name ?? '— (premier niveau)'}</dd>
    <dt>Ordre d’affichage</dt><dd>${c.position}</dd>
  </dl>
</section>`,
    related: [
      {
        title: 'Sous-catégories',
        empty: 'Aucune sous-catégorie.',
        rows: async (c, client) => callRows(client, CHILDREN, { id: c.id }),
        columns: [
          { label: 'Code', rowHeader: true, value: (r) => html`<a href="/backoffice/absence-categories/${String(r.id)}/">${String(r.code)}</a>` },
          { label: 'Libellé', value: (r) => String(r.name) },
        ],
      },
      {
        title: 'Motifs d’absence de la catégorie',
        empty: 'Aucun motif dans cette catégorie.',
        rows: async (c, client) => callRows(client, TYPES, { id: c.id }),
        columns: [
          { label: 'Code', rowHeader: true, value: (r) => String(r.code) },
          { label: 'Libellé', value: (r) => String(r.name) },
          { label: 'Actif', value: (r) => (r.is_active ? 'oui' : 'non') },
        ],
      },
    ],
    edit: {
      title: 'Modifier la catégorie',
      submitLabel: 'Enregistrer',
      call: SAVE,
      body: BODY,
      fields: FIELDS,
      initial,
      allowed: (_c, can) => Boolean(can.edit),
      done: 'La catégorie a été enregistrée.',
    },
    actions: [
      {
        slug: 'supprimer',
        title: 'Supprimer la catégorie',
        intro: 'Possible seulement pour une catégorie sans sous-catégorie ni motif.',
        call: DELETE,
        body: s.object({}),
        fields: [],
        initial: () => ({}),
        allowed: (c, can) => Boolean(can.delete) && c.children === 0 && c.types === 0,
        submitLabel: 'Supprimer',
        done: 'La catégorie a été supprimée.',
        danger: true,
        afterwards: 'list',
      },
    ],
  },
});
