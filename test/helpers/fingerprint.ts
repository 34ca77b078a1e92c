import type pg from 'pg';

/**
 * A digest of every row of the application schemas (and the worker's job queue when it
 * exists): two equal digests mean nothing was written in between. The rate-limit counters
 * are left out: every request counts a hit there, refused or not (sql/auth/rate_limits.sql).
 */
export async function databaseFingerprint(db: pg.Pool | pg.ClientBase): Promise<string> {
  const tables = await fingerprintedTables(db);
  const parts = tables.map(
    ({ name }) => `select '${name.replace(/'/g, "''")}' as t, count(*) as n, coalesce(md5(string_agg(x::text, '|' order by x::text)), '') as h from ${name} x`,
  );
  if (parts.length === 0) return '';
  const { rows } = await db.query<{ digest: string }>(
    `select md5(string_agg(t || ':' || n || ':' || h, ';' order by t)) as digest from (${parts.join(' union all ')}) s`,
  );
  return rows[0]!.digest;
}

/** The tables a fingerprint covers. */
async function fingerprintedTables(db: pg.Pool | pg.ClientBase): Promise<{ name: string }[]> {
  const { rows } = await db.query<{ name: string }>(`
    select format('%I.%I', n.nspname, c.relname) as name
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.relkind = 'r' and n.nspname in ('app_public', 'app_private', 'graphile_worker')
      and c.relname not in ('_private_known_crontabs', 'migrations', 'rate_limit_windows')
    order by 1`);
  return rows;
}

/**
 * The same test as `databaseFingerprint` at a cost that does not grow with the database, for the
 * long fuzz run (whose database grows with every accepted write, so that hashing every row before
 * and after each case made the 100 000 cases take hours). Row triggers on the same tables append
 * to a journal in the same transaction as the write: a rolled-back write leaves no line, an update
 * that changes no value writes none (the fingerprint would not see it either), and a committed
 * write of any row raises the journal's highest id. Installed only in a disposable test database.
 */
export async function installWriteJournal(db: pg.Pool | pg.ClientBase): Promise<void> {
  await db.query(`
    create schema if not exists fuzz_journal;
    create table if not exists fuzz_journal.writes (id bigserial primary key, relation text not null, operation text not null);
    create or replace function fuzz_journal.record() returns trigger
      language plpgsql security definer set search_path = pg_catalog as $$
    begin
      -- The fingerprint hashes each row's text: an update that leaves the text equal is no write to it.
      if tg_op = 'UPDATE' and old::text = new::text then return null; end if;
      insert into fuzz_journal.writes (relation, operation) values (tg_table_schema || '.' || tg_table_name, tg_op);
      return null;
    end $$;`);
  for (const { name } of await fingerprintedTables(db)) {
    // A name from pg_class, quoted by format(%I): no outside input reaches this statement.
    await db.query(`
      drop trigger if exists zz_fuzz_journal_write on ${name};
      drop trigger if exists zz_fuzz_journal_truncate on ${name};
      create trigger zz_fuzz_journal_write after insert or update or delete on ${name} for each row execute function fuzz_journal.record();
      create trigger zz_fuzz_journal_truncate after truncate on ${name} for each statement execute function fuzz_journal.record();`);
  }
}

/** The journal's mark: equal marks before and after a request mean it committed no row write. */
export async function writeJournalMark(db: pg.Pool | pg.ClientBase): Promise<string> {
  const { rows } = await db.query<{ mark: string }>('select coalesce(max(id), 0)::text as mark from fuzz_journal.writes');
  return rows[0]!.mark;
}
