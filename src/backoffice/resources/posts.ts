/**
 * Posts, issue 13 point 4: read by every back-office account, written by staff accounts only
 * (sql/reference/administration.sql). A post code is refused when an absence type holds it
 * (case-insensitively), the same rule as on the absence types' side.
 */
import { s } from '../../http/schema.js';
import { INPUT_CONTRACT } from '../../http/input-contract.js';
import { html } from '../html.js';
import { defineResource, type FormField } from '../registry.js';
import { declareCall, inputArg, listCall, rowId } from '../calls.js';
import { establishmentOptions } from './referentials.js';
import { YES_NO, isStaff, staffAbilities } from './staff.js';

interface Post {
  id: number;
  code: string;
  label: string;
  establishment: number;
  establishment_name: string;
  start_time: string;
  end_time: string;
  break_start_time: string | null;
  break_end_time: string | null;
  break_paid: boolean;
  is_active: boolean;
}

const GET = declareCall('posts: read', 'app_public.post_get', [rowId()]);
const SAVE = declareCall('posts: save', 'app_public.post_save', [rowId(), inputArg('code', 'text'), inputArg('label', 'text'),
  inputArg('establishment', 'int'), inputArg('start_time', 'text'), inputArg('end_time', 'text'),
  inputArg('break_start_time', 'text'), inputArg('break_end_time', 'text'), inputArg('break_paid', 'boolean'),
  inputArg('is_active', 'boolean')]);

const BODY = s.object({
  code: s.text(16),
  label: s.text(INPUT_CONTRACT.nameMaxLength),
  establishment: s.id(),
  start_time: s.time(),
  end_time: s.time(),
  break_start_time: s.nullable(s.time()),
  break_end_time: s.nullable(s.time()),
  break_paid: s.bool(),
  is_active: s.bool(),
}, ['code', 'label', 'establishment', 'start_time', 'end_time', 'break_start_time', 'break_end_time', 'break_paid', 'is_active']);

const FIELDS: FormField[] = [
  { key: 'code', label: 'Code', hint: 'Unique dans l’établissement ; jamais le code d’un motif d’absence (casse ignorée).' },
  { key: 'label', label: 'Libellé' },
  { key: 'establishment', label: 'Établissement', options: establishmentOptions },
  { key: 'start_time', label: 'Début', hint: 'HH:MM.' },
  { key: 'end_time', label: 'Fin', hint: 'Une fin avant le début finit le lendemain (poste de nuit).' },
  { key: 'break_start_time', label: 'Début de pause' },
  { key: 'break_end_time', label: 'Fin de pause' },
  { key: 'break_paid', label: 'Pause payée' },
  { key: 'is_active', label: 'Actif' },
];

const hoursOf = (p: Post) => `${p.start_time}–${p.end_time}`;
const breakOf = (p: Post) => (p.break_start_time ? `${p.break_start_time}–${p.break_end_time}${p.break_paid ? ' (payée)' : ''}` : 'aucune');

export const postsResource = defineResource<Post>({
  slug: 'posts',
  title: 'Postes',
  summary: 'Postes de chaque établissement : horaires et pause.',
  available: async () => true,
  list: {
    ...listCall('posts: list', 'app_public.posts_search', s.object({ establishment: s.id(), active: s.bool() })),
    pageSize: 50,
    caption: 'Postes, par établissement',
    empty: 'Aucun poste ne correspond à ces filtres.',
    filters: [
      { key: 'establishment', label: 'Établissement', options: establishmentOptions },
      { key: 'active', label: 'Activité', options: async () => [{ value: 'true', label: 'Actifs' }, { value: 'false', label: 'Inactifs' }] },
    ],
    columns: [
      { label: 'Code', rowHeader: true, value: (p) => html`<a href="/backoffice/posts/${p.id}/">${p.code}</a>` },
      { label: 'Libellé', value: (p) => p.label },
      { label: 'Établissement', value: (p) => p.establishment_name },
      { label: 'Horaires', value: hoursOf },
      { label: 'Pause', value: breakOf },
      { label: 'Actif', value: (p) => YES_NO(p.is_active) },
    ],
  },
  create: {
    title: 'Nouveau poste',
    submitLabel: 'Créer le poste',
    call: SAVE,
    body: BODY,
    fields: FIELDS,
    initial: () => ({ is_active: true }),
    allowed: isStaff,
    done: 'Le poste a été créé.',
  },
  detail: {
    read: GET,
    title: (p) => `Poste ${p.code} — ${p.label}`,
    abilities: staffAbilities,
    render: async (p) => html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">Le poste</h2>
  <dl class="facts">
    <dt>Code</dt><dd>${p.code}</dd>
    <dt>Libellé</dt><dd>${p.label}</dd>
    <dt>Établissement</dt><dd>${p.establishment_name}</dd>
    <dt>Horaires</dt><dd>${hoursOf(p)}</dd>
    <dt>Pause</dt><dd>${breakOf(p)}</dd>
    <dt>Actif</dt><dd>${YES_NO(p.is_active)}</dd>
  </dl>
</section>`,
    edit: {
      title: 'Modifier le poste',
      submitLabel: 'Enregistrer',
      call: SAVE,
      body: BODY,
      fields: FIELDS,
      initial: (p) => ({ ...p }),
      allowed: (_p, can) => Boolean(can.edit),
      done: 'Le poste a été enregistré.',
    },
    actions: [],
  },
});
