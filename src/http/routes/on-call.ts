import type { RouteModule } from '../openapi.js';
import { bodyField, SENT_KEYS, type ArgSpec } from '../route.js';
import { s } from '../schema.js';
import { INPUT_CONTRACT } from '../input-contract.js';

const RULES =
  'Permissions : `on_call.view_on_call_period` (Admin, RH n1, RH n2, DA, Manager n1, Manager n2, Service Paie) et ' +
  '`on_call.change_on_call_period` (les mêmes sans Service Paie, qui lit seulement). Salarié et Intérimaire n’y ont pas ' +
  'accès (403). Les écrans suivent le périmètre de l’appelant : une astreinte est visible quand un de ses établissements ' +
  'en fait partie, ou qu’elle est la sienne (sinon 404), et modifiable quand tous en font partie (sinon 403). Une astreinte étend le périmètre des ' +
  'rôles d’encadrement de son compte à ses établissements pendant [start_at, end_at[ (début inclus, fin exclue).';
const WRITE_RULE =
  'Le compte d’astreinte détient un rôle d’encadrement au début de la période ; un compte n’est jamais d’astreinte deux ' +
  'fois en même temps ; les établissements appartiennent au périmètre de l’appelant (400 sinon).';

const idArg: ArgSpec = { name: 'p_id', from: 'path', key: 'id', cast: 'int' };
/** The body's keys as the typed arguments of the create, replace and update functions. */
const periodArgs: ArgSpec[] = [
  bodyField('account', 'int'),
  bodyField('start_at', 'timestamptz'),
  bodyField('end_at', 'timestamptz'),
  bodyField('establishments', 'int[]'),
  bodyField('comment', 'text'),
];
const periodBody = {
  account: s.id('Compte d’astreinte (un compte d’encadrement).'),
  start_at: s.dateTime({ description: 'Début (inclus), avec fuseau.' }),
  end_at: s.dateTime({ description: 'Fin (exclue), après le début.' }),
  establishments: s.array(s.id(), { minItems: 1, description: 'Établissements couverts (au moins un).' }),
  comment: s.nullable(s.text(INPUT_CONTRACT.onCallCommentMaxLength)),
};
const required = ['account', 'start_at', 'end_at', 'establishments'];

export const onCallModule: RouteModule = {
  schemas: {
    OnCallPeriod: s.object(
      {
        id: s.int(),
        account: s.int(),
        account_name: s.nullable(s.string()),
        start_at: s.dateTime(),
        end_at: s.dateTime(),
        establishments: s.array(s.int()),
        establishment_names: s.array(s.string()),
        comment: s.nullable(s.string()),
        is_current: s.bool({ description: 'L’astreinte est en cours (début inclus, fin exclue).' }),
        created_at: s.dateTime(),
        updated_at: s.dateTime(),
      },
      ['id', 'account', 'account_name', 'start_at', 'end_at', 'establishments', 'establishment_names', 'comment',
        'is_current', 'created_at', 'updated_at'],
    ),
  },
  routes: [
    {
      method: 'get',
      path: '/api/on-call-periods/',
      operationId: 'on_call_periods_list',
      summary: 'Astreintes du périmètre',
      description: RULES,
      tags: ['Astreintes'],
      auth: 'account',
      permission: 'on_call.view_on_call_period',
      query: s.object({
        from: s.date({ description: 'Astreintes qui finissent après le début de ce jour.' }),
        to: s.date({ description: 'Astreintes qui commencent avant la fin de ce jour.' }),
        account: s.id('Astreintes de ce compte.'),
        establishment: s.id('Astreintes couvrant cet établissement.'),
      }),
      paginated: true,
      sql: {
        fn: 'app_public.on_call_periods_list',
        args: [
          { name: 'p_from', from: 'query', key: 'from', cast: 'date' },
          { name: 'p_to', from: 'query', key: 'to', cast: 'date' },
          { name: 'p_account', from: 'query', key: 'account', cast: 'int' },
          { name: 'p_establishment', from: 'query', key: 'establishment', cast: 'int' },
          { name: 'p_page', from: 'page', cast: 'int' },
          { name: 'p_page_size', from: 'page_size', cast: 'int' },
        ],
      },
      status: 200,
      response: s.ref('OnCallPeriod'),
      errors: [400, 403],
    },
    {
      method: 'post',
      path: '/api/on-call-periods/',
      operationId: 'on_call_periods_create',
      summary: 'Créer une astreinte',
      description: `${WRITE_RULE} ${RULES}`,
      tags: ['Astreintes'],
      auth: 'account',
      permission: 'on_call.change_on_call_period',
      body: s.object(periodBody, required),
      sql: { fn: 'app_public.on_call_period_create', args: periodArgs },
      status: 201,
      response: s.ref('OnCallPeriod'),
      errors: [400, 403],
    },
    {
      method: 'get',
      path: '/api/on-call-periods/{id}/',
      operationId: 'on_call_periods_read',
      summary: 'Une astreinte',
      description: RULES,
      tags: ['Astreintes'],
      auth: 'account',
      permission: 'on_call.view_on_call_period',
      pathParams: { id: s.id() },
      sql: { fn: 'app_public.on_call_period_get', args: [idArg] },
      status: 200,
      response: s.ref('OnCallPeriod'),
      errors: [403, 404],
    },
    {
      method: 'put',
      path: '/api/on-call-periods/{id}/',
      operationId: 'on_call_periods_update',
      summary: 'Modifier une astreinte (tous les champs)',
      description: `${WRITE_RULE} ${RULES}`,
      tags: ['Astreintes'],
      auth: 'account',
      permission: 'on_call.change_on_call_period',
      pathParams: { id: s.id() },
      body: s.object(periodBody, required),
      sql: { fn: 'app_public.on_call_period_replace', args: [idArg, ...periodArgs, SENT_KEYS] },
      status: 200,
      response: s.ref('OnCallPeriod'),
      errors: [400, 403, 404],
    },
    {
      method: 'patch',
      path: '/api/on-call-periods/{id}/',
      operationId: 'on_call_periods_partial_update',
      summary: 'Modifier les champs envoyés d’une astreinte',
      description: `${WRITE_RULE} ${RULES}`,
      tags: ['Astreintes'],
      auth: 'account',
      permission: 'on_call.change_on_call_period',
      pathParams: { id: s.id() },
      body: s.object(periodBody),
      sql: { fn: 'app_public.on_call_period_update', args: [idArg, ...periodArgs, SENT_KEYS] },
      status: 200,
      response: s.ref('OnCallPeriod'),
      errors: [400, 403, 404],
    },
    {
      method: 'delete',
      path: '/api/on-call-periods/{id}/',
      operationId: 'on_call_periods_delete',
      summary: 'Supprimer une astreinte',
      description: RULES,
      tags: ['Astreintes'],
      auth: 'account',
      permission: 'on_call.change_on_call_period',
      pathParams: { id: s.id() },
      sql: { fn: 'app_public.on_call_period_delete', args: [idArg] },
      status: 204,
      errors: [403, 404],
    },
  ],
};
