/**
 * Exports (issue 16): CSV (UTF-8 with BOM, `;`) and XLSX of the absence list, the counters of
 * an establishment, the payroll month and the audit log. Each takes its list's filters (the
 * same JSON Schema) plus `format`, and calls one SQL function sharing its list's selection, so
 * that perimeter and columns are the list's (src/http/exports/stream.ts streams the rows).
 */
import type { ExportColumn } from '../exports/columns.js';
import { CSV_MEDIA_TYPE } from '../exports/csv.js';
import type { ExportDefinition } from '../exports/definition.js';
import { exportFilename, periodWords } from '../exports/filename.js';
import { XLSX_CONTENT_TYPE } from '../exports/xlsx.js';
import type { RouteModule } from '../openapi.js';
import type { ArgSpec, RouteSpec, SqlCall } from '../route.js';
import { s, type JsonSchema } from '../schema.js';
import { absenceRoutes } from './absences.js';
import { auditLogRoutes } from './audit-log.js';
import { counterRoutes, ESTABLISHMENT_COUNTERS_RULES } from './counters.js';
import { payrollModule } from './payroll.js';
import { planningRoutes } from './planning.js';
import { shiftChangeRoutes } from './shift-change-requests.js';
import { INPUT_CONTRACT } from '../input-contract.js';

const FORMAT = s.enum(['csv', 'xlsx'], {
  description: 'csv : UTF-8 avec BOM, séparateur « ; », virgule décimale (tableurs en français) ; xlsx : classeur Excel.',
});

/**
 * The filters of a list route: its query schema plus the required `format`, and the SQL arguments
 * its query parameters fill (the page ones left out), so that an export takes exactly its list's filters.
 */
function listFilters(module: RouteModule, operationId: string): { query: JsonSchema; args: ArgSpec[] } {
  const route = module.routes.find((r) => r.operationId === operationId);
  if (!route?.query || !route.sql) throw new Error(`no list route ${operationId}`);
  return { query: withFormat(route.query), args: route.sql.args.filter((arg) => arg.from === 'query') };
}

function withFormat(query: JsonSchema, required: string[] = []): JsonSchema {
  return {
    ...query,
    properties: { ...(query.properties as Record<string, JsonSchema>), format: FORMAT },
    required: [...((query.required as string[] | undefined) ?? []), ...required, 'format'],
  };
}

const FILE_DESCRIPTION =
  ' Fichier en pièce jointe (Content-Disposition), `Cache-Control: no-store`, `X-Content-Type-Options: nosniff`. ' +
  'Les cellules de texte commençant par = + - @, une tabulation ou un retour chariot sont préfixées d’une apostrophe ' +
  '(jamais exécutées comme formules). Une erreur en cours d’écriture coupe la connexion : un fichier tronqué ne ' +
  'paraît jamais complet.';

function exportRoute(spec: {
  path: string;
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  permission: string;
  /** The list whose filters the export takes (listFilters). */
  filters: { query: JsonSchema; args: ArgSpec[] };
  /** The set-returning SQL function, called with the list's filter arguments. */
  fn: string;
  errors: number[];
  definition: ExportDefinition;
}): RouteSpec {
  return {
    method: 'get',
    path: spec.path,
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.description + FILE_DESCRIPTION,
    tags: spec.tags,
    auth: 'account',
    permission: spec.permission,
    query: spec.filters.query,
    sql: { fn: spec.fn, args: spec.filters.args } satisfies SqlCall,
    status: 200,
    responseContentTypes: [CSV_MEDIA_TYPE, XLSX_CONTENT_TYPE],
    headers: { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' },
    errors: spec.errors,
    export: spec.definition,
  };
}

const col = (key: string, label: string, kind: ExportColumn['kind'] = 'text'): ExportColumn => ({ key, label, kind });

const ABSENCE_COLUMNS = [
  col('id', 'N°', 'int'),
  col('employee', 'N° salarié', 'int'),
  col('employee_name', 'Salarié'),
  col('type_code', 'Code motif'),
  col('type_name', 'Motif'),
  col('date_start', 'Début', 'date'),
  col('start_half', 'Demi-journée de début'),
  col('date_end', 'Fin', 'date'),
  col('end_half', 'Demi-journée de fin'),
  col('start_time', 'Heure de début'),
  col('end_time', 'Heure de fin'),
  col('counted_quantity', 'Décompte', 'decimal'),
  col('counted_unit', 'Unité'),
  col('status_label', 'Statut'),
  col('comment', 'Commentaire'),
  col('decision_reason', 'Motif de la décision'),
  col('documents', 'Justificatifs', 'int'),
  col('submitted_at', 'Déposée le', 'datetime'),
  col('decided_at', 'Décidée le', 'datetime'),
];

const SHIFT_CHANGE_COLUMNS = [
  col('id', 'N°', 'int'),
  col('employee', 'N° salarié', 'int'),
  col('employee_name', 'Salarié'),
  col('date', 'Jour', 'date'),
  col('reason', 'Motif'),
  col('planned', 'Journée prévue'),
  col('requested', 'Journée demandée'),
  col('is_remote', 'Télétravail'),
  col('is_offsite', 'Hors de l’établissement'),
  col('requested_minutes', 'Minutes demandées', 'int'),
  col('status_label', 'Statut'),
  col('comment', 'Commentaire'),
  col('granted', 'Journée accordée (ajustée)'),
  col('decision_reason', 'Motif de la décision'),
  col('created_at', 'Déposée le', 'datetime'),
  col('decided_at', 'Décidée le', 'datetime'),
];

const SHIFT_CHANGE_STATUS_WORDS: Record<string, string> = { pending: 'en-attente', validated: 'validees', refused: 'refusees' };

const COUNTER_COLUMNS = [
  col('employee', 'N° salarié', 'int'),
  col('employee_name', 'Salarié'),
  col('code', 'Code'),
  col('name', 'Compteur'),
  col('unit', 'Unité'),
  col('acquired', 'Acquis', 'decimal'),
  col('taken', 'Pris', 'decimal'),
  col('planned', 'Planifiés', 'decimal'),
  col('remaining', 'Restant', 'decimal'),
];

/** No comment, decision reason or document: the payroll month shows none. */
export const PAYROLL_COLUMNS = [
  col('employee', 'N° salarié', 'int'),
  col('employee_name', 'Salarié'),
  col('main_establishment_name', 'Établissement principal'),
  col('contract_type', 'Contrat'),
  col('contract_start', 'Début du contrat', 'date'),
  col('contract_end', 'Fin du contrat', 'date'),
  col('job_title', 'Poste'),
  col('weekly_hours', 'Heures hebdomadaires', 'decimal'),
  col('period_start', 'Début de période', 'date'),
  col('period_end', 'Fin de période', 'date'),
  col('planned_hours', 'Heures planifiées', 'decimal'),
  col('absence_hours', 'Heures d’absence', 'decimal'),
  col('worked_hours', 'Heures travaillées', 'decimal'),
  col('absences', 'Absences du mois'),
  col('counters_acquisition', 'Compteurs : acquisition'),
  col('counters_acquired', 'Compteurs : acquis'),
  col('counters_remaining', 'Compteurs : restant'),
  col('counters_to_come', 'Compteurs : à venir cette année'),
  col('counters_carried_over', 'Compteurs : reporté de l’année précédente'),
  col('counters_year_end', 'Compteurs : fin d’année'),
];

const WEEKDAYS = ['lun.', 'mar.', 'mer.', 'jeu.', 'ven.', 'sam.', 'dim.'];

/**
 * The team planning grid (app_public.planning_export): N° salarié, Salarié, then one column per
 * day of the window, headed « lun. 01/12 » (d1 is from). from and to are required by the route
 * (a bad window is refused by the SQL function before any column is written).
 */
export function planningGridColumns(query: Record<string, unknown>): ExportColumn[] {
  const columns = [col('employee', 'N° salarié', 'int'), col('employee_name', 'Salarié')];
  const from = new Date(`${String(query.from)}T00:00:00Z`);
  const to = new Date(`${String(query.to)}T00:00:00Z`);
  for (let day = 0; day < INPUT_CONTRACT.planningMaxDays; day += 1) {
    const date = new Date(from.getTime() + day * 86_400_000);
    if (Number.isNaN(date.getTime()) || date > to) break;
    const label = `${WEEKDAYS[(date.getUTCDay() + 6) % 7]} ${String(date.getUTCDate()).padStart(2, '0')}/` +
      `${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
    columns.push(col(`d${day + 1}`, label));
  }
  return columns;
}

const ABSENCE_STATUS_WORDS: Record<string, string> = {
  pending: 'en-attente', validated: 'validees', refused: 'refusees', cancellation_requested: 'annulation-demandee', cancelled: 'annulees',
};

const AUDIT_COLUMNS = [
  col('id', 'N°', 'int'),
  col('at', 'Date', 'datetime'),
  col('actor', 'N° de compte', 'int'),
  col('actor_username', 'Identifiant'),
  col('actor_display_name', 'Nom'),
  col('impersonator', 'Par le compte n° (emprunt d’identité)', 'int'),
  col('impersonator_username', 'Par (identifiant)'),
  col('impersonator_display_name', 'Par (nom)'),
  col('verb', 'Action'),
  col('model', 'Objet'),
  col('target_id', 'N° de l’objet', 'int'),
  col('before', 'Avant'),
  col('after', 'Après'),
  col('client_address', 'Adresse du client'),
];

export const exportRoutes: RouteModule = {
  routes: [
    exportRoute({
      path: '/api/absences/export/',
      operationId: 'absences_export',
      summary: 'Exporter la liste des absences (CSV ou Excel)',
      description:
        'Les lignes de GET /api/absences/ pour les mêmes filtres, sans pagination, dans le même ordre (les plus récentes ' +
        'd’abord) et sur le même périmètre.',
      tags: ['Absences'],
      permission: 'absences.view_absence_queue (périmètre) ; sinon ses propres absences',
      filters: listFilters(absenceRoutes, 'absences_list'),
      fn: 'app_public.absences_export',
      errors: [400],
      definition: {
        columns: ABSENCE_COLUMNS,
        sheet: 'Absences',
        filename: (q) => exportFilename('absences', periodWords(q.from, q.to), [
          ['statut', q.status === undefined ? undefined : ABSENCE_STATUS_WORDS[String(q.status)] ?? q.status],
          ['etablissement', q.establishment], ['salarie', q.employee], ['motif', q.type],
        ]),
      },
    }),
    exportRoute({
      path: '/api/shift-change-requests/export/',
      operationId: 'shift_change_requests_export',
      summary: 'Exporter la liste des demandes de modification de journée (CSV ou Excel)',
      description:
        'Les lignes de GET /api/shift-change-requests/ pour les mêmes filtres, sans pagination, dans le même ordre (jour ' +
        'le plus récent d’abord) et aux mêmes lecteurs : la journée prévue, demandée et, si elle a été ajustée, accordée. ' +
        'Le nom du fichier porte la période et les filtres.',
      tags: ['Demandes de modification'],
      permission: 'absences.view_absence_queue (périmètre) ; sinon ses propres demandes',
      filters: listFilters(shiftChangeRoutes, 'shift_change_requests_list'),
      fn: 'app_public.shift_change_export',
      errors: [400],
      definition: {
        columns: SHIFT_CHANGE_COLUMNS,
        sheet: 'Modifications de journée',
        filename: (q) => exportFilename('modifications-de-journee', periodWords(q.from, q.to), [
          ['statut', q.status === undefined ? undefined : SHIFT_CHANGE_STATUS_WORDS[String(q.status)] ?? q.status],
          ['etablissement', q.establishment], ['salarie', q.employee],
        ]),
      },
    }),
    exportRoute({
      path: '/api/counters/establishment/export/',
      operationId: 'counters_establishment_export',
      summary: 'Exporter les compteurs d’un établissement pour une année (CSV ou Excel)',
      description: `${ESTABLISHMENT_COUNTERS_RULES} Les lignes de GET /api/counters/establishment/.`,
      tags: ['Compteurs'],
      permission: 'absences.view_absence_queue (périmètre)',
      filters: listFilters(counterRoutes, 'counters_establishment'),
      fn: 'app_public.counters_establishment_export',
      errors: [400, 404],
      definition: {
        columns: COUNTER_COLUMNS,
        sheet: 'Compteurs',
        filename: (query) => `compteurs-etablissement-${String(query.establishment)}${query.year ? `-${String(query.year)}` : ''}`,
      },
    }),
    exportRoute({
      path: '/api/payroll/export/',
      operationId: 'payroll_export',
      summary: 'Exporter les éléments de paie du mois (CSV ou Excel)',
      description:
        'Toutes les lignes de GET /api/payroll/ pour les mêmes filtres (une par contrat), sans pagination. Avec ' +
        '`employee.view_payroll` sur son périmètre (sinon 403). Jamais de commentaire, de motif de décision ni de ' +
        'justificatif : les absences sont les totaux par motif.',
      tags: ['Paie'],
      permission: 'employee.view_payroll',
      filters: listFilters(payrollModule, 'payroll_lines'),
      fn: 'app_public.payroll_export',
      errors: [400, 403],
      definition: {
        columns: PAYROLL_COLUMNS,
        sheet: 'Paie',
        filename: (q) => exportFilename('paie', [String(q.month)], [['etablissement', q.establishment], ['recherche', q.search]]),
      },
    }),
    exportRoute({
      path: '/api/audit-log/export/',
      operationId: 'audit_log_export',
      summary: 'Exporter le journal d’audit (CSV ou Excel)',
      description:
        'Les lignes de GET /api/audit-log/ pour les mêmes filtres, les plus récentes d’abord, aux mêmes lecteurs ' +
        '(audit.view_actionlog et accès au back-office ; sinon 403). Avant et après en JSON ; le superutilisateur qui agissait ' +
        'pour le compte de l’auteur (emprunt d’identité) dans les colonnes « Par » ; l’adresse du client.',
      tags: ['Audit'],
      permission: 'audit.view_actionlog (+ accès back-office)',
      filters: listFilters(auditLogRoutes, 'audit_log_list'),
      fn: 'app_public.audit_log_export',
      errors: [400, 403],
      definition: {
        columns: AUDIT_COLUMNS,
        sheet: 'Journal d’audit',
        filename: (q) => exportFilename('journal-audit', periodWords(q.from, q.to), [
          ['objet', q.model], ['cible', q.target_id], ['auteur', q.actor], ['action', q.verb],
        ]),
      },
    }),
    exportRoute({
      path: '/api/planning/export/',
      operationId: 'planning_export',
      summary: 'Exporter la grille du planning d’équipe (CSV ou Excel)',
      description:
        'La grille de GET /api/planning/ pour la même période (from et to obligatoires, ' + INPUT_CONTRACT.planningMaxDays +
        ' jours au plus), le même périmètre et les mêmes filtres (établissement, équipe, salarié), dans le même ordre : ' +
        'une ligne par salarié, une colonne par jour (« lun. 01/12 »), chaque cellule ce que la grille montre (code du ' +
        'poste travaillé ou du motif d’absence, « matin » ou « après-midi » pour une demi-journée, rien pour un repos, ' +
        '« (demande en attente) » ou « (annulation demandée) »). Le nom du fichier porte la période et les filtres.',
      tags: ['Planning'],
      permission: 'employee.view_employee_directory (périmètre) ; sinon ses propres journées',
      filters: {
        query: withFormat(planningRoutes.routes.find((r) => r.operationId === 'planning_read')!.query!, ['from', 'to']),
        args: planningRoutes.routes.find((r) => r.operationId === 'planning_read')!.sql!.args,
      },
      fn: 'app_public.planning_export',
      errors: [400, 404],
      definition: {
        columns: planningGridColumns,
        sheet: 'Planning',
        filename: (q) => exportFilename('planning', periodWords(q.from, q.to), [
          ['etablissement', q.establishment], ['equipe', q.team], ['salarie', q.employee],
        ]),
      },
    }),
  ],
};
