import type { RouteModule } from '../openapi.js';
import { bodyField, SENT_KEYS, type ArgSpec } from '../route.js';
import { s } from '../schema.js';
import { INPUT_CONTRACT } from '../input-contract.js';

const READ_RULE =
  'Chaque compte lit les événements qu’il a créés ou auxquels il participe ; les détenteurs de ' +
  '`employee.view_employee_directory` lisent tous les événements. Sans paramètre, la liste est restreinte au périmètre ' +
  'de l’appelant (événements d’un de ses établissements, événements dont un participant y est rattaché, et les siens ; ' +
  'ses établissements : les établissements sur lesquels il détient `absences.view_absence_queue` (encadrement) ou `employee.view_payroll` (paie) — ceux de ses rôles, un rôle sans établissement couvrant toute l’association, étendus par ses astreintes en cours (début inclus, fin exclue) — ; pour un compte qui ne détient ni l’une ni l’autre, ses propres lieux de travail) ; `scope=all` lève la restriction.';
const WRITE_RULE =
  'Écriture avec `events.change_event` (Admin, RH n1, RH n2, DA, Manager n1, Manager n2) : sur les événements créés par ' +
  'l’appelant et ceux d’un établissement de son périmètre (sinon 403). Un participant ajouté est l’appelant lui-même ou un ' +
  'salarié de son périmètre `events.change_event` (sinon 404) ; les participants déjà inscrits restent. Conflit avec une absence : quand un participant a une absence (en attente, validée ou dont ' +
  'l’annulation est demandée) qui chevauche l’événement, la réponse liste l’alerte dans `warnings` et une notification ' +
  '« Conflit entre un événement et une absence » part, dans la même transaction, vers l’auteur et les valideurs des ' +
  'absences du participant (jamais vers le participant lui-même) ; une modification n’alerte que des conflits qu’elle crée. ' +
  'Alertes et `warnings` ne nomment que les absences que l’appelant peut lire.';

const idArg: ArgSpec = { name: 'p_id', from: 'path', key: 'id', cast: 'int' };
/** The body's keys as the typed arguments of event_create, event_replace and event_update. */
const eventArgs: ArgSpec[] = [
  bodyField('title', 'text'),
  bodyField('start_at', 'timestamptz'),
  bodyField('end_at', 'timestamptz'),
  bodyField('description', 'text'),
  bodyField('establishment', 'int'),
  bodyField('participants', 'int[]'),
];
const eventBody = {
  title: s.text(INPUT_CONTRACT.eventTitleMaxLength),
  description: s.nullable(s.text(INPUT_CONTRACT.eventDescriptionMaxLength)),
  establishment: s.nullable(s.id('Établissement de l’événement ; un appelant restreint choisit un établissement de son périmètre.')),
  start_at: s.dateTime(),
  end_at: s.dateTime({ description: 'Après start_at.' }),
  participants: s.array(s.id(), { maxItems: 500, description: 'Salariés participants (remplace la liste).' }),
};

export const eventModule: RouteModule = {
  schemas: {
    Event: s.object(
      {
        id: s.int(),
        title: s.string(),
        description: s.nullable(s.string()),
        establishment: s.nullable(s.int()),
        establishment_name: s.nullable(s.string()),
        start_at: s.dateTime(),
        end_at: s.dateTime(),
        participants: s.array(s.object({ employee: s.int(), employee_name: s.string() }, ['employee', 'employee_name'])),
        created_by: s.nullable(s.int()),
        created_by_name: s.nullable(s.string()),
        created_at: s.dateTime(),
        updated_at: s.dateTime(),
        warnings: s.nullable(s.array(s.string(), {
          description: 'Liste (éventuellement vide) à la création et à la modification : conflits avec des absences ; null en lecture.',
        })),
      },
      ['id', 'title', 'description', 'establishment', 'establishment_name', 'start_at', 'end_at', 'participants',
        'created_by', 'created_by_name', 'created_at', 'updated_at', 'warnings'],
    ),
    ParticipantOption: s.object(
      { id: s.int(), name: s.string(), main_establishment: s.nullable(s.int()), main_establishment_name: s.nullable(s.string()) },
      ['id', 'name', 'main_establishment', 'main_establishment_name'],
    ),
  },
  routes: [
    {
      method: 'get',
      path: '/api/events/',
      operationId: 'events_list',
      summary: 'Événements (réunions, formations, sorties)',
      description: READ_RULE,
      tags: ['Événements'],
      auth: 'account',
      query: s.object({
        scope: s.enum(['perimeter', 'all'], { description: 'perimeter (défaut) ou all.' }),
        from: s.date({ description: 'Événements qui finissent après ce jour (inclus).' }),
        to: s.date({ description: 'Événements qui commencent avant la fin de ce jour.' }),
        establishment: s.id(),
        employee: s.id('Événements de ce participant.'),
      }),
      paginated: true,
      sql: {
        fn: 'app_public.events_list',
        args: [
          { name: 'p_scope', from: 'query', key: 'scope', cast: 'text' },
          { name: 'p_from', from: 'query', key: 'from', cast: 'date' },
          { name: 'p_to', from: 'query', key: 'to', cast: 'date' },
          { name: 'p_establishment', from: 'query', key: 'establishment', cast: 'int' },
          { name: 'p_employee', from: 'query', key: 'employee', cast: 'int' },
          { name: 'p_page', from: 'page', cast: 'int' },
          { name: 'p_page_size', from: 'page_size', cast: 'int' },
        ],
      },
      status: 200,
      response: s.ref('Event'),
      errors: [400],
    },
    {
      method: 'post',
      path: '/api/events/',
      operationId: 'events_create',
      summary: 'Créer un événement',
      description: WRITE_RULE,
      tags: ['Événements'],
      auth: 'account',
      permission: 'events.change_event',
      body: s.object(eventBody, ['title', 'start_at', 'end_at']),
      sql: { fn: 'app_public.event_create', args: eventArgs },
      status: 201,
      response: s.ref('Event'),
      errors: [400, 403, 404],
    },
    {
      method: 'get',
      path: '/api/events/participant-options/',
      operationId: 'events_participant_options',
      summary: 'Salariés que l’appelant peut inviter',
      description:
        'Avec `events.change_event` (sinon 403). Sans paramètre : les salariés de son périmètre (établissements de ses rôles, ' +
        'étendus par ses astreintes en cours) ; `scope=all` : tous les salariés qu’il lit dans l’annuaire.',
      tags: ['Événements'],
      auth: 'account',
      permission: 'events.change_event',
      query: s.object({
        scope: s.enum(['perimeter', 'all']),
        search: s.string({ maxLength: 100, description: 'Recherche sur le prénom ou le nom.' }),
      }),
      paginated: true,
      sql: {
        fn: 'app_public.event_participant_options',
        args: [
          { name: 'p_scope', from: 'query', key: 'scope', cast: 'text' },
          { name: 'p_search', from: 'query', key: 'search', cast: 'text' },
          { name: 'p_page', from: 'page', cast: 'int' },
          { name: 'p_page_size', from: 'page_size', cast: 'int' },
        ],
      },
      status: 200,
      response: s.ref('ParticipantOption'),
      errors: [400, 403],
    },
    {
      method: 'get',
      path: '/api/events/{id}/',
      operationId: 'events_read',
      summary: 'Un événement',
      description: READ_RULE,
      tags: ['Événements'],
      auth: 'account',
      pathParams: { id: s.id() },
      sql: { fn: 'app_public.event_get', args: [idArg] },
      status: 200,
      response: s.ref('Event'),
      errors: [404],
    },
    {
      method: 'put',
      path: '/api/events/{id}/',
      operationId: 'events_update',
      summary: 'Modifier un événement (titre, début et fin obligatoires)',
      description: WRITE_RULE,
      tags: ['Événements'],
      auth: 'account',
      permission: 'events.change_event',
      pathParams: { id: s.id() },
      body: s.object(eventBody, ['title', 'start_at', 'end_at']),
      sql: { fn: 'app_public.event_replace', args: [idArg, ...eventArgs, SENT_KEYS] },
      status: 200,
      response: s.ref('Event'),
      errors: [400, 403, 404],
    },
    {
      method: 'patch',
      path: '/api/events/{id}/',
      operationId: 'events_partial_update',
      summary: 'Modifier les champs envoyés d’un événement',
      description: WRITE_RULE,
      tags: ['Événements'],
      auth: 'account',
      permission: 'events.change_event',
      pathParams: { id: s.id() },
      body: s.object(eventBody),
      sql: { fn: 'app_public.event_update', args: [idArg, ...eventArgs, SENT_KEYS] },
      status: 200,
      response: s.ref('Event'),
      errors: [400, 403, 404],
    },
    {
      method: 'delete',
      path: '/api/events/{id}/',
      operationId: 'events_delete',
      summary: 'Supprimer un événement',
      description: WRITE_RULE,
      tags: ['Événements'],
      auth: 'account',
      permission: 'events.change_event',
      pathParams: { id: s.id() },
      sql: { fn: 'app_public.event_delete', args: [idArg] },
      status: 204,
      errors: [403, 404],
    },
  ],
};
