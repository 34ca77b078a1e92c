/**
 * The leave year's jobs on the benchmark's organisation of 10 000 employees in 100 establishments
 * (issue 27): how long opening next year's counters takes (app_private.counters_open_year, what
 * the job open_next_year_counters and the back-office's confirmation run), then the monthly
 * acquisition and the year's end; and what an employee's filing costs while the opening runs
 * (app_public.absence_create as the employee, exactly as the service calls it, each rolled back),
 * compared with the same filings before it.
 *   tsx bench/leave-year.ts [--employees 10000] [--establishments 100] [--absences 20000] [--filings 200]
 * The dataset is bench/dataset/generate.sql with fewer absences than the scale run (the jobs read
 * employees, contracts and counters, not the absence history); its counters of next year are
 * removed first, so that the opening has the whole association to open.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { buildDataset, parisToday } from './lib/dataset.js';
import { createDatabase, databaseExists, databaseUrl, dropDatabase, templateName } from './lib/db.js';

const { values: args } = parseArgs({
  options: {
    employees: { type: 'string', default: '10000' },
    establishments: { type: 'string', default: '100' },
    absences: { type: 'string', default: '20000' }, // a multiple of employees
    filings: { type: 'string', default: '200' },
  },
});
const params = {
  employees: Number(args.employees), establishments: Number(args.establishments), absences: Number(args.absences),
  shiftChanges: Number(args.employees), today: parisToday(),
};
const filings = Number(args.filings);
const log = (line: string) => console.error(line);

const template = await templateName('leave', params);
if (!(await databaseExists(template))) {
  log(`dataset: generating ${template}`);
  const build = await buildDataset(template, params, log);
  log(`dataset: ${build.seconds.toFixed(1)} s`);
}
const work = `${template}_run`;
await dropDatabase(work);
await createDatabase(work, template);

const connect = async (name: string) => {
  const client = new pg.Client({ connectionString: databaseUrl(work), application_name: name });
  await client.connect();
  await client.query("set jit = off");
  return client;
};
const jobs = await connect('wfm-bench-leave-jobs');
const filer = await connect('wfm-bench-leave-filer');

const today = params.today;
const year = Number(today.slice(0, 4));
// The generator opened counters up to the end of its writes window: next year's go, so that the
// opening has every employee to open (triggers off: the journal is append-only).
await jobs.query("set session_replication_role = replica");
await jobs.query('delete from app_private.counter_movements m using app_public.counters c where c.id = m.counter_id and c.year = $1', [year + 1]);
await jobs.query('delete from app_public.counters where year = $1', [year + 1]);
await jobs.query("set session_replication_role = origin");
await jobs.query('vacuum (analyze) app_public.counters, app_private.counter_movements');

// Employees with an account and a CDI, and the weekdays of the writes window: one filing each.
const { rows: people } = await filer.query<{ account_id: number; id: number }>(
  `select b.account_id, b.id from bench.employees b where b.contract = 'CDI' and b.account_id is not null
   order by b.idx limit $1`, [filings * 2]);
// Working days left this year: their counters exist and the opening (of next year) does not touch them.
const { rows: days } = await filer.query<{ day: string }>(
  `select to_char(d, 'YYYY-MM-DD') as day from generate_series($1::date + 1, make_date($2, 12, 31), interval '1 day') d
   where extract(isodow from d) between 1 and 5 and not app_hidden.is_public_holiday(d::date) order by d`, [today, year]);
let accepted = 0;
const cp = (await filer.query<{ id: number }>("select id from app_public.absence_types where code = 'CP'")).rows[0]!.id;

/** One filing as the employee, as the service runs it; rolled back. Returns its milliseconds. */
async function fileOnce(i: number): Promise<number> {
  const person = people[i % people.length]!;
  const day = days[i % days.length]!.day;
  const started = performance.now();
  await filer.query('begin');
  try {
    await filer.query('select app_private.begin_request($1)', [person.account_id]);
    await filer.query('set local role wfm_visitor');
    await filer.query('savepoint filing');
    try {
      await filer.query(`select app_public.absence_create(p_employee => $1, p_type => $2, p_date_start => $3, p_public_url => 'http://x')`,
        [person.id, cp, day]);
      accepted += 1;
    } catch {
      // A rule refusing this day (an absence already there) still measured the full path.
      await filer.query('rollback to savepoint filing');
    }
  } finally {
    await filer.query('rollback');
  }
  return performance.now() - started;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const summary = (values: number[]) => ({ n: values.length, p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values) });

// Filings alone (warm).
for (let i = 0; i < 20; i += 1) await fileOnce(i);
accepted = 0;
const alone: number[] = [];
for (let i = 0; i < filings; i += 1) alone.push(await fileOnce(i));
const acceptedAlone = accepted;
accepted = 0;

// The opening, with filings running until it commits.
const preview0 = performance.now();
const preview = (await jobs.query<{ result: { counters: number; skipped: unknown[] } }>(
  'select app_private.counter_opening_summary($1, null, $2) as result', [year + 1, today])).rows[0]!.result;
const previewMs = performance.now() - preview0;
const during: number[] = [];
let opening = true;
const open0 = performance.now();
const openingDone = (async () => {
  await jobs.query('begin');
  const result = (await jobs.query<{ result: { opened: number; movements: number } }>(
    'select app_private.counters_open_year($1, null, $2) as result', [year + 1, today])).rows[0]!.result;
  await jobs.query('commit');
  opening = false;
  return { ...result, ms: performance.now() - open0 };
})();
for (let i = 0; opening; i += 1) during.push(await fileOnce(i));
const opened = await openingDone;
const acceptedDuring = accepted;

// The monthly acquisition of the month that just ended, and the year's end (on their days).
const monthly0 = performance.now();
const nextMonth = new Date(Date.UTC(year, Number(today.slice(5, 7)), 1)).toISOString().slice(0, 10);
const acquired = (await jobs.query<{ n: number }>('select app_private.acquire_monthly_counters($1) as n', [nextMonth])).rows[0]!.n;
const monthlyMs = performance.now() - monthly0;
const close0 = performance.now();
await jobs.query('begin');
const closed = (await jobs.query<{ n: number }>('select app_private.counters_close_year($1, $2) as n', [year, `${year + 1}-01-02`])).rows[0]!.n;
await jobs.query('rollback');
const closeMs = performance.now() - close0;
const again0 = performance.now();
const again = (await jobs.query<{ result: { opened: number } }>('select app_private.counters_open_year($1, null, $2) as result', [year + 1, today])).rows[0]!.result;
const againMs = performance.now() - again0;

await jobs.end();
await filer.end();
await dropDatabase(work);

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const a = summary(alone);
const d = summary(during);
console.log(`Leave year on ${params.employees} employees in ${params.establishments} establishments (business date ${today}):

| step | what it wrote | time |
|---|---|---:|
| preview of the opening of ${year + 1} (counter_opening_summary) | ${preview.counters} counters to open, ${preview.skipped.length} employees skipped | ${s(previewMs)} |
| opening of ${year + 1} (counters_open_year, committed) | ${opened.opened} counters, ${opened.movements} journal movements | ${s(opened.ms)} |
| the same opening again (idempotent) | ${again.opened} counters | ${s(againMs)} |
| monthly acquisition on ${nextMonth} (acquire_monthly_counters) | ${acquired} movements | ${s(monthlyMs)} |
| year's end of ${year} on ${year + 1}-01-02 (counters_close_year, rolled back) | ${closed} counters closed | ${s(closeMs)} |

| an employee files 1 day of CP (absence_create as the employee, rolled back) | filings | p50 ms | p99 ms | max ms |
|---|---:|---:|---:|---:|
| alone (${acceptedAlone} accepted, the others refused by a rule) | ${a.n} | ${a.p50.toFixed(1)} | ${a.p99.toFixed(1)} | ${a.max.toFixed(1)} |
| while the opening runs (${acceptedDuring} accepted) | ${d.n} | ${d.p50.toFixed(1)} | ${d.p99.toFixed(1)} | ${d.max.toFixed(1)} |`);
