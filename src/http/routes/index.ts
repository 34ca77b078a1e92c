/**
 * The route manifest: every route of the REST API, grouped by resource. The Express router,
 * request validation and the OpenAPI document at /api/schema/ are all built from it.
 */
import type { RouteModule } from '../openapi.js';
import { absenceRoutes } from './absences.js';
import { accountRoutes } from './accounts.js';
import { auditLogRoutes } from './audit-log.js';
import { authRoutes } from './auth.js';
import { notificationRoutes } from './notifications.js';
import { planningRoutes } from './planning.js';
import { counterRoutes } from './counters.js';
import { documentRoutes } from './documents.js';
import { referenceRoutes } from './reference.js';
import { shiftChangeRoutes } from './shift-change-requests.js';
import { systemRoutes } from './system.js';

export const routeModules: RouteModule[] = [
  systemRoutes,
  authRoutes,
  referenceRoutes,
  accountRoutes,
  notificationRoutes,
  auditLogRoutes,
  planningRoutes,
  shiftChangeRoutes,
  absenceRoutes,
  counterRoutes,
  documentRoutes,
];

export const routes = routeModules.flatMap((module) => module.routes);
