/**
 * The route manifest: every route of the REST API, grouped by resource. The Express router,
 * request validation and the OpenAPI document at /api/schema/ are all built from it.
 */
import type { RouteModule } from '../openapi.js';
import { accountRoutes } from './accounts.js';
import { authRoutes } from './auth.js';
import { employeeModule } from './employees.js';
import { eventModule } from './events.js';
import { impersonationModule } from './impersonation.js';
import { onCallModule } from './on-call.js';
import { payrollModule } from './payroll.js';
import { referenceRoutes } from './reference.js';
import { referentialModule } from './referentials.js';
import { systemRoutes } from './system.js';
import { teamModule } from './teams.js';

export const routeModules: RouteModule[] = [
  systemRoutes,
  authRoutes,
  referenceRoutes,
  accountRoutes,
  impersonationModule,
  employeeModule,
  referentialModule,
  teamModule,
  eventModule,
  onCallModule,
  payrollModule,
];

export const routes = routeModules.flatMap((module) => module.routes);
