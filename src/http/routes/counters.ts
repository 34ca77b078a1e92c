import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';

const counter = s.object(
  {
    id: s.int(),
    code: s.string(),
    name: s.string(),
    unit: s.enum(['day', 'hour']),
    year: s.int(),
    is_active: s.bool(),
    acquired: s.decimal({ description: 'Acquis.' }),
    taken: s.decimal({ description: 'Pris.' }),
    planned: s.decimal({ description: 'Planifiés (réservations des absences à venir ou en attente).' }),
    remaining: s.decimal({ description: 'Restant = acquis - pris - planifiés.' }),
    labels: s.object(
      { acquired: s.string({ const: 'Acquis' }), taken: s.string({ const: 'Pris' }), planned: s.string({ const: 'Planifiés' }), remaining: s.string({ const: 'Restant' }) },
      ['acquired', 'taken', 'planned', 'remaining'],
    ),
  },
  ['code', 'name', 'unit', 'acquired', 'taken', 'planned', 'remaining', 'labels'],
);

export const counterRoutes: RouteModule = {
  schemas: { Counter: counter },
  routes: [
    {
      method: 'get',
      path: '/api/counters/',
      operationId: 'counters_read',
      summary: 'Compteurs d’un salarié pour une année, par code',
      description:
        'Réponse indexée par code de compteur. Sans `employee` : sa propre fiche ; sans `year` : l’année en ' +
        'cours. Le salarié lit ses compteurs ; `absences.view_absence_queue` lit ceux de son périmètre ; tout ' +
        'autre cas répond 404. Les soldes sont des sommes sur le journal des mouvements.',
      tags: ['Compteurs'],
      auth: 'account',
      permission: 'absences.view_absence_queue (périmètre) ; sinon ses propres compteurs',
      query: s.object({
        employee: s.id('Fiche du salarié ; par défaut la sienne.'),
        year: s.int({ minimum: 2000, maximum: 2100, description: 'Année civile ; par défaut l’année en cours.' }),
      }),
      sql: {
        fn: 'app_public.counters_read',
        args: [
          { name: 'p_employee', from: 'query', key: 'employee', cast: 'int' },
          { name: 'p_year', from: 'query', key: 'year', cast: 'int' },
        ],
      },
      status: 200,
      response: { type: 'object', additionalProperties: s.ref('Counter'), description: 'Compteurs indexés par code (CP, CT, RC, ...).' },
      errors: [400, 404],
    },
  ],
};
