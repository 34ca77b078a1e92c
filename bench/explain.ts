/**
 * What one request costs inside PostgreSQL, on a bench dataset (the template database that
 * `npm run bench` generated, or --db): for the SQL function of each scenario, run as its
 * caller exactly as the service does (begin_request, role wfm_visitor), warm:
 *   time, function calls, table scans (sequential / index) and rows read: the same at any
 *   size means no N+1 and no scan that grows with the data;
 * then EXPLAIN (ANALYZE, BUFFERS) excerpts of the hot statements inside those functions.
 * Writes are rolled back. --functions adds, per request, the functions that took the most
 * time of their own (pg_stat_xact_user_functions self_time: where a slow path spends).
 *   tsx bench/explain.ts [--size default|scale] [--db name] [--functions] [--only <part of a request's name>]
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { databaseUrl, ROOT_URL, withClient } from './lib/db.js';

const { values: args } = parseArgs({
  options: { size: { type: 'string', default: 'default' }, db: { type: 'string' }, functions: { type: 'boolean', default: false },
    only: { type: 'string' } },
});

const database = args.db ?? (await withClient(ROOT_URL, async (c) => {
  const { rows } = await c.query<{ datname: string }>(
    "select datname from pg_database where datname like $1 and datname not like '%_build' order by oid desc limit 1",
    [`wfm_bench_${args.size}_%`],
  );
  if (!rows[0]) throw new Error(`no dataset database for ${args.size}: run npm run bench${args.size === 'scale' ? ' -- --scale' : ''} first`);
  return rows[0].datname;
}));

const client = new pg.Client({ connectionString: databaseUrl(database), application_name: 'wfm-bench-explain' });
await client.connect();
const one = async <T extends pg.QueryResultRow>(sql: string, values: unknown[] = []) => (await client.query<T>(sql, values)).rows[0]!;

// Who plays which part, and the items the calls need.
const ids = await one<{
  admin: number; rh: number; mgr: number; mgr2: number; employee: number; employee_account: number; absence: number;
  pending: number; pending_version: number; pending_decider: number; cp: number; day: string; today: string;
}>(`
  select (select account_id from bench.actors where role = 'Admin') as admin,
         (select min(account_id) from bench.actors where role = 'RH n1') as rh,
         (select account_id from bench.deciders where establishment_idx = 0 and local_idx = 0) as mgr,
         (select account_id from bench.actors where role = 'Manager n2' and establishment_idx = 0) as mgr2,
         e.id as employee, e.account_id as employee_account,
         (select a.id from app_public.absences a where a.employee_id = e.id and a.status = 'validated' order by a.id limit 1) as absence,
         p.id as pending, p.version as pending_version,
         (select account_id from bench.deciders where establishment_idx = 0 and local_idx = 0) as pending_decider,
         (select id from app_public.absence_types where code = 'CP') as cp,
         (select day::text from bench.write_days order by n desc limit 1) as day,
         (select today::text from bench.windows) as today
  from bench.employees e
  cross join lateral (select a.id, a.version from app_public.absences a join bench.employees b on b.id = a.employee_id
                      where b.establishment_idx = 0 and b.local_idx > 1 and a.status = 'pending' order by a.id limit 1) p
  where e.establishment_idx = 0 and e.local_idx = 10`);
const month = ids.today.slice(0, 8);
const lastDay = new Date(Date.UTC(Number(ids.today.slice(0, 4)), Number(ids.today.slice(5, 7)), 0)).getUTCDate();

// The planning route calls the text variant (a dataset built before it existed has only the json one).
const planningFn = (await one<{ fn: string | null }>(
  "select to_regproc('app_public.planning_read_text')::text as fn")).fn ? 'app_public.planning_read_text' : 'app_public.planning_read';
// The queue's route calls the text variant (a dataset built before it existed has only the jsonb one).
const queueFn = (await one<{ fn: string | null }>("select to_regproc('app_public.absences_list_text')::text as fn")).fn
  ? 'app_public.absences_list_text' : 'app_public.absences_list';
const queueArgs = "p_status => 'pending', p_page => 1, p_page_size => 50, p_public_url => 'http://x'";
const queueCall = queueFn === 'app_public.absences_list_text' ? `(${queueFn}(${queueArgs})).results` : `${queueFn}(${queueArgs})`;
interface Case { name: string; account: number; call: string; write?: boolean }
const PROFILE_CALLS = 20;
interface Profile { name: string; top: Array<{ name: string; calls: number; self_ms: number; total_ms: number }> }
const profiles: Profile[] = [];
const cases: Case[] = [
  { name: 'GET /api/auth/me/', account: ids.admin, call: 'app_public.me()' },
  { name: 'queue, RH n1 (whole association)', account: ids.rh, call: queueCall },
  { name: 'queue, Manager n1 (one establishment)', account: ids.mgr, call: queueCall },
  { name: 'absence detail (Manager n1)', account: ids.mgr, call: `app_public.absence_get(${ids.absence}, 'http://x')` },
  { name: 'counters (Manager n1)', account: ids.mgr, call: `app_public.counters_read(${ids.employee}, null)` },
  { name: 'planning, one month, 200 employees', account: ids.mgr2,
    call: `${planningFn}('${month}01', '${month}${lastDay}', null)` },
  { name: 'absence creation (employee, CP)', account: ids.employee_account, write: true,
    call: `app_public.absence_create(p_employee => ${ids.employee}, p_type => ${ids.cp}, p_date_start => '${ids.day}', p_public_url => 'http://x')` },
  { name: 'absence validation (Manager n1)', account: ids.pending_decider, write: true,
    call: `app_public.absence_validate(${ids.pending}, p_version => ${ids.pending_version}, p_public_url => 'http://x')` },
];

const STATS = `select coalesce(sum(seq_scan), 0)::int as seq, coalesce(sum(idx_scan), 0)::int as idx,
                      coalesce(sum(seq_tup_read), 0)::bigint + coalesce(sum(idx_tup_fetch), 0)::bigint as rows_read
               from pg_stat_xact_user_tables`;
const FUNCS = 'select coalesce(sum(calls), 0)::int as calls from pg_stat_xact_user_functions';

console.log(`Database ${database}: ${(await one<{ n: number }>('select count(*)::int as n from app_public.absences')).n} absences, ` +
  `${(await one<{ n: number }>('select count(*)::int as n from app_public.employees')).n} employees.`);
console.log('');
console.log('| request (its SQL function, warm) | ms | DB CPU ms | function calls | seq scans | index scans | rows read |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const c of cases.filter((x) => !args.only || x.name.includes(args.only))) {
  await client.query('begin');
  await client.query("set local jit = off; set local track_functions = 'all'");
  await client.query(`select app_private.begin_request(${c.account})`);
  // Warm: the connection's plans and caches, as in the service's pooled connections.
  for (let i = 0; i < 3; i++) {
    await client.query('savepoint warm; set local role wfm_visitor');
    await client.query(`select (${c.call})::text`);
    await client.query('rollback to savepoint warm');
  }
  const s0 = await one<{ seq: number; idx: number; rows_read: string }>(STATS);
  const f0 = await one<{ calls: number }>(FUNCS);
  await client.query('savepoint measured; set local role wfm_visitor');
  const t0 = process.hrtime.bigint();
  await client.query(`select (${c.call})::text`);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await client.query('reset role');
  const s1 = await one<{ seq: number; idx: number; rows_read: string }>(STATS);
  const f1 = await one<{ calls: number }>(FUNCS);
  const top = args.functions ? await topFunctions(c) : [];
  await client.query('rollback');
  const cpu = await cpuPerCall(c);
  console.log(`| ${c.name} | ${ms.toFixed(1)} | ${cpu.toFixed(2)} | ${f1.calls - f0.calls} | ${s1.seq - s0.seq} | ${s1.idx - s0.idx} | ` +
    `${Number(s1.rows_read) - Number(s0.rows_read)} |`);
  if (top.length) profiles.push({ name: c.name, top });
}
for (const p of profiles) {
  console.log('');
  console.log(`${p.name}: functions by time of their own (ms per call, mean of ${PROFILE_CALLS} warm calls)`);
  console.log('');
  console.log('| function | calls | self ms | total ms |');
  console.log('|---|---:|---:|---:|');
  for (const f of p.top) console.log(`| ${f.name} | ${f.calls} | ${f.self_ms.toFixed(2)} | ${f.total_ms.toFixed(2)} |`);
}

/**
 * CPU time the server process spends per call (user + system, /proc/<pid>/stat of the
 * connection's backend; the bench runs on the database's machine): unlike elapsed time, it does
 * not grow when other processes share the cores. Repeated (each write rolled back) until half a
 * second of CPU, the clock's tick being 10 ms.
 */
async function cpuPerCall(c: Case): Promise<number> {
  const pid = (await one<{ pid: number }>('select pg_backend_pid() as pid')).pid;
  const ticks = async () => {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /, '').split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  await client.query('begin');
  await client.query('set local jit = off');
  await client.query(`select app_private.begin_request(${c.account})`);
  const call = async () => {
    await client.query('savepoint cpu; set local role wfm_visitor');
    await client.query(`select (${c.call})::text`);
    await client.query('rollback to savepoint cpu');
  };
  for (let i = 0; i < 3; i++) await call();
  const t0 = await ticks();
  let n = 0;
  while (n < 400 && ((await ticks()) - t0 < 50 || n < 5)) {
    await call();
    n++;
  }
  const used = (await ticks()) - t0;
  await client.query('rollback');
  return (used * 10) / n;
}

/**
 * The transaction's function statistics hold the warm calls and the measured one: the
 * difference over PROFILE_CALLS more calls (each rolled back), averaged (elapsed time: a
 * shared machine makes one call's figures noisy).
 */
async function topFunctions(c: Case): Promise<Profile['top']> {
  const snapshot = async () => new Map((await client.query<{ name: string; calls: number; self_ms: number; total_ms: number }>(
    `select schemaname || '.' || funcname as name, sum(calls)::int as calls, sum(self_time)::float8 as self_ms,
            sum(total_time)::float8 as total_ms
     from pg_stat_xact_user_functions group by 1`)).rows.map((r) => [r.name, r]));
  await client.query('rollback to savepoint measured');
  const before = await snapshot();
  for (let i = 0; i < PROFILE_CALLS; i++) {
    await client.query('savepoint profiled; set local role wfm_visitor');
    await client.query(`select (${c.call})::text`);
    await client.query('reset role');
    await client.query('rollback to savepoint profiled');
  }
  const after = await snapshot();
  return [...after.values()]
    .map((a) => {
      const b = before.get(a.name);
      return { name: a.name, calls: (a.calls - (b?.calls ?? 0)) / PROFILE_CALLS, self_ms: (a.self_ms - (b?.self_ms ?? 0)) / PROFILE_CALLS,
        total_ms: (a.total_ms - (b?.total_ms ?? 0)) / PROFILE_CALLS };
    })
    .filter((f) => f.calls > 0)
    .sort((x, y) => y.self_ms - x.self_ms)
    .slice(0, 15);
}

// Plans of the statements behind the hot routes (inside the functions above). The queues: the
// statements app_public.absences_list_text really runs (auto_explain of its nested statements,
// the call as the route makes it), those that compute the total and choose the page.
const nestedPlans: Array<{ title: string; account: number; call: string; keep: RegExp }> = [
  { title: `Queue of the whole association (RH n1): the statements of ${queueFn} (total, page)`, account: ids.rh,
    call: queueCall, keep: /absence_status_counts|order by a\.date_start|visible/ },
  { title: `Queue of one establishment (Manager n1): the statements of ${queueFn} (total, page)`, account: ids.mgr,
    call: queueCall, keep: /absence_status_counts|order by a\.date_start|visible/ },
];
for (const p of nestedPlans) {
  const notices: string[] = [];
  const listen = (n: { message?: string }) => { if (n.message) notices.push(n.message); };
  client.on('notice', listen);
  await client.query('begin');
  await client.query('set local jit = off');
  await client.query(`select app_private.begin_request(${p.account})`);
  await client.query('set local role wfm_visitor');
  await client.query(`select (${p.call}) is null`); // warm: plans kept by the connection
  await client.query('reset role');
  await client.query("load 'auto_explain'");
  await client.query(`set local auto_explain.log_min_duration = 0; set local auto_explain.log_analyze = on;
    set local auto_explain.log_timing = off; set local auto_explain.log_nested_statements = on;
    set local auto_explain.log_level = notice; set local client_min_messages = notice`);
  await client.query('set local role wfm_visitor');
  await client.query(`select (${p.call}) is null`);
  await client.query('rollback');
  client.off('notice', listen);
  console.log('');
  console.log(`${p.title}:`);
  for (const notice of notices) {
    const text = /Query Text: ([\s\S]*?)\n(?=[A-Z][a-zA-Z ]+ (?:\(|on |using ))/.exec(notice);
    if (!text || !p.keep.test(text[1]!)) continue;
    console.log('```');
    for (const line of notice.split('\n').slice(1)) {
      if (/^\s*(Buffers|Planning)/.test(line)) continue;
      console.log(line.length > 150 ? `${line.slice(0, 147)}...` : line);
    }
    console.log('```');
  }
}
const plans: Array<{ title: string; account: number; sql: string }> = [
  { title: 'Overlap rule of a creation (one employee, one period)', account: ids.employee_account, sql: `
    select a.id from app_public.absences a
    where a.employee_id = ${ids.employee} and a.status in ('pending', 'validated', 'cancellation_requested')
      and a.period && tsrange('${ids.day}'::timestamp, ('${ids.day}'::date + 1)::timestamp)` },
  { title: 'Counter balance (the journal of one counter, app_private.counter_remaining)', account: ids.mgr, sql: `
    select coalesce(sum(case when m.bucket = 'acquired' then m.quantity else -m.quantity end), 0)
    from app_private.counter_movements m
    where m.counter_id = (select c.id from app_public.counters c
                          where c.employee_id = ${ids.employee} and c.code = 'CP' and c.year = ${ids.day.slice(0, 4)})` },
];
for (const p of plans) {
  await client.query('begin');
  await client.query('set local jit = off');
  await client.query(`select app_private.begin_request(${p.account})`);
  await client.query(p.title.startsWith('Counter') ? 'set local role postgres' : 'set local role wfm_visitor');
  const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers, costs off, timing off, summary off) ${p.sql}`);
  await client.query('rollback');
  console.log('');
  console.log(`${p.title}:`);
  console.log('```');
  for (const r of rows) {
    const line = r['QUERY PLAN'];
    if (/^\s*(Buffers|Planning)/.test(line)) continue;
    console.log(line.length > 150 ? `${line.slice(0, 147)}...` : line);
  }
  console.log('```');
}
await client.end();
