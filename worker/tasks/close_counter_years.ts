/**
 * close_counter_years: daily at 01:37 Europe/Paris (worker/crontab). On and after 1 January, carries last year's balances over within the rules and expires the rest; after a carry-over date, expires what was carried over and not taken; a month before, notifies the employees (app_private.close_counter_years).
 */
import { scheduledTask } from '../scheduled-task.js';

export default scheduledTask('close_counter_years');
