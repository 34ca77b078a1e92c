/**
 * `npm run db:reset`: with DATABASE_URL, drops the application schemas (every row of the
 * organisation, requests, counters, audit, jobs) and migrates again. The reference data
 * (categories, reasons, counter associations, contract types, public holidays) comes with
 * the migrations; no demo data is loaded, unless `--demo` is given: then the demo
 * organisation and its year of history (src/org/demo-history.ts), as `npm start` loads
 * them, with the demo password of DATA_DIR/secrets.json and the files in STORAGE_DIR.
 */
import '../check-node.js';
import path from 'node:path';
import { withClient } from '../db/client.js';
import { INPUT_CONTRACT } from '../http/input-contract.js';
import { DEMO_LOGINS } from '../org/demo.js';
import { loadDemoOrganisation } from '../org/demo-history.js';
import { FileStorage } from '../storage/storage.js';
import { CliError, cliSessionOptions, dataDirFrom, ensureServiceRoles, migrate, requireDatabaseUrl, runCommand } from './common.js';
import { SecretStore } from './secrets.js';

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
  if (!process.argv.slice(2).includes('--demo')) {
    log('No organisation loaded: npm run org:import -- FILE.json loads one (or db:reset -- --demo, the demo).');
    return 0;
  }

  const dataDir = dataDirFrom(process.env);
  const password = (await new SecretStore(dataDir).get('demo_password')).demo_password;
  const storageDir = path.resolve(process.env.STORAGE_DIR || path.join(dataDir, 'storage'));
  const loaded = await withClient(databaseUrl, options, (client) =>
    loadDemoOrganisation(client, {
      password,
      timeZone: process.env.TZ_BUSINESS || 'Europe/Paris',
      storage: new FileStorage(storageDir),
      maxFileBytes: INPUT_CONTRACT.documentMaxBytes,
    }));
  const history = loaded.history;
  log(
    history
      ? `Demo organisation loaded with its history: ${history.steps} steps in ${(history.milliseconds / 1000).toFixed(1)} s ` +
          `(${history.absences} absences, ${history.shiftChanges} day-change requests, ${history.documents} documents in ${storageDir}).`
      : 'Demo organisation loaded without its history: the DATABASE_URL user may not become wfm_visitor.',
  );
  log(`Demo logins (${DEMO_LOGINS.map((login) => login.username).join(', ')}), password: ${password} (kept in ${path.join(dataDir, 'secrets.json')}).`);
  return 0;
});
