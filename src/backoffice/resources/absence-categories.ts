/**
 * Absence categories (issue 13, point 4): a tree of two levels (category, sub-category), read
 * by every back-office account, written by staff accounts only; its sub-categories and its
 * absence types shown on its page.
 */
import { s } from '../../http/schema.js';
import { INPUT_CONTRACT } from '../../http/input-contract.js';
import { html } from '../html.js';
import { defineResource, type FormField } from '../registry.js';
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
const KEYS = ['code', 'name', 'parent', 'position'];

const ROOTS = 'select id::text as value, name as label from app_public.absence_categories where parent_id is null order by position, name';

const FIELDS: FormField[] = [
  { key: 'code', label: 'Code', hint: 'Majuscules, chiffres et _ ; par exemple CONGES.' },
  { key: 'name', label: 'Libellé' },
  { key: 'parent', label: 'Catégorie parente', hint: 'Vide pour une catégorie de premier niveau ; l’arbre a deux niveaux au plus.', options: optionsFrom(ROOTS) },
  { key: 'position', label: 'Ordre d’affichage' },
];

const initial = (c: AbsenceCategory) => ({ code: c.code, name: c.name, parent: c.parent, position: c.position });

export const absenceCategoriesResource = defineResource<AbsenceCategory>({
  slug: 'absence-categories',
  title: 'Catégories d’absence',
  summary: 'Catégories et sous-catégories des motifs d’absence (deux niveaux).',
  available: async () => true,
  list: {
    call: {
      query: s.object({ parent: s.id() }),
      sql: 'select app_public.absence_categories_search(p_parent => $1, p_page => $2, p_page_size => $3) as result',
      keys: ['parent'],
    },
    pageSize: 50,
    caption: 'Catégories, chacune suivie de ses sous-catégories',
    empty: 'Aucune catégorie.',
    filters: [{ key: 'parent', label: 'Sous-catégories de', options: optionsFrom(ROOTS) }],
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
    call: { body: BODY, sql: 'select app_public.absence_category_save(null, $1, $2, $3, $4) as result', keys: KEYS },
    fields: FIELDS,
    initial: () => ({ position: 0 }),
    allowed: isStaff,
    done: 'La catégorie a été créée.',
  },
  detail: {
    sql: 'select app_public.absence_category_get($1) as result',
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
        rows: async (c, client) => (await client.query(
          'select id, code, name from app_public.absence_categories where parent_id = $1 order by position, name', [c.id])).rows,
        columns: [
          { label: 'Code', rowHeader: true, value: (r) => html`<a href="/backoffice/absence-categories/${String(r.id)}/">${String(r.code)}</a>` },
          { label: 'Libellé', value: (r) => String(r.name) },
        ],
      },
      {
        title: 'Motifs d’absence de la catégorie',
        empty: 'Aucun motif dans cette catégorie.',
        rows: async (c, client) => (await client.query(
          'select id, code, name, is_active from app_public.absence_types where category_id = $1 order by position, code', [c.id])).rows,
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
      call: { body: BODY, sql: 'select app_public.absence_category_save($1, $2, $3, $4, $5) as result', keys: KEYS },
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
        call: { body: s.object({}), sql: 'select app_public.absence_category_delete($1) as result', keys: [] },
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
