/**
 * Databases of the benchmark on the system PostgreSQL (BENCH_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres, a superuser: it creates databases and roles).
 *
 *   wfm_bench_<size>_<hash>: the dataset (migrated schema + generated organisation), a
 *                            template named after the content of migrations/, sql/, the
 *                            generator and the parameters;
 *   wfm_bench_run_<pid>:     the copy a run writes into (dropped at the end), so that every
 *                            run starts from the same data.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { ROOT_DIR } from '../../src/db/migrate.js';
import { ROLES } from '../../src/db/roles.js';
import { filesUnder } from '../../test/helpers/files.js';

export const ROOT_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function databaseUrl(database: string, user?: string): string {
  const url = new URL(ROOT_URL);
  url.pathname = `/${database}`;
  if (user) {
    url.username = user;
    url.password = '';
  }
  return url.toString();
}

/** The request connections of the service: the authenticator role (trust auth), or BENCH_AUTH_DATABASE_URL. */
export function authDatabaseUrl(database: string): string {
  if (process.env.BENCH_AUTH_DATABASE_URL) {
    const url = new URL(process.env.BENCH_AUTH_DATABASE_URL);
    url.pathname = `/${database}`;
    return url.toString();
  }
  return databaseUrl(database, ROLES.authenticator);
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'wfm-bench' });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Name of the dataset template: changes with the schema, the generator and the parameters. */
export async function templateName(size: string, params: object): Promise<string> {
  const hash = createHash('sha256');
  const files = [
    ...(await filesUnder(path.join(ROOT_DIR, 'migrations/committed'))),
    path.join(ROOT_DIR, 'migrations/current.sql'),
    ...(await filesUnder(path.join(ROOT_DIR, 'sql'))),
    ...(await filesUnder(path.join(ROOT_DIR, 'bench/dataset'))),
  ];
  for (const file of files) {
    hash.update(path.relative(ROOT_DIR, file));
    hash.update(await readFile(file));
  }
  hash.update(JSON.stringify(params));
  return `wfm_bench_${size}_${hash.digest('hex').slice(0, 12)}`;
}

export async function databaseExists(name: string): Promise<boolean> {
  return withClient(ROOT_URL, async (root) => {
    const { rowCount } = await root.query('select 1 from pg_database where datname = $1', [name]);
    return Boolean(rowCount);
  });
}

/** Identifiers of our own making only (checked): database names are not user input. */
function ident(name: string): string {
  if (!/^wfm_bench_[a-z0-9_]+$/.test(name)) throw new Error(`unexpected database name ${name}`);
  return name;
}

export async function dropDatabase(name: string): Promise<void> {
  await withClient(ROOT_URL, (root) => root.query(`drop database if exists ${ident(name)} with (force)`));
}

export async function createDatabase(name: string, template?: string): Promise<void> {
  await withClient(ROOT_URL, (root) =>
    root.query(
      template
        ? // file_copy: a checkpoint then a copy of the files, much faster than WAL-logging a large template.
          `create database ${ident(name)} template ${ident(template)} strategy = file_copy`
        : `create database ${ident(name)}`,
    ),
  );
}

/** Other dataset templates of the same size (older schema or generator): dropped to save disk. */
export async function dropStaleTemplates(size: string, keep: string): Promise<string[]> {
  return withClient(ROOT_URL, async (root) => {
    const { rows } = await root.query<{ datname: string }>(
      'select datname from pg_database where datname like $1 and datname <> $2',
      [`wfm_bench_${size}_%`, keep],
    );
    for (const { datname } of rows) await root.query(`drop database if exists ${ident(datname)} with (force)`);
    return rows.map((r) => r.datname);
  });
}

/** Run copies left behind by runs that died (their process is gone). */
export async function dropOrphanRuns(): Promise<void> {
  await withClient(ROOT_URL, async (root) => {
    const { rows } = await root.query<{ datname: string }>("select datname from pg_database where datname ~ '^wfm_bench_run_[0-9]+$'");
    for (const { datname } of rows) {
      const pid = Number(datname.split('_').pop());
      let alive = true;
      try {
        process.kill(pid, 0);
      } catch {
        alive = false;
      }
      if (!alive) await root.query(`drop database if exists ${ident(datname)} with (force)`);
    }
  });
}

export async function databaseSize(name: string): Promise<string> {
  return withClient(ROOT_URL, async (root) => {
    const { rows } = await root.query<{ size: string }>('select pg_size_pretty(pg_database_size($1)) as size', [name]);
    return rows[0]!.size;
  });
}
