/**
 * Generic views of the registry: the list page (filters from the route's JSON Schema,
 * validation by the same schema, SQL errors under their field, pagination), the detail page
 * (related rows, action forms), and the create and edit pages; every form is drawn, validated
 * and answered the same way (forms.ts, formView below).
 */
import express, { type Request, type Response } from 'express';
import type { ValidateFunction } from 'ajv';
import { apiErrorFromPg, type FieldErrors } from '../http/errors.js';
import { purgeAfterCommit } from '../storage/garbage.js';
import { sqlText, sqlValues } from '../http/sql-call.js';
import type { RouteSpec } from '../http/route.js';
import { routes } from '../http/routes/index.js';
import type { JsonSchema } from '../http/schema.js';
import { compileValidator, toFieldErrors } from '../http/validation.js';
import type { BackofficeSession } from '../auth/sessions.js';
import { type BackofficeDeps, asUser, asyncRoute, navUser, render, requireUser } from './common.js';
import { html, message, trusted, type Html } from './html.js';
import { formBody, formFields, loadOptions } from './forms.js';
import { statement } from './calls.js';
import type { Abilities, Action, Filter, FormSpec, Option, Resource, RowContext } from './registry.js';

interface CompiledList {
  resource: Resource;
  properties: Record<string, JsonSchema>;
  validate: ValidateFunction;
  /** The SQL call of a page of the list for validated filters. */
  statement: (query: Record<string, unknown>, page: number, deps: BackofficeDeps) => { text: string; values: unknown[] };
}

function compileList(resource: Resource): CompiledList {
  const { operationId, call, pageSize } = resource.list;
  let compiled: CompiledList;
  if (call) {
    const schema = resource.list.query ?? { type: 'object', properties: {} };
    compiled = {
      resource, properties: (schema.properties ?? {}) as Record<string, JsonSchema>, validate: compileValidator(schema, true),
      statement: (query, page, deps) => statement(call, { query, page, pageSize, config: deps.config }),
    };
  } else {
    const route = routes.find((r) => r.operationId === operationId);
    if (!route?.sql || !route.paginated) {
      throw new Error(`back-office ${resource.slug}: ${operationId} is not a paginated SQL route`);
    }
    // A list without query parameters (contract types) has no filter to draw.
    const query: JsonSchema = route.query ?? { type: 'object', properties: {} };
    const text = sqlText(route);
    compiled = {
      resource, properties: (query.properties ?? {}) as Record<string, JsonSchema>, validate: compileValidator(query, true),
      statement: (query, page, deps) => ({ text, values: sqlValues(route, { params: {}, query, body: {}, page, pageSize, config: deps.config }) }),
    };
  }
  for (const filter of resource.list.filters) {
    if (!compiled.properties[filter.key]) throw new Error(`back-office ${resource.slug}: the list has no query parameter ${filter.key}`);
  }
  return compiled;
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

/** « Exporter (CSV) » and « Exporter (Excel) » links of a list, with its filters (no page). */
function exportLinks(path: string, filters: Record<string, string>): Html {
  const link = (format: 'csv' | 'xlsx') => {
    const query = new URLSearchParams({ ...filters, format });
    query.delete('page');
    return `${path}?${query.toString()}`;
  };
  return html`<p class="exports"><a href="${link('csv')}" download>Exporter (CSV)</a> · <a href="${link('xlsx')}" download>Exporter (Excel)</a></p>`;
}

function listPage(list: CompiledList, deleted: Array<Action<Record<string, unknown>>>) {
  const { resource } = list;
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

    const { options, result, creates } = await asUser(req, session, async (client) => {
      const options: Record<string, Option[]> = {};
      for (const filter of resource.list.filters) if (filter.options) options[filter.key] = await filter.options(client);
      const creates = resource.create ? await resource.create.allowed(client) : false;
      if (Object.keys(errors).length) return { options, result: null, creates };
      await client.query('savepoint list');
      try {
        const { rows } = await client.query<{ result: { count: number; results: Array<Record<string, unknown>> } }>(
          list.statement(query, pageNumber, deps));
        return { options, result: rows[0]!.result, creates };
      } catch (error) {
        // A refused filter comes back under its field; anything else is the page's error.
        const known = apiErrorFromPg(error);
        if (known?.status !== 400) throw error;
        await client.query('rollback to savepoint list');
        errors = known.body as FieldErrors;
        return { options, result: null, creates };
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
    const done = req.query.fait === 'cree' ? resource.create?.done : deleted.find((a) => a.slug === req.query.fait)?.done;
    render(req, res, Object.keys(errors).length ? 400 : 200, resource.title, await navUser(req, session), html`
${done ? message('success', done) : ''}
${creates ? html`<p><a class="button" href="/backoffice/${resource.slug}/nouveau/">${resource.create!.title}</a></p>` : ''}
<form method="get" action="/backoffice/${resource.slug}/" class="filters card" aria-label="Filtres">
  ${resource.list.filters.map((filter) => filterInput(filter, list.properties[filter.key]!, raw[filter.key] ?? '', errors[filter.key], options[filter.key]))}
  <div class="filter-actions">
    <button type="submit">Filtrer</button>
    <a href="/backoffice/${resource.slug}/">Effacer les filtres</a>
  </div>
</form>
${otherErrors.length ? message('error', otherErrors.join(' ')) : ''}
${Object.keys(errors).length ? message('error', 'Corrigez les filtres signalés.') : ''}
${result && resource.list.exportPath ? exportLinks(resource.list.exportPath, raw) : ''}
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

const NO_BODY: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

interface CompiledForm<Spec extends FormSpec = FormSpec> {
  spec: Spec;
  schema: JsonSchema;
  validate: ValidateFunction;
  /** The SQL call of the form for a row (null: a creation) and a validated body. */
  statement: (id: number | null, body: Record<string, unknown>, deps: BackofficeDeps) => { text: string; values: unknown[] };
  /** The call may delete rows naming files: the form's `purgesFiles`, or its manifest route's `purgeStorageAfterCommit`. */
  purgesFiles: boolean;
}

type CompiledAction = CompiledForm<Action<Record<string, unknown>>>;

function compileForm<Spec extends FormSpec>(resource: Resource, spec: Spec): CompiledForm<Spec> {
  if (spec.operationId) {
    const route = manifestRoute(resource, spec.operationId);
    const schema = route.body ?? NO_BODY;
    const text = sqlText(route);
    return {
      spec, schema, validate: compileValidator(schema, false),
      statement: (id, body, deps) => ({
        text, values: sqlValues(route, { params: id === null ? {} : { id }, query: {}, body, page: 1, pageSize: 1, config: deps.config }),
      }),
      purgesFiles: Boolean(spec.purgesFiles || route.purgeStorageAfterCommit),
    };
  }
  const call = spec.call;
  if (!call) throw new Error(`back-office ${resource.slug}: the form « ${spec.title} » has neither operationId nor call`);
  const schema = spec.body ?? NO_BODY;
  return {
    spec, schema, validate: compileValidator(schema, false),
    statement: (id, body, deps) => statement(call, { id, body, config: deps.config }),
    purgesFiles: Boolean(spec.purgesFiles),
  };
}

interface FormState {
  values: Record<string, unknown>;
  errors: FieldErrors;
}

/**
 * One form of the registry: CSRF token, the errors of keys that have no visible field on top,
 * the inputs with their errors under them, the button.
 */
function formView(prefix: string, action: string, compiled: CompiledForm, values: Record<string, unknown>, errors: FieldErrors,
  options: Record<string, Option[]>, csrf: string, danger = false): Html {
  const { spec, schema } = compiled;
  const shown = new Set(spec.fields.filter((f) => f.widget !== 'hidden').map((f) => f.key));
  const general = Object.entries(errors).filter(([key]) => !shown.has(key)).flatMap(([, m]) => m);
  // Announced once on top (role=alert), the details stay under their fields.
  const fieldErrors = Object.keys(errors).some((key) => shown.has(key));
  return html`<form method="post" action="${action}" novalidate>
    <input type="hidden" name="csrf_token" value="${csrf}">
    ${general.length ? message('error', general.join(' ')) : ''}
    ${fieldErrors ? message('error', 'Rien n’a été enregistré : corrigez les champs signalés.') : ''}
    ${formFields(prefix, spec.fields, schema, values, errors, options)}
    <button type="submit"${danger ? trusted(' class="danger"') : ''}>${spec.submitLabel}</button>
  </form>`;
}

/** An empty input of a field that admits no null reads « obligatoire », not a type error. */
function emptyIsMissing(body: Record<string, unknown>, errors: FieldErrors): FieldErrors {
  // A null in the body is an empty input; an error on it can only be that null is not admitted.
  return Object.fromEntries(Object.entries(errors).map(([key, messages]) => [key, body[key] === null ? ['Ce champ est obligatoire.'] : messages]));
}

/**
 * Validates the posted form against its schema and runs its SQL call as the signed-in account.
 * Returns the call's result, or the errors to show on the form again (a refusal of the rules:
 * 400 under its field, 403 and 409 on top; a 404 stays the page's answer).
 */
async function submitForm(req: Request, session: BackofficeSession, compiled: CompiledForm, id: number | null):
  Promise<{ ok: true; result: unknown } | { ok: false; status: number; state: FormState }> {
  const deps = req.app.locals.backoffice as BackofficeDeps;
  const body = formBody(compiled.spec.fields, compiled.schema, req.body ?? {});
  if (!compiled.validate(body)) return { ok: false, status: 400, state: { values: body, errors: emptyIsMissing(body, toFieldErrors(compiled.validate.errors)) } };
  try {
    const { rows } = await asUser(req, session, (client) => client.query<{ result?: unknown }>(compiled.statement(id, body, deps)));
    if (compiled.purgesFiles) await purgeAfterCommit(deps.pool, deps.storage, { frozenNow: deps.config.frozenNow?.(), log: req.log });
    return { ok: true, result: rows[0]?.result ?? null };
  } catch (error) {
    const known = apiErrorFromPg(error);
    if (!known || known.status === 404 || known.status >= 500) throw error;
    const errors = known.status === 400 ? (known.body as FieldErrors) : { non_field_errors: [String(known.body.detail)] };
    return { ok: false, status: known.status, state: { values: body, errors } };
  }
}

/** The message of a form page this account may not open: SQL's refusal of its post, if any. */
function refusal(state: FormState | null, fallback: string): string {
  const messages = state ? Object.values(state.errors).flat() : [];
  return messages.length ? messages.join(' ') : fallback;
}

/** The SQL reading one row of a resource by id ($1), as `result`. */
function rowReader(resource: Resource): (id: number, deps: BackofficeDeps) => { text: string; values: unknown[] } {
  const detail = resource.detail!;
  if (detail.read) {
    const call = detail.read;
    return (id, deps) => statement(call, { id, config: deps.config });
  }
  const route = manifestRoute(resource, detail.operationId ?? '');
  const text = sqlText(route);
  return (id, deps) => ({ text, values: sqlValues(route, { params: { id }, query: {}, body: {}, page: 1, pageSize: 1, config: deps.config }) });
}

const ID_PATTERN = /^[1-9]\d{0,9}$/;
const EDIT_SLUG = 'modifier';

/** The related rows of the detail page: read-only tables, one per block. */
async function relatedBlocks(resource: Resource, row: Record<string, unknown>, client: import('pg').PoolClient): Promise<Html> {
  const blocks = resource.detail!.related ?? [];
  const context: RowContext = { options: {}, filterLink: (filters) => listUrl(resource.slug, filters) };
  const parts: Html[] = [];
  for (const [i, block] of blocks.entries()) {
    const rows = await block.rows(row, client);
    parts.push(html`<section class="card related" aria-labelledby="lies-${i}">
  <h2 id="lies-${i}">${block.title}</h2>
  ${rows.length === 0 ? html`<p>${block.empty}</p>` : html`<div class="table-wrap"><table>
    <thead><tr>${block.columns.map((c) => html`<th scope="col">${c.label}</th>`)}</tr></thead>
    <tbody>${rows.map((r) => html`<tr>${block.columns.map((c) => c.rowHeader
      ? html`<th scope="row">${c.value(r, context)}</th>`
      : html`<td>${c.value(r, context)}</td>`)}</tr>`)}</tbody>
  </table></div>`}
</section>`);
  }
  return html`${parts}`;
}

/** The detail page of a row (related rows, the forms of the actions this account may take) and its edit page. */
function detailPage(resource: Resource, actions: CompiledAction[]) {
  const detail = resource.detail!;
  const read = rowReader(resource);
  const base = `/backoffice/${resource.slug}/`;
  const edit = detail.edit ? compileForm(resource, detail.edit) : null;

  async function load(req: Request, session: BackofficeSession, id: number, work: (row: Record<string, unknown>, abilities: Abilities, client: import('pg').PoolClient) => Promise<Html>) {
    const deps = req.app.locals.backoffice as BackofficeDeps;
    return asUser(req, session, async (client) => {
      const row = (await client.query<{ result: Record<string, unknown> }>(read(id, deps))).rows[0]!.result;
      const abilities: Abilities = detail.abilities ? await detail.abilities(client, id) : {};
      return { row, abilities, body: await work(row, abilities, client) };
    });
  }

  async function show(req: Request, res: Response, status: number, form: (FormState & { slug: string }) | null): Promise<void> {
    const session = requireUser(req, res);
    if (!session) return;
    const id = Number(req.params.id);
    let forms: CompiledAction[] = [];
    const options: Record<string, Record<string, Option[]>> = {};
    let editable = false;
    const { row, body } = await load(req, session, id, async (row, abilities, client) => {
      forms = actions.filter((a) => a.spec.allowed(row, abilities));
      editable = Boolean(edit?.spec.allowed(row, abilities));
      for (const a of forms) options[a.spec.slug] = await loadOptions(a.spec.fields, client, row);
      return html`${await detail.render(row, client)}${await relatedBlocks(resource, row, client)}`;
    });
    const done = req.query.fait === EDIT_SLUG ? edit?.spec.done
      : req.query.fait === 'cree' ? resource.create?.done
      : actions.find((a) => a.spec.slug === req.query.fait)?.spec.done;
    // A refused post of a form this account is not offered (forged, or the row changed meanwhile).
    const orphan = form && !forms.some((a) => a.spec.slug === form.slug) ? Object.values(form.errors).flat() : [];
    render(req, res, status, detail.title(row), await navUser(req, session), (csrf) => html`
<p><a href="${base}">← ${resource.title}</a></p>
${done && !form ? message('success', done) : ''}
${orphan.length ? message('error', orphan.join(' ')) : ''}
${editable ? html`<p><a class="button" href="${base}${id}/${EDIT_SLUG}/">${edit!.spec.title}</a></p>` : ''}
${body}
${forms.map((compiled) => {
      const { spec } = compiled;
      const state = form?.slug === spec.slug ? form : null;
      return html`<section class="card action" aria-labelledby="action-${spec.slug}">
  <h2 id="action-${spec.slug}">${spec.title}</h2>
  ${spec.intro ? html`<p>${spec.intro}</p>` : ''}
  ${formView(`a-${spec.slug}`, `${base}${id}/${spec.slug}/`, compiled, state?.values ?? spec.initial(row), state?.errors ?? {},
    options[spec.slug] ?? {}, csrf, spec.danger)}
</section>`;
    })}`);
  }

  /** The edit page: the row's form alone, refused (403 page) to an account it does not allow. */
  async function showEdit(req: Request, res: Response, status: number, state: FormState | null): Promise<void> {
    const session = requireUser(req, res);
    if (!session || !edit) return;
    const id = Number(req.params.id);
    let allowed = false;
    let options: Record<string, Option[]> = {};
    const { row } = await load(req, session, id, async (row, abilities, client) => {
      allowed = edit.spec.allowed(row, abilities);
      if (allowed) options = await loadOptions(edit.spec.fields, client, row);
      return html``;
    });
    const user = await navUser(req, session);
    if (!allowed) {
      render(req, res, 403, 'Action refusée', user, message('error', refusal(state, 'Votre compte ne peut pas modifier cette fiche.')));
      return;
    }
    render(req, res, status, `${edit.spec.title} — ${detail.title(row)}`, user, (csrf) => html`
<p><a href="${base}${id}/">← ${detail.title(row)}</a></p>
<section class="card action">
  ${edit.spec.intro ? html`<p>${edit.spec.intro}</p>` : ''}
  ${formView('e', `${base}${id}/${EDIT_SLUG}/`, edit, state?.values ?? edit.spec.initial(row), state?.errors ?? {}, options, csrf)}
</section>`);
  }

  const router = express.Router();
  router.get(`/${resource.slug}/:id/`, asyncRoute(async (req, res, next) => {
    if (!ID_PATTERN.test(String(req.params.id))) {
      next();
      return;
    }
    await show(req, res, 200, null);
  }));
  if (edit) {
    router.get(`/${resource.slug}/:id/${EDIT_SLUG}/`, asyncRoute(async (req, res, next) => {
      if (!ID_PATTERN.test(String(req.params.id))) {
        next();
        return;
      }
      await showEdit(req, res, 200, null);
    }));
    router.post(`/${resource.slug}/:id/${EDIT_SLUG}/`, asyncRoute(async (req, res, next) => {
      if (!ID_PATTERN.test(String(req.params.id))) {
        next();
        return;
      }
      const session = requireUser(req, res);
      if (!session) return;
      const id = Number(req.params.id);
      const outcome = await submitForm(req, session, edit, id);
      if (!outcome.ok) {
        await showEdit(req, res, outcome.status, outcome.state);
        return;
      }
      res.redirect(303, `${base}${id}/?fait=${EDIT_SLUG}`);
    }));
  }
  router.post(`/${resource.slug}/:id/:action/`, asyncRoute(async (req, res, next) => {
    const compiled = actions.find((a) => a.spec.slug === req.params.action);
    if (!compiled || !ID_PATTERN.test(String(req.params.id))) {
      next();
      return;
    }
    const session = requireUser(req, res);
    if (!session) return;
    const id = Number(req.params.id);
    const outcome = await submitForm(req, session, compiled, id);
    if (!outcome.ok) {
      await show(req, res, outcome.status, { slug: compiled.spec.slug, ...outcome.state });
      return;
    }
    res.redirect(303, compiled.spec.afterwards === 'list' ? `${base}?fait=${compiled.spec.slug}` : `${base}${id}/?fait=${compiled.spec.slug}`);
  }));
  return router;
}

/** The create page: GET shows the form, POST creates, then the new row's detail (or the list). */
function createPage(resource: Resource) {
  const create = compileForm(resource, resource.create!);
  const base = `/backoffice/${resource.slug}/`;
  const action = `${base}nouveau/`;

  async function show(req: Request, res: Response, session: BackofficeSession, status: number, state: FormState | null): Promise<void> {
    const { allowed, options } = await asUser(req, session, async (client) => {
      const allowed = await create.spec.allowed(client);
      return { allowed, options: allowed ? await loadOptions(create.spec.fields, client) : {} };
    });
    const user = await navUser(req, session);
    if (!allowed) {
      render(req, res, 403, 'Action refusée', user, message('error', refusal(state, 'Votre compte ne peut pas créer de fiche ici.')));
      return;
    }
    render(req, res, status, create.spec.title, user, (csrf) => html`
<p><a href="${base}">← ${resource.title}</a></p>
<section class="card action">
  ${create.spec.intro ? html`<p>${create.spec.intro}</p>` : ''}
  ${formView('c', action, create, state?.values ?? create.spec.initial?.() ?? {}, state?.errors ?? {}, options, csrf)}
</section>`);
  }

  const router = express.Router();
  router.get(`/${resource.slug}/nouveau/`, asyncRoute(async (req, res) => {
    const session = requireUser(req, res);
    if (session) await show(req, res, session, 200, null);
  }));
  router.post(`/${resource.slug}/nouveau/`, asyncRoute(async (req, res) => {
    const session = requireUser(req, res);
    if (!session) return;
    const outcome = await submitForm(req, session, create, null);
    if (!outcome.ok) {
      await show(req, res, session, outcome.status, outcome.state);
      return;
    }
    const id = (outcome.result as { id?: unknown } | null)?.id;
    res.redirect(303, resource.detail && typeof id === 'number' ? `${base}${id}/?fait=cree` : `${base}?fait=cree`);
  }));
  return router;
}

/** The list and detail pages of the registry's resources. */
export function resourceRoutes(resources: readonly Resource[]): express.Router {
  const router = express.Router();
  for (const resource of resources) {
    const actions = (resource.detail?.actions ?? []).map((action) => compileForm(resource, action));
    router.get(`/${resource.slug}/`, listPage(compileList(resource), actions.filter((a) => a.spec.afterwards === 'list').map((a) => a.spec)));
    if (resource.create) router.use(createPage(resource));
    if (resource.detail) router.use(detailPage(resource, actions));
  }
  return router;
}
