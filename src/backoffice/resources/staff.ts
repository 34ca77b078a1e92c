/** Reference data is written by staff accounts only (SPEC, Permissions rule 6): what the forms ask SQL. */
import type pg from 'pg';
import { callRows, isStaff, type BackofficeCall, type CallInputs } from '../calls.js';
import type { Abilities, Option } from '../registry.js';

export { isStaff };

/** The abilities of a reference row: staff accounts edit and delete it. */
export async function staffAbilities(client: pg.PoolClient): Promise<Abilities> {
  const staff = await isStaff(client);
  return { edit: staff, delete: staff };
}

/** Options of a select read as the signed-in account: a declared call answering (value, label) rows. */
export function optionsFrom(call: BackofficeCall, inputs: CallInputs = {}) {
  return async (client: pg.PoolClient): Promise<Option[]> => callRows<Option & Record<string, unknown>>(client, call, inputs);
}

export const YES_NO = (value: unknown) => (value ? 'oui' : 'non');
