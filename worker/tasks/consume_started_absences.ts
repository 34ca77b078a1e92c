/**
 * graphile-worker task, daily: granted absences that started move their reservation from
 * Planifiés to Pris in the counter journal (app_private.consume_started_absences).
 * Idempotent: an absence already moved holds nothing in Planifiés.
 * Payload (optional): {"today": "YYYY-MM-DD"} to run for another business date; by default
 * the business date of the database (app_hidden.today(), TZ_BUSINESS).
 */
import type { JobHelpers } from 'graphile-worker';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export default async function task(payload: unknown, helpers: JobHelpers): Promise<void> {
  const today = (payload as { today?: unknown } | null)?.today;
  if (today !== undefined && (typeof today !== 'string' || !DATE.test(today))) {
    throw new Error(`consume_started_absences: invalid payload.today ${JSON.stringify(today)}`);
  }
  const moved = await helpers.withPgClient(async (client) => {
    const { rows } = await client.query<{ moved: number }>(
      'select app_private.consume_started_absences(coalesce($1::date, app_hidden.today())) as moved',
      [today ?? null],
    );
    return rows[0]?.moved ?? 0;
  });
  helpers.logger.info(`consume_started_absences: ${moved} absence(s) moved from Planifiés to Pris`);
}
