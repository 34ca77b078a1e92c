import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { ensureRoles } from '../../src/db/roles.js';
import { migrateDatabase, ROOT_DIR } from '../../src/db/migrate.js';
import { importOrganisation } from '../../src/org/import.js';
import { TEST_ROOT_URL, databaseUrl } from './settings.js';
import { filesUnder } from './files.js';

const FIXTURE = path.join(ROOT_DIR, 'test/fixtures/organisation.json');

/** The template's name changes whenever a migration, a SQL file or the fixture changes. */
async function templateName(): Promise<string> {
  const hash = createHash('sha256');
  const files = [
    ...(await filesUnder(path.join(ROOT_DIR, 'migrations/committed'))),
    path.join(ROOT_DIR, 'migrations/current.sql'),
    ...(await filesUnder(path.join(ROOT_DIR, 'sql'))),
    FIXTURE,
    path.join(ROOT_DIR, 'test/helpers/template.ts'),
  ];
  for (const file of files) {
    hash.update(path.relative(ROOT_DIR, file));
    hash.update(await readFile(file));
  }
  return `wfm_tpl_${hash.digest('hex').slice(0, 16)}`;
}

async function withRoot<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_ROOT_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Builds (once per content hash) a database holding the migrated schema, the reference
 * data and the fixture organisation; test databases are cloned from it in a fraction of a
 * second. Concurrent builders of the same template wait on an advisory lock.
 */
export async function ensureTemplate(): Promise<string> {
  const name = await templateName();
  await withRoot(async (root) => {
    await root.query('select pg_advisory_lock(hashtext($1))', [name]);
    try {
      const { rowCount } = await root.query('select 1 from pg_database where datname = $1', [name]);
      if (rowCount) return;
      await ensureRoles(root);
      const building = `${name}_build`;
      await root.query(`drop database if exists ${building}`);
      await root.query(`create database ${building}`);
      await migrateDatabase(databaseUrl(building), { includeCurrent: true });
      const owner = new pg.Client({ connectionString: databaseUrl(building) });
      await owner.connect();
      try {
        await owner.query('begin');
        const ids = await importOrganisation(owner, JSON.parse(await readFile(FIXTURE, 'utf8')));
        // Ids of the fixture keys, for tests (public schema: invisible to the request roles).
        await owner.query('create table public.fixture_ids (section text, key text, id int, primary key (section, key))');
        await owner.query(
          `insert into public.fixture_ids
           select s.key, k.key, k.value::int from jsonb_each($1::jsonb) s, jsonb_each_text(s.value) k`,
          [JSON.stringify(ids)],
        );
        await owner.query('commit');
      } finally {
        await owner.end();
      }
      await root.query(`alter database ${building} rename to ${name}`);
    } finally {
      await root.query('select pg_advisory_unlock(hashtext($1))', [name]);
    }
  });
  return name;
}

/** Drops test databases left behind by runs that died (their process is gone). */
export async function dropOrphanTestDatabases(): Promise<void> {
  await withRoot(async (root) => {
    const { rows } = await root.query<{ datname: string }>(
      "select datname from pg_database where datname ~ '^wfm_(test|pgtap)_[0-9]+_'",
    );
    for (const { datname } of rows) {
      const pid = Number(datname.split('_')[2]);
      let alive = true;
      try {
        process.kill(pid, 0);
      } catch {
        alive = false;
      }
      if (!alive) await root.query(`drop database if exists ${datname} with (force)`);
    }
  });
}

let counter = 0;

/** A fresh database cloned from the template, and a function that drops it. */
export async function cloneTemplate(template: string, prefix = 'wfm_test'): Promise<{ name: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}${(counter++).toString(36)}`;
  await withRoot((root) => root.query(`create database ${name} template ${template}`));
  return {
    name,
    drop: () => withRoot((root) => root.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}
