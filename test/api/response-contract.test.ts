/**
 * The checks that keep the published contract true: every answer a test reads is compared with
 * the OpenAPI document (test/helpers/response-contract.ts, run by the shared HTTP client), and the
 * manifest's SQL calls are compared with pg_proc at start-up (src/http/manifest-check.ts), and so
 * are the text limits of the route schemas with sql/'s (src/http/input-contract.ts). Here,
 * each check is shown to refuse what it must.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareInputContract, INPUT_CONTRACT, inputContractMismatches } from '../../src/http/input-contract.js';
import { limitMismatches, manifestMismatches } from '../../src/http/manifest-check.js';
import { routes } from '../../src/http/routes/index.js';
import type { RouteSpec } from '../../src/http/route.js';
import { s, TIME_PATTERN } from '../../src/http/schema.js';
import { compileValidator } from '../../src/http/validation.js';
import { checkResponse, ResponseContractError } from '../helpers/response-contract.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const JSON_HEADERS = new Headers({ 'content-type': 'application/json; charset=utf-8' });

function check(method: string, path: string, status: number, body: unknown, headers = JSON_HEADERS): void {
  checkResponse(method, path, status, headers, body, body === undefined ? '' : JSON.stringify(body));
}

describe('answers against the OpenAPI document', () => {
  it('a real answer passes; the same answer with a key added, renamed or mistyped fails, naming it', async () => {
    const token = await env.login('alice');
    const me = await env.get('/api/auth/me/', token);
    expect(me.status).toBe(200);
    expect(() => check('GET', '/api/auth/me/', 200, me.body)).not.toThrow();

    expect(() => check('GET', '/api/auth/me/', 200, { ...me.body, salary: 1 })).toThrow(/auth_me.*\(salary\)/s);
    const { username, ...renamed } = me.body as Record<string, unknown>;
    expect(() => check('GET', '/api/auth/me/', 200, { ...renamed, user_name: username })).toThrow(ResponseContractError);
    expect(() => check('GET', '/api/auth/me/', 200, { ...me.body, id: String(me.body.id) })).toThrow(/\/id must be integer/);
  });

  it('nested objects and list envelopes are closed too', async () => {
    const token = await env.login('rh1');
    const list = await env.get('/api/employees/?page_size=1', token);
    expect(list.status).toBe(200);
    expect(list.body.results.length).toBe(1);
    const [row] = list.body.results as Array<Record<string, unknown>>;
    expect(() => check('GET', '/api/employees/', 200, { ...list.body, results: [{ ...row, secret: true }] })).toThrow(/results\/0.*\(secret\)/s);
    expect(() => check('GET', '/api/employees/', 200, { ...list.body, total: 3 })).toThrow(/\(total\)/);
  });

  it('a status the operation does not document fails, and so does a content type it does not answer', () => {
    expect(() => check('GET', '/api/auth/me/', 418, { detail: 'teapot' })).toThrow(/418: this status is not in the OpenAPI document/);
    expect(() => check('GET', '/api/auth/me/', 200, 'hello', new Headers({ 'content-type': 'text/plain' }))).toThrow(/content type text\/plain/);
  });

  it('a nullable enum accepts null and its values, nothing else', () => {
    const validate = compileValidator(s.nullable(s.enum(['Validée', 'Refusée'])), false);
    expect([null, 'Validée', 'Refusée'].map((value) => validate(value))).toEqual([true, true, true]);
    expect(validate('Annulée')).toBe(false);
  });

  it('a key the document marks as absent-when-empty may be absent, not null', async () => {
    const me = await env.get('/api/auth/me/', await env.login('alice'));
    const { role, ...base } = me.body as Record<string, unknown>;
    expect(role).toBe('Salarié');
    expect(() => check('GET', '/api/auth/me/', 200, base)).not.toThrow();
    expect(() => check('GET', '/api/auth/me/', 200, { ...base, role: null })).toThrow(/\/role must be string/);
    expect(() => check('GET', '/api/auth/me/', 200, { ...base, role: 'Chef' })).toThrow(/\/role must be equal to one of the allowed values/);
  });

  it('paths outside the API (documentation, back-office, unknown routes) are not the contract’s', () => {
    expect(() => check('GET', '/backoffice/', 200, '<html>', new Headers({ 'content-type': 'text/html' }))).not.toThrow();
    expect(() => check('GET', '/api/nowhere/', 404, { detail: 'x' })).not.toThrow();
  });
});

describe('the manifest against pg_proc', () => {
  it('every route of the manifest fits its SQL function', async () => {
    expect(await manifestMismatches(env.db, routes)).toEqual([]);
  });

  it('a renamed argument, a missing one and an unknown function are each named', async () => {
    const create = routes.find((route) => route.operationId === 'absence_create')!;
    const call = create.sql!;
    const doctored: RouteSpec[] = [
      { ...create, operationId: 'renamed', sql: { ...call, args: call.args.map((arg) => (arg.name === 'p_type' ? { ...arg, name: 'p_kind' } : arg)) } },
      { ...create, operationId: 'missing', sql: { ...call, args: call.args.filter((arg) => arg.name !== 'p_employee') } },
      { ...create, operationId: 'unknown', sql: { ...call, fn: 'app_public.absence_creation' } },
    ];
    const problems = await manifestMismatches(env.db, doctored);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^renamed: app_public\.absence_create takes \(.*p_type.*\), the manifest gives \(p_employee, p_kind/);
    expect(problems[1]).toMatch(/^missing: /);
    expect(problems[2]).toBe('unknown: app_public.absence_creation does not exist');
  });

  it('a function taking the keys a body sent (p_sent) gets them from the body, under that name', async () => {
    const update = routes.find((route) => route.operationId === 'employees_partial_update')!;
    const call = update.sql!;
    const doctored: RouteSpec[] = [
      { ...update, operationId: 'forgotten', sql: { ...call, args: call.args.filter((arg) => arg.name !== 'p_sent') } },
      {
        ...update, operationId: 'misnamed',
        sql: { ...call, args: call.args.map((arg) => (arg.from === 'body-keys' ? { ...arg, name: 'p_keys' } : arg)) },
      },
    ];
    const problems = await manifestMismatches(env.db, doctored);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toBe("forgotten: app_public.employee_update takes p_sent, the manifest must give it from 'body-keys'");
    expect(problems[1]).toBe("misnamed: the body's keys go to p_sent, not p_keys");
    expect(problems[2]).toMatch(/^misnamed: app_public\.employee_update takes \(.*p_sent\), the manifest gives \(.*p_keys\)$/);
  });

  it('a file size limit that differs from app_hidden.document_max_bytes() is named with both numbers', async () => {
    const upload = routes.find((route) => route.operationId === 'absence_create')!;
    const doctored: RouteSpec[] = [{ ...upload, operationId: 'bigger', multipart: { ...upload.multipart!, maxFileBytes: 20 * 1024 * 1024 } }];
    expect(await limitMismatches(env.db, routes)).toEqual([]);
    expect(await manifestMismatches(env.db, doctored)).toEqual([
      'bigger: multipart.maxFileBytes is 20971520, app_hidden.document_max_bytes() is 10485760 (sql/core/limits.sql)',
    ]);
  });
});

describe('the input contract against sql/', () => {
  const SQL_HOME = 'app_hidden.input_contract() (sql/core/input_contract.sql)';

  it('the limits of the route schemas are those of sql/core/input_contract.sql', async () => {
    expect(await inputContractMismatches(env.db)).toEqual([]);
  });

  it('the route schemas and the table CHECKs take their limits from the contract', async () => {
    const create = routes.find((route) => route.operationId === 'absence_create')!;
    const comment = (create.body as { properties: Record<string, { maxLength?: number }> }).properties.comment!;
    expect(comment.maxLength).toBe(INPUT_CONTRACT.commentMaxLength);
    const { rows } = await env.db.query<{ name: string; definition: string }>(
      `select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint
        where conname in ('absences_comment_check', 'shift_change_requests_comment_check', 'accounts_username_check',
                          'events_title_check', 'events_description_check') order by conname`,
    );
    expect(rows.map((row) => [row.name, /app_hidden\.[a-z_]+\(\)/.exec(row.definition)?.[0]])).toEqual([
      ['absences_comment_check', 'app_hidden.comment_max_length()'],
      ['accounts_username_check', 'app_hidden.username_pattern()'],
      ['events_description_check', 'app_hidden.event_description_max_length()'],
      ['events_title_check', 'app_hidden.event_title_max_length()'],
      ['shift_change_requests_comment_check', 'app_hidden.comment_max_length()'],
    ]);
  });

  it('no other function or CHECK of sql/ restates a limit: patterns and « Au plus N caractères » come from the contract', async () => {
    const names = ['email_pattern', 'phone_pattern', 'social_security_number_pattern', 'username_pattern', 'time_pattern'];
    const patterns: string[] = [];
    for (const name of names) {
      patterns.push((await env.db.query<{ pattern: string }>(`select app_hidden.${name}() as pattern`)).rows[0]!.pattern);
    }
    const { rows } = await env.db.query<{ owner: string; text: string }>(
      `select p.oid::regprocedure::text as owner, p.prosrc as text from pg_proc p
        where p.pronamespace in ('app_public'::regnamespace, 'app_hidden'::regnamespace, 'app_private'::regnamespace)
          and p.prokind = 'f' and not p.proname = any ($1::text[] || '{max_length_message}')
       union all
       select conname, pg_get_constraintdef(oid) from pg_constraint
        where connamespace in ('app_public'::regnamespace, 'app_private'::regnamespace) and contype = 'c'`,
      [names],
    );
    const restated = rows.filter(
      (row) => /Au plus \d+ caract/i.test(row.text) || patterns.some((pattern) => row.text.includes(pattern)),
    );
    expect(restated.map((row) => row.owner)).toEqual([]);
  });

  it('the HH:MM format of the route schemas is app_hidden.time_pattern(), compared at start-up like the limits', async () => {
    expect(TIME_PATTERN).toBe(INPUT_CONTRACT.timePattern);
    expect((await sqlContract()).timePattern).toBe(TIME_PATTERN);
    expect(compareInputContract(await sqlContract(), { ...INPUT_CONTRACT, timePattern: '^[0-9]{2}:[0-9]{2}$' })).toEqual([
      `input contract timePattern: src/http/input-contract.ts says "^[0-9]{2}:[0-9]{2}$", ${SQL_HOME} says "^([01][0-9]|2[0-3]):[0-5][0-9]$"`,
    ]);
  });

  it('a limit changed on one side only is named with both of its homes', async () => {
    expect(compareInputContract(await sqlContract(), { ...INPUT_CONTRACT, commentMaxLength: 1000 })).toEqual([
      `input contract commentMaxLength: src/http/input-contract.ts says 1000, ${SQL_HOME} says 2000`,
    ]);
    await env.db.query('create or replace function app_hidden.event_title_max_length() returns int language sql immutable parallel safe as $$ select 250 $$');
    try {
      expect(await inputContractMismatches(env.db)).toEqual([
        `input contract eventTitleMaxLength: src/http/input-contract.ts says 200, ${SQL_HOME} says 250`,
      ]);
    } finally {
      await env.db.query('create or replace function app_hidden.event_title_max_length() returns int language sql immutable parallel safe as $$ select 200 $$');
    }
  });

  it('the thresholds the route descriptions quote (retroactivity, planning window, file size) are sql/core/limits.sql\'s', async () => {
    await env.db.query('create or replace function app_hidden.retroactivity_days() returns int language sql immutable parallel safe as $$ select 21 $$');
    try {
      expect(await inputContractMismatches(env.db)).toEqual([
        `input contract retroactivityDays: src/http/input-contract.ts says 14, ${SQL_HOME} says 21`,
      ]);
    } finally {
      await env.db.query('create or replace function app_hidden.retroactivity_days() returns int language sql immutable parallel safe as $$ select 14 $$');
    }
    const text = JSON.stringify((await env.get('/api/schema/')).body);
    expect(text).toContain(`rétroactivité de ${INPUT_CONTRACT.retroactivityDays} jours`);
    expect(text).toContain(`${INPUT_CONTRACT.planningMaxDays} jours au plus depuis from`);
    expect(text).toContain('10 Mo au plus chacun');
  });

  async function sqlContract(): Promise<Record<string, unknown>> {
    const { rows } = await env.db.query<{ contract: Record<string, unknown> }>('select app_hidden.input_contract() as contract');
    return rows[0]!.contract;
  }
});
