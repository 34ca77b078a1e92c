import type { RouteModule } from '../openapi.js';
import { bodyField, type ArgSpec } from '../route.js';
import { s } from '../schema.js';
import { INPUT_CONTRACT } from '../input-contract.js';

const RULES =
  'Délégation datée des décisions (issue 30). Un décideur (un compte qui décide lui-même des absences ou des ' +
  'modifications de journée) nomme un délégataire pour un intervalle de dates (début et fin inclus), sur tout son ' +
  'périmètre ou certains de ses établissements, pour les absences, les modifications de journée ou les deux. ' +
  'Pendant l’intervalle, le délégataire lit la file et décide comme le délégant — jamais au-delà des droits et du ' +
  'périmètre propres du délégant, jamais sur ses propres demandes ni sur celles du délégant ; une décision enregistre ' +
  'les deux noms (`decided_by`, `on_behalf_of`). RH n1, RH n2 et Admin (ou un superutilisateur) créent une délégation pour un décideur absent de leur ' +
  'périmètre (absence accordée sur l’intervalle). Une délégation reçue ne se délègue pas. Les délégations peuvent se ' +
  'chevaucher et être terminées plus tôt. Création, fin et décisions par délégation sont journalisées.';

export const delegationModule: RouteModule = {
  schemas: {
    Delegation: s.object(
      {
        id: s.int(),
        delegator: s.int({ description: 'Compte délégant.' }),
        delegator_name: s.nullable(s.string()),
        delegate: s.int({ description: 'Compte délégataire.' }),
        delegate_name: s.nullable(s.string()),
        start_date: s.date(),
        end_date: s.date(),
        kinds: s.enum(['absences', 'shift_changes', 'both']),
        all_establishments: s.bool({ description: 'Tout le périmètre du délégant (sinon : establishments).' }),
        establishments: s.array(s.int()),
        establishment_names: s.array(s.string()),
        comment: s.nullable(s.string()),
        created_by: s.nullable(s.int()),
        created_by_name: s.nullable(s.string()),
        created_at: s.dateTime(),
        ended_at: s.nullable(s.dateTime({ description: 'Fin anticipée, ou null.' })),
        ended_by: s.nullable(s.int()),
        ended_by_name: s.nullable(s.string()),
        is_active: s.bool({ description: 'En vigueur maintenant.' }),
        is_over: s.bool({ description: 'Terminée (plus tôt, ou date de fin passée).' }),
      },
      ['id', 'delegator', 'delegator_name', 'delegate', 'delegate_name', 'start_date', 'end_date', 'kinds',
        'all_establishments', 'establishments', 'establishment_names', 'comment', 'created_by', 'created_by_name',
        'created_at', 'ended_at', 'ended_by', 'ended_by_name', 'is_active', 'is_over'],
    ),
  },
  routes: [
    {
      method: 'get',
      path: '/api/delegations/',
      operationId: 'delegations_list',
      summary: 'Délégations données, reçues, ou (RH) celles des décideurs de son périmètre',
      description: `${RULES} Chacun lit les délégations qu’il a données, reçues ou créées ; RH n1, RH n2 et Admin lisent aussi ` +
        'celles des décideurs de leur périmètre. Les plus récentes d’abord.',
      tags: ['Délégations'],
      auth: 'account',
      query: s.object({
        role: s.enum(['given', 'received'], { description: 'given : données ; received : reçues.' }),
        active: s.bool({ description: 'true : en vigueur maintenant ; false : les autres.' }),
        account: s.id('Délégations dont ce compte est délégant ou délégataire.'),
      }),
      paginated: true,
      sql: {
        fn: 'app_public.delegations_list',
        args: [
          { name: 'p_role', from: 'query', key: 'role', cast: 'text' },
          { name: 'p_active', from: 'query', key: 'active', cast: 'boolean' },
          { name: 'p_account', from: 'query', key: 'account', cast: 'int' },
          { name: 'p_page', from: 'page', cast: 'int' },
          { name: 'p_page_size', from: 'page_size', cast: 'int' },
        ],
      },
      status: 200,
      response: s.ref('Delegation'),
      errors: [400, 401],
    },
    {
      method: 'post',
      path: '/api/delegations/',
      operationId: 'delegations_create',
      summary: 'Déléguer ses décisions (ou, RH, celles d’un décideur absent)',
      description: RULES,
      tags: ['Délégations'],
      auth: 'account',
      body: s.object(
        {
          delegate: s.id('Compte délégataire (actif, autre que le délégant).'),
          start_date: s.date({ description: 'Premier jour (inclus).' }),
          end_date: s.date({ description: 'Dernier jour (inclus), pas avant aujourd’hui, au plus un an après le début.' }),
          kinds: s.enum(['absences', 'shift_changes', 'both'], { description: 'Décisions déléguées.' }),
          establishments: s.nullable(s.array(s.id(), { description: 'Établissements du périmètre du délégant ; vide ou absent : tout son périmètre.' })),
          delegator: s.nullable(s.id('RH n1, RH n2, Admin seulement : le décideur absent pour qui la délégation est créée.')),
          comment: s.nullable(s.text(INPUT_CONTRACT.commentMaxLength)),
        },
        ['delegate', 'start_date', 'end_date', 'kinds'],
      ),
      sql: {
        fn: 'app_public.delegation_create',
        args: [
          bodyField('delegate', 'int'),
          { name: 'p_start_date', from: 'body-field', key: 'start_date', cast: 'date' },
          { name: 'p_end_date', from: 'body-field', key: 'end_date', cast: 'date' },
          bodyField('kinds', 'text'),
          bodyField('establishments', 'int[]'),
          bodyField('delegator', 'int'),
          bodyField('comment', 'text'),
        ] satisfies ArgSpec[],
      },
      status: 201,
      response: s.ref('Delegation'),
      errors: [400, 401, 403],
    },
    {
      method: 'post',
      path: '/api/delegations/{id}/end/',
      operationId: 'delegations_end',
      summary: 'Mettre fin à une délégation maintenant',
      description: `${RULES} Le délégant, l’auteur de la délégation, ou RH n1, RH n2, Admin pour un décideur de leur périmètre ` +
        'y mettent fin (403 pour les autres lecteurs, 404 pour qui ne la lit pas) ; une délégation déjà terminée : 400 sous status.',
      tags: ['Délégations'],
      auth: 'account',
      pathParams: { id: s.id() },
      sql: { fn: 'app_public.delegation_end', args: [{ name: 'p_id', from: 'path', key: 'id', cast: 'int' }] },
      status: 200,
      response: s.ref('Delegation'),
      errors: [400, 401, 403, 404],
    },
  ],
};
