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
import pg from 'pg';
import {
  checkedFunctionResults, checkFunctionResult, checkGraphqlData, checkResponse, documentedFunction, ResponseContractError,
} from '../helpers/response-contract.js';
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

describe('results of API functions called outside REST (GraphQL, the back-office)', () => {
  it('a function’s JSON is checked against its routes’ answer: a list without the envelope’s links, a 204 as null', async () => {
    const client = await env.db.connect();
    let me: Record<string, unknown>;
    try {
      await client.query('begin');
      await client.query("select set_config('app.account_id', $1, true)", [String(env.ids.accounts!.alice)]);
      me = (await client.query('select app_public.me() as result')).rows[0].result;
    } finally {
      await client.query('rollback');
      client.release();
    }
    expect(me.username).toBe('alice');
    expect(checkFunctionResult('app_public.me', me, 'test')).toBe(true);
    expect(() => checkFunctionResult('app_public.me', { ...me, salary: 1 }, 'test')).toThrow(/test: app_public\.me returned JSON.*\(salary\)/s);
    // A list's page: count and results, the router adding next and previous.
    expect(checkFunctionResult('app_public.teams_list', { count: 0, results: [] }, 'test')).toBe(true);
    expect(() => checkFunctionResult('app_public.teams_list', { count: 0, next: null, previous: null, results: [] }, 'test')).toThrow(/\(next\)/);
    expect(() => checkFunctionResult('app_public.teams_list', { results: [] }, 'test')).toThrow(/must have required property 'count'/);
    // A route answering 204: the function answers null.
    expect(checkFunctionResult('app_public.team_delete', null, 'test')).toBe(true);
    expect(() => checkFunctionResult('app_public.team_delete', {}, 'test')).toThrow(ResponseContractError);
    // GraphQL's planning is the REST route's answer.
    expect(() => checkFunctionResult('app_public.planning_read', { employees: 'none' }, 'test')).toThrow(/planning_read/);
    // A function no route documents is not checked.
    expect(checkFunctionResult('app_public.backoffice_factor_accounts', [{ anything: true }], 'test')).toBe(false);
  });

  it('a function given the public URL by its routes is checked only when the call gives it one', () => {
    expect(documentedFunction('app_public.absence_get', true)).toBe(true);
    expect(documentedFunction('app_public.absence_get', false)).toBe(false);
    expect(documentedFunction('app_public.team_get', false)).toBe(true);
  });

  it('a GraphQL answer: each field’s function, a mutation’s result; what differs fails, naming the field', () => {
    const before = checkedFunctionResults();
    expect(() => checkGraphqlData('{ teamsList(pPage: 1, pPageSize: 10) }', { teamsList: { count: 0, results: [] } })).not.toThrow();
    expect(() => checkGraphqlData('{ teamsList(pPage: 1, pPageSize: 10) }', { teamsList: { count: '0', results: [] } }))
      .toThrow(/GraphQL query teamsList: app_public\.teams_list returned JSON.*\/count must be integer/s);
    expect(() => checkGraphqlData('mutation { teamDelete(input: { pId: 1 }) { result } }', { teamDelete: { result: { id: 1 } } }))
      .toThrow(/GraphQL mutation teamDelete: app_public\.team_delete/);
    // A payload without result, a null (an error) and a function without a route are left alone.
    expect(() => checkGraphqlData('mutation { teamDelete(input: { pId: 1 }) { clientMutationId } }', { teamDelete: { clientMutationId: null } })).not.toThrow();
    expect(() => checkGraphqlData('{ teamGet(pId: 1) }', { teamGet: null })).not.toThrow();
    expect(() => checkGraphqlData('{ backofficeFactorAccounts }', { backofficeFactorAccounts: [{ x: 1 }] })).not.toThrow();
    expect(checkedFunctionResults()).toBe(before + 3);
  });

  it('the back-office’s calls (select app_public.f(...) as result, on pg.Client) are observed and checked; other statements are not', async () => {
    // The observer of response-contract-setup.ts wraps pg.Client's query: a statement of that form is checked.
    const client = new pg.Client({ connectionString: env.config.databaseUrl });
    await client.connect();
    try {
      const before = checkedFunctionResults();
      await client.query("select set_config('app.account_id', $1, false)", [String(env.ids.accounts!.alice)]);
      await client.query('select app_public.me() as result');
      expect(checkedFunctionResults()).toBe(before + 1);
      // Another statement shape is not an API function's result and is not checked.
      await client.query("select app_public.me() || jsonb_build_object('salary', 1) as result");
      expect(checkedFunctionResults()).toBe(before + 1);
    } finally {
      await client.end();
    }
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
