import type { RouteModule } from '../openapi.js';
import type { RouteSpec } from '../route.js';
import { s } from '../schema.js';
import { INPUT_CONTRACT } from '../input-contract.js';

const absence = s.object(
  {
    id: s.int(),
    type: s.int({ description: 'Motif d’absence.' }),
    type_code: s.string(),
    type_name: s.string(),
    date_start: s.date(),
    date_end: s.date(),
    start_half: s.nullable(s.enum(['morning', 'afternoon'])),
    end_half: s.nullable(s.enum(['morning', 'afternoon'])),
    start_time: s.nullable(s.time()),
    end_time: s.nullable(s.time()),
    comment: s.nullable(s.string()),
    status: s.enum(['validated', 'cancellation_requested']),
    part: s.enum(['day', 'morning', 'afternoon', 'hours'], { description: 'Partie du jour couverte.' }),
  },
  ['id', 'type', 'type_code', 'type_name', 'date_start', 'date_end', 'start_half', 'end_half', 'start_time', 'end_time',
    'comment', 'status', 'part'],
);

// The window and the filters GET /api/planning/ and its grid share (app_hidden.planning_scope).
const windowQuery = {
  from: s.date({ description: 'Premier jour (inclus).' }),
  to: s.date({ description: 'Dernier jour (inclus) ; ' + INPUT_CONTRACT.planningMaxDays + ' jours au plus depuis from.' }),
};
const windowArgs = [
  { name: 'p_from', from: 'query', key: 'from', cast: 'date' },
  { name: 'p_to', from: 'query', key: 'to', cast: 'date' },
] as const;
const filterArgs = [
  { name: 'p_establishment', from: 'query', key: 'establishment', cast: 'int' },
  { name: 'p_team', from: 'query', key: 'team', cast: 'int' },
] as const;

const planningRead: RouteSpec = {
  method: 'get',
  path: '/api/planning/',
  operationId: 'planning_read',
  summary: 'Planning : les journées (blocs) des salariés sur une période',
  description:
    'Sans from ni to : la semaine en cours (lundi à dimanche) ; avec une seule borne : 7 jours à partir d’elle ' +
    '(ou jusqu’à elle). ' + INPUT_CONTRACT.planningMaxDays + ' jours au plus (400 sous to). Un compte employee.view_employee_directory lit le ' +
    'périmètre absences.view_absence_queue (et sa propre fiche) ; tout autre compte lit ses seules journées, ' +
    'avec les astreintes de ses équipes. employee restreint à un salarié lisible (sinon 404). Une journée : la ' +
    'modification de journée, sinon le planning type ; une absence accordée prévaut (une demi-journée donne ' +
    'deux blocs) ; pending_request signale une demande d’absence ou de modification en attente, ou une ' +
    'annulation demandée (is_cancellation). establishment et team restreignent les salariés lus ; holidays donne ' +
    'les jours fériés de la période.',
  tags: ['Planning'],
  auth: 'account',
  permission: 'employee.view_employee_directory (périmètre) ; sinon ses propres journées',
  query: s.object({
    ...windowQuery,
    employee: s.id('Un seul salarié.'),
    establishment: s.id('Salariés rattachés à cet établissement (principal, secondaire ou équipe du jour le plus proche d’aujourd’hui dans la période).'),
    team: s.id('Salariés affectés à cette équipe (le jour de la période le plus proche d’aujourd’hui).'),
  }),
  sql: {
    fn: 'app_public.planning_read_chunks',
    args: [...windowArgs, { name: 'p_employee', from: 'query', key: 'employee', cast: 'int' }, ...filterArgs],
  },
  // The answer as app_public.planning_read_chunks writes it, parts of at most 64 KiB sent in order
  // (BENCHMARKS.md, "The three slow paths"); errors (window, perimeter) come before any byte.
  resultParts: true,
  status: 200,
  response: s.ref('Planning'),
  errors: [400, 404],
};

/**
 * The team month's grid (issue 29 point 6): what GET /api/planning/ gives the grid to draw, each
 * post, reason, block and day once, then per employee the index of each day (app_public.planning_grid).
 * A month of 200 employees is some 20 KB instead of 2.5 MB; /api/planning/ stays the SPEC's read.
 */
const planningGrid: RouteSpec = {
  method: 'get',
  path: '/api/planning/grid/',
  operationId: 'planning_grid',
  summary: 'Planning d’équipe : la grille d’un mois, compacte',
  description:
    'Ce que la grille du planning d’équipe dessine, pour la période, le périmètre et les filtres de GET /api/planning/ ' +
    '(mêmes défauts, mêmes erreurs ; ' + INPUT_CONTRACT.planningMaxDays + ' jours au plus, 400 sous to), chaque chose une ' +
    'fois : posts (les postes dessinés), reasons (les motifs d’absence), blocks (chaque bloc distinct : kind, post et ' +
    'reason en indices de posts et reasons, part, start_time, end_time, modified, status de l’absence, pending : null, ' +
    '« request » ou « cancellation »), cells (chaque journée distincte : les indices de ses blocs dans blocks, dans leur ' +
    'ordre), puis rows : par salarié (dans l’ordre de employees), par jour depuis from, l’indice de sa journée dans cells.',
  tags: ['Planning'],
  auth: 'account',
  permission: 'employee.view_employee_directory (périmètre) ; sinon ses propres journées',
  query: s.object({
    ...windowQuery,
    establishment: s.id('Salariés rattachés à cet établissement (comme GET /api/planning/).'),
    team: s.id('Salariés affectés à cette équipe (comme GET /api/planning/).'),
  }),
  sql: {
    fn: 'app_public.planning_grid',
    args: [...windowArgs, ...filterArgs],
  },
  status: 200,
  response: s.ref('PlanningGrid'),
  errors: [400],
};

export const planningRoutes: RouteModule = {
  schemas: {
    PlanningOnCall: s.object(
      {
        id: s.int(),
        account: s.int({ description: 'Compte d’astreinte.' }),
        name: s.string({ description: 'Nom de la personne d’astreinte.' }),
        start: s.dateTime({ description: 'Début (inclus).' }),
        end: s.dateTime({ description: 'Fin (exclue).' }),
        establishments: s.array(s.int()),
        comment: s.nullable(s.string()),
      },
      ['id', 'account', 'name', 'start', 'end', 'establishments', 'comment'],
    ),
    PlanningBlock: s.object(
      {
        kind: s.enum(['work', 'absence', 'rest']),
        post: s.nullable(s.int()),
        post_code: s.nullable(s.string()),
        post_label: s.nullable(s.string()),
        establishment: s.nullable(s.int()),
        start_time: s.nullable(s.time()),
        end_time: s.nullable(s.time()),
        break_start_time: s.nullable(s.time()),
        break_end_time: s.nullable(s.time()),
        break_paid: s.bool(),
        minutes: s.nullable(s.int({ description: 'Durée nette (travail) ; 0 pour un repos ; null pour une absence à la journée.' })),
        is_remote: s.bool(),
        is_offsite: s.bool(),
        modified: s.bool({ description: 'La journée vient d’une modification de journée.' }),
        comment: s.nullable(s.string({ description: 'Commentaire de la modification de journée.' })),
        absence: s.nullable(absence),
        pending_request: s.nullable(
          s.object(
            { kind: s.enum(['absence', 'shift_change']), id: s.int(), is_cancellation: s.bool() },
            ['kind', 'id', 'is_cancellation'],
          ),
        ),
        on_call: s.array(s.ref('PlanningOnCall'), { description: 'Astreintes des équipes du salarié ce jour-là.' }),
      },
      ['kind', 'post', 'post_code', 'post_label', 'establishment', 'start_time', 'end_time', 'break_start_time',
        'break_end_time', 'break_paid', 'minutes', 'modified', 'absence', 'pending_request', 'on_call'],
    ),
    Planning: s.object(
      {
        from: s.date(),
        to: s.date(),
        employees: s.array(
          s.object(
            { id: s.int(), name: s.string(), first_name: s.string(), last_name: s.string(), main_establishment: s.nullable(s.int()) },
            ['id', 'name'],
          ),
        ),
        cells: s.array(
          s.object(
            { employee: s.int(), date: s.date(), blocks: s.array(s.ref('PlanningBlock')) },
            ['employee', 'date', 'blocks'],
          ),
        ),
        holidays: s.array(s.object({ date: s.date(), name: s.string() }, ['date', 'name']), {
          description: 'Jours fériés de la période.',
        }),
      },
      ['from', 'to', 'employees', 'cells', 'holidays'],
    ),
    PlanningGrid: s.object(
      {
        from: s.date(),
        to: s.date(),
        employees: s.array(s.object({ id: s.int(), name: s.string() }, ['id', 'name'])),
        holidays: s.array(s.object({ date: s.date(), name: s.string() }, ['date', 'name']), {
          description: 'Jours fériés de la période.',
        }),
        posts: s.array(s.object({ code: s.string(), label: s.string() }, ['code', 'label']), {
          description: 'Chaque poste dessiné, une fois.',
        }),
        reasons: s.array(s.object({ code: s.string(), name: s.string() }, ['code', 'name']), {
          description: 'Chaque motif d’absence dessiné, une fois.',
        }),
        blocks: s.array(
          s.object(
            {
              kind: s.enum(['work', 'absence', 'rest']),
              post: s.nullable(s.int({ description: 'Indice dans posts (un bloc travaillé).' })),
              reason: s.nullable(s.int({ description: 'Indice dans reasons (une absence).' })),
              part: s.nullable(s.enum(['day', 'morning', 'afternoon', 'hours'], { description: 'Partie du jour couverte (une absence).' })),
              start_time: s.nullable(s.time()),
              end_time: s.nullable(s.time()),
              modified: s.bool({ description: 'La journée vient d’une modification de journée.' }),
              status: s.nullable(s.enum(['validated', 'cancellation_requested'], { description: 'Statut de l’absence.' })),
              pending: s.nullable(s.enum(['request', 'cancellation'], {
                description: 'Une demande en attente ce jour-là, ou l’annulation demandée de l’absence.',
              })),
            },
            ['kind', 'post', 'reason', 'part', 'start_time', 'end_time', 'modified', 'status', 'pending'],
          ),
          { description: 'Chaque bloc distinct, une fois.' },
        ),
        cells: s.array(s.array(s.int()), { description: 'Chaque journée distincte : les indices de ses blocs, dans leur ordre.' }),
        rows: s.array(s.array(s.int()), {
          description: 'Par salarié (ordre de employees), par jour depuis from : l’indice de sa journée dans cells.',
        }),
      },
      ['from', 'to', 'employees', 'holidays', 'posts', 'reasons', 'blocks', 'cells', 'rows'],
    ),
  },
  routes: [planningRead, planningGrid],
};
