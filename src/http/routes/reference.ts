import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';

/** A reason as the reference list describes it; the requestable list adds its availability. */
const ABSENCE_TYPE_PROPERTIES = {
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
};
const ABSENCE_TYPE_KEYS = Object.keys(ABSENCE_TYPE_PROPERTIES);

export const referenceRoutes: RouteModule = {
  schemas: {
    AbsenceType: s.object(ABSENCE_TYPE_PROPERTIES, ABSENCE_TYPE_KEYS),
    RequestableAbsenceType: s.object(
      {
        ...ABSENCE_TYPE_PROPERTIES,
        available: s.bool({ description: 'Le motif peut être posé ce jour-là : compteurs ouverts pour l’année, contrat admis.' }),
        unavailable_reason: s.nullable(s.string({ description: 'Pourquoi le motif est indisponible (null s’il est disponible).' })),
      },
      [...ABSENCE_TYPE_KEYS, 'available', 'unavailable_reason'],
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
      {
      method: 'get',
      path: '/api/absence-types/requestable/',
      operationId: 'absence_types_for_request',
      summary: 'Motifs qu’un formulaire d’absence propose, avec leur disponibilité',
      description:
        'Sans `employee` : sa propre fiche (un compte sans fiche répond 400 sous `employee`). Pour soi : les motifs actifs ' +
        '« demandables par le salarié » (attribut du back-office) que le contrat en vigueur à `date` admet. Pour un salarié de son ' +
        'périmètre de décision (une déclaration) : tous les motifs actifs. Chaque motif dit s’il est disponible à `date` ' +
        '(par défaut aujourd’hui) et sinon pourquoi : compteur non ouvert pour l’année, ou contrat en vigueur non concerné.',
      tags: ['Référentiels'],
      auth: 'account',
      permission: 'soi-même ; absences.decide_absence (périmètre) pour déclarer',
      query: s.object({
        employee: s.id('Fiche du salarié concerné ; par défaut la sienne.'),
        date: s.date({ description: 'Jour auquel juger les compteurs et le contrat ; par défaut aujourd’hui.' }),
      }),
      paginated: true,
      sql: {
        fn: 'app_public.absence_types_for_request',
        args: [
          { name: 'p_employee', from: 'query', key: 'employee', cast: 'int' },
          { name: 'p_date', from: 'query', key: 'date', cast: 'date' },
          { name: 'p_page', from: 'page', cast: 'int' },
          { name: 'p_page_size', from: 'page_size', cast: 'int' },
        ],
      },
      status: 200,
      response: s.ref('RequestableAbsenceType'),
      errors: [400],
    },
  ],
};
