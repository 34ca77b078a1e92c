/**
 * sql/ is the one source of the schema; migrations carry it to databases.
 *
 * - sql/ORDER lists the sql/ files in dependency order (sql/finalize.sql last). Every file is
 *   re-runnable (create or replace, if not exists, guarded DDL), so a changed file is applied
 *   again on top of a database that already holds it.
 * - migrations/sql-state.json records the sha256 of each listed file as of the last committed
 *   migration (written by `npm run db:commit`).
 * - `npm run db:current` writes migrations/current.sql: drops of objects sql/ no longer
 *   defines, then `--!include` lines of the changed files (in list order) and finalize.sql.
 * - The drift check compares a database built from the migrations (committed + current.sql)
 *   with one built from sql/ alone (the list applied to an empty database), object by object.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { commit } from 'graphile-migrate';
import pg from 'pg';
import { withClient as withOptionsClient } from './client.js';
import { committedMigrations, hasCurrentMigration, migrateDatabase } from './migrate.js';
import { ensureRoles } from './roles.js';
import { ROOT_DIR } from './root.js';
import { dumpSchema, SCHEMA_FILE } from './schema-dump.js';
import { makeSilentLogger } from './silent-logger.js';

export interface Project {
  /** The project root: sql/ and migrations/ are read below it. */
  root: string;
  /** A superuser connection to the cluster where the check builds its two databases. */
  rootUrl: string;
}

const sqlDir = (project: Project) => path.join(project.root, 'sql');
const migrationsDir = (project: Project) => path.join(project.root, 'migrations');
const statePath = (project: Project) => path.join(migrationsDir(project), 'sql-state.json');
const currentPath = (project: Project) => path.join(migrationsDir(project), 'current.sql');

export class SqlSourceError extends Error {}

/** The files of sql/ORDER (paths relative to sql/), checked against the sql/ folder. */
export async function readOrder(project: Project): Promise<string[]> {
  const text = await readFile(path.join(sqlDir(project), 'ORDER'), 'utf8');
  const files = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const present = (await readdir(sqlDir(project), { recursive: true })).filter((file) => file.endsWith('.sql'));
  const missing = files.filter((file) => !present.includes(file));
  const unlisted = present.filter((file) => !files.includes(file));
  const problems = [
    ...missing.map((file) => `sql/ORDER lists ${file}, which does not exist`),
    ...unlisted.map((file) => `sql/${file} is not listed in sql/ORDER: add it after the files it depends on`),
    ...(files.at(-1) === 'finalize.sql' ? [] : ['sql/ORDER must end with finalize.sql']),
    ...files.filter((file, i) => files.indexOf(file) !== i).map((file) => `sql/ORDER lists ${file} twice`),
  ];
  if (problems.length) throw new SqlSourceError(problems.join('\n'));
  return files;
}

export interface SqlState {
  /** The hash of the last committed migration these file hashes correspond to. */
  migration: string;
  files: Record<string, string>;
}

export async function fileHashes(project: Project, files: string[]): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {};
  for (const file of files) {
    hashes[file] = createHash('sha256').update(await readFile(path.join(sqlDir(project), file))).digest('hex');
  }
  return hashes;
}

export async function readState(project: Project): Promise<SqlState> {
  return JSON.parse(await readFile(statePath(project), 'utf8')) as SqlState;
}

/** The `--! Hash:` of the last committed migration. */
export async function lastMigrationHash(project: Project): Promise<string> {
  return (await committedMigrations(migrationsDir(project))).at(-1)?.hash ?? '-';
}

export async function writeState(project: Project): Promise<SqlState> {
  const files = await readOrder(project);
  const state: SqlState = { migration: await lastMigrationHash(project), files: await fileHashes(project, files) };
  await writeFile(statePath(project), `${JSON.stringify(state, null, 2)}\n`);
  return state;
}

/** Listed files whose content differs from the state (or are new), in list order; and files no longer listed. */
export async function changedFiles(project: Project): Promise<{ changed: string[]; removed: string[] }> {
  const files = await readOrder(project);
  const state = await readState(project);
  const hashes = await fileHashes(project, files);
  return {
    changed: files.filter((file) => hashes[file] !== state.files[file]),
    removed: Object.keys(state.files).filter((file) => !files.includes(file)),
  };
}

// ---------------------------------------------------------------------------------------------
// Snapshots: one (key, definition) row per object of the application schemas.

const SCHEMAS = `('app_public', 'app_hidden', 'app_private')`;

const SNAPSHOT_SQL = `
select 'function ' || p.oid::regprocedure::text as key,
       pg_get_functiondef(p.oid) || E'\\nowner ' || pg_get_userbyid(p.proowner) || E'\\nacl ' || coalesce(p.proacl::text, '')
         || E'\\ncomment ' || coalesce(obj_description(p.oid, 'pg_proc'), '') as def
from pg_proc p join pg_namespace n on n.oid = p.pronamespace
where n.nspname in ${SCHEMAS} and p.prokind in ('f', 'p')
union all
select 'view ' || c.oid::regclass::text,
       pg_get_viewdef(c.oid, true) || E'\\noptions ' || coalesce(c.reloptions::text, '') || E'\\nacl ' || coalesce(c.relacl::text, '')
from pg_class c join pg_namespace n on n.oid = c.relnamespace
where n.nspname in ${SCHEMAS} and c.relkind in ('v', 'm')
union all
select case c.relkind when 'c' then 'type ' else 'table ' end || c.oid::regclass::text,
       'row level security ' || c.relrowsecurity || ' forced ' || c.relforcerowsecurity
         || E'\\nacl ' || coalesce(c.relacl::text, '') || E'\\ncomment ' || coalesce(obj_description(c.oid, 'pg_class'), '')
from pg_class c join pg_namespace n on n.oid = c.relnamespace
where n.nspname in ${SCHEMAS} and c.relkind in ('r', 'p', 'c')
union all
select 'column ' || c.oid::regclass::text || '.' || quote_ident(a.attname),
       format_type(a.atttypid, a.atttypmod) || case when a.attnotnull then ' not null' else '' end
         || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
         || case when a.attidentity <> '' then ' identity ' || a.attidentity::text else '' end
         || case when a.attgenerated <> '' then ' generated' else '' end
         || coalesce(' collate ' || nullif(a.attcollation, t.typcollation)::regcollation::text, '')
from pg_attribute a
join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
join pg_type t on t.oid = a.atttypid
left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
where n.nspname in ${SCHEMAS} and c.relkind in ('r', 'p', 'c') and a.attnum > 0 and not a.attisdropped
union all
select 'constraint ' || quote_ident(co.conname) || ' on ' || co.conrelid::regclass::text, pg_get_constraintdef(co.oid)
from pg_constraint co join pg_namespace n on n.oid = co.connamespace
where n.nspname in ${SCHEMAS} and co.conrelid <> 0
union all
select 'index ' || c.oid::regclass::text, pg_get_indexdef(c.oid)
from pg_class c join pg_namespace n on n.oid = c.relnamespace
where n.nspname in ${SCHEMAS} and c.relkind in ('i', 'I')
union all
select 'policy ' || quote_ident(pol.polname) || ' on ' || pol.polrelid::regclass::text,
       case when pol.polpermissive then 'permissive' else 'restrictive' end || ' ' || pol.polcmd::text
         || ' to ' || array_to_string(array(select case when r = 0 then 'public' else pg_get_userbyid(r) end
                                            from unnest(pol.polroles) r order by 1), ', ')
         || coalesce(E'\\nusing ' || pg_get_expr(pol.polqual, pol.polrelid), '')
         || coalesce(E'\\nwith check ' || pg_get_expr(pol.polwithcheck, pol.polrelid), '')
from pg_policy pol join pg_class c on c.oid = pol.polrelid join pg_namespace n on n.oid = c.relnamespace
where n.nspname in ${SCHEMAS}
union all
select 'trigger ' || quote_ident(tg.tgname) || ' on ' || tg.tgrelid::regclass::text,
       pg_get_triggerdef(tg.oid) || ' enabled ' || tg.tgenabled::text
from pg_trigger tg join pg_class c on c.oid = tg.tgrelid join pg_namespace n on n.oid = c.relnamespace
where n.nspname in ${SCHEMAS} and not tg.tgisinternal
union all
select 'enum ' || t.oid::regtype::text, array_to_string(array(select e.enumlabel from pg_enum e where e.enumtypid = t.oid order by e.enumsortorder), ', ')
from pg_type t join pg_namespace n on n.oid = t.typnamespace
where n.nspname in ${SCHEMAS} and t.typtype = 'e'
union all
select 'schema ' || quote_ident(n.nspname), 'acl ' || coalesce(n.nspacl::text, '')
from pg_namespace n where n.nspname in ${SCHEMAS}`;

export type Snapshot = Map<string, string>;

/** Every object and its definition; with `keysOnly`, the definitions are not computed (empty). */
export async function snapshot(client: pg.ClientBase, keysOnly = false): Promise<Snapshot> {
  const { rows } = await client.query<{ key: string; def: string }>(
    `select key, case when $1 then '' else def end as def from (${SNAPSHOT_SQL}) objects`,
    [keysOnly],
  );
  return new Map(rows.map((row) => [row.key, row.def]));
}

/** Row counts of the application tables (reference data must not double when a file runs again). */
async function rowCounts(client: pg.ClientBase): Promise<Snapshot> {
  const { rows } = await client.query<{ rel: string }>(
    `select c.oid::regclass::text as rel from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ${SCHEMAS} and c.relkind in ('r', 'p') order by 1`,
  );
  if (!rows.length) return new Map();
  const { rows: counts } = await client.query<{ key: string; def: string }>(
    rows.map((row) => `select 'rows of ${row.rel}' as key, count(*)::text as def from ${row.rel}`).join(' union all '),
  );
  return new Map(counts.map((row) => [row.key, row.def]));
}

export interface Difference {
  key: string;
  kind: 'differs' | 'only in migrations' | 'only in sql/';
}

export function compare(migrations: Snapshot, fromSql: Snapshot): Difference[] {
  const differences: Difference[] = [];
  for (const [key, def] of fromSql) {
    if (!migrations.has(key)) differences.push({ key, kind: 'only in sql/' });
    else if (migrations.get(key) !== def) differences.push({ key, kind: 'differs' });
  }
  for (const key of migrations.keys()) {
    if (!fromSql.has(key)) differences.push({ key, kind: 'only in migrations' });
  }
  return differences.sort((a, b) => a.key.localeCompare(b.key));
}

// ---------------------------------------------------------------------------------------------
// The two databases.

let counter = 0;

function databaseUrl(rootUrl: string, database: string): string {
  const url = new URL(rootUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

const withClient = <T>(url: string, work: (client: pg.Client) => Promise<T>) => withOptionsClient(url, undefined, work);

/** A fresh empty database with the service roles; named like the test databases so that orphans are dropped. */
async function withScratchDatabase<T>(project: Project, label: string, work: (url: string) => Promise<T>): Promise<T> {
  const name = `wfm_test_${process.pid}_${label}${(counter++).toString(36)}`;
  await withClient(project.rootUrl, async (root) => {
    await ensureRoles(root);
    await root.query(`create database ${name}`);
  });
  try {
    return await work(databaseUrl(project.rootUrl, name));
  } finally {
    await withClient(project.rootUrl, async (root) => {
      // graphile-migrate keeps its pool 200 ms after use and exits the process when a pool
      // connection is terminated: let it leave before the drop.
      for (let waited = 0; waited < 5000; waited += 50) {
        const { rows } = await root.query('select 1 from pg_stat_activity where datname = $1', [name]);
        if (!rows.length) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await root.query(`drop database if exists ${name} with (force)`);
    });
  }
}

export interface SqlBuild {
  snapshot: Snapshot;
  /** Problems found when every file is applied a second time. */
  notRerunnable: string[];
}

async function applyFile(client: pg.ClientBase, project: Project, file: string, pass: string): Promise<void> {
  try {
    await client.query(await readFile(path.join(sqlDir(project), file), 'utf8'));
  } catch (error) {
    throw new SqlSourceError(`sql/${file} failed (${pass}): ${(error as Error).message}`);
  }
}

/** Applies sql/ORDER to an empty database (after each file, `afterFile`), then every file again, which must change nothing. */
export async function buildFromSql(
  project: Project,
  url: string,
  afterFile?: (client: pg.ClientBase, file: string) => Promise<void>,
): Promise<SqlBuild> {
  const files = await readOrder(project);
  return withClient(url, async (client) => {
    await client.query('set search_path to pg_catalog, public; set client_min_messages to warning');
    for (const file of files) {
      await applyFile(client, project, file, 'first application to an empty database');
      await afterFile?.(client, file);
    }
    const first = await snapshot(client);
    const firstCounts = await rowCounts(client);
    for (const file of files) await applyFile(client, project, file, 'applied again on top of itself');
    const notRerunnable = [
      ...compare(first, await snapshot(client)),
      ...compare(firstCounts, await rowCounts(client)),
    ].map((d) => `${d.key} (${d.kind === 'differs' ? 'changes' : d.kind === 'only in sql/' ? 'appears' : 'disappears'} when sql/ is applied again)`);
    return { snapshot: first, notRerunnable };
  });
}

/** The file that first created each object (a build that looks at the objects after each file). */
async function definingFiles(project: Project): Promise<Map<string, string>> {
  const definedBy = new Map<string, string>();
  await withScratchDatabase(project, 'files', (url) =>
    buildFromSql(project, url, async (client, file) => {
      for (const key of (await snapshot(client, true)).keys()) {
        if (!definedBy.has(key)) definedBy.set(key, file);
      }
    }),
  );
  return definedBy;
}

async function buildFromMigrations(project: Project, url: string): Promise<{ snapshot: Snapshot; dump: string | null }> {
  const committedOnly = !(await hasCurrentMigration(migrationsDir(project)));
  await migrateDatabase(url, { includeCurrent: true, migrationsFolder: migrationsDir(project) });
  // migrations/schema.sql is the committed migrations' schema: compared when nothing else is applied.
  return { snapshot: await withClient(url, snapshot), dump: committedOnly ? await dumpSchema(url) : null };
}

/** The command of the afterAllMigrations hook: writes migrations/schema.sql from GM_DBURL. */
function schemaDumpCommand(project: Project): string {
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  return [process.execPath, '--import', 'tsx', path.join(ROOT_DIR, 'src/db/schema-dump.ts'), path.join(migrationsDir(project), SCHEMA_FILE)]
    .map(quote).join(' ');
}

/** Null when migrations/schema.sql is the dump of the committed migrations, else what to do. */
async function schemaFileProblem(project: Project, dump: string): Promise<string | null> {
  const file = await readFile(path.join(migrationsDir(project), SCHEMA_FILE), 'utf8').catch(() => null);
  if (file === dump) return null;
  return `migrations/${SCHEMA_FILE} ${file === null ? 'is missing' : 'differs from the schema the committed migrations produce'}: ` +
    'it is written by npm run db:commit; after a hand edit of a committed migration, restore the migration.';
}

export interface DriftReport {
  differences: Difference[];
  definedBy: Map<string, string>;
  notRerunnable: string[];
  /** Set when the migrations could not be applied (current.sql failing, for example). */
  migrationError?: string;
  /** Set when migrations/schema.sql is not the dump of the committed migrations (checked when current.sql is empty). */
  schemaProblem?: string | null;
}

/** Builds both databases on scratch databases of the cluster and compares them (a third names the files of differing objects). */
export async function driftReport(project: Project): Promise<DriftReport> {
  let schemaProblem: string | null = null;
  const sqlBuild = await withScratchDatabase(project, 'sql', (url) => buildFromSql(project, url));
  const { notRerunnable } = sqlBuild;
  let differences: Difference[];
  try {
    const migrations = await withScratchDatabase(project, 'mig', (url) => buildFromMigrations(project, url));
    differences = compare(migrations.snapshot, sqlBuild.snapshot);
    schemaProblem = migrations.dump === null ? null : await schemaFileProblem(project, migrations.dump);
  } catch (error) {
    return { differences: [], definedBy: new Map(), notRerunnable, migrationError: (error as Error).message };
  }
  const definedBy = differences.length ? await definingFiles(project) : new Map<string, string>();
  return { differences, definedBy, notRerunnable, schemaProblem };
}

/** The drift check of `npm test`: null when sql/ and the migrations agree, else the message. */
export async function driftCheck(project: Project, { requireCommitted = false } = {}): Promise<string | null> {
  const report = await driftReport(project);
  const lines: string[] = [];
  if (report.notRerunnable.length) {
    lines.push('sql/ cannot be applied again on a database that already has it:', ...report.notRerunnable.map((l) => `  ${l}`));
  }
  if (report.migrationError) {
    lines.push(`The migrations (committed + current.sql) fail: ${report.migrationError}`);
  }
  if (report.differences.length) {
    lines.push(
      'sql/ and the migrations differ (a database built from migrations/committed + current.sql against one built from sql/ORDER alone):',
      ...report.differences.map((d) => `  ${d.key}: ${d.kind}${report.definedBy.has(d.key) ? ` (sql/${report.definedBy.get(d.key)})` : ''}`),
      'Fix: npm run db:current (writes migrations/current.sql from the sql/ files changed since the last committed migration).',
    );
  }
  if (report.schemaProblem) lines.push(report.schemaProblem);
  if (requireCommitted && (await hasCurrentMigration(migrationsDir(project)))) {
    lines.push(
      'migrations/current.sql is not empty: a deployment runs the committed migrations only, so the change would not reach it.',
      'Fix: npm run db:commit -- "message" (commits current.sql as the next migration and records migrations/sql-state.json).',
    );
  }
  return lines.length ? lines.join('\n') : null;
}

// ---------------------------------------------------------------------------------------------
// db:current

const HEADER = `-- Written by \`npm run db:current\` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.
`;

const DROPPABLE: Record<string, (key: string) => string> = {
  function: (key) => `drop function if exists ${key.slice('function '.length)} cascade;`,
  view: (key) => `drop view if exists ${key.slice('view '.length)} cascade;`,
  policy: (key) => `drop policy if exists ${key.slice('policy '.length)};`,
  trigger: (key) => `drop trigger if exists ${key.slice('trigger '.length)};`,
  index: (key) => `drop index if exists ${key.slice('index '.length)};`,
  constraint: (key) => {
    const [name, table] = key.slice('constraint '.length).split(' on ');
    return `alter table ${table} drop constraint if exists ${name};`;
  },
};

/** Dependents first: `alter table` (constraints) and `drop` of policies, triggers, indexes, then views and functions. */
const DROP_ORDER = ['table', 'policy', 'trigger', 'index', 'view', 'function'];

function currentText(drops: string[], includes: string[]): string {
  if (!drops.length && !includes.length) return '-- Enter migration here\n';
  return [
    HEADER,
    ...(drops.length ? ['-- Objects that sql/ no longer defines.', ...drops, ''] : []),
    ...includes.map((file) => `--!include ${file}`),
    '',
  ].join('\n');
}

export interface CurrentOutcome {
  includes: string[];
  drops: string[];
  /** What still differs after the command did what it could (tables, columns: see docs/architecture.md). */
  remaining: string[];
}

/**
 * Writes migrations/current.sql from the changed files, then checks it: objects a re-applied
 * file dropped with cascade bring the files defining them in, objects sql/ no longer defines
 * are dropped (functions, views, policies, triggers, indexes, constraints; tables and
 * columns hold data and are dropped by a statement written in sql/).
 */
export async function writeCurrent(project: Project): Promise<CurrentOutcome> {
  const files = await readOrder(project);
  const { changed } = await changedFiles(project);
  const included = new Set(changed);
  const drops: string[] = [];
  for (let round = 0; ; round += 1) {
    const includes = included.size ? files.filter((file) => included.has(file) || file === 'finalize.sql') : [];
    await writeFile(currentPath(project), currentText(drops, includes));
    const report = await driftReport(project);
    if (report.notRerunnable.length || report.migrationError) {
      throw new SqlSourceError(
        [...report.notRerunnable, ...(report.migrationError ? [`migrations/current.sql fails: ${report.migrationError}`] : [])].join('\n'),
      );
    }
    let progress = false;
    for (const { key, kind } of report.differences) {
      const file = report.definedBy.get(key);
      if (kind !== 'only in migrations' && file && !included.has(file)) {
        included.add(file);
        progress = true;
      }
      const drop = kind === 'only in migrations' ? DROPPABLE[key.split(' ')[0]!]?.(key) : undefined;
      if (drop && !drops.includes(drop)) {
        drops.push(drop);
        progress = true;
      }
    }
    drops.sort((a, b) => DROP_ORDER.indexOf(a.split(' ')[1]!) - DROP_ORDER.indexOf(b.split(' ')[1]!) || a.localeCompare(b));
    if (!report.differences.length || !progress || round >= 5) {
      return { includes, drops, remaining: report.differences.map((d) => `${d.key}: ${d.kind}`) };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// db:commit

/**
 * Commits migrations/current.sql as the next migration (graphile-migrate commit, checked on
 * scratch databases of the cluster) and records the sql/ file hashes it corresponds to.
 */
export async function commitCurrent(project: Project, message: string): Promise<string> {
  if (!(await hasCurrentMigration(migrationsDir(project)))) {
    throw new SqlSourceError('migrations/current.sql is empty: nothing to commit (npm run db:current writes it from sql/).');
  }
  const drift = await driftCheck(project);
  if (drift) throw new SqlSourceError(`${drift}\nNothing was committed.`);
  await withScratchDatabase(project, 'commit', (url) =>
    withScratchDatabase(project, 'shadow', async (shadowUrl) => {
      await commit(
        {
          connectionString: url,
          shadowConnectionString: shadowUrl,
          rootConnectionString: project.rootUrl,
          migrationsFolder: migrationsDir(project),
          pgSettings: { search_path: 'pg_catalog, public' },
          afterReset: [],
          // migrations/schema.sql from the shadow database, migrated by every committed migration
          // with the new one (src/db/schema-dump.ts).
          afterAllMigrations: [{ _: 'command', shadow: true, command: schemaDumpCommand(project) }],
          logger: makeSilentLogger(),
        },
        message,
      );
    }),
  );
  const state = await writeState(project);
  return state.migration;
}
