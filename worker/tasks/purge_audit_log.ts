/**
 * purge_audit_log: weekly on Sunday at 03:47 Europe/Paris (worker/crontab). Deletes the
 * audit lines older than the setting audit_retention_days (app_private.purge_audit_log).
 */
import { scheduledTask } from '../scheduled-task.js';

export default scheduledTask('purge_audit_log');
