/**
 * Exports (issue 16): CSV (UTF-8 with BOM, `;`) and XLSX of the absence list, the counters of
 * an establishment, the payroll month and the audit log. Each takes its list's filters (the
 * same JSON Schema) plus `format`, and calls one SQL function sharing its list's selection, so
 * that perimeter and columns are the list's (src/http/exports/stream.ts streams the rows).
 */
import type { ExportColumn } from '../exports/columns.js';
import { CSV_MEDIA_TYPE } from '../exports/csv.js';
import type { ExportDefinition } from '../exports/definition.js';
import { XLSX_CONTENT_TYPE } from '../exports/xlsx.js';
import type { RouteModule } from '../openapi.js';
import type { ArgSpec, RouteSpec, SqlCall } from '../route.js';
import { s, type JsonSchema } from '../schema.js';
import { absenceRoutes } from './absences.js';
import { auditLogRoutes } from './audit-log.js';
import { counterRoutes, ESTABLISHMENT_COUNTERS_RULES } from './counters.js';
import { payrollModule } from './payroll.js';

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

function withFormat(query: JsonSchema): JsonSchema {
  return {
    ...query,
    properties: { ...(query.properties as Record<string, JsonSchema>), format: FORMAT },
    required: [...((query.required as string[] | undefined) ?? []), 'format'],
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
];

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
      definition: { columns: ABSENCE_COLUMNS, sheet: 'Absences', filename: () => 'absences' },
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
        filename: (query) => `paie-${String(query.month)}${query.establishment ? `-etablissement-${String(query.establishment)}` : ''}`,
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
      definition: { columns: AUDIT_COLUMNS, sheet: 'Journal d’audit', filename: () => 'journal-audit' },
    }),
  ],
};
