import type pg from 'pg';
import { hashPassword } from '../auth/passwords.js';

export type OrganisationDoc = Record<string, unknown>;
export type ImportResult = Record<string, Record<string, number>>;

export class ImportError extends Error {
  constructor(message: string, readonly path: string) {
    super(message);
  }
}

/**
 * Replaces each account's clear `password` by its argon2id `password_hash` (the database
 * never sees a clear password). A non-string password is reported with its path.
 * `hashCache` lets fixtures hash a shared password once.
 */
export async function hashAccountPasswords(doc: OrganisationDoc, hashCache?: Map<string, Promise<string>>): Promise<OrganisationDoc> {
  const accounts = doc.accounts;
  if (!Array.isArray(accounts)) return doc;
  const hashed = await Promise.all(
    accounts.map(async (account: unknown, index) => {
      if (typeof account !== 'object' || account === null || Array.isArray(account)) return account;
      const { password, ...rest } = account as Record<string, unknown>;
      if ('password_hash' in rest) throw new ImportError(`accounts[${index}].password_hash: unknown field`, `accounts[${index}].password_hash`);
      if (password === undefined || password === null) return rest;
      if (typeof password !== 'string' || password.length === 0) {
        throw new ImportError(`accounts[${index}].password: expected a non-empty string`, `accounts[${index}].password`);
      }
      let hash = hashCache?.get(password);
      if (!hash) {
        hash = hashPassword(password);
        hashCache?.set(password, hash);
      }
      return { ...rest, password_hash: await hash };
    }),
  );
  return { ...doc, accounts: hashed };
}

/** Loads an organisation in the caller's transaction; a bad file raises ImportError. */
export async function importOrganisation(client: pg.ClientBase, doc: OrganisationDoc, hashCache?: Map<string, Promise<string>>): Promise<ImportResult> {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ImportError('$: expected an object', '$');
  const prepared = await hashAccountPasswords(doc, hashCache);
  try {
    const { rows } = await client.query<{ result: ImportResult }>(
      'select app_private.import_organisation($1::jsonb) as result',
      [JSON.stringify(prepared)],
    );
    return rows[0]!.result;
  } catch (error) {
    const pgError = error as { code?: string; message: string; detail?: string };
    if (pgError.code === 'WV020') throw new ImportError(pgError.message, pgError.detail ?? '$');
    throw error;
  }
}
