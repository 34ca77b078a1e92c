/**
 * Teams (issue 13, point 4): list and detail with their establishments and members, through
 * the API's SQL functions (teams_list, team_get): members are those the account may read.
 */
import { html } from '../html.js';
import { defineResource } from '../registry.js';
import { period } from './employees.js';
import { establishmentOptions } from './referentials.js';

interface Team {
  id: number;
  name: string;
  establishments: number[];
  establishment_names: string[];
  members?: Array<{ id: number; employee: number; employee_name: string; start_date: string | null; end_date: string | null }>;
}

export const teamResource = defineResource<Team>({
  slug: 'teams',
  title: 'Équipes',
  summary: 'Équipes, leurs établissements et leurs membres.',
  available: async () => true,
  list: {
    operationId: 'teams_list',
    pageSize: 25,
    caption: 'Équipes, par nom',
    empty: 'Aucune équipe ne correspond à ces filtres.',
    filters: [
      { key: 'search', label: 'Recherche', hint: 'Une partie du nom.' },
      { key: 'establishment', label: 'Établissement', options: establishmentOptions },
    ],
    columns: [
      { label: 'Nom', rowHeader: true, value: (t) => html`<a href="/backoffice/teams/${t.id}/">${t.name}</a>` },
      { label: 'Établissements', value: (t) => t.establishment_names.join(', ') },
    ],
  },
  detail: {
    operationId: 'teams_read',
    title: (t) => t.name,
    render: async (t) => html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">L’équipe</h2>
  <dl class="facts">
    <dt>Nom</dt><dd>${t.name}</dd>
    <dt>Établissements</dt><dd>${t.establishment_names.join(', ')}</dd>
  </dl>
</section>
<section class="card" aria-labelledby="membres">
  <h2 id="membres">Membres</h2>
  ${t.members?.length
    ? html`<ul>${t.members.map((m) => html`<li><a href="/backoffice/employees/${m.employee}/">${m.employee_name}</a> (${period(m.start_date, m.end_date)})</li>`)}</ul>`
    : html`<p>Aucun membre que vous puissiez lire.</p>`}
</section>`,
    actions: [],
  },
});
