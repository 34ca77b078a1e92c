/**
 * One input contract (docs/architecture.md): the text limits that the route schemas (ajv and the
 * OpenAPI document) share with sql/. SQL is their home (sql/core/input_contract.sql: the table
 * CHECKs and the rules call its functions); the schemas are built before any database is reached,
 * so the values are restated here once, and the server compares them with
 * app_hidden.input_contract() at start-up (inputContractMismatches): a value changed on one side
 * only stops it, naming both.
 */
import type pg from 'pg';

export const INPUT_CONTRACT = {
  /** A free comment or a decision reason (absences, day-change requests). */
  commentMaxLength: 2000,
  /** The comment of an on-call period. */
  onCallCommentMaxLength: 500,
  eventTitleMaxLength: 200,
  eventDescriptionMaxLength: 5000,
  /** The name of a team, a division, an establishment, a contract type, an absence type or category, an emergency contact; a post's label. */
  nameMaxLength: 150,
  /** An employee's first or last name. */
  personNameMaxLength: 100,
  /** An emergency contact's relationship to the employee. */
  relationshipMaxLength: 100,
  /** The job title of a contract. */
  jobTitleMaxLength: 200,
  /** The title of an employee's attachment. */
  attachmentTitleMaxLength: 200,
  /** The reason of a manual counter adjustment (back-office). */
  adjustmentReasonMaxLength: 500,
  /** An e-mail address (professional address, emergency contact); its shape is checked by SQL. */
  emailMaxLength: 254,
  /** A username; its characters are checked by SQL (app_hidden.username_pattern()), in French. */
  usernameMaxLength: 150,
  usernamePattern: '^[A-Za-z0-9._@+\\-]{2,150}$',
  /** A time of day HH:MM (00:00 to 23:59): the format time-hm of the route schemas (src/http/schema.ts TIME_PATTERN). */
  timePattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
  /** SPEC Limits: how many days back an employee's own request may reach (sql/core/limits.sql). */
  retroactivityDays: 14,
  /** CONTRACT section 7: the longest window of one planning read. */
  planningMaxDays: 62,
  /** CONTRACT section 7: 10 MB (10 × 1024 × 1024 bytes) per document, attachment or certificate. */
  documentMaxBytes: 10 * 1024 * 1024,
} as const;

/** A size in bytes as the French texts say it ("10 Mo"). */
export function megabytesFr(bytes: number): string {
  return `${bytes / (1024 * 1024)} Mo`;
}

export type InputContract = { [K in keyof typeof INPUT_CONTRACT]: (typeof INPUT_CONTRACT)[K] extends number ? number : string };

const SQL_HOME = 'app_hidden.input_contract() (sql/core/input_contract.sql)';
const TS_HOME = 'src/http/input-contract.ts';

/** Each limit that differs between the two homes, one line each (empty when they agree). */
export function compareInputContract(sql: Record<string, unknown>, ts: InputContract = INPUT_CONTRACT): string[] {
  const problems: string[] = [];
  for (const key of new Set([...Object.keys(ts), ...Object.keys(sql)])) {
    const tsValue = (ts as Record<string, unknown>)[key];
    const sqlValue = sql[key];
    if (tsValue === sqlValue) continue;
    problems.push(`input contract ${key}: ${TS_HOME} says ${JSON.stringify(tsValue)}, ${SQL_HOME} says ${JSON.stringify(sqlValue)}`);
  }
  return problems;
}

/** Compares the route schemas' limits with the database's (read as wfm_visitor: app_hidden is the request roles'). */
export async function inputContractMismatches(pool: pg.Pool): Promise<string[]> {
  const client = await pool.connect();
  try {
    await client.query('begin read only');
    await client.query('set local role wfm_visitor');
    const { rows } = await client.query<{ contract: Record<string, unknown> }>('select app_hidden.input_contract() as contract');
    await client.query('commit');
    return compareInputContract(rows[0]!.contract);
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
