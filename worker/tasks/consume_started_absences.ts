/**
 * consume_started_absences: daily at 00:07 Europe/Paris (worker/crontab). Granted absences
 * that started move their reservation from Planifiés to Pris in the counter journal
 * (app_private.consume_started_absences). Idempotent: an absence already moved holds nothing
 * in Planifiés, and the run is recorded once per local date.
 */
import { scheduledTask } from '../scheduled-task.js';

export default scheduledTask('consume_started_absences');
