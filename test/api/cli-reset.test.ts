/**
 * `npm run db:reset` (CONTRACT section 1), then the demo organisation of `npm start`
 * loaded into the reset database through `npm run org:import`.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { buildDemoOrganisation, DEMO_LOGINS, socialSecurityNumber } from '../../src/org/demo.js';
import { cloneTemplate } from '../helpers/template.js';
import { databaseUrl } from '../helpers/settings.js';
import { SCRIPTS, commandEnv, runCommand } from './cli-helpers.js';

let database: { name: string; drop: () => Promise<void> };
let db: pg.Pool;
let dir: string;

beforeAll(async () => {
  database = await cloneTemplate(inject('templateDatabase'));
  db = new pg.Pool({ connectionString: databaseUrl(database.name), max: 2 });
  dir = await mkdtemp(path.join(tmpdir(), 'wfm-db-reset-'));
});

afterAll(async () => {
  await db?.end();
  await database?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const count = async (sql: string, params: unknown[] = []) => (await db.query<{ n: number }>(`select (${sql})::int as n`, params)).rows[0]!.n;

describe('db:reset', () => {
  it('refuses to run without DATABASE_URL', async () => {
    const result = await runCommand(SCRIPTS.dbReset, [], commandEnv());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('DATABASE_URL is required by db:reset');
  });

  it('drops the application schemas, migrates again with the reference data and loads no organisation', async () => {
    // The fixture organisation is there, plus objects the migrations do not create.
    expect(await count('select count(*) from app_public.establishments')).toBeGreaterThan(0);
    await db.query('create table app_private.leftover_marker (id int)');
    await db.query('create schema if not exists graphile_worker');
    await db.query('create table graphile_worker.leftover_job (id int)');

    const result = await runCommand(SCRIPTS.dbReset, [], commandEnv({ DATABASE_URL: databaseUrl(database.name) }));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('6 absence categories');
    expect(result.stdout).toContain('52 absence reasons');
    expect(result.stdout).toContain('15 counter associations');
    expect(result.stdout).toContain('5 contract types');
    expect(result.stdout).toMatch(/11 public holidays in \d{4}/);

    // Organisation data gone.
    for (const table of ['establishments', 'teams', 'posts', 'employees', 'accounts', 'counters', 'on_call_periods']) {
      expect(await count(`select count(*) from app_public.${table}`), table).toBe(0);
    }
    expect(await count('select count(*) from app_private.counter_movements')).toBe(0);
    expect(await count('select count(*) from app_private.email_outbox')).toBe(0);
    // Schemas recreated from scratch.
    expect(await count("select count(*) from pg_class where relname in ('leftover_marker', 'leftover_job')")).toBe(0);
    expect(await count("select count(*) from pg_namespace where nspname = 'graphile_worker'")).toBe(0);
    expect(await count("select count(*) from pg_namespace where nspname in ('app_public', 'app_hidden', 'app_private', 'graphile_migrate')")).toBe(4);
    // Reference data of the migrations (CONTRACT section 5).
    expect(await count('select count(*) from app_public.absence_categories where parent_id is null')).toBe(6);
    expect(await count('select count(*) from app_public.absence_types')).toBe(52);
    expect(await count('select count(*) from app_public.counter_associations')).toBe(15);
    expect(await count('select count(*) from app_public.contract_types')).toBe(5);
    expect(await count('select count(*) from app_public.public_holidays(2026)')).toBe(11);
    // The finalize step ran: API functions belong to wfm_api and every table has RLS.
    expect(await count("select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname like 'app\\_%' and c.relkind = 'r' and not c.relrowsecurity")).toBe(0);
    expect(await count("select count(*) from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'app_public' and p.prosecdef and p.proowner <> 'wfm_api'::regrole")).toBe(0);
  }, 120_000); // all the committed migrations from an empty schema: about 50 s on a loaded 2-core machine
});

describe('the demo organisation', () => {
  const today = '2026-11-16';
  const password = 'Demo-Test-Passw0rd';

  it('is deterministic: the same date and password give the same document', () => {
    expect(buildDemoOrganisation({ today, password })).toEqual(buildDemoOrganisation({ today, password }));
  });

  it('writes valid social security numbers (key = 97 - number mod 97)', () => {
    const number = socialSecurityNumber(2, '1977-09-18', '2A', 7);
    expect(number).toMatch(/^277092A\d{8}$/);
    const body = BigInt(number.slice(0, 13).replace('2A', '19'));
    expect(Number(number.slice(13))).toBe(Number(97n - (body % 97n)));
  });

  it('loads through org:import into the reset database', async () => {
    const document = buildDemoOrganisation({ today, password });
    const file = path.join(dir, 'demo.json');
    await writeFile(file, JSON.stringify(document));
    const result = await runCommand(SCRIPTS.orgImport, [file], commandEnv({ DATABASE_URL: databaseUrl(database.name) }));
    expect(result.code, result.stderr).toBe(0);
    const ids = JSON.parse(result.stdout.trim().split('\n').pop()!) as Record<string, Record<string, number>>;

    expect(Object.keys(ids.establishments!)).toHaveLength(3);
    expect(await count("select count(*) from app_public.establishments where count_base = 'ouvrables'")).toBe(1);
    expect(await count("select count(*) from app_public.establishments where count_base = 'ouvres'")).toBe(2);
    // A team spans two establishments; 3 to 5 posts per establishment, a night post 21:00-07:00,
    // paid and unpaid breaks.
    expect(await count('select count(*) from (select team_id from app_public.team_establishments group by 1 having count(*) >= 2) t')).toBeGreaterThan(0);
    const posts = await db.query<{ n: number }>('select count(*)::int as n from app_public.posts group by establishment_id');
    expect(posts.rows).toHaveLength(3);
    for (const row of posts.rows) {
      expect(row.n).toBeGreaterThanOrEqual(3);
      expect(row.n).toBeLessThanOrEqual(5);
    }
    expect(await count("select count(*) from app_public.posts where start_time = '21:00' and end_time = '07:00'")).toBeGreaterThan(0);
    expect(await count('select count(*) from app_public.posts where break_start_time is not null and break_paid')).toBeGreaterThan(0);
    expect(await count('select count(*) from app_public.posts where break_start_time is not null and not break_paid')).toBeGreaterThan(0);

    // About forty employees, a couple without e-mail, secondary workplaces, valid SSNs.
    const employees = await count('select count(*) from app_public.employees');
    expect(employees).toBeGreaterThanOrEqual(38);
    expect(employees).toBeLessThanOrEqual(45);
    expect(await count('select count(*) from app_public.employees where professional_email is null')).toBeGreaterThanOrEqual(2);
    expect(await count('select count(distinct employee_id) from app_public.employee_secondary_establishments')).toBeGreaterThanOrEqual(2);
    expect(await count('select count(*) from app_public.employee_social_security_numbers')).toBe(employees);
    // Contracts of each type, a fixed-term contract with its end, one in trial period today.
    const types = await db.query<{ code: string }>(
      'select distinct ct.code from app_public.contracts c join app_public.contract_types ct on ct.id = c.contract_type_id order by 1',
    );
    expect(types.rows.map((row) => row.code)).toEqual(['Apprentissage', 'CDD', 'CDI', 'Intérim']);
    expect(await count("select count(*) from app_public.contracts c join app_public.contract_types ct on ct.id = c.contract_type_id where ct.code = 'CDD' and c.end_date > $1::date", [today])).toBeGreaterThan(0);
    expect(await count('select count(*) from app_public.contracts where trial_end_date >= $1::date and start_date <= $1::date', [today])).toBeGreaterThan(0);
    // Part-time and weekend templates.
    expect(await count('select count(*) from app_public.contracts where weekly_hours < 35')).toBeGreaterThan(0);
    expect(await count('select count(distinct t.employee_id) from app_public.planning_template_slots s join app_public.planning_templates t on t.id = s.template_id where s.weekday in (6, 7)')).toBeGreaterThan(0);
    // Counters of the business year.
    expect(await count("select count(*) from app_public.counters where code = 'CP' and year = 2026")).toBeGreaterThan(30);
    for (const code of ['CT', 'ANC', 'RTT', 'RC']) {
      expect(await count('select count(*) from app_public.counters where code = $1 and year = 2026', [code]), code).toBeGreaterThan(0);
    }
    expect(await count("select count(*) from app_public.counters where code = 'DLG_CSE' and year = 2026")).toBe(2);

    // One account per role with the demo password; the superuser; the others without password.
    const accounts = await db.query<{ username: string; roles: string[]; has_password: boolean; is_superuser: boolean }>(
      `select a.username, a.is_superuser, s.password_hash is not null as has_password,
              array(select r.name from app_public.role_attributions ra join app_public.roles r on r.id = ra.role_id
                    where ra.account_id = a.id order by r.precedence) as roles
       from app_public.accounts a join app_private.account_secrets s on s.account_id = a.id`,
    );
    const byName = new Map(accounts.rows.map((row) => [row.username, row]));
    for (const login of DEMO_LOGINS) {
      const account = byName.get(login.username);
      expect(account, login.username).toBeDefined();
      expect(account!.has_password, login.username).toBe(true);
      if (login.username === 'superadmin') expect(account!.is_superuser && account!.roles.length === 0).toBe(true);
      // Salarié comes with every employee account (and precedes Intérimaire in the display order).
      else expect(account!.roles, login.username).toContain(login.role);
    }
    expect(accounts.rows.filter((row) => row.has_password).map((row) => row.username).sort()).toEqual(
      DEMO_LOGINS.map((login) => login.username).sort(),
    );
    // RH n2 restricted to one establishment.
    expect(await count(
      `select count(*) from app_public.role_attribution_establishments rae join app_public.role_attributions ra on ra.id = rae.attribution_id
       join app_public.accounts a on a.id = ra.account_id where a.username = 'rh2'`,
    )).toBe(1);
    // Invitations for the employees without demo login who have an e-mail.
    expect(await count("select count(*) from app_private.email_outbox where kind = 'invitation'")).toBe(
      await count(
        `select count(*) from app_public.accounts a join app_public.employees e on e.id = a.employee_id
         where e.professional_email is not null and a.username <> all ($1::text[])`,
        [DEMO_LOGINS.map((login) => login.username)],
      ),
    );
    // The on-call period of the coming weekend (Friday 18:00 to Monday 08:00, Paris time).
    const onCall = await db.query<{ start: string; end: string }>(
      `select to_char(start_at at time zone 'Europe/Paris', 'YYYY-MM-DD HH24:MI') as start,
              to_char(end_at at time zone 'Europe/Paris', 'YYYY-MM-DD HH24:MI') as end from app_public.on_call_periods`,
    );
    expect(onCall.rows).toEqual([{ start: '2026-11-20 18:00', end: '2026-11-23 08:00' }]);
  }, 120_000); // depends on the reset above
});

describe('db:reset -- --demo', () => {
  it('resets, then loads the demo and its year of history with the demo password of DATA_DIR', async () => {
    const storage = path.join(dir, 'demo-storage');
    const result = await runCommand(SCRIPTS.dbReset, ['--demo'], commandEnv({
      DATABASE_URL: databaseUrl(database.name), DATA_DIR: path.join(dir, 'demo-data'), STORAGE_DIR: storage,
    }), 240_000);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Demo organisation loaded with its history: \d{3} steps in \d+\.\d s \(\d+ absences, \d+ day-change requests, \d+ documents in /);
    const secrets = JSON.parse(await readFile(path.join(dir, 'demo-data', 'secrets.json'), 'utf8')) as Record<string, string>;
    expect(result.stdout).toContain(`password: ${secrets.demo_password}`);
    expect(await count('select count(*) from app_public.establishments')).toBe(3);
    expect(await count("select count(*) from app_public.absences where status = 'pending'")).toBeGreaterThan(5);
    expect(await count("select count(*) from app_private.audit_log where model = 'absence' and verb = 'Refus'")).toBeGreaterThan(3);
    // The documents of the history are in STORAGE_DIR, one file each.
    const keys = (await db.query<{ storage_key: string }>('select storage_key from app_public.absence_documents')).rows;
    expect(keys.length).toBeGreaterThan(3);
    for (const { storage_key: key } of keys) expect((await stat(path.join(storage, key.slice(0, 2), key))).isFile()).toBe(true);
  }, 300_000);
});
