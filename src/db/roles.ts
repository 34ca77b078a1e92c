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
  // Grants are checked first: granting a membership needs CREATEROLE even when it exists,
  // and an owner without CREATEROLE must still pass once the roles are in place.
  const { rows } = await client.query<{ rolsuper: boolean; visitor_granted: boolean; api_granted: boolean }>(
    `select r.rolsuper,
            exists (select 1 from pg_auth_members m
                    where m.roleid = '${ROLES.visitor}'::regrole and m.member = '${ROLES.authenticator}'::regrole) as visitor_granted,
            pg_has_role(current_user, '${ROLES.api}', 'member') as api_granted
     from pg_roles r where r.rolname = current_user`,
  );
  if (!rows[0]?.visitor_granted) {
    await client.query(`grant ${ROLES.visitor} to ${ROLES.authenticator}`);
  }
  // The owner hands API functions over to wfm_api at the end of each migration.
  if (!rows[0]?.rolsuper && !rows[0]?.api_granted) {
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
