import type { RouteModule } from '../openapi.js';
import { bodyField, SENT_KEYS, type ArgSpec, type RouteSpec } from '../route.js';
import { s, type JsonSchema } from '../schema.js';
import { INPUT_CONTRACT } from '../input-contract.js';

const READ_RULE = 'Lisible par tout compte authentifié.';
const WRITE_RULE = 'Écriture réservée aux comptes du personnel d’administration (statut staff) ; les autres comptes reçoivent 403.';
const SCOPE_RULE =
  '`scope=perimeter` (opt-in) restreint la liste aux établissements du périmètre de l’appelant : ' +
  'les établissements sur lesquels il détient `absences.view_absence_queue` (encadrement) ou `employee.view_payroll` (paie) — ceux de ses rôles, un rôle sans établissement couvrant toute l’association, étendus par ses astreintes en cours (début inclus, fin exclue) — ; pour un compte qui ne détient ni l’une ni l’autre, ses propres lieux de travail. Sans `scope`, la liste est entière.';

const pageArgs: ArgSpec[] = [
  { name: 'p_page', from: 'page', cast: 'int' },
  { name: 'p_page_size', from: 'page_size', cast: 'int' },
];
const idArg: ArgSpec = { name: 'p_id', from: 'path', key: 'id', cast: 'int' };

interface Referential {
  path: string;
  name: string;
  label: string;
  fn: string;
  schema: string;
  listQuery?: JsonSchema;
  listArgs: ArgSpec[];
  listDescription: string;
  body: Record<string, JsonSchema>;
  /** The body's keys as the typed arguments of the create, replace and update functions. */
  fields: ArgSpec[];
  required: string[];
  deleteDescription: string;
}

/** The seven routes of a staff-written referential: list, read, create, replace, update, delete. */
function referentialRoutes(r: Referential): RouteSpec[] {
  const item = `/api/${r.path}/{id}/`;
  const tags = ['Référentiels'];
  return [
    {
      method: 'get',
      path: `/api/${r.path}/`,
      operationId: `${r.name}_list`,
      summary: `${r.label} (liste)`,
      description: `${READ_RULE} ${r.listDescription}`,
      tags,
      auth: 'account',
      ...(r.listQuery ? { query: r.listQuery } : {}),
      paginated: true,
      sql: { fn: `app_public.${r.fn}s_list`, args: [...r.listArgs, ...pageArgs] },
      status: 200,
      response: s.ref(r.schema),
      errors: [400],
    },
    {
      method: 'post',
      path: `/api/${r.path}/`,
      operationId: `${r.name}_create`,
      summary: `${r.label} : créer`,
      description: WRITE_RULE,
      tags,
      auth: 'staff',
      permission: 'is_staff',
      body: s.object(r.body, r.required),
      sql: { fn: `app_public.${r.fn}_create`, args: r.fields },
      status: 201,
      response: s.ref(r.schema),
      errors: [400, 403],
    },
    {
      method: 'get',
      path: item,
      operationId: `${r.name}_read`,
      summary: `${r.label} : lire`,
      description: READ_RULE,
      tags,
      auth: 'account',
      pathParams: { id: s.id() },
      sql: { fn: `app_public.${r.fn}_get`, args: [idArg] },
      status: 200,
      response: s.ref(r.schema),
      errors: [404],
    },
    {
      method: 'put',
      path: item,
      operationId: `${r.name}_update`,
      summary: `${r.label} : modifier (champs obligatoires compris)`,
      description: WRITE_RULE,
      tags,
      auth: 'staff',
      permission: 'is_staff',
      pathParams: { id: s.id() },
      body: s.object(r.body, r.required),
      sql: { fn: `app_public.${r.fn}_replace`, args: [idArg, ...r.fields, SENT_KEYS] },
      status: 200,
      response: s.ref(r.schema),
      errors: [400, 403, 404],
    },
    {
      method: 'patch',
      path: item,
      operationId: `${r.name}_partial_update`,
      summary: `${r.label} : modifier les champs envoyés`,
      description: WRITE_RULE,
      tags,
      auth: 'staff',
      permission: 'is_staff',
      pathParams: { id: s.id() },
      body: s.object(r.body),
      sql: { fn: `app_public.${r.fn}_update`, args: [idArg, ...r.fields, SENT_KEYS] },
      status: 200,
      response: s.ref(r.schema),
      errors: [400, 403, 404],
    },
    {
      method: 'delete',
      path: item,
      operationId: `${r.name}_delete`,
      summary: `${r.label} : supprimer`,
      description: `${WRITE_RULE} ${r.deleteDescription}`,
      tags,
      auth: 'staff',
      permission: 'is_staff',
      pathParams: { id: s.id() },
      sql: { fn: `app_public.${r.fn}_delete`, args: [idArg] },
      status: 204,
      errors: [400, 403, 404],
    },
  ];
}

const scopeQuery = { scope: s.enum(['perimeter'], { description: 'perimeter : restreindre au périmètre de l’appelant.' }) };

export const referentialModule: RouteModule = {
  schemas: {
    Division: s.object(
      {
        id: s.int(),
        name: s.string(),
        establishments: s.array(s.int(), { description: 'Établissements de la division.' }),
        created_at: s.dateTime(),
        updated_at: s.dateTime(),
      },
      ['id', 'name', 'establishments', 'created_at', 'updated_at'],
    ),
    Establishment: s.object(
      {
        id: s.int(),
        name: s.string(),
        count_base: s.enum(['ouvrables', 'ouvres'], { description: 'Base de décompte des congés : ouvrables (lundi-samedi) ou ouvrés (lundi-vendredi).' }),
        division: s.nullable(s.int()),
        division_name: s.nullable(s.string()),
        created_at: s.dateTime(),
        updated_at: s.dateTime(),
      },
      ['id', 'name', 'count_base', 'division', 'division_name', 'created_at', 'updated_at'],
    ),
    ContractType: s.object(
      { id: s.int(), code: s.string(), name: s.string(), is_temporary_work: s.bool({ description: 'Contrat d’intérim.' }) },
      ['id', 'code', 'name', 'is_temporary_work'],
    ),
  },
  routes: [
    ...referentialRoutes({
      path: 'divisions',
      name: 'divisions',
      label: 'Divisions',
      fn: 'division',
      schema: 'Division',
      listQuery: s.object(scopeQuery),
      listArgs: [{ name: 'p_scope', from: 'query', key: 'scope', cast: 'text' }],
      listDescription: `${SCOPE_RULE} Avec scope=perimeter : les divisions qui comptent un établissement du périmètre.`,
      body: { name: s.text(INPUT_CONTRACT.nameMaxLength) },
      fields: [bodyField('name', 'text')],
      required: ['name'],
      deleteDescription: 'Les établissements de la division restent, sans division.',
    }),
    ...referentialRoutes({
      path: 'establishments',
      name: 'establishments',
      label: 'Établissements',
      fn: 'establishment',
      schema: 'Establishment',
      listQuery: s.object({ ...scopeQuery, division: s.id('Établissements de cette division.') }),
      listArgs: [
        { name: 'p_scope', from: 'query', key: 'scope', cast: 'text' },
        { name: 'p_division', from: 'query', key: 'division', cast: 'int' },
      ],
      listDescription: SCOPE_RULE,
      body: {
        name: s.text(INPUT_CONTRACT.nameMaxLength),
        count_base: s.enum(['ouvrables', 'ouvres'], { description: 'ouvrables par défaut.' }),
        division: s.nullable(s.id()),
      },
      fields: [bodyField('name', 'text'), bodyField('count_base', 'text'), bodyField('division', 'int')],
      required: ['name'],
      deleteDescription:
        'Un établissement encore utilisé (salariés, postes, équipes, attributions de rôle, astreintes, événements) n’est pas supprimé : 400.',
    }),
    ...referentialRoutes({
      path: 'contract-types',
      name: 'contract_types',
      label: 'Types de contrat',
      fn: 'contract_type',
      schema: 'ContractType',
      listArgs: [],
      listDescription: 'Par ordre de création (CDI, CDD, Intérim, Apprentissage, Stage, puis les types ajoutés).',
      body: {
        code: s.string({ maxLength: 30 }),
        name: s.text(INPUT_CONTRACT.nameMaxLength),
        is_temporary_work: s.bool(),
      },
      fields: [bodyField('code', 'text'), bodyField('name', 'text'), bodyField('is_temporary_work', 'boolean')],
      required: ['code', 'name'],
      deleteDescription: 'Un type encore utilisé (contrats, motifs d’absence) n’est pas supprimé : 400.',
    }),
  ],
};
