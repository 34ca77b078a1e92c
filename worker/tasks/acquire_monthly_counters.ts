/**
 * acquire_monthly_counters: daily at 01:27 Europe/Paris (worker/crontab). Writes each ended month's acquisition of the counters acquiring month by month, once per counter and month (app_private.acquire_monthly_counters; the journal's key makes a late, repeated or crashed run harmless).
 */
import { scheduledTask } from '../scheduled-task.js';

export default scheduledTask('acquire_monthly_counters');
