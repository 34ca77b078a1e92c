/**
 * The end-of-run checks, in SQL on the chaos cluster and on the storage directory:
 * - lost: an acknowledged write absent, or in another state than acknowledged (a decision
 *   sent without a definite answer may have landed: that state is accepted too);
 * - half-written: an absence without its Creation audit line, a filing without its
 *   notification, a validated day change without its day modification, counter movements
 *   that do not match their absence, a counter overdrawn, more than one decision on an item,
 *   a document row without its file, a file without its row (beyond the uploads whose outcome
 *   the client could not know, which the orphan sweep removes).
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { FileStorage } from '../../src/storage/storage.js';
import { sweepOrphanFiles } from '../../src/storage/garbage.js';
import type { Ledger, LedgerItem } from './ledger.js';

export interface CheckResult {
  lost: string[];
  halfWritten: string[];
  /** Files without a row found before the sweep (uploads whose outcome was unknown). */
  orphanFiles: number;
  orphanPartFiles: number;
  sweptFiles: number;
  rows: { absences: number; shiftChangeRequests: number; documents: number; decisions: number };
}

async function storedFiles(root: string): Promise<{ keys: string[]; parts: number }> {
  const keys: string[] = [];
  let parts = 0;
  for (const shard of await readdir(root).catch(() => [] as string[])) {
    for (const name of await readdir(path.join(root, shard)).catch(() => [] as string[])) {
      if (name.endsWith('.part')) parts += 1;
      else keys.push(name);
    }
  }
  return { keys, parts };
}

/** Each query returns the offending rows as text lines (none when the invariant holds). */
const HALF_WRITTEN: Array<[string, string]> = [
  ['absence without its Creation audit line', `
    select 'absence ' || a.id from app_public.absences a
     where not exists (select 1 from app_private.audit_log l
                        where l.model = 'absence' and l.target_id = a.id and l.verb = 'Creation')`],
  ['absence filing without its notification', `
    select 'absence ' || a.id from app_public.absences a
      join app_public.accounts ac on ac.id = a.author_account_id and ac.employee_id = a.employee_id
     where not exists (select 1 from app_public.notifications n where n.model = 'absence' and n.target_id = a.id)`],
  ['day-change request without its notification', `
    select 'request ' || r.id from app_public.shift_change_requests r
     where not exists (select 1 from app_public.notifications n where n.model = 'shift_change_request' and n.target_id = r.id)`],
  ['validated day change without its day modification', `
    select 'request ' || r.id from app_public.shift_change_requests r
     where r.status = 'validated'
       and not exists (select 1 from app_public.day_modifications d where d.source_request_id = r.id)`],
  ['more than one decision on an item, or a decided item without its decision line', `
    select model || ' ' || target_id || ': ' || count(*) || ' decisions' from app_private.audit_log
     where verb in ('Validation', 'Refus') and model in ('absence', 'shift_change_request')
     group by model, target_id having count(*) > 1
    union all
    select 'absence ' || a.id || ' ' || a.status || ' without its decision line' from app_public.absences a
     where a.status in ('validated', 'refused') and a.author_account_id in (select id from app_public.accounts where employee_id = a.employee_id)
       and not exists (select 1 from app_private.audit_log l where l.model = 'absence' and l.target_id = a.id and l.verb in ('Validation', 'Refus'))
    union all
    select 'request ' || r.id || ' ' || r.status || ' without its decision line' from app_public.shift_change_requests r
     where r.status <> 'pending'
       and not exists (select 1 from app_private.audit_log l where l.model = 'shift_change_request' and l.target_id = r.id and l.verb in ('Validation', 'Refus'))`],
  ['counter journal differing from its absence (planned days of a pending or validated absence, nothing left by a refused one)', `
    select 'absence ' || a.id || ' ' || a.status || ': planned ' || coalesce(m.planned, 0) || ', counted ' || a.counted_quantity
      from app_public.absences a
      join app_public.absence_types t on t.id = a.type_id
      left join (select absence_id, sum(quantity) filter (where bucket = 'planned') as planned,
                        sum(quantity) filter (where bucket = 'taken') as taken
                   from app_private.counter_movements where absence_id is not null group by absence_id) m on m.absence_id = a.id
     where t.code = 'CT'
       and coalesce(m.planned, 0) <> case when a.status in ('pending', 'validated') then a.counted_quantity else 0 end`],
  ['counter overdrawn (journal sums: remaining below zero)', `
    select 'counter ' || counter_id || ' ' || code || ' ' || year || ': remaining ' || remaining
      from app_private.counter_balances where remaining < 0`],
];

export async function runChecks(ownerUrl: string, storageDir: string, ledger: Ledger): Promise<CheckResult> {
  const client = new pg.Client({ connectionString: ownerUrl, application_name: 'wfm-chaos' });
  await client.connect();
  try {
    const lost: string[] = [];
    const halfWritten: string[] = [];
    const states = new Map<string, string>();
    for (const [kind, table] of [['absence', 'app_public.absences'], ['shift_change_request', 'app_public.shift_change_requests']] as const) {
      const ids = ledger.of(kind).map((item) => item.id);
      const { rows } = await client.query<{ id: number; status: string }>(`select id, status from ${table} where id = any($1::int[])`, [ids]);
      for (const row of rows) states.set(`${kind}:${row.id}`, row.status);
    }
    const expected = (item: LedgerItem) => (item.status === 'pending' ? ['pending', ...item.uncertain] : [item.status]);
    for (const item of ledger.items.values()) {
      const status = states.get(`${item.kind}:${item.id}`);
      if (status === undefined) lost.push(`${item.kind} ${item.id}: acknowledged, absent`);
      else if (!expected(item).includes(status)) lost.push(`${item.kind} ${item.id}: acknowledged ${item.status}, found ${status}`);
    }
    const documentIds = ledger.of('absence').flatMap((item) => item.documents);
    const { rows: documents } = await client.query<{ id: number; storage_key: string }>(
      'select id, storage_key from app_public.absence_documents where id = any($1::int[])', [documentIds],
    );
    const present = new Set(documents.map((row) => row.id));
    for (const id of documentIds) if (!present.has(id)) lost.push(`absence document ${id}: acknowledged, absent`);

    for (const [name, sql] of HALF_WRITTEN) {
      const { rows } = await client.query<{ line: string }>(`select line from (${sql}) x(line) limit 20`);
      for (const row of rows) halfWritten.push(`${name}: ${row.line}`);
    }

    // Files against rows.
    const { rows: referenced } = await client.query<{ storage_key: string }>(`
      select storage_key from app_public.absence_documents
      union all select storage_key from app_public.honorability_certificates
      union all select storage_key from app_public.employee_attachments`);
    const { keys, parts } = await storedFiles(storageDir);
    const onDisk = new Set(keys);
    const storage = new FileStorage(storageDir);
    for (const { storage_key: key } of referenced) {
      if (!onDisk.has(key)) halfWritten.push(`document row without its file: ${key}`);
    }
    const rowKeys = new Set(referenced.map((row) => row.storage_key));
    const orphans = keys.filter((key) => !rowKeys.has(key));
    if (orphans.length + parts > ledger.uncertainUploads) {
      halfWritten.push(`${orphans.length} file(s) and ${parts} partial file(s) without a row, for ${ledger.uncertainUploads} upload(s) without a definite answer`);
    }
    // The orphan sweep (worker job purge_storage_garbage) with no minimum age: it must leave files and rows equal.
    const swept = await sweepOrphanFiles(client, storage, { olderThanMs: 0 });
    const after = await storedFiles(storageDir);
    const leftover = after.keys.filter((key) => !rowKeys.has(key)).length + after.parts;
    if (leftover > 0) halfWritten.push(`${leftover} file(s) without a row left after the orphan sweep`);

    const { rows: counts } = await client.query<CheckResult['rows']>(`
      select (select count(*) from app_public.absences)::int as absences,
             (select count(*) from app_public.shift_change_requests)::int as "shiftChangeRequests",
             (select count(*) from app_public.absence_documents)::int as documents,
             (select count(*) from app_private.audit_log where verb in ('Validation', 'Refus'))::int as decisions`);
    return { lost, halfWritten, orphanFiles: orphans.length, orphanPartFiles: parts, sweptFiles: swept, rows: counts[0]! };
  } finally {
    await client.end();
  }
}
