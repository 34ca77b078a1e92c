/** The resources of the back-office, in the order of the navigation. */
import type { Resource } from '../registry.js';
import { absenceCategoriesResource } from './absence-categories.js';
import { absenceResource } from './absences.js';
import { auditLogResource } from './audit-log.js';
import { shiftChangeResource } from './shift-change-requests.js';

export const RESOURCES: readonly Resource[] = [shiftChangeResource, absenceResource, auditLogResource, absenceCategoriesResource];
