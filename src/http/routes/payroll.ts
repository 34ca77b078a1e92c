import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';
import { COUNTER_BALANCE_REQUIRED, COUNTER_YEAR_PROPERTIES, COUNTER_YEAR_REQUIRED, counterBalanceProperties } from './counters.js';

const RULES =
  'Avec `employee.view_payroll` (Admin, RH n1, RH n2, Service Paie), sur son périmètre (sinon 403). Lecture seule : ' +
  'toute écriture répond 405. Réponses en `Cache-Control: no-store`.';

const quantity = s.decimal();

export const payrollModule: RouteModule = {
  schemas: {
    PayrollLine: s.object(
      {
        employee: s.int(),
        employee_name: s.string(),
        main_establishment: s.nullable(s.int()),
        main_establishment_name: s.nullable(s.string()),
        month: s.string({ description: 'AAAA-MM' }),
        contract: s.object(
          {
            id: s.int(),
            type: s.int(),
            type_code: s.string(),
            type_name: s.string(),
            start_date: s.date(),
            end_date: s.nullable(s.date()),
            trial_end_date: s.nullable(s.date()),
            job_title: s.nullable(s.string()),
            weekly_hours: s.nullable(quantity),
          },
          ['id', 'type', 'type_code', 'type_name', 'start_date', 'end_date', 'trial_end_date', 'job_title', 'weekly_hours'],
        ),
        period: s.object({ start: s.date(), end: s.date() }, ['start', 'end'], {
          description: 'Jours du mois couverts par le contrat.',
        }),
        planned_hours: s.decimal({
          description: 'Heures planifiées sur la période : la journée prévue (modèle ou modification du jour), nette des pauses non payées.',
        }),
        absence_hours: s.decimal({
          description:
            'Heures planifiées couvertes par des absences validées (ou dont l’annulation est demandée) : une journée entière ' +
            'couvre toute la journée prévue, une demi-journée la moitié, une absence en heures ses heures ; au plus la journée prévue.',
        }),
        worked_hours: s.decimal({ description: 'planned_hours − absence_hours.' }),
        absences: s.array(
          s.object(
            {
              type: s.int(),
              type_code: s.string(),
              type_name: s.string(),
              unit: s.enum(['day', 'hour']),
              quantity: s.decimal({ description: 'Total du motif sur la période.' }),
              absences: s.array(
                s.object(
                  {
                    date_start: s.date(),
                    date_end: s.date(),
                    start_half: s.nullable(s.enum(['morning', 'afternoon'])),
                    end_half: s.nullable(s.enum(['morning', 'afternoon'])),
                    start_time: s.nullable(s.string()),
                    end_time: s.nullable(s.string()),
                    quantity,
                  },
                  ['date_start', 'date_end', 'start_half', 'end_half', 'start_time', 'end_time', 'quantity'],
                ),
                { description: 'Dates limitées à la période ; quantité de la période.' },
              ),
            },
            ['type', 'type_code', 'type_name', 'unit', 'quantity', 'absences'],
          ),
          {
            description:
              'Absences du mois par motif : motif, dates et quantité seulement (jamais de commentaire, de motif de décision ni ' +
              'de justificatif). La quantité est celle décomptée pour l’absence quand elle tient dans la période, sinon les ' +
              'jours de la période sur la base de l’établissement (dimanches et jours fériés exclus, demi-journée pour moitié).',
          },
        ),
        counters: s.array(
          s.object(
            { ...counterBalanceProperties, ...COUNTER_YEAR_PROPERTIES },
            [...COUNTER_BALANCE_REQUIRED, ...COUNTER_YEAR_REQUIRED],
          ),
          {
            description:
              'Compteurs de l’année civile du mois : soldes du journal à la fin du mois ; et, comme « Mes compteurs » ' +
              '(GET /api/counters/, même fonction SQL, journal d’aujourd’hui) : acquisition, à venir, report et sa date, fin d’année.',
          },
        ),
      },
      ['employee', 'employee_name', 'main_establishment', 'main_establishment_name', 'month', 'contract', 'period',
        'planned_hours', 'absence_hours', 'worked_hours', 'absences', 'counters'],
    ),
  },
  routes: [
    {
      method: 'get',
      path: '/api/payroll/options/',
      operationId: 'payroll_options',
      summary: 'Établissements que l’appelant peut consulter en paie',
      description: RULES,
      tags: ['Paie'],
      auth: 'account',
      permission: 'employee.view_payroll',
      sql: { fn: 'app_public.payroll_options', args: [] },
      status: 200,
      headers: { 'Cache-Control': 'no-store' },
      response: s.object(
        { establishments: s.array(s.object({ id: s.int(), name: s.string() }, ['id', 'name'])) },
        ['establishments'],
      ),
      errors: [403, 405],
    },
    {
      method: 'get',
      path: '/api/payroll/',
      operationId: 'payroll_lines',
      summary: 'Éléments de paie du mois : une ligne par contrat, 25 par page',
      description:
        `${RULES} Une ligne par contrat actif dans le mois, pour les salariés du périmètre de paie (avec \`establishment\` : ` +
        'ceux qui y sont rattachés — établissement principal, secondaire ou équipe à la fin du mois). Un établissement non ' +
        'autorisé répond 403. Pages de 25 lignes fixes.',
      tags: ['Paie'],
      auth: 'account',
      permission: 'employee.view_payroll',
      query: s.object(
        {
          month: s.string({ description: 'Mois consulté, AAAA-MM (obligatoire).', examples: ['2026-11'] }),
          establishment: s.id('Établissement (parmi /api/payroll/options/).'),
          search: s.string({ maxLength: 100, description: 'Recherche sur le prénom ou le nom.' }),
        },
        ['month'],
      ),
      paginated: { fixedPageSize: 25 },
      sql: {
        fn: 'app_public.payroll_lines',
        args: [
          { name: 'p_month', from: 'query', key: 'month', cast: 'text' },
          { name: 'p_establishment', from: 'query', key: 'establishment', cast: 'int' },
          { name: 'p_search', from: 'query', key: 'search', cast: 'text' },
          { name: 'p_page', from: 'page', cast: 'int' },
          { name: 'p_page_size', from: 'page_size', cast: 'int' },
        ],
      },
      status: 200,
      headers: { 'Cache-Control': 'no-store' },
      response: s.ref('PayrollLine'),
      errors: [400, 403, 404, 405],
    },
  ],
};
