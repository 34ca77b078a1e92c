/** The resources of the back-office, in the order of the navigation. */
import type { Resource } from '../registry.js';
import { absenceCategoriesResource } from './absence-categories.js';
import { absenceTypesResource } from './absence-types.js';
import { counterAssociationsResource } from './counter-associations.js';
import { counterRulesResource } from './counter-rules.js';
import { delegationResource } from './delegations.js';
import { countersResource } from './counters.js';
import { postsResource } from './posts.js';
import { absenceResource } from './absences.js';
import { auditLogResource } from './audit-log.js';
import { employeeResource } from './employees.js';
import { roleAttributionResource } from './role-attributions.js';
import { contractTypeResource, divisionResource, establishmentResource } from './referentials.js';
import { shiftChangeResource } from './shift-change-requests.js';
import { teamResource } from './teams.js';

export const RESOURCES: readonly Resource[] = [
  shiftChangeResource,
  absenceResource,
  employeeResource,
  roleAttributionResource,
  delegationResource,
  teamResource,
  establishmentResource,
  divisionResource,
  contractTypeResource,
  absenceTypesResource,
  absenceCategoriesResource,
  postsResource,
  counterAssociationsResource,
  counterRulesResource,
  countersResource,
  auditLogResource,
];
