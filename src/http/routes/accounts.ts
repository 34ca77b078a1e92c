import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';

export const accountRoutes: RouteModule = {
  routes: [
    {
      method: 'put',
      path: '/api/employees/{id}/account-activation/',
      operationId: 'employee_account_activation',
      summary: 'Ouvrir ou fermer le compte d’un salarié (case « Compte actif »)',
      description:
        'RH et Admin ouvrent ou ferment tout compte de leur périmètre ; DA et managers uniquement les comptes ' +
        'd’intérimaires ; personne ne modifie son propre compte. Sans aucun de ces droits : 403 ; un salarié hors du ' +
        'périmètre du droit détenu : 404. Fermer un compte arrête ses jetons à la requête suivante.',
      tags: ['Salariés'],
      auth: 'account',
      permission: 'employee.change_account_activation | employee.change_interim_account_activation',
      pathParams: { id: s.id() },
      body: s.object({ is_active: s.bool() }, ['is_active']),
      sql: {
        fn: 'app_public.account_activation_set',
        args: [
          { name: 'p_employee_id', from: 'path', key: 'id', cast: 'int' },
          { name: 'p_is_active', from: 'body-field', key: 'is_active', cast: 'boolean' },
        ],
      },
      status: 200,
      response: s.object({ id: s.int({ description: 'Identifiant du salarié.' }), account_id: s.int(), is_active: s.bool() }, ['id', 'account_id', 'is_active']),
      errors: [400, 403, 404],
    },
  ],
};
