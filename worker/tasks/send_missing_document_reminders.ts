/**
 * send_missing_document_reminders: daily at 05:37 Europe/Paris (worker/crontab). The rules
 * live in app_private.send_missing_document_reminders(p_now); app_private.reminders_sent
 * makes a second run send nothing twice.
 */
import { scheduledTask } from '../scheduled-task.js';

export default scheduledTask('send_missing_document_reminders');
