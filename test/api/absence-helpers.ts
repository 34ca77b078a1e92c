/** Shared arrangements of the absence, counter and document HTTP tests. */
import type { TestEnv } from '../helpers/server.js';

export const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
export const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
export const JPG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46]);

/** Absence type ids by code. */
export async function typeIds(env: TestEnv): Promise<Record<string, number>> {
  const { rows } = await env.db.query<{ code: string; id: number }>('select code, id from app_public.absence_types');
  return Object.fromEntries(rows.map((row) => [row.code, row.id]));
}

/** A multipart form from plain fields and files ([field, bytes, filename]). */
export function form(fields: Record<string, string | number | Array<string | number>>, files: Array<[string, Buffer, string]> = []): FormData {
  const data = new FormData();
  for (const [key, value] of Object.entries(fields)) {
    for (const item of Array.isArray(value) ? value : [value]) data.append(key, String(item));
  }
  for (const [key, bytes, filename] of files) data.append(key, new Blob([new Uint8Array(bytes)]), filename);
  return data;
}

/** Counter balance (acquired/taken/planned) read from the journal, as the owner. */
export async function balance(env: TestEnv, employee: string, code: string, year = 2026): Promise<string> {
  const { rows } = await env.db.query<{ b: string }>(
    `select format('%s/%s/%s', acquired, taken, planned) as b from app_private.counter_balances
     where employee_id = $1 and code = $2 and year = $3`,
    [env.ids.employees![employee], code, year],
  );
  return rows[0]?.b ?? '';
}

/** Notifications of an account as "title | level | body", oldest first. */
export async function notifications(env: TestEnv, account: string): Promise<string[]> {
  const { rows } = await env.db.query<{ n: string }>(
    `select title || ' | ' || level || ' | ' || body as n from app_public.notifications where account_id = $1 order by id`,
    [env.ids.accounts![account]],
  );
  return rows.map((row) => row.n);
}

export async function auditVerbs(env: TestEnv, absenceId: number): Promise<string[]> {
  const { rows } = await env.db.query<{ verb: string }>(
    `select verb from app_private.audit_log where model = 'absence' and target_id = $1 order by id`,
    [absenceId],
  );
  return rows.map((row) => row.verb);
}
