import type { RouteSpec } from './route.js';
import { paginated, s, type JsonSchema } from './schema.js';
import { INPUT_CONTRACT } from './input-contract.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './router.js';

/** A group of routes and the component schemas their responses reference. */
export interface RouteModule {
  routes: RouteSpec[];
  schemas?: Record<string, JsonSchema>;
}

const STATUS_TEXT: Record<number, string> = {
  200: 'Succès',
  201: 'Créé',
  204: 'Sans contenu',
  400: 'Données invalides : messages par champ (non_field_errors hors champ)',
  401: 'Authentification absente, invalide ou compte inactif',
  403: 'Action interdite pour ce compte',
  404: 'Introuvable (ou hors du périmètre de l’appelant)',
  405: 'Méthode non autorisée',
  409: 'Version périmée : quelqu’un a déjà décidé ; rechargez',
  415: 'Corps dans un autre format que JSON (Content-Type: application/json ; multipart/form-data pour un dépôt de fichier) : rien n’a été écrit',
  429: 'Trop de requêtes (voir Retry-After)',
  503: 'Base de données indisponible ou connexion perdue : rien n’a été écrit ; réessayez (voir Retry-After)',
  500: 'Erreur interne',
};

const BASE_SCHEMAS: Record<string, JsonSchema> = {
  ValidationError: {
    type: 'object',
    description: 'Messages d’erreur par champ à corriger ; non_field_errors pour une erreur liée à aucun champ.',
    additionalProperties: s.array(s.string()),
    example: { date: ['La date ne peut pas être antérieure de plus de ' + INPUT_CONTRACT.retroactivityDays + ' jours.'] },
  },
  Detail: s.object({ detail: s.string() }, ['detail']),
};

function errorResponse(status: number, body?: JsonSchema): JsonSchema {
  const headers: JsonSchema = {};
  if (status === 429 || status === 503) headers['Retry-After'] = { description: 'Secondes à attendre', schema: s.int() };
  if (status === 405) headers.Allow = { description: 'Méthodes autorisées', schema: s.string() };
  if (status === 401) headers['WWW-Authenticate'] = { schema: s.string() };
  return {
    description: STATUS_TEXT[status] ?? `HTTP ${status}`,
    ...(Object.keys(headers).length ? { headers } : {}),
    content: {
      'application/json': { schema: body ?? s.ref(status === 400 ? 'ValidationError' : 'Detail') },
    },
  };
}

function parameters(route: RouteSpec): JsonSchema[] {
  const result: JsonSchema[] = [];
  for (const [name, schema] of Object.entries(route.pathParams ?? {})) {
    result.push({ name, in: 'path', required: true, schema });
  }
  const props = (route.query?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((route.query?.required as string[] | undefined) ?? []);
  for (const [name, schema] of Object.entries(props)) {
    const { description, ...rest } = schema;
    result.push({ name, in: 'query', required: required.has(name), schema: rest, ...(description ? { description } : {}) });
  }
  if (route.paginated) {
    result.push({ name: 'page', in: 'query', required: false, schema: s.int({ minimum: 1 }), description: 'Page (à partir de 1).' });
    if (typeof route.paginated !== 'object') {
      result.push({
        name: 'page_size',
        in: 'query',
        required: false,
        schema: s.int({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE }),
        description: `Taille de page (défaut ${DEFAULT_PAGE_SIZE}, au plus ${MAX_PAGE_SIZE}).`,
      });
    }
  }
  return result;
}

function requestBody(route: RouteSpec): JsonSchema | undefined {
  if (!route.body) return undefined;
  const content: JsonSchema = { 'application/json': { schema: route.body } };
  if (route.multipart) {
    const props = { ...((route.body.properties as Record<string, JsonSchema>) ?? {}) };
    for (const field of route.multipart.files) {
      props[field] = s.array({ type: 'string', contentMediaType: 'application/octet-stream' }, {
        description: `Fichiers PDF, JPG ou PNG (contrôlés par leur contenu), ${route.multipart.maxFileBytes / (1024 * 1024)} Mo au plus chacun ; clé répétée une fois par fichier.`,
      });
    }
    content['multipart/form-data'] = {
      schema: { ...route.body, properties: props },
      encoding: Object.fromEntries(
        [...route.multipart.files, ...(route.multipart.arrays ?? [])].map((field) => [field, { style: 'form', explode: true }]),
      ),
    };
  }
  return { required: Boolean((route.body.required as string[] | undefined)?.length), content };
}

function successResponse(route: RouteSpec): JsonSchema {
  const description = route.status === 204 ? STATUS_TEXT[204]! : (STATUS_TEXT[route.status] ?? 'Succès');
  const headers = Object.fromEntries(
    Object.entries(route.headers ?? {}).map(([name, value]) => [name, { schema: s.string({ const: value }) }]),
  );
  const withHeaders = Object.keys(headers).length ? { headers } : {};
  if (route.status === 204) return { description, ...withHeaders };
  if (route.responseContentTypes) {
    const content = Object.fromEntries(route.responseContentTypes.map((type) => [type, { schema: { type: 'string', contentMediaType: type } }]));
    return { description, ...withHeaders, content };
  }
  const schema = route.response ?? s.anyObject();
  return {
    description,
    ...withHeaders,
    content: { 'application/json': { schema: route.paginated ? paginated(schema) : schema } },
  };
}

/** The OpenAPI 3.1 document, built from the same manifest as the router. */
export function buildOpenApi(modules: RouteModule[], info: { title: string; version: string; description: string }): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const schemas: Record<string, JsonSchema> = { ...BASE_SCHEMAS };
  for (const module of modules) {
    for (const [name, schema] of Object.entries(module.schemas ?? {})) {
      // Two modules naming the same component: one would silently replace the other's shape.
      if (name in schemas) throw new Error(`OpenAPI component ${name} is declared twice`);
      schemas[name] = schema;
    }
  }
  for (const route of modules.flatMap((module) => module.routes)) {
    const statuses = new Set([...route.errors, 429, 503]);
    if (route.auth !== 'public') statuses.add(401);
    // Bodies and query strings are validated (400 under the field); so are the list's page and page_size.
    // A POST, PUT or PATCH without a declared body still reads one: malformed JSON or a non-object is a 400.
    if (route.body || route.query || route.paginated || ['post', 'put', 'patch'].includes(route.method)) statuses.add(400);
    // A path naming no row; a page beyond the last one.
    if (route.pathParams || route.paginated) statuses.add(404);
    // An unsafe method: a body that is not JSON (or multipart on an upload route) is a 415; with the
    // back-office session cookie and without X-CSRFToken, a 403.
    if (route.method !== 'get') {
      statuses.add(415);
      statuses.add(403);
    }
    const responses: Record<string, JsonSchema> = { [String(route.status)]: successResponse(route) };
    for (const [status, text] of Object.entries(route.otherResponses ?? {})) responses[status] = { description: text };
    for (const status of [...statuses].sort()) responses[String(status)] = errorResponse(status, route.errorBodies?.[status]);
    const description = [route.description, route.permission ? `Permission : \`${route.permission}\`.` : '']
      .filter(Boolean)
      .join('\n\n');
    (paths[route.path] ??= {})[route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(description ? { description } : {}),
      tags: route.tags,
      security: route.auth === 'public' ? [] : [{ bearerAuth: [] }],
      parameters: parameters(route),
      ...(route.body ? { requestBody: requestBody(route) } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/' }],
    tags: [...new Set(modules.flatMap((m) => m.routes.flatMap((r) => r.tags)))].map((name) => ({ name })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Jeton obtenu sur /api/auth/token/, valable 6 heures.' },
      },
    },
  };
}
