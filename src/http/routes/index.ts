/**
 * The route manifest: every route of the REST API, grouped by resource. The Express router,
 * request validation and the OpenAPI document at /api/schema/ are all built from it.
 */
import type { RouteModule } from '../openapi.js';
import { absenceRoutes } from './absences.js';
import { accountRoutes } from './accounts.js';
import { auditLogRoutes } from './audit-log.js';
import { authRoutes } from './auth.js';
import { calendarFeedRoutes } from './calendar-feeds.js';
import { counterRoutes } from './counters.js';
import { delegationModule } from './delegations.js';
import { documentRoutes } from './documents.js';
import { employeeModule } from './employees.js';
import { exportRoutes } from './exports.js';
import { eventModule } from './events.js';
import { impersonationModule } from './impersonation.js';
import { notificationRoutes } from './notifications.js';
import { onCallModule } from './on-call.js';
import { payrollModule } from './payroll.js';
import { planningRoutes } from './planning.js';
import { referenceRoutes } from './reference.js';
import { referentialModule } from './referentials.js';
import { settingsRoutes } from './settings.js';
import { shiftChangeRoutes } from './shift-change-requests.js';
import { systemRoutes } from './system.js';
import { teamModule } from './teams.js';

export const routeModules: RouteModule[] = [
  systemRoutes,
  settingsRoutes,
  authRoutes,
  impersonationModule,
  referenceRoutes,
  referentialModule,
  employeeModule,
  accountRoutes,
  teamModule,
  planningRoutes,
  // Before the day-change requests and the absences: /api/absences/export/ is not /api/absences/{id}/.
  exportRoutes,
  shiftChangeRoutes,
  absenceRoutes,
  counterRoutes,
  documentRoutes,
  eventModule,
  onCallModule,
  delegationModule,
  payrollModule,
  notificationRoutes,
  calendarFeedRoutes,
  auditLogRoutes,
];

export const routes = routeModules.flatMap((module) => module.routes);
