import type pg from 'pg';

/** Database roles of the service (cluster-wide, created by this setup step, never by migrations). */
export const ROLES = {
  /** Each request switches to it: it may only read app_public through RLS and call functions. */
  visitor: 'wfm_visitor',
  /** Owner of the API functions (security definer): RLS applies to it as to the visitor. */
  api: 'wfm_api',
  /** What the server connects as: LOGIN NOINHERIT, may only become the visitor. */
  authenticator: 'wfm_authenticator',
} as const;

/**
 * Creates the roles when missing, idempotently. Runs with the owner connection, which
 * needs CREATEROLE (or superuser) the first time only.
 */
export async function ensureRoles(client: pg.ClientBase, authenticatorPassword?: string): Promise<void> {
  await client.query(`
    do $$
    begin
      if not exists (select 1 from pg_roles where rolname = '${ROLES.visitor}') then
        create role ${ROLES.visitor} nologin;
      end if;
      if not exists (select 1 from pg_roles where rolname = '${ROLES.api}') then
        create role ${ROLES.api} nologin;
      end if;
      if not exists (select 1 from pg_roles where rolname = '${ROLES.authenticator}') then
        create role ${ROLES.authenticator} login noinherit;
      end if;
    end
    $$;`);
  await client.query(`grant ${ROLES.visitor} to ${ROLES.authenticator}`);
  // The owner hands API functions over to wfm_api at the end of each migration.
  const { rows } = await client.query<{ rolsuper: boolean }>(
    'select rolsuper from pg_roles where rolname = current_user',
  );
  if (!rows[0]?.rolsuper) {
    await client.query(`grant ${ROLES.api} to current_user`);
  }
  if (authenticatorPassword !== undefined) {
    // Parameters cannot be bound in utility statements; format() quotes the literal.
    const { rows: sql } = await client.query<{ stmt: string }>(
      `select format('alter role ${ROLES.authenticator} with password %L', $1::text) as stmt`,
      [authenticatorPassword],
    );
    await client.query(sql[0]!.stmt);
  }
}
