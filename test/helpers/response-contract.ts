/**
 * Every HTTP answer a test receives is checked against the OpenAPI document the server publishes
 * (built here from the same route manifest): its status must be documented for the operation, its
 * content type must be the documented one, and a JSON body must match the documented schema with
 * no key the document does not list. A key added, renamed or mistyped in SQL fails the test that
 * read it, so /api/schema/ (and the web application's generated types) cannot drift from the API.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApi } from '../../src/http/openapi.js';
import type { RouteSpec } from '../../src/http/route.js';
import { routeModules } from '../../src/http/routes/index.js';
import { s, TIME_PATTERN, type JsonSchema } from '../../src/http/schema.js';
import { API_INFO } from '../../src/server.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020, formats?: string[]) => Ajv2020;

const COMPONENTS_ID = 'https://wfm.test/components';

interface Operation {
  operationId: string;
  pattern: RegExp;
  /** Literal segments first: /api/absences/preview/ before /api/absences/{id}/. */
  params: number;
  responses: Record<string, JsonSchema>;
}

/**
 * The document's schemas as the check reads them: objects that list their properties are closed
 * (a key the document does not name is an error) and references point at the shared components.
 * The branches of allOf / anyOf / oneOf stay open at their top and the composition is closed
 * instead (unevaluatedProperties), so a schema extending another one (EmployeeCreated) still holds.
 */
function forCheck(schema: unknown, openTop = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => forCheck(item));
  if (!schema || typeof schema !== 'object') return schema;
  const composed = ['allOf', 'anyOf', 'oneOf'].some((key) => key in schema);
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref' && typeof value === 'string') {
      result.$ref = value.replace('#/components/schemas/', `${COMPONENTS_ID}#/$defs/`) + (openTop ? OPEN : '');
    } else if ((key === 'allOf' || key === 'anyOf' || key === 'oneOf') && Array.isArray(value)) {
      result[key] = value.map((branch) => forCheck(branch, true));
    } else if (key === 'properties' && value && typeof value === 'object') {
      result.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, forCheck(property)]));
    } else result[key] = forCheck(value);
  }
  if (!openTop && !('additionalProperties' in result)) {
    if (composed) result.unevaluatedProperties = false;
    else if (result.properties) result.additionalProperties = false;
  }
  return result;
}

/** Suffix of a component's open variant (its own keys unchecked: a branch of a composition). */
const OPEN = '__open';

function components(schemas: Record<string, JsonSchema>): JsonSchema {
  const defs: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    defs[name] = forCheck(schema);
    defs[name + OPEN] = forCheck(schema, true);
  }
  return defs;
}

function load() {
  const document = buildOpenApi(routeModules, API_INFO) as {
    paths: Record<string, Record<string, { operationId: string; responses: Record<string, JsonSchema> }>>;
    components: { schemas: Record<string, JsonSchema> };
  };
  const ajv = new Ajv2020({ allErrors: true, strict: false, strictNumbers: true });
  addFormats(ajv, ['date', 'date-time', 'uri', 'email']);
  ajv.addFormat('time-hm', new RegExp(TIME_PATTERN));
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: components(document.components.schemas) });
  const operations = new Map<string, Operation[]>();
  for (const [template, methods] of Object.entries(document.paths)) {
    const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
    for (const [method, operation] of Object.entries(methods)) {
      const list = operations.get(method.toUpperCase()) ?? [];
      list.push({
        operationId: operation.operationId,
        pattern: new RegExp(`^${source}$`),
        params: (template.match(/\{/g) ?? []).length,
        responses: operation.responses,
      });
      operations.set(method.toUpperCase(), list);
    }
  }
  for (const list of operations.values()) list.sort((a, b) => a.params - b.params);
  return { ajv, operations, validators: new Map<string, ValidateFunction>(), functions: functionSchemas(), withPublicUrl: functionsGivenPublicUrl() };
}

/**
 * A function GraphQL offers in place of a REST route's variant of it (the planning as JSON,
 * where the route sends planning_read_chunks' text): the operation whose answer it returns.
 */
const ANSWER_OF: Record<string, string> = { 'app_public.planning_read': 'planning_read' };

/**
 * What each SQL function of the manifest returns, as its routes document it: the route's
 * answer, a list's page without the envelope the router completes (`count` and `results`; the
 * router adds `next` and `previous`), null for a route answering 204. A route whose answer is
 * written from the result (a file, a calendar, a token) or streamed (an export, the planning's
 * parts) says nothing of its function's JSON.
 */
function functionSchemas(): Map<string, JsonSchema> {
  const routes = routeModules.flatMap((module) => module.routes);
  const resultOf = (route: RouteSpec): JsonSchema => {
    if (route.status === 204) return { type: 'null' };
    const answer = route.response ?? s.anyObject();
    return route.paginated ? s.object({ count: s.int({ minimum: 0 }), results: s.array(answer) }, ['count', 'results']) : answer;
  };
  const byFunction = new Map<string, JsonSchema[]>();
  for (const route of routes) {
    if (!route.sql || route.render || route.export || route.resultParts || route.handler) continue;
    byFunction.set(route.sql.fn, [...(byFunction.get(route.sql.fn) ?? []), resultOf(route)]);
  }
  for (const [fn, operationId] of Object.entries(ANSWER_OF)) {
    const route = routes.find((candidate) => candidate.operationId === operationId);
    if (!route) throw new Error(`response contract: ${fn} answers as ${operationId}, which is no route`);
    byFunction.set(fn, [resultOf({ ...route, resultParts: false })]);
  }
  return new Map([...byFunction].map(([fn, schemas]) => [fn, schemas.length === 1 ? schemas[0]! : { anyOf: schemas }]));
}

let contract: ReturnType<typeof load> | null = null;
let checked = 0;
let checkedResults = 0;

/** How many answers this test process checked (written per test file by response-contract-setup.ts). */
export function checkedResponses(): number {
  return checked;
}

/** How many results of API functions called outside REST (GraphQL, the back-office) this test process checked. */
export function checkedFunctionResults(): number {
  return checkedResults;
}

export class ResponseContractError extends Error {}

/**
 * Checks one answer; throws ResponseContractError naming the operation, the status and what
 * differs. Paths that name no operation (an unknown route, the documentation, the back-office)
 * are not the API's and pass unchecked.
 */
export function checkResponse(method: string, url: string, status: number, headers: Headers, body: unknown, text: string): void {
  contract ??= load();
  const path = new URL(url, 'http://wfm.test').pathname;
  const operation = contract.operations.get(method.toUpperCase())?.find((candidate) => candidate.pattern.test(path));
  if (!operation) return;
  const where = `${method.toUpperCase()} ${path} (${operation.operationId}) answered ${status}`;
  const response = operation.responses[String(status)] as { content?: Record<string, { schema: JsonSchema }> } | undefined;
  if (!response) throw new ResponseContractError(`${where}: this status is not in the OpenAPI document. Body: ${text.slice(0, 300)}`);
  checked += 1;
  const contentType = (headers.get('content-type') ?? '').split(';')[0]!.trim();
  const documented = Object.keys(response.content ?? {});
  if (documented.length === 0) {
    if (text !== '') throw new ResponseContractError(`${where}: the document says no body, got ${contentType}: ${text.slice(0, 200)}`);
    return;
  }
  if (!documented.includes(contentType)) {
    throw new ResponseContractError(`${where}: content type ${contentType || '(none)'}, the document says ${documented.join(' or ')}`);
  }
  if (contentType !== 'application/json') return;
  const key = `${operation.operationId} ${status}`;
  let validate = contract.validators.get(key);
  if (!validate) {
    validate = contract.ajv.compile(forCheck(response.content!['application/json']!.schema) as JsonSchema);
    contract.validators.set(key, validate);
  }
  if (!validate(body)) {
    const problems = (validate.errors ?? []).slice(0, 8).map((error) => {
      const extra = error.keyword === 'additionalProperties' ? ` (${String((error.params as { additionalProperty?: string }).additionalProperty)})` : '';
      return `${error.instancePath || '/'} ${error.message ?? error.keyword}${extra}`;
    });
    throw new ResponseContractError(`${where}: the body does not match the OpenAPI document:\n  ${problems.join('\n  ')}\nBody: ${text.slice(0, 400)}`);
  }
}

function problemsOf(validate: ValidateFunction): string {
  return (validate.errors ?? []).slice(0, 8).map((error) => {
    const extra = error.keyword === 'additionalProperties' ? ` (${String((error.params as { additionalProperty?: string }).additionalProperty)})` : '';
    return `${error.instancePath || '/'} ${error.message ?? error.keyword}${extra}`;
  }).join('\n  ');
}

/** The functions whose routes give them the public URL (p_public_url): their links are absolute only when given one. */
function functionsGivenPublicUrl(): Set<string> {
  const routes = routeModules.flatMap((module) => module.routes);
  return new Set(routes.filter((route) => route.sql?.args.some((arg) => arg.name === 'p_public_url')).map((route) => route.sql!.fn));
}

/**
 * Whether a call's result is documented by the manifest: a route calls the function (or
 * ANSWER_OF names it), and the call gives it the public URL when its routes do. Without it, the
 * function writes its links relative to the site (the back-office's pages link so), which no
 * route documents (format uri).
 */
export function documentedFunction(fn: string, givesPublicUrl: boolean): boolean {
  contract ??= load();
  return contract.functions.has(fn) && (givesPublicUrl || !contract.withPublicUrl.has(fn));
}

/**
 * Checks the JSON an API function returned to another caller than REST (GraphQL, the
 * back-office) against what its routes document (functionSchemas), objects closed as for the
 * answers. Returns false, checking nothing, for a function no route documents; throws
 * ResponseContractError naming `where` and what differs.
 */
export function checkFunctionResult(fn: string, result: unknown, where: string): boolean {
  contract ??= load();
  const schema = contract.functions.get(fn);
  if (!schema) return false;
  const key = `function ${fn}`;
  let validate = contract.validators.get(key);
  if (!validate) {
    validate = contract.ajv.compile(forCheck(schema) as JsonSchema);
    contract.validators.set(key, validate);
  }
  checkedResults += 1;
  if (!validate(result)) {
    throw new ResponseContractError(
      `${where}: ${fn} returned JSON that its routes' OpenAPI schema does not admit:\n  ${problemsOf(validate)}\n` +
        `Result: ${JSON.stringify(result)?.slice(0, 400)}`,
    );
  }
  return true;
}

/** app_public.absences_list for absencesList (PostGraphile's names of the functions, camelCase). */
export function functionOfGraphqlField(field: string): string {
  return `app_public.${field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)}`;
}

/**
 * Checks the data of a GraphQL answer: each top-level field is an API function, its value the
 * function's JSON (a query) or a mutation's payload whose `result` it is. Fields of functions
 * that no route documents, and null values (an error), are not checked.
 */
export function checkGraphqlData(query: string, data: Record<string, unknown> | null | undefined): void {
  if (!data) return;
  const mutation = /^\s*mutation\b/.test(query);
  // Approximate (the query's text, not each field's arguments), and so it only skips more.
  const givesPublicUrl = /\bpPublicUrl\b/.test(query);
  for (const [field, value] of Object.entries(data)) {
    if (value === null || field.startsWith('__')) continue;
    if (mutation && !(value && typeof value === 'object' && 'result' in value)) continue;
    const fn = functionOfGraphqlField(field);
    if (!documentedFunction(fn, givesPublicUrl)) continue;
    const result = mutation ? (value as { result: unknown }).result : value;
    checkFunctionResult(fn, result, `GraphQL ${mutation ? 'mutation' : 'query'} ${field}`);
  }
}

/** The reason given by tests that inject a fault: a 500 is the expected answer there, and no part of the contract. */
export const INJECTED = 'a fault is injected on purpose: the 500 is no part of the contract';
