/**
 * Builds a dataset database: roles, migrations (current.sql included while it is not
 * empty), then bench/dataset/generate.sql step by step (timed), VACUUM ANALYZE.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { hashPassword } from '../../src/auth/passwords.js';
import { ROOT_DIR, hasCurrentMigration, migrateDatabase } from '../../src/db/migrate.js';
import { ensureRoles } from '../../src/db/roles.js';
import { ROOT_URL, createDatabase, databaseExists, databaseUrl, dropDatabase, dropStaleTemplates, templateName, withClient } from './db.js';

export interface DatasetParams {
  employees: number;
  establishments: number;
  absences: number;
  shiftChanges: number;
  /** Business date the history is built around (YYYY-MM-DD). */
  today: string;
}

export type DatasetSize = 'default' | 'scale' | 'small';

/** The business date in Paris: the history is built around it. */
export function parisToday(): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
}

/** The parameters of each dataset size (README of bench/run.ts), around today. */
export function datasetParams(size: DatasetSize): DatasetParams {
  const today = parisToday();
  if (size === 'scale') return { employees: 10_000, establishments: 100, absences: 1_000_000, shiftChanges: 100_000, today };
  if (size === 'small') return { employees: 200, establishments: 2, absences: 10_000, shiftChanges: 2_000, today };
  return { employees: 2_000, establishments: 20, absences: 100_000, shiftChanges: 20_000, today };
}

/** Every bench account has this password (one argon2id hash, computed once). */
export const BENCH_PASSWORD = 'Bench-Passw0rd!';

export interface DatasetBuild {
  seconds: number;
  steps: Array<{ step: string; seconds: number }>;
}

/** Splits the generator on its "-- step: <name>" markers. */
export async function generatorSteps(): Promise<Array<{ step: string; sql: string }>> {
  const text = await readFile(path.join(ROOT_DIR, 'bench/dataset/generate.sql'), 'utf8');
  const parts = text.split(/^-- step: (.+)$/m);
  const steps: Array<{ step: string; sql: string }> = [];
  for (let i = 1; i < parts.length; i += 2) steps.push({ step: parts[i]!.trim(), sql: parts[i + 1]! });
  return steps;
}

/**
 * Generates the dataset `template` anew, then drops the other templates of its kind (`kind`: the
 * size, or paths_<size> for the comparison of transaction paths) to save disk.
 */
export async function generateTemplate(template: string, params: DatasetParams, kind: string,
                                       log: (line: string) => void): Promise<DatasetBuild> {
  log(`dataset: generating ${template}`);
  await dropDatabase(template);
  const build = await buildDataset(template, params, log);
  log(`dataset: ${build.seconds.toFixed(1)} s`);
  const dropped = await dropStaleTemplates(kind, template);
  if (dropped.length) log(`dataset: dropped stale ${dropped.join(', ')}`);
  return build;
}

/** The template of this checkout's dataset of `size`, generated when missing (as `npm run bench -- --reuse` would). */
export async function ensureTemplate(size: DatasetSize, log: (line: string) => void): Promise<string> {
  const params = datasetParams(size);
  const template = await templateName(size, params);
  if (!(await databaseExists(template))) await generateTemplate(template, params, size, log);
  return template;
}

export async function buildDataset(name: string, params: DatasetParams, log: (line: string) => void): Promise<DatasetBuild> {
  const started = Date.now();
  const steps: DatasetBuild['steps'] = [];
  const timed = async (step: string, work: () => Promise<unknown>) => {
    const t0 = Date.now();
    await work();
    const seconds = (Date.now() - t0) / 1000;
    steps.push({ step, seconds });
    log(`  ${step.padEnd(26)} ${seconds.toFixed(1)} s`);
  };

  const building = `${name}_build`;
  await dropDatabase(building);
  await createDatabase(building);
  await withClient(ROOT_URL, (root) => ensureRoles(root));
  await timed('migrate', () => migrateDatabase(databaseUrl(building), { includeCurrent: true }));
  if (await hasCurrentMigration()) log('  (migrations/current.sql applied: development checkout)');

  let hash = '';
  await timed('password hash (argon2id)', async () => {
    hash = await hashPassword(BENCH_PASSWORD);
  });

  await withClient(databaseUrl(building), async (client) => {
    // Parameters travel as settings of the session, read by the generator with current_setting.
    await client.query(
      `select set_config('bench.employees', $1, false), set_config('bench.establishments', $2, false),
              set_config('bench.absences', $3, false), set_config('bench.shift_changes', $4, false),
              set_config('bench.today', $5, false), set_config('bench.password_hash', $6, false),
              set_config('maintenance_work_mem', '256MB', false), set_config('work_mem', '64MB', false)`,
      [String(params.employees), String(params.establishments), String(params.absences), String(params.shiftChanges),
       params.today, hash],
    );
    for (const { step, sql } of await generatorSteps()) {
      await timed(step, () => client.query(sql));
    }
    await timed('vacuum analyze', () => client.query('vacuum (analyze)'));
  });
  await withClient(ROOT_URL, async (root) => {
    await root.query(`alter database ${building} rename to ${name}`);
  });
  return { seconds: (Date.now() - started) / 1000, steps };
}
