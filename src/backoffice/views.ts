/**
 * Generic views of the registry: the list page (filters from the route's JSON Schema,
 * validation by the same schema, SQL errors under their field, pagination).
 */
import express, { type Request, type Response } from 'express';
import type { ValidateFunction } from 'ajv';
import { withAuthenticatorTransaction } from '../db/transaction.js';
import { apiErrorFromPg, type FieldErrors } from '../http/errors.js';
import { purgeStorageGarbageIn } from '../storage/garbage.js';
import { sqlText, sqlValues } from '../http/router.js';
import type { RouteSpec } from '../http/route.js';
import { routes } from '../http/routes/index.js';
import type { JsonSchema } from '../http/schema.js';
import { compileValidator, toFieldErrors } from '../http/validation.js';
import { type BackofficeDeps, asUser, asyncRoute, navUser, render, requireUser } from './common.js';
import { html, message, trusted, type Html } from './html.js';
import { formBody, formFields } from './forms.js';
import type { Abilities, Action, Filter, Option, Resource, RowContext } from './registry.js';

interface CompiledList {
  resource: Resource;
  route: RouteSpec;
  sql: string;
  properties: Record<string, JsonSchema>;
  validate: ValidateFunction;
}

function compileList(resource: Resource): CompiledList {
  const route = routes.find((r) => r.operationId === resource.list.operationId);
  if (!route?.sql || !route.paginated || !route.query) {
    throw new Error(`back-office ${resource.slug}: ${resource.list.operationId} is not a paginated SQL route with a query schema`);
  }
  const properties = (route.query.properties ?? {}) as Record<string, JsonSchema>;
  for (const filter of resource.list.filters) {
    if (!properties[filter.key]) throw new Error(`back-office ${resource.slug}: the route has no query parameter ${filter.key}`);
  }
  return { resource, route, sql: sqlText(route), properties, validate: compileValidator(route.query, true) };
}

/** The input of a filter, drawn from its JSON Schema (enum or options: select; date; integer; text). */
function filterInput(filter: Filter, schema: JsonSchema, value: string, errors: string[] | undefined, options: Option[] | undefined): Html {
  const id = `f-${filter.key}`;
  const described = [filter.hint ? `${id}-aide` : '', errors ? `${id}-erreur` : ''].filter(Boolean).join(' ');
  const aria = trusted(`${described ? ` aria-describedby="${described}"` : ''}${errors ? ' aria-invalid="true"' : ''}`);
  const choices = options ?? (Array.isArray(schema.enum) ? (schema.enum as string[]).map((v) => ({ value: v, label: v })) : null);
  let input: Html;
  if (choices) {
    input = html`<select id="${id}" name="${filter.key}"${aria}><option value="">Tous</option>${choices.map((c) =>
      html`<option value="${c.value}"${c.value === value ? trusted(' selected') : ''}>${c.label}</option>`)}</select>`;
  } else if (schema.format === 'date') {
    input = html`<input id="${id}" name="${filter.key}" type="date" value="${value}"${aria}>`;
  } else if (schema.type === 'integer') {
    input = html`<input id="${id}" name="${filter.key}" type="text" inputmode="numeric" value="${value}"${aria}>`;
  } else {
    input = html`<input id="${id}" name="${filter.key}" type="text" value="${value}"${typeof schema.maxLength === 'number' ? trusted(` maxlength="${schema.maxLength}"`) : ''}${aria}>`;
  }
  return html`<div class="field">
  <label for="${id}">${filter.label}</label>
  ${input}
  ${filter.hint ? html`<p class="hint" id="${id}-aide">${filter.hint}</p>` : ''}
  ${errors ? html`<p class="field-error" id="${id}-erreur">${errors.join(' ')}</p>` : ''}
</div>`;
}

function listUrl(slug: string, filters: Record<string, string | number>): string {
  const query = new URLSearchParams(Object.entries(filters).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return `/backoffice/${slug}/${query ? `?${query}` : ''}`;
}

function listPage(list: CompiledList) {
  const { resource, route } = list;
  return asyncRoute(async (req: Request, res: Response) => {
    const session = requireUser(req, res);
    if (!session) return;
    const deps = req.app.locals.backoffice as BackofficeDeps;
    // Only the registry's filters are read; empty inputs mean "no filter".
    const raw: Record<string, string> = {};
    for (const filter of resource.list.filters) {
      const value = req.query[filter.key];
      if (typeof value === 'string' && value.trim() !== '') raw[filter.key] = value.trim();
    }
    const pageNumber = /^[1-9]\d{0,5}$/.test(String(req.query.page ?? '')) ? Number(req.query.page) : 1;
    const query: Record<string, unknown> = { ...raw };
    let errors: FieldErrors = list.validate(query) ? {} : toFieldErrors(list.validate.errors);

    const { options, result } = await asUser(req, session, async (client) => {
      const options: Record<string, Option[]> = {};
      for (const filter of resource.list.filters) if (filter.options) options[filter.key] = await filter.options(client);
      if (Object.keys(errors).length) return { options, result: null };
      await client.query('savepoint list');
      try {
        const values = sqlValues(route, { params: {}, query, body: {}, page: pageNumber, pageSize: resource.list.pageSize, config: deps.config });
        const { rows } = await client.query<{ result: { count: number; results: Array<Record<string, unknown>> } }>(list.sql, values);
        return { options, result: rows[0]!.result };
      } catch (error) {
        // A refused filter comes back under its field; anything else is the page's error.
        const known = apiErrorFromPg(error);
        if (known?.status !== 400) throw error;
        await client.query('rollback to savepoint list');
        errors = known.body as FieldErrors;
        return { options, result: null };
      }
    });

    const context: RowContext = { options, filterLink: (filters) => listUrl(resource.slug, filters) };
    const count = result?.count ?? 0;
    const lastPage = Math.max(1, Math.ceil(count / resource.list.pageSize));
    const otherErrors = Object.entries(errors).filter(([key]) => !resource.list.filters.some((f) => f.key === key)).flatMap(([, m]) => m);
    const pager = result && lastPage > 1 ? html`<nav class="pager" aria-label="Pages">
  ${pageNumber > 1 ? html`<a href="${listUrl(resource.slug, { ...raw, page: pageNumber - 1 })}" rel="prev">Page précédente</a>` : ''}
  <span>Page ${pageNumber} sur ${lastPage}</span>
  ${pageNumber < lastPage ? html`<a href="${listUrl(resource.slug, { ...raw, page: pageNumber + 1 })}" rel="next">Page suivante</a>` : ''}
</nav>` : '';
    const columns = resource.list.columns;
    render(req, res, Object.keys(errors).length ? 400 : 200, resource.title, await navUser(req, session), html`
<form method="get" action="/backoffice/${resource.slug}/" class="filters card" aria-label="Filtres">
  ${resource.list.filters.map((filter) => filterInput(filter, list.properties[filter.key]!, raw[filter.key] ?? '', errors[filter.key], options[filter.key]))}
  <div class="filter-actions">
    <button type="submit">Filtrer</button>
    <a href="/backoffice/${resource.slug}/">Effacer les filtres</a>
  </div>
</form>
${otherErrors.length ? message('error', otherErrors.join(' ')) : ''}
${Object.keys(errors).length ? message('error', 'Corrigez les filtres signalés.') : ''}
${result ? html`<p class="count" role="status">${count} ligne${count > 1 ? 's' : ''}</p>
<div class="table-wrap">
<table>
  <caption>${resource.list.caption}</caption>
  <thead><tr>${columns.map((c) => html`<th scope="col">${c.label}</th>`)}</tr></thead>
  <tbody>
  ${result.results.length === 0 ? html`<tr><td colspan="${columns.length}">${resource.list.empty}</td></tr>` : ''}
  ${result.results.map((row) => html`<tr>${columns.map((c) => c.rowHeader
      ? html`<th scope="row">${c.value(row, context)}</th>`
      : html`<td>${c.value(row, context)}</td>`)}</tr>
  ${resource.list.rowDetail ? html`<tr class="detail-row"><td colspan="${columns.length}">${resource.list.rowDetail(row, context)}</td></tr>` : ''}`)}
  </tbody>
</table>
</div>
${pager}` : ''}`);
  });
}

function manifestRoute(resource: Resource, operationId: string): RouteSpec {
  const route = routes.find((r) => r.operationId === operationId);
  if (!route?.sql) throw new Error(`back-office ${resource.slug}: ${operationId} is not a SQL route of the manifest`);
  return route;
}

interface CompiledAction {
  action: Action<Record<string, unknown>>;
  schema: JsonSchema;
  validate: ValidateFunction;
  /** The SQL call of the action for a row and a validated body. */
  statement: (id: number, body: Record<string, unknown>, deps: BackofficeDeps) => { text: string; values: unknown[] };
}

function compileAction(resource: Resource, action: Action<Record<string, unknown>>): CompiledAction {
  if (action.operationId) {
    const route = manifestRoute(resource, action.operationId);
    if (!route.body) throw new Error(`back-office ${resource.slug}: ${action.operationId} has no body schema`);
    const text = sqlText(route);
    return {
      action, schema: route.body, validate: compileValidator(route.body, false),
      statement: (id, body, deps) => ({ text, values: sqlValues(route, { params: { id }, query: {}, body, page: 1, pageSize: 1, config: deps.config }) }),
    };
  }
  const call = action.call!;
  return {
    action, schema: call.body, validate: compileValidator(call.body, false),
    statement: (id, body, deps) => ({
      text: call.sql,
      values: call.jsonBody
        ? [id, JSON.stringify(body), deps.config.publicUrl]
        : [id, ...call.keys.map((key) => (body[key] !== null && typeof body[key] === 'object' ? JSON.stringify(body[key]) : body[key] ?? null))],
    }),
  };
}

/**
 * After a committed action that deleted document rows: removes their files now, as the API's
 * routes do (src/http/routes/documents.ts). A failure only delays the removal to the worker.
 */
async function purgeAfterCommit(req: Request, deps: BackofficeDeps): Promise<void> {
  try {
    await withAuthenticatorTransaction(deps.pool, (client) => purgeStorageGarbageIn(client, deps.storage),
      { frozenNow: deps.config.frozenNow?.() });
  } catch (error) {
    req.log?.warn({ err: error }, 'storage purge left to the worker');
  }
}

interface FormState {
  slug: string;
  values: Record<string, unknown>;
  errors: FieldErrors;
}

/** The detail page of a row, with the forms of the actions this account may take. */
function detailPage(resource: Resource, actions: CompiledAction[]) {
  const detail = resource.detail!;
  const route = manifestRoute(resource, detail.operationId);
  const text = sqlText(route);
  const base = `/backoffice/${resource.slug}/`;

  async function show(req: Request, res: Response, status: number, form: FormState | null): Promise<void> {
    const session = requireUser(req, res);
    if (!session) return;
    const deps = req.app.locals.backoffice as BackofficeDeps;
    const id = Number(req.params.id);
    const { row, abilities, body } = await asUser(req, session, async (client) => {
      const values = sqlValues(route, { params: { id }, query: {}, body: {}, page: 1, pageSize: 1, config: deps.config });
      const row = (await client.query<{ result: Record<string, unknown> }>(text, values)).rows[0]!.result;
      const abilities: Abilities = detail.abilities ? await detail.abilities(client, id) : {};
      return { row, abilities, body: await detail.render(row, client) };
    });
    const done = actions.find((a) => a.action.slug === req.query.fait);
    const forms = actions.filter((a) => a.action.allowed(row, abilities));
    // A refused post of a form this account is not offered (forged, or the row changed meanwhile).
    const orphan = form && !forms.some((a) => a.action.slug === form.slug) ? Object.values(form.errors).flat() : [];
    render(req, res, status, detail.title(row), await navUser(req, session), (csrf) => html`
<p><a href="${base}">← ${resource.title}</a></p>
${done && !form ? message('success', done.action.done) : ''}
${orphan.length ? message('error', orphan.join(' ')) : ''}
${body}
${forms.map(({ action, schema }) => {
      const state = form?.slug === action.slug ? form : null;
      const errors = state?.errors ?? {};
      const shown = new Set(action.fields.filter((f) => f.widget !== 'hidden').map((f) => f.key));
      const general = Object.entries(errors).filter(([key]) => !shown.has(key)).flatMap(([, m]) => m);
      return html`<section class="card action" aria-labelledby="action-${action.slug}">
  <h2 id="action-${action.slug}">${action.title}</h2>
  ${action.intro ? html`<p>${action.intro}</p>` : ''}
  <form method="post" action="${base}${id}/${action.slug}/" novalidate>
    <input type="hidden" name="csrf_token" value="${csrf}">
    ${general.length ? message('error', general.join(' ')) : ''}
    ${formFields(`a-${action.slug}`, action.fields, schema, state?.values ?? action.initial(row), errors)}
    <button type="submit"${action.danger ? trusted(' class="danger"') : ''}>${action.submitLabel}</button>
  </form>
</section>`;
    })}`);
  }

  const router = express.Router();
  router.get(`/${resource.slug}/:id/`, asyncRoute(async (req, res, next) => {
    if (!/^[1-9]\d{0,9}$/.test(String(req.params.id))) {
      next();
      return;
    }
    await show(req, res, 200, null);
  }));
  router.post(`/${resource.slug}/:id/:action/`, asyncRoute(async (req, res, next) => {
    const compiled = actions.find((a) => a.action.slug === req.params.action);
    if (!compiled || !/^[1-9]\d{0,9}$/.test(String(req.params.id))) {
      next();
      return;
    }
    const session = requireUser(req, res);
    if (!session) return;
    const deps = req.app.locals.backoffice as BackofficeDeps;
    const id = Number(req.params.id);
    const body = formBody(compiled.action.fields, compiled.schema, req.body ?? {});
    if (!compiled.validate(body)) {
      await show(req, res, 400, { slug: compiled.action.slug, values: body, errors: toFieldErrors(compiled.validate.errors) });
      return;
    }
    try {
      await asUser(req, session, (client) => client.query(compiled.statement(id, body, deps)));
    } catch (error) {
      // Refusals of the rules come back on the form (a 404 stays the page's answer).
      const known = apiErrorFromPg(error);
      if (!known || known.status === 404 || known.status >= 500) throw error;
      const errors = known.status === 400 ? (known.body as FieldErrors) : { non_field_errors: [String(known.body.detail)] };
      await show(req, res, known.status, { slug: compiled.action.slug, values: body, errors });
      return;
    }
    if (compiled.action.purgesFiles) await purgeAfterCommit(req, deps);
    res.redirect(303, `${base}${id}/?fait=${compiled.action.slug}`);
  }));
  return router;
}

/** The list and detail pages of the registry's resources. */
export function resourceRoutes(resources: readonly Resource[]): express.Router {
  const router = express.Router();
  for (const resource of resources) {
    router.get(`/${resource.slug}/`, listPage(compileList(resource)));
    if (resource.detail) {
      router.use(detailPage(resource, resource.detail.actions.map((action) => compileAction(resource, action))));
    }
  }
  return router;
}
