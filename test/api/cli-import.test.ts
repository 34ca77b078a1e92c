/** `npm run org:import -- FILE.json` (CONTRACT sections 1 and 6), spawned for real. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { cloneTemplate } from '../helpers/template.js';
import { databaseUrl } from '../helpers/settings.js';
import { SCRIPTS, commandEnv, runCommand, tableCounts } from './cli-helpers.js';

let database: { name: string; drop: () => Promise<void> };
let db: pg.Pool;
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  database = await cloneTemplate(inject('templateDatabase'));
  db = new pg.Pool({ connectionString: databaseUrl(database.name), max: 2 });
  dir = await mkdtemp(path.join(tmpdir(), 'wfm-org-import-'));
  env = commandEnv({ DATABASE_URL: databaseUrl(database.name) });
});

afterAll(async () => {
  await db?.end();
  await database?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function writeDoc(name: string, content: unknown): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return file;
}

/** A small organisation whose names do not collide with the fixture's. */
function organisation() {
  return {
    establishments: [
      { key: 'MAS', name: 'MAS Les Hirondelles', count_base: 'ouvrables' },
      { key: 'SAVS', name: 'SAVS du Plateau', count_base: 'ouvres' },
    ],
    teams: [{ key: 'T-SOIN', name: 'Équipe soignante', establishments: ['MAS', 'SAVS'] }],
    posts: [
      { key: 'MAS-M', code: 'HM', label: 'Matin', establishment: 'MAS', start_time: '07:00', end_time: '14:00',
        break_start_time: '10:00', break_end_time: '10:15', break_paid: true },
      { key: 'MAS-N', code: 'HN', label: 'Nuit', establishment: 'MAS', start_time: '21:00', end_time: '07:00' },
    ],
    employees: [
      { key: 'gisele', first_name: 'Gisèle', last_name: 'Tessier', professional_email: 'gisele.tessier@hirondelles.example',
        main_establishment: 'MAS', secondary_establishments: ['SAVS'], teams: ['T-SOIN'], social_security_number: '2750569123456',
        contracts: [{ type: 'CDI', start: '2019-04-01', end: null, trial_end: null }],
        week: { mon: 'MAS-M', tue: 'MAS-M', wed: null, thu: 'MAS-N', fri: null, sat: null, sun: null },
        counters: [{ code: 'CP', year: 2026, acquired: '25.00' }] },
      { key: 'yann', first_name: 'Yann', last_name: 'Le Goff', professional_email: null, main_establishment: 'SAVS',
        contracts: [{ type: 'CDD', start: '2026-09-01', end: '2027-02-28', trial_end: '2026-09-15' }] },
    ],
    accounts: [
      { key: 'gisele', username: 'gisele.tessier', password: 'Import-Passw0rd!', employee: 'gisele',
        roles: [{ role: 'Manager n1', establishments: ['MAS'] }] },
      { key: 'yann', username: 'yann.legoff', employee: 'yann' },
    ],
    on_call: [{ account: 'gisele', establishments: ['SAVS'], start: '2026-11-20T18:00:00+01:00', end: '2026-11-23T08:00:00+01:00' }],
  };
}

describe('org:import', () => {
  it('loads a file in one transaction and prints the key → id maps as its last output', async () => {
    const file = await writeDoc('good.json', organisation());
    const result = await runCommand(SCRIPTS.orgImport, [file], env);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    const ids = JSON.parse(lines[lines.length - 1]!) as Record<string, Record<string, number>>;
    expect(Object.keys(ids).sort()).toEqual(['accounts', 'employees', 'establishments', 'on_call', 'posts', 'teams']);
    expect(Object.keys(ids.establishments!).sort()).toEqual(['MAS', 'SAVS']);
    expect(Object.keys(ids.employees!).sort()).toEqual(['gisele', 'yann']);
    expect(Object.keys(ids.accounts!).sort()).toEqual(['gisele', 'yann']);
    expect(Object.keys(ids.posts!).sort()).toEqual(['MAS-M', 'MAS-N']);
    expect(Object.keys(ids.teams!)).toEqual(['T-SOIN']);
    expect(Object.values(ids.on_call!)).toHaveLength(1);

    const establishment = await db.query('select name, count_base from app_public.establishments where id = $1', [ids.establishments!.SAVS]);
    expect(establishment.rows[0]).toEqual({ name: 'SAVS du Plateau', count_base: 'ouvres' });
    const employee = await db.query(
      `select e.last_name, e.main_establishment_id, s.social_security_number,
              (select count(*)::int from app_public.employee_secondary_establishments x where x.employee_id = e.id) as secondary,
              (select count(*)::int from app_public.planning_template_slots ts
                 join app_public.planning_templates t on t.id = ts.template_id where t.employee_id = e.id) as slots
       from app_public.employees e join app_public.employee_social_security_numbers s on s.employee_id = e.id
       where e.id = $1`,
      [ids.employees!.gisele],
    );
    expect(employee.rows[0]).toEqual({
      last_name: 'Tessier', main_establishment_id: ids.establishments!.MAS, social_security_number: '2750569123456',
      secondary: 1, slots: 3,
    });
    const account = await db.query(
      `select a.username, a.employee_id, s.password_hash,
              array(select r.name from app_public.role_attributions ra join app_public.roles r on r.id = ra.role_id
                    where ra.account_id = a.id order by r.precedence) as roles
       from app_public.accounts a join app_private.account_secrets s on s.account_id = a.id where a.id = $1`,
      [ids.accounts!.gisele],
    );
    expect(account.rows[0].username).toBe('gisele.tessier');
    expect(account.rows[0].employee_id).toBe(ids.employees!.gisele);
    expect(account.rows[0].password_hash).toMatch(/^\$argon2id\$/);
    expect(account.rows[0].roles).toEqual(['Manager n1', 'Salarié']);
    const counter = await db.query(
      `select b.acquired::text from app_public.counters c join app_private.counter_balances b on b.counter_id = c.id
       where c.employee_id = $1 and c.code = 'CP' and c.year = 2026`,
      [ids.employees!.gisele],
    );
    expect(counter.rows[0]?.acquired).toMatch(/^25(\.0+)?$/);
    // The account without a password and without an e-mail gets no invitation.
    const outbox = await db.query('select account_id from app_private.email_outbox where account_id = any($1::int[])', [
      [ids.accounts!.gisele, ids.accounts!.yann],
    ]);
    expect(outbox.rowCount).toBe(0);
  });

  const badFiles: Array<{ name: string; content: (doc: ReturnType<typeof organisation>) => unknown; message: string | RegExp }> = [
    {
      name: 'an unknown post in a week',
      content: (doc) => {
        doc.employees[1]!.week = { mon: 'X' } as never;
        return doc;
      },
      message: 'employees[1].week.mon: unknown post code "X"',
    },
    {
      name: 'a duplicate key',
      content: (doc) => {
        doc.establishments[1]!.key = 'MAS';
        return doc;
      },
      message: 'establishments[1].key: duplicate key "MAS"',
    },
    {
      name: 'a bad date',
      content: (doc) => {
        doc.employees[1]!.contracts[0]!.start = '2026-02-30';
        return doc;
      },
      message: 'employees[1].contracts[0].start: invalid date "2026-02-30"',
    },
    {
      name: 'an unknown field',
      content: (doc) => {
        (doc.accounts[1] as Record<string, unknown>).email = 'yann@example.org';
        return doc;
      },
      message: 'accounts[1].email: unknown field',
    },
    {
      name: 'an unknown reference to an establishment',
      content: (doc) => {
        doc.on_call[0]!.establishments = ['SAVS', 'NOWHERE'];
        return doc;
      },
      message: 'on_call[0].establishments[1]: unknown establishment "NOWHERE"',
    },
    {
      name: 'invalid JSON',
      // Line 14 of the pretty-printed document is `  "teams": [`; the stray comma follows the bracket.
      content: (doc) => JSON.stringify(doc, null, 2).replace('"teams": [', '"teams": [,'),
      message: /bad-invalid-JSON\.json: invalid JSON at line 14, column 13: expected a value, found character ","/,
    },
  ];

  for (const bad of badFiles) {
    it(`loads nothing from a file with ${bad.name}, names the path and exits 1`, async () => {
      // Names unique to this case: a file that loaded would not collide with the first test's rows.
      const doc = organisation();
      doc.establishments[0]!.name = `MAS ${bad.name}`;
      doc.establishments[1]!.name = `SAVS ${bad.name}`;
      doc.accounts[0]!.username = `gisele-${badFiles.indexOf(bad)}`;
      doc.accounts[1]!.username = `yann-${badFiles.indexOf(bad)}`;
      const file = await writeDoc(`bad-${bad.name.replace(/\W+/g, '-')}.json`, bad.content(doc));
      const before = await tableCounts(db);
      const result = await runCommand(SCRIPTS.orgImport, [file], env);
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(result.stdout).toBe('');
      if (typeof bad.message === 'string') expect(result.stderr).toContain(bad.message);
      else expect(result.stderr).toMatch(bad.message);
      expect(await tableCounts(db)).toEqual(before);
    });
  }

  it('names an unreadable file', async () => {
    const missing = path.join(dir, 'missing.json');
    const result = await runCommand(SCRIPTS.orgImport, [missing], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot read ${missing}: no such file`);
  });

  it('refuses to run without DATABASE_URL or without a file', async () => {
    const file = await writeDoc('no-url.json', organisation());
    const withoutUrl = await runCommand(SCRIPTS.orgImport, [file], commandEnv());
    expect(withoutUrl.code).toBe(1);
    expect(withoutUrl.stderr).toContain('DATABASE_URL is required');
    const withoutFile = await runCommand(SCRIPTS.orgImport, [], env);
    expect(withoutFile.code).toBe(1);
    expect(withoutFile.stderr).toContain('usage: npm run org:import -- FILE.json');
  });
});
