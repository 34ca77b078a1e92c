/** Reference data is written by staff accounts only (SPEC, Permissions rule 6): what the forms ask SQL. */
import type pg from 'pg';
import type { Abilities, Option } from '../registry.js';

export async function isStaff(client: pg.PoolClient): Promise<boolean> {
  return (await client.query<{ ok: boolean }>('select app_hidden.current_account_is_staff() as ok')).rows[0]!.ok;
}

/** The abilities of a reference row: staff accounts edit and delete it. */
export async function staffAbilities(client: pg.PoolClient): Promise<Abilities> {
  const staff = await isStaff(client);
  return { edit: staff, delete: staff };
}

/** Options of a select read as the signed-in account: `sql` answers value and label. */
export function optionsFrom(sql: string) {
  return async (client: pg.PoolClient): Promise<Option[]> => (await client.query<Option>(sql)).rows;
}

export const YES_NO = (value: unknown) => (value ? 'oui' : 'non');
