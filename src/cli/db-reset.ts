/**
 * `npm run db:reset`: with DATABASE_URL, drops the application schemas (every row of the
 * organisation, requests, counters, audit, jobs) and migrates again. The reference data
 * (categories, reasons, counter associations, contract types, public holidays) comes with
 * the migrations; no demo data is loaded.
 */
import '../check-node.js';
import { withClient } from '../db/client.js';
import { CliError, cliSessionOptions, ensureServiceRoles, migrate, requireDatabaseUrl, runCommand } from './common.js';

const APPLICATION_SCHEMAS = ['app_public', 'app_hidden', 'app_private', 'graphile_migrate', 'graphile_worker'];

interface Summary {
  categories: number;
  subcategories: number;
  reasons: number;
  counter_kinds: number;
  counter_associations: number;
  contract_types: number;
  holidays: number;
  year: number;
}

runCommand('db:reset', async () => {
  const databaseUrl = requireDatabaseUrl(process.env, 'db:reset');
  const log = (line: string) => console.log(line);
  const options = cliSessionOptions(process.env);

  const database = await withClient(databaseUrl, options, async (client) => {
    const { rows } = await client.query<{ db: string }>('select current_database() as db');
    await client.query('begin');
    try {
      // One statement: either every schema goes or none.
      await client.query(`drop schema if exists ${APPLICATION_SCHEMAS.join(', ')} cascade`);
      await ensureServiceRoles(client);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      if ((error as { code?: string }).code === '42501') {
        throw new CliError(`cannot drop the application schemas: ${(error as Error).message} (DATABASE_URL must be their owner)`);
      }
      throw error;
    }
    return rows[0]!.db;
  });
  log(`Dropped schemas ${APPLICATION_SCHEMAS.join(', ')} of database "${database}".`);

  await migrate(databaseUrl, log);

  const summary = await withClient(databaseUrl, options, async (client) => {
    const { rows } = await client.query<Summary>(`
      select (select count(*) from app_public.absence_categories where parent_id is null)::int as categories,
             (select count(*) from app_public.absence_categories where parent_id is not null)::int as subcategories,
             (select count(*) from app_public.absence_types)::int as reasons,
             (select count(*) from app_public.counter_kinds)::int as counter_kinds,
             (select count(*) from app_public.counter_associations)::int as counter_associations,
             (select count(*) from app_public.contract_types)::int as contract_types,
             (select count(*) from app_public.public_holidays(extract(year from app_hidden.today())::int))::int as holidays,
             extract(year from app_hidden.today())::int as year`);
    return rows[0]!;
  });
  log(`Database "${database}" reset and migrated. Reference data:`);
  log(`  ${summary.categories} absence categories (${summary.subcategories} sub-categories)`);
  log(`  ${summary.reasons} absence reasons`);
  log(`  ${summary.counter_kinds} counter kinds, ${summary.counter_associations} counter associations`);
  log(`  ${summary.contract_types} contract types`);
  log(`  ${summary.holidays} public holidays in ${summary.year}`);
  log('No organisation loaded: npm run org:import -- FILE.json loads one.');
  return 0;
});
