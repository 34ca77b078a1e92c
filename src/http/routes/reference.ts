import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';

export const referenceRoutes: RouteModule = {
  schemas: {
    AbsenceType: s.object(
      {
        id: s.int(),
        code: s.string(),
        name: s.string(),
        category: s.string({ description: 'Catégorie (premier niveau).' }),
        subcategory: s.nullable(s.string({ description: 'Sous-catégorie, ou null.' })),
        unit: s.enum(['day', 'hour']),
        paid: s.bool(),
        splittable: s.bool(),
        annual_cap: s.nullable(s.decimal({ description: 'Plafond annuel (année civile), ou null.' })),
        cap_overrun: s.enum(['refuse', 'warn']),
        contract_types: s.array(s.string(), { description: 'Codes des types de contrat concernés ; vide = tous.' }),
        half_day_allowed: s.bool(),
        documents_expected: s.bool(),
        validation_required: s.bool(),
        annualisation_effect: s.enum(['none', 'neutralise', 'impute']),
        counter_codes: s.array(s.string(), { description: 'Compteurs consommés par le motif ; vide sans compteur.' }),
      },
      ['id', 'code', 'name', 'category', 'subcategory', 'unit', 'paid', 'splittable', 'annual_cap', 'cap_overrun',
        'contract_types', 'half_day_allowed', 'documents_expected', 'validation_required', 'annualisation_effect', 'counter_codes'],
    ),
  },
  routes: [
    {
      method: 'get',
      path: '/api/absence-types/',
      operationId: 'absence_types_list',
      summary: 'Motifs d’absence actifs, avec leurs compteurs (lecture seule)',
      description: 'Le référentiel s’écrit au back-office uniquement : POST répond 405.',
      tags: ['Référentiels'],
      auth: 'account',
      paginated: true,
      sql: { fn: 'app_public.absence_types_list', args: [{ name: 'p_page', from: 'page', cast: 'int' }, { name: 'p_page_size', from: 'page_size', cast: 'int' }] },
      status: 200,
      response: s.ref('AbsenceType'),
      errors: [405],
    },
  ],
};
