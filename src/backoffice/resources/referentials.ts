/**
 * Referentials of the organisation (issue 13, point 4): establishments (with the count base of
 * leave days), divisions and contract types. Readable by every account of the back-office;
 * written by staff accounts only (SPEC Permissions rule 6), through the same SQL functions as
 * /api/establishments/, /api/divisions/ and /api/contract-types/.
 */
import type pg from 'pg';
import { html } from '../html.js';
import { defineResource, type Option } from '../registry.js';

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

const DATE_TIME = new Intl.DateTimeFormat('fr-FR', { dateStyle: 'short', timeStyle: 'short', timeZone: 'Europe/Paris' });

/** Every back-office account reads the referentials. */
const readable = async () => true;

export async function divisionOptions(client: pg.PoolClient): Promise<Option[]> {
  return (await client.query<Option>('select id::text as value, name as label from app_public.divisions order by name')).rows;
}

export async function establishmentOptions(client: pg.PoolClient): Promise<Option[]> {
  return (await client.query<Option>('select id::text as value, name as label from app_public.establishments order by name')).rows;
}

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
  detail: {
    operationId: 'establishments_read',
    title: (e) => e.name,
    render: async (e) => html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">L’établissement</h2>
  <dl class="facts">
    <dt>Nom</dt><dd>${e.name}</dd>
    <dt>Division</dt><dd>${e.division_name ?? '—'}</dd>
    <dt>Base de décompte des congés</dt><dd>${COUNT_BASE_LABELS[e.count_base] ?? e.count_base}</dd>
    <dt>Modifié le</dt><dd>${DATE_TIME.format(new Date(e.updated_at))}</dd>
  </dl>
</section>`,
    actions: [],
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
  detail: {
    operationId: 'divisions_read',
    title: (d) => d.name,
    render: async (d, client) => {
      const { rows } = await client.query<{ id: number; name: string }>(
        'select id, name from app_public.establishments where id = any ($1::int[]) order by name', [d.establishments]);
      return html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">La division</h2>
  <dl class="facts">
    <dt>Nom</dt><dd>${d.name}</dd>
    <dt>Établissements</dt><dd>${rows.length === 0 ? 'aucun' : html`<ul>${rows.map((e) =>
      html`<li><a href="/backoffice/establishments/${e.id}/">${e.name}</a></li>`)}</ul>`}</dd>
  </dl>
</section>`;
    },
    actions: [],
  },
});

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
  detail: {
    operationId: 'contract_types_read',
    title: (t) => `${t.code} — ${t.name}`,
    render: async (t) => html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">Le type de contrat</h2>
  <dl class="facts">
    <dt>Code</dt><dd>${t.code}</dd>
    <dt>Libellé</dt><dd>${t.name}</dd>
    <dt>Contrat d’intérim</dt><dd>${t.is_temporary_work ? 'oui' : 'non'}</dd>
  </dl>
</section>`,
    actions: [],
  },
});
