/**
 * open_next_year_counters: daily at 01:17 Europe/Paris (worker/crontab). From the date of the setting counters_opening_date (1 October by default) to the end of the year, opens next year's counters from the counter rules for every employee with a contract running into it (app_private.open_next_year_counters; idempotent: the employees hired since are opened the next day).
 */
import { scheduledTask } from '../scheduled-task.js';

export default scheduledTask('open_next_year_counters');
