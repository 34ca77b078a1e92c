import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';

/** What « Mes compteurs » shows of a counter's year (app_private.counter_year_facts), shared with the payroll month. */
export const COUNTER_YEAR_PROPERTIES = {
  acquisition: s.nullable(s.enum(['opening', 'monthly'], {
    description: 'Comment le compteur s’acquiert selon les règles : à l’ouverture, ou mois par mois sur l’année précédente ; null : ouvert à la main ou par import.',
  })),
  to_come: s.decimal({ description: 'À venir : ce qu’un compteur mensuel acquerra encore sur les mois non terminés de sa période (contrats connus à ce jour).' }),
  carried_over: s.decimal({ description: 'Reporté de l’année précédente dans ce compteur.' }),
  carry_over_expires_on: s.nullable(s.date({ description: 'Date après laquelle ce qui reste du report expire ; null : pas de report ou pas de date.' })),
  carry_over_expiring: s.nullable(s.decimal({ description: 'Ce qui du report expirerait à cette date s’il n’est ni pris ni posé.' })),
  year_end: s.nullable(s.object(
    {
      carries_over: s.decimal({ description: 'Du solde restant, ce que la règle reporte sur l’année suivante au 31 décembre.' }),
      expires: s.decimal({ description: 'Du solde restant, ce qui expire au 31 décembre.' }),
      carry_over_until: s.nullable(s.date({ description: 'Date limite du report dans l’année suivante.' })),
    },
    ['carries_over', 'expires', 'carry_over_until'],
    { description: 'Fin d’année selon la règle du compteur ; null sans règle ou une fois l’année close.' },
  )),
};
export const COUNTER_YEAR_REQUIRED = ['acquisition', 'to_come', 'carried_over', 'carry_over_expires_on', 'carry_over_expiring', 'year_end'];

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
    ...COUNTER_YEAR_PROPERTIES,
  },
  ['code', 'name', 'unit', 'acquired', 'taken', 'planned', 'remaining', 'labels'],
);

const quantity = s.decimal();

/** One counter's balances in a list of lines (the counters of an establishment, the payroll month). */
export const counterBalanceProperties = {
  code: s.string(),
  name: s.string(),
  unit: s.enum(['day', 'hour']),
  acquired: quantity,
  taken: quantity,
  planned: quantity,
  remaining: quantity,
};
export const COUNTER_BALANCE_REQUIRED = ['code', 'name', 'unit', 'acquired', 'taken', 'planned', 'remaining'];

/** The query of the counters of an establishment, shared with its export (src/http/routes/exports.ts). */
const establishmentCountersQuery = s.object(
  {
    establishment: s.id('Établissement (lieu de travail principal ou secondaire, ou équipe).'),
    year: s.int({ minimum: 2000, maximum: 2100, description: 'Année civile ; par défaut l’année en cours.' }),
  },
  ['establishment'],
);

export const ESTABLISHMENT_COUNTERS_RULES =
  'Avec `absences.view_absence_queue`, pour un établissement de son périmètre (sinon 404) : une ligne par compteur de ' +
  'chaque salarié rattaché à l’établissement (lieu de travail principal ou secondaire, ou équipe, à ce jour) et de ' +
  'son périmètre, avec les soldes du journal (Acquis, Pris, Planifiés, Restant).';

const establishmentCounters = s.object(
  {
    establishment: s.int(),
    establishment_name: s.string(),
    year: s.int(),
    results: s.array(
      s.object(
        {
          employee: s.int(),
          employee_name: s.string(),
          ...counterBalanceProperties,
        },
        ['employee', 'employee_name', ...COUNTER_BALANCE_REQUIRED],
      ),
      { description: 'Par salarié (nom, prénom), puis par compteur.' },
    ),
  },
  ['establishment', 'establishment_name', 'year', 'results'],
);

export const counterRoutes: RouteModule = {
  schemas: { Counter: counter, EstablishmentCounters: establishmentCounters },
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
    {
      method: 'get',
      path: '/api/counters/establishment/',
      operationId: 'counters_establishment',
      summary: 'Compteurs d’un établissement pour une année',
      description: ESTABLISHMENT_COUNTERS_RULES + ' Export : /api/counters/establishment/export/.',
      tags: ['Compteurs'],
      auth: 'account',
      permission: 'absences.view_absence_queue (périmètre)',
      query: establishmentCountersQuery,
      sql: {
        fn: 'app_public.counters_establishment',
        args: [
          { name: 'p_establishment', from: 'query', key: 'establishment', cast: 'int' },
          { name: 'p_year', from: 'query', key: 'year', cast: 'int' },
        ],
      },
      status: 200,
      headers: { 'Cache-Control': 'no-store' },
      response: s.ref('EstablishmentCounters'),
      errors: [400, 404],
    },
  ],
};
