/**
 * The demo organisation with its year of history (src/org/demo-history.ts) in a test
 * database: migrated empty, loaded with the business clock at a chosen instant, then made
 * a template that startTestEnv clones (its `public.fixture_ids` hold the demo's ids).
 */
import pg from 'pg';
import { migrateDatabase } from '../../src/db/migrate.js';
import { loadDemoOrganisation, type DemoLoadOutcome } from '../../src/org/demo-history.js';
import { FileStorage } from '../../src/storage/storage.js';
import { databaseUrl, TEST_ROOT_URL } from './settings.js';

/** The password of the demo logins in tests. */
export const DEMO_TEST_PASSWORD = 'Demo-History-Passw0rd';
const SESSION = '-c TimeZone=Europe/Paris -c app.business_timezone=Europe/Paris -c jit=off';
let counter = 0;

export async function withRoot<T>(work: (root: pg.Client) => Promise<T>): Promise<T> {
  const root = new pg.Client({ connectionString: TEST_ROOT_URL });
  await root.connect();
  try {
    return await work(root);
  } finally {
    await root.end();
  }
}

export interface TestDatabase {
  name: string;
  drop: () => Promise<void>;
}

/** A new database: a copy of `template` when given, else created empty and migrated. */
export async function migratedDatabase(template?: string): Promise<TestDatabase> {
  const name = `wfm_test_${process.pid}_demo${Date.now().toString(36)}${(counter++).toString(36)}`;
  await withRoot((root) => root.query(template ? `create database ${name} template ${template}` : `create database ${name}`));
  if (!template) await migrateDatabase(databaseUrl(name), { includeCurrent: true });
  return { name, drop: () => withRoot((root) => root.query(`drop database if exists ${name} with (force)`)).then(() => undefined) };
}

/** Loads the demo and its history into `database`, the business clock at `now`. */
export async function loadDemoInto(database: string, now: string, storage: FileStorage): Promise<DemoLoadOutcome> {
  await withRoot((root) => root.query(`alter database ${database} set app.frozen_now = '${now}'`));
  const client = new pg.Client({ connectionString: databaseUrl(database), options: SESSION });
  await client.connect();
  try {
    return await loadDemoOrganisation(client, { password: DEMO_TEST_PASSWORD, timeZone: 'Europe/Paris', storage, maxFileBytes: 10 * 1024 * 1024 });
  } finally {
    await client.end();
    await withRoot((root) => root.query(`alter database ${database} reset app.frozen_now`));
  }
}

/** Records the demo's ids where startTestEnv reads a fixture's, so that the database serves as a template. */
export async function recordIds(database: string, ids: DemoLoadOutcome['ids']): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl(database) });
  await client.connect();
  try {
    await client.query('create table public.fixture_ids (section text, key text, id int, primary key (section, key))');
    await client.query('insert into public.fixture_ids select s.key, k.key, k.value::int from jsonb_each($1::jsonb) s, jsonb_each_text(s.value) k',
      [JSON.stringify(ids)]);
  } finally {
    await client.end();
  }
}

/** A template holding the demo loaded at `now`, its files in `storageDir`. */
export async function demoTemplate(now: string, storageDir: string): Promise<TestDatabase & { loaded: DemoLoadOutcome }> {
  const database = await migratedDatabase();
  const loaded = await loadDemoInto(database.name, now, new FileStorage(storageDir));
  await recordIds(database.name, loaded.ids);
  return { ...database, loaded };
}
