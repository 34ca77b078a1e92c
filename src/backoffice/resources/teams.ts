/**
 * Teams (issue 13, point 4): list and detail with their establishments and members, through
 * the API's SQL functions (teams_list, team_get): members are those the account may read. A
 * member is added by team_member_add and removed through team_members_replace
 * (sql/teams/members.sql).
 */
import type pg from 'pg';
import { html } from '../html.js';
import { defineResource, type FormField, type Option } from '../registry.js';
import { period } from './employees.js';
import { callValue, declareCall, holds, inputArg, rowId } from '../calls.js';
import { establishmentOptions } from './referentials.js';
import { optionsFrom } from './staff.js';
import { s } from '../../http/schema.js';

/** Team writes: employee.change_team, bounded to teams with an establishment of the perimeter (SPEC Permissions rule 7). */
const WRITABLE = declareCall('teams: abilities', 'app_hidden.team_writable', [rowId()]);
const MEMBER_REMOVE = declareCall('teams: member removal', 'app_public.team_member_remove', [rowId('p_team'), inputArg('employee', 'int')]);

const TEAM_FIELDS: FormField[] = [
  { key: 'name', label: 'Nom' },
  { key: 'establishments', label: 'Établissements', options: establishmentOptions, hint: 'Au moins un ; seulement ceux de votre périmètre.' },
];

/** Employees of the caller's team-writing perimeter, to add as members. */
const memberOptions = optionsFrom(declareCall('teams: member candidates', 'app_hidden.team_member_choices', [], { rows: true }));

/** The team's current and future members (team_get lists those), once each. */
async function currentMemberOptions(_client: pg.PoolClient, row?: Record<string, unknown>): Promise<Option[]> {
  const members = (row as Team | undefined)?.members ?? [];
  return [...new Map(members.map((m) => [m.employee, { value: String(m.employee), label: m.employee_name }])).values()];
}

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
  create: {
    title: 'Nouvelle équipe',
    submitLabel: 'Créer l’équipe',
    operationId: 'teams_create',
    fields: TEAM_FIELDS,
    allowed: holds('employee.change_team'),
    done: 'L’équipe a été créée.',
  },
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
    abilities: async (client, id) => {
      const ok = await callValue<boolean>(client, WRITABLE, { id });
      return { edit: ok, delete: ok };
    },
    edit: {
      title: 'Modifier l’équipe',
      submitLabel: 'Enregistrer',
      operationId: 'teams_update',
      fields: TEAM_FIELDS,
      initial: (t) => ({ name: t.name, establishments: t.establishments }),
      allowed: (_t, can) => Boolean(can.edit),
      done: 'L’équipe a été enregistrée.',
    },
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
    actions: [
      {
        slug: 'ajouter-membre',
        title: 'Ajouter un membre',
        operationId: 'teams_members_add',
        fields: [
          { key: 'employee', label: 'Salarié', options: memberOptions },
          { key: 'start_date', label: 'Début', hint: 'Inclus ; vide : aujourd’hui.' },
          { key: 'end_date', label: 'Fin', hint: 'Incluse ; vide : sans fin.' },
        ],
        initial: () => ({}),
        allowed: (_t, can) => Boolean(can.edit),
        submitLabel: 'Ajouter',
        done: 'Le membre a été ajouté.',
      },
      {
        slug: 'retirer-membre',
        title: 'Retirer un membre',
        intro: 'Le membre quitte l’équipe hier ; une affectation qui n’a pas encore commencé est supprimée.',
        call: MEMBER_REMOVE,
        body: s.object({ employee: s.id() }, ['employee']),
        fields: [{ key: 'employee', label: 'Salarié', options: currentMemberOptions }],
        initial: () => ({}),
        allowed: (t, can) => Boolean(can.edit) && Boolean(t.members?.length),
        submitLabel: 'Retirer',
        done: 'Le membre a été retiré de l’équipe.',
        danger: true,
      },
      {
        slug: 'supprimer',
        title: 'Supprimer l’équipe',
        intro: 'Ses affectations sont supprimées avec elle.',
        operationId: 'teams_delete',
        fields: [],
        initial: () => ({}),
        allowed: (_t, can) => Boolean(can.delete),
        submitLabel: 'Supprimer',
        done: 'L’équipe a été supprimée.',
        danger: true,
        afterwards: 'list',
      },
    ],
  },
});
