import type pg from 'pg';

/**
 * A digest of every row of the application schemas (and the worker's job queue when it
 * exists): two equal digests mean nothing was written in between. The rate-limit counters
 * are left out: every request counts a hit there, refused or not (sql/auth/rate_limits.sql).
 */
export async function databaseFingerprint(db: pg.Pool | pg.ClientBase): Promise<string> {
  const { rows: tables } = await db.query<{ name: string }>(`
    select format('%I.%I', n.nspname, c.relname) as name
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.relkind = 'r' and n.nspname in ('app_public', 'app_private', 'graphile_worker')
      and c.relname not in ('_private_known_crontabs', 'migrations', 'rate_limit_windows')
    order by 1`);
  const parts = tables.map(
    ({ name }) => `select '${name.replace(/'/g, "''")}' as t, count(*) as n, coalesce(md5(string_agg(x::text, '|' order by x::text)), '') as h from ${name} x`,
  );
  if (parts.length === 0) return '';
  const { rows } = await db.query<{ digest: string }>(
    `select md5(string_agg(t || ':' || n || ':' || h, ';' order by t)) as digest from (${parts.join(' union all ')}) s`,
  );
  return rows[0]!.digest;
}
