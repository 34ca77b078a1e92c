import type { RouteModule } from '../openapi.js';
import { bodyField, SENT_KEYS, type ArgSpec } from '../route.js';
import { s } from '../schema.js';
import { INPUT_CONTRACT } from '../input-contract.js';

const WRITE_RULE =
  'Écriture avec `employee.change_team` (Admin, RH n1, RH n2, DA, Manager n1, Manager n2), ' +
  'bornée aux équipes ayant au moins un établissement dans le périmètre de l’appelant (établissements de ses rôles, ' +
  'étendus par ses astreintes en cours) : les autres répondent 404. Sans la permission : 403.';

const idArg: ArgSpec = { name: 'p_id', from: 'path', key: 'id', cast: 'int' };
const teamArgs: ArgSpec[] = [bodyField('name', 'text'), bodyField('establishments', 'int[]')];
const teamBody = {
  name: s.text(INPUT_CONTRACT.nameMaxLength),
  establishments: s.array(s.id(), {
    minItems: 1,
    description: 'Établissements de l’équipe (au moins un). Un appelant restreint n’ajoute ni ne retire d’établissement hors de son périmètre (400).',
  }),
};
const memberInput = s.object(
  {
    employee: s.id('Salarié.'),
    start_date: s.nullable(s.date({ description: 'Début de l’affectation (inclus) ; aujourd’hui par défaut pour un nouveau membre.' })),
    end_date: s.nullable(s.date({ description: 'Fin de l’affectation (incluse) ; null = sans fin.' })),
  },
  ['employee'],
);

export const teamModule: RouteModule = {
  schemas: {
    Team: s.object(
      {
        id: s.int(),
        name: s.string(),
        establishments: s.array(s.int()),
        establishment_names: s.array(s.string()),
        created_at: s.dateTime(),
        updated_at: s.dateTime(),
      },
      ['id', 'name', 'establishments', 'establishment_names', 'created_at', 'updated_at'],
    ),
    TeamDetail: {
      allOf: [
        s.ref('Team'),
        s.object(
          {
            members: s.array(
              s.object(
                {
                  id: s.int({ description: 'Identifiant de l’affectation.' }),
                  employee: s.int(),
                  employee_name: s.string(),
                  start_date: s.nullable(s.date()),
                  end_date: s.nullable(s.date()),
                },
                ['id', 'employee', 'employee_name', 'start_date', 'end_date'],
              ),
              { description: 'Membres actuels et à venir que l’appelant peut lire.' },
            ),
          },
          ['members'],
        ),
      ],
    },
  },
  routes: [
    {
      method: 'get',
      path: '/api/teams/',
      operationId: 'teams_list',
      summary: 'Équipes (liste)',
      description:
        'Lisible par tout compte authentifié. `scope=perimeter` (opt-in) : les équipes ayant un établissement du périmètre de ' +
        'l’appelant : les établissements sur lesquels il détient `absences.view_absence_queue` (encadrement) ou `employee.view_payroll` (paie) — ceux de ses rôles, un rôle sans établissement couvrant toute l’association, étendus par ses astreintes en cours (début inclus, fin exclue) — ; pour un compte qui ne détient ni l’une ni l’autre, ses propres lieux de travail.',
      tags: ['Équipes'],
      auth: 'account',
      query: s.object({
        scope: s.enum(['perimeter']),
        establishment: s.id('Équipes de cet établissement.'),
        search: s.string({ maxLength: 100, description: 'Recherche sur le nom.' }),
      }),
      paginated: true,
      sql: {
        fn: 'app_public.teams_list',
        args: [
          { name: 'p_scope', from: 'query', key: 'scope', cast: 'text' },
          { name: 'p_establishment', from: 'query', key: 'establishment', cast: 'int' },
          { name: 'p_search', from: 'query', key: 'search', cast: 'text' },
          { name: 'p_page', from: 'page', cast: 'int' },
          { name: 'p_page_size', from: 'page_size', cast: 'int' },
        ],
      },
      status: 200,
      response: s.ref('Team'),
      errors: [400],
    },
    {
      method: 'post',
      path: '/api/teams/',
      operationId: 'teams_create',
      summary: 'Créer une équipe',
      description: `${WRITE_RULE} Un appelant restreint choisit des établissements de son périmètre.`,
      tags: ['Équipes'],
      auth: 'account',
      permission: 'employee.change_team',
      body: s.object(teamBody, ['name', 'establishments']),
      sql: { fn: 'app_public.team_create', args: teamArgs },
      status: 201,
      response: s.ref('TeamDetail'),
      errors: [400, 403],
    },
    {
      method: 'get',
      path: '/api/teams/{id}/',
      operationId: 'teams_read',
      summary: 'Une équipe et ses membres',
      description: 'Lisible par tout compte authentifié ; les membres sont ceux dont l’appelant lit la fiche.',
      tags: ['Équipes'],
      auth: 'account',
      pathParams: { id: s.id() },
      sql: { fn: 'app_public.team_get', args: [idArg] },
      status: 200,
      response: s.ref('TeamDetail'),
      errors: [404],
    },
    {
      method: 'put',
      path: '/api/teams/{id}/',
      operationId: 'teams_update',
      summary: 'Modifier une équipe (nom et établissements obligatoires)',
      description: WRITE_RULE,
      tags: ['Équipes'],
      auth: 'account',
      permission: 'employee.change_team',
      pathParams: { id: s.id() },
      body: s.object(teamBody, ['name', 'establishments']),
      sql: { fn: 'app_public.team_replace', args: [idArg, ...teamArgs, SENT_KEYS] },
      status: 200,
      response: s.ref('TeamDetail'),
      errors: [400, 403, 404],
    },
    {
      method: 'patch',
      path: '/api/teams/{id}/',
      operationId: 'teams_partial_update',
      summary: 'Modifier le nom ou les établissements d’une équipe',
      description: WRITE_RULE,
      tags: ['Équipes'],
      auth: 'account',
      permission: 'employee.change_team',
      pathParams: { id: s.id() },
      body: s.object(teamBody),
      sql: { fn: 'app_public.team_update', args: [idArg, ...teamArgs, SENT_KEYS] },
      status: 200,
      response: s.ref('TeamDetail'),
      errors: [400, 403, 404],
    },
    {
      method: 'delete',
      path: '/api/teams/{id}/',
      operationId: 'teams_delete',
      summary: 'Supprimer une équipe (et ses affectations)',
      description: `${WRITE_RULE} Une équipe qui déborde du périmètre (un de ses établissements en est hors) n’est pas supprimée : 403.`,
      tags: ['Équipes'],
      auth: 'account',
      permission: 'employee.change_team',
      pathParams: { id: s.id() },
      sql: { fn: 'app_public.team_delete', args: [idArg] },
      status: 204,
      errors: [403, 404],
    },
    {
      method: 'put',
      path: '/api/teams/{id}/members/',
      operationId: 'teams_members_replace',
      summary: 'Remplacer les membres d’une équipe',
      description:
        '`members` devient la liste des membres actuels et à venir : un membre conservé garde son affectation (dates mises à ' +
        'jour si envoyées) ; un nouveau membre commence aujourd’hui sauf début donné ; un membre retiré quitte l’équipe la ' +
        'veille (une affectation pas encore commencée est supprimée). Ajouter un salarié hors du périmètre : 403. ' + WRITE_RULE,
      tags: ['Équipes'],
      auth: 'account',
      permission: 'employee.change_team',
      pathParams: { id: s.id() },
      body: s.object({ members: s.array(memberInput) }, ['members']),
      // A JSON list: an item's start_date left out keeps the assignment's start.
      sql: { fn: 'app_public.team_members_replace', args: [idArg, bodyField('members', 'jsonb')] },
      status: 200,
      response: s.ref('TeamDetail'),
      errors: [400, 403, 404],
    },
    {
      method: 'post',
      path: '/api/teams/{id}/members/',
      operationId: 'teams_members_add',
      summary: 'Ajouter un membre à une équipe',
      description:
        'Le salarié doit être dans le périmètre de l’appelant (sinon 403) et ne pas déjà faire partie de l’équipe sur la ' +
        'période (400). ' + WRITE_RULE,
      tags: ['Équipes'],
      auth: 'account',
      permission: 'employee.change_team',
      pathParams: { id: s.id() },
      body: memberInput,
      sql: {
        fn: 'app_public.team_member_add',
        args: [idArg, bodyField('employee', 'int'), bodyField('start_date', 'date'), bodyField('end_date', 'date')],
      },
      status: 201,
      response: s.ref('TeamDetail'),
      errors: [400, 403, 404],
    },
  ],
};
