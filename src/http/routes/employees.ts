import { sendStoredFile } from '../downloads.js';
import type { RouteModule } from '../openapi.js';
import { bodyField, SENT_KEYS, type ArgSpec, type RouteSpec } from '../route.js';
import { s } from '../schema.js';
import { INPUT_CONTRACT, megabytesFr } from '../input-contract.js';
import { DOCUMENT_CONTENT_TYPES } from '../../storage/file-type.js';
import { MAX_DOCUMENT_BYTES } from './documents.js';

const SSN_DESCRIPTION =
  'Numéro de sécurité sociale (13 chiffres, ou 15 avec la clé ; 2A/2B pour la Corse). La clé est absente ' +
  '(et non nulle) des réponses pour un lecteur sans `employee.view_social_security_number` sur ce salarié ; ' +
  'toute écriture qui contient la clé par un tel compte répond 403 et n’écrit rien.';

const contractInput = s.object(
  {
    id: s.id('Contrat existant à modifier ; absent pour créer un contrat.'),
    type: s.id('Type de contrat (voir /api/contract-types/).'),
    start_date: s.date(),
    end_date: s.nullable(s.date()),
    trial_end_date: s.nullable(s.date({ description: 'Fin de période d’essai, entre le début et la fin du contrat.' })),
    job_title: s.nullable(s.text(INPUT_CONTRACT.jobTitleMaxLength)),
    weekly_hours: s.nullable({ type: ['number', 'string'], description: 'Durée hebdomadaire, de 0 (exclu) à 48 heures.' }),
  },
  ['type', 'start_date'],
);

const assignmentInput = s.object(
  {
    id: s.id('Affectation existante à modifier ; absente pour en créer une.'),
    team: s.id('Équipe.'),
    start_date: s.nullable(s.date({ description: 'Début (inclus) ; null = sans borne.' })),
    end_date: s.nullable(s.date({ description: 'Fin (incluse) ; null = sans borne.' })),
  },
  ['team'],
);

const employeeProperties = {
  first_name: s.text(INPUT_CONTRACT.personNameMaxLength),
  last_name: s.text(INPUT_CONTRACT.personNameMaxLength),
  professional_email: s.nullable(s.text(INPUT_CONTRACT.emailMaxLength, { description: 'Adresse professionnelle ; reçoit l’invitation à définir le mot de passe.' })),
  birth_date: s.nullable(s.date()),
  is_polyvalent: s.bool({ description: 'Agent polyvalent (une absence en période d’essai donne un avertissement).' }),
  main_establishment: s.nullable(s.id('Établissement principal ; un rédacteur restreint choisit un établissement de son périmètre.')),
  secondary_establishments: s.array(s.id(), { description: 'Établissements secondaires (remplace la liste).' }),
  social_security_number: s.nullable(s.string({ maxLength: 21, description: SSN_DESCRIPTION })),
  contracts: s.array(contractInput, {
    description:
      'Remplace les contrats : un élément avec id modifie ce contrat, sans id en crée un, un contrat absent de la liste est supprimé. ' +
      'Les contrats d’un salarié ne se chevauchent pas. Absente : contrats inchangés.',
  }),
  teams: s.array(assignmentInput, {
    description: 'Remplace les affectations aux équipes, même règle que contracts. Absente : affectations inchangées.',
  }),
};

/** The record's keys as the typed arguments of employee_create, employee_replace and employee_update. */
const employeeArgs: ArgSpec[] = [
  bodyField('first_name', 'text'),
  bodyField('last_name', 'text'),
  bodyField('professional_email', 'text'),
  bodyField('birth_date', 'date'),
  bodyField('is_polyvalent', 'boolean'),
  bodyField('main_establishment', 'int'),
  bodyField('secondary_establishments', 'int[]'),
  bodyField('social_security_number', 'text'),
  // JSON lists, read item by item in SQL (an item's id says which contract or assignment it keeps).
  bodyField('contracts', 'jsonb'),
  bodyField('teams', 'jsonb'),
];

const WRITE_RULES =
  'Écriture réservée à `employee.change_employee_record` sur les salariés de son périmètre (un rédacteur restreint ' +
  'n’ajoute ni ne retire d’établissement, d’équipe ou d’affectation hors de son périmètre). Erreurs de validation en 400 ' +
  'sous le champ à corriger (`contracts` et `teams` pour les listes, message préfixé par le rang de l’élément).';

const idParam = { id: s.id() };
const attachmentParams = { id: s.id(), attachment_id: s.id() };

function pageArgs() {
  return [
    { name: 'p_page', from: 'page', cast: 'int' },
    { name: 'p_page_size', from: 'page_size', cast: 'int' },
  ] as const;
}

const employeeRoutes: RouteSpec[] = [
  {
    method: 'get',
    path: '/api/employees/',
    operationId: 'employees_list',
    summary: 'Annuaire des salariés',
    description:
      'Les détenteurs de `employee.view_employee_directory` (encadrement) lisent tout l’annuaire ; le Service Paie lit ' +
      'les salariés de son périmètre de paie ; tout autre compte lit sa propre fiche. `scope=perimeter` (opt-in) restreint ' +
      'la liste aux salariés rattachés (établissement principal, secondaire ou équipe du jour) aux établissements du ' +
      'périmètre de l’appelant : les établissements sur lesquels il détient `absences.view_absence_queue` (encadrement) ou `employee.view_payroll` (paie) — ceux de ses rôles, un rôle sans établissement couvrant toute l’association, étendus par ses astreintes en cours (début inclus, fin exclue) — ; pour un compte qui ne détient ni l’une ni l’autre, ses propres lieux de travail. Sans `scope`, la liste est entière.',
    tags: ['Salariés'],
    auth: 'account',
    permission: 'employee.view_employee_directory',
    query: s.object({
      scope: s.enum(['perimeter'], { description: 'perimeter : restreindre au périmètre de l’appelant.' }),
      search: s.string({ maxLength: 100, description: 'Recherche sur le prénom, le nom ou l’e-mail.' }),
      establishment: s.id('Salariés rattachés à cet établissement (principal, secondaire ou équipe du jour).'),
      team: s.id('Salariés affectés aujourd’hui à cette équipe.'),
    }),
    paginated: true,
    sql: {
      fn: 'app_public.employees_list',
      args: [
        { name: 'p_scope', from: 'query', key: 'scope', cast: 'text' },
        { name: 'p_search', from: 'query', key: 'search', cast: 'text' },
        { name: 'p_establishment', from: 'query', key: 'establishment', cast: 'int' },
        { name: 'p_team', from: 'query', key: 'team', cast: 'int' },
        ...pageArgs(),
      ],
    },
    status: 200,
    response: s.ref('Employee'),
    errors: [400],
  },
  {
    method: 'post',
    path: '/api/employees/',
    operationId: 'employees_create',
    summary: 'Créer une fiche salarié (et son compte)',
    description:
      'Crée la fiche, ses contrats et affectations, puis ouvre son compte sans mot de passe utilisable : identifiant ' +
      '`username` fourni, ou dérivé du nom (prenom.nom, puis prenom.nom2…). Le compte reçoit le rôle Salarié ; une ' +
      'invitation à définir le mot de passe est mise en file quand la fiche a une adresse professionnelle ' +
      '(`invitation_queued`), sinon la personne passe par la réinitialisation du mot de passe. ' + WRITE_RULES,
    tags: ['Salariés'],
    auth: 'account',
    permission: 'employee.change_employee_record',
    body: s.object(
      { ...employeeProperties, username: s.text(INPUT_CONTRACT.usernameMaxLength, {
          description: `Identifiant du compte (2 à ${INPUT_CONTRACT.usernameMaxLength} caractères : lettres, chiffres, . _ @ + -).`,
        }) },
      ['first_name', 'last_name'],
    ),
    // p_sent: the number's key, even null, is refused to whoever may not read it.
    sql: { fn: 'app_public.employee_create', args: [...employeeArgs, bodyField('username', 'text'), SENT_KEYS] },
    status: 201,
    response: s.ref('EmployeeCreated'),
    errors: [400, 403],
  },
  {
    method: 'get',
    path: '/api/employees/{id}/',
    operationId: 'employees_read',
    summary: 'Fiche d’un salarié',
    description: 'Mêmes lecteurs que la liste ; une fiche illisible répond 404.',
    tags: ['Salariés'],
    auth: 'account',
    pathParams: idParam,
    sql: { fn: 'app_public.employee_get', args: [{ name: 'p_id', from: 'path', key: 'id', cast: 'int' }] },
    status: 200,
    response: s.ref('Employee'),
    errors: [404],
  },
  {
    method: 'put',
    path: '/api/employees/{id}/',
    operationId: 'employees_update',
    summary: 'Modifier une fiche salarié (prénom et nom obligatoires)',
    description:
      'Comme PATCH, avec `first_name` et `last_name` obligatoires ; les clés absentes restent inchangées. ' + WRITE_RULES +
      ' Sans le droit d’écrire les fiches : 403 ; une fiche hors du périmètre d’écriture, ou illisible : 404.',
    tags: ['Salariés'],
    auth: 'account',
    permission: 'employee.change_employee_record',
    pathParams: idParam,
    body: s.object(employeeProperties, ['first_name', 'last_name']),
    sql: {
      fn: 'app_public.employee_replace',
      args: [{ name: 'p_id', from: 'path', key: 'id', cast: 'int' }, ...employeeArgs, SENT_KEYS],
    },
    status: 200,
    response: s.ref('Employee'),
    errors: [400, 403, 404],
  },
  {
    method: 'patch',
    path: '/api/employees/{id}/',
    operationId: 'employees_partial_update',
    summary: 'Modifier une partie d’une fiche salarié',
    description: 'Seules les clés envoyées sont écrites. ' + WRITE_RULES,
    tags: ['Salariés'],
    auth: 'account',
    permission: 'employee.change_employee_record',
    pathParams: idParam,
    body: s.object(employeeProperties),
    sql: {
      fn: 'app_public.employee_update',
      args: [{ name: 'p_id', from: 'path', key: 'id', cast: 'int' }, ...employeeArgs, SENT_KEYS],
    },
    status: 200,
    response: s.ref('Employee'),
    errors: [400, 403, 404],
  },
];

const CONTACT_RULES =
  'Le salarié lit ses propres contacts ; `employee.view_emergency_contact` (Admin, RH n1, RH n2, DA, Manager n1, ' +
  'Manager n2) les lit sur son périmètre ; `employee.change_emergency_contact` (Admin, RH n1, RH n2) les écrit sur son ' +
  'périmètre. Sans la permission : 403 ; salarié hors du périmètre ou illisible : 404.';

const contactInput = s.object(
  {
    id: s.id('Contact existant (PUT seulement) ; absent pour en créer un.'),
    name: s.text(INPUT_CONTRACT.nameMaxLength),
    relationship: s.nullable(s.text(INPUT_CONTRACT.relationshipMaxLength, { description: 'Lien avec le salarié (conjoint, parent…).' })),
    phone: s.string({ maxLength: 24, description: 'Téléphone (06 12 34 56 78, +33 6 12 34 56 78…).' }),
    alternate_phone: s.nullable(s.string({ maxLength: 24 })),
    email: s.nullable(s.text(INPUT_CONTRACT.emailMaxLength)),
  },
  ['name', 'phone'],
);

const contactRoutes: RouteSpec[] = [
  {
    method: 'get',
    path: '/api/employees/{id}/emergency-contacts/',
    operationId: 'employees_emergency_contacts_list',
    summary: 'Contacts d’urgence d’un salarié',
    description: CONTACT_RULES,
    tags: ['Salariés'],
    auth: 'account',
    permission: 'employee.view_emergency_contact',
    pathParams: idParam,
    paginated: true,
    sql: {
      fn: 'app_public.emergency_contacts_list',
      args: [{ name: 'p_employee', from: 'path', key: 'id', cast: 'int' }, ...pageArgs()],
    },
    status: 200,
    response: s.ref('EmergencyContact'),
    errors: [403, 404],
  },
  {
    method: 'put',
    path: '/api/employees/{id}/emergency-contacts/',
    operationId: 'employees_emergency_contacts_replace',
    summary: 'Remplacer les contacts d’urgence d’un salarié',
    description:
      '`contacts` devient la liste, dans cet ordre (au plus 10) : un élément avec id modifie ce contact, sans id en crée un, ' +
      'un contact absent est supprimé ; une liste vide les supprime tous. Réponse : la liste, dans l’enveloppe des listes. ' +
      CONTACT_RULES,
    tags: ['Salariés'],
    auth: 'account',
    permission: 'employee.change_emergency_contact',
    pathParams: idParam,
    body: s.object({ contacts: s.array(contactInput, { maxItems: 10 }) }, ['contacts']),
    sql: {
      fn: 'app_public.emergency_contacts_replace',
      // A JSON list, read item by item in SQL (an item's id says which contact it keeps).
      args: [{ name: 'p_employee', from: 'path', key: 'id', cast: 'int' }, bodyField('contacts', 'jsonb')],
    },
    status: 200,
    response: s.object(
      { count: s.int(), next: { type: 'null' }, previous: { type: 'null' }, results: s.array(s.ref('EmergencyContact')) },
      ['count', 'next', 'previous', 'results'],
    ),
    errors: [400, 403, 404],
  },
  {
    method: 'post',
    path: '/api/employees/{id}/emergency-contacts/',
    operationId: 'employees_emergency_contacts_create',
    summary: 'Ajouter un contact d’urgence (en fin de liste, au plus 10)',
    description: CONTACT_RULES,
    tags: ['Salariés'],
    auth: 'account',
    permission: 'employee.change_emergency_contact',
    pathParams: idParam,
    body: contactInput,
    sql: {
      fn: 'app_public.emergency_contact_create',
      args: [
        { name: 'p_employee', from: 'path', key: 'id', cast: 'int' },
        bodyField('name', 'text'),
        bodyField('phone', 'text'),
        bodyField('relationship', 'text'),
        bodyField('alternate_phone', 'text'),
        bodyField('email', 'text'),
      ],
    },
    status: 201,
    response: s.ref('EmergencyContact'),
    errors: [400, 403, 404],
  },
];

const ATTACHMENT_RULES =
  'Le salarié lit ses propres pièces jointes ; `employee.view_employee_attachment` (Admin, RH n1, RH n2) les lit sur son ' +
  'périmètre ; `employee.change_employee_attachment` (Admin, RH n1, RH n2) les dépose, renomme et supprime. ' +
  'Sans la permission : 403 ; salarié hors du périmètre ou illisible : 404.';

const attachmentRoutes: RouteSpec[] = [
  {
    method: 'get',
    path: '/api/employees/{id}/attachments/',
    operationId: 'employees_attachments_list',
    summary: 'Pièces jointes de la fiche d’un salarié',
    description: ATTACHMENT_RULES,
    tags: ['Salariés'],
    auth: 'account',
    permission: 'employee.view_employee_attachment',
    pathParams: idParam,
    paginated: true,
    sql: {
      fn: 'app_public.employee_attachments_list',
      args: [
        { name: 'p_employee', from: 'path', key: 'id', cast: 'int' },
        { name: 'p_public_url', from: 'context', key: 'public_url', cast: 'text' },
        ...pageArgs(),
      ],
    },
    status: 200,
    response: s.ref('EmployeeAttachment'),
    errors: [403, 404],
  },
  {
    method: 'post',
    path: '/api/employees/{id}/attachments/',
    operationId: 'employees_attachments_create',
    summary: 'Déposer une pièce jointe (multipart : un fichier sous « file », titre facultatif)',
    description:
      'Corps multipart/form-data : `file` (un seul fichier PDF, JPG ou PNG, reconnu par son contenu, ' + megabytesFr(INPUT_CONTRACT.documentMaxBytes) + ' au plus) et ' +
      '`title` (facultatif, le nom du fichier par défaut). ' + ATTACHMENT_RULES,
    tags: ['Salariés'],
    auth: 'account',
    permission: 'employee.change_employee_attachment',
    pathParams: idParam,
    multipart: { files: ['file'], maxFileBytes: MAX_DOCUMENT_BYTES },
    body: s.object({ title: s.text(INPUT_CONTRACT.attachmentTitleMaxLength) }),
    sql: {
      fn: 'app_public.employee_attachment_create',
      args: [
        { name: 'p_employee', from: 'path', key: 'id', cast: 'int' },
        // The stored file's metadata from the multipart reader; SQL accepts only files of this request.
        bodyField('file', 'jsonb'),
        bodyField('title', 'text'),
        { name: 'p_public_url', from: 'context', key: 'public_url', cast: 'text' },
      ],
    },
    status: 201,
    response: s.ref('EmployeeAttachment'),
    errors: [400, 403, 404],
  },
  {
    method: 'put',
    path: '/api/employees/{id}/attachments/{attachment_id}/',
    operationId: 'employees_attachments_update',
    summary: 'Renommer une pièce jointe',
    description: ATTACHMENT_RULES,
    tags: ['Salariés'],
    auth: 'account',
    permission: 'employee.change_employee_attachment',
    pathParams: attachmentParams,
    body: s.object({ title: s.text(INPUT_CONTRACT.attachmentTitleMaxLength) }, ['title']),
    sql: {
      fn: 'app_public.employee_attachment_update',
      args: [
        { name: 'p_employee', from: 'path', key: 'id', cast: 'int' },
        { name: 'p_id', from: 'path', key: 'attachment_id', cast: 'int' },
        bodyField('title', 'text'),
        { name: 'p_public_url', from: 'context', key: 'public_url', cast: 'text' },
      ],
    },
    status: 200,
    response: s.ref('EmployeeAttachment'),
    errors: [400, 403, 404],
  },
  {
    method: 'delete',
    path: '/api/employees/{id}/attachments/{attachment_id}/',
    operationId: 'employees_attachments_delete',
    summary: 'Supprimer une pièce jointe (le fichier est effacé après validation)',
    description: ATTACHMENT_RULES,
    tags: ['Salariés'],
    auth: 'account',
    permission: 'employee.change_employee_attachment',
    pathParams: attachmentParams,
    sql: {
      fn: 'app_public.employee_attachment_delete',
      args: [
        { name: 'p_employee', from: 'path', key: 'id', cast: 'int' },
        { name: 'p_id', from: 'path', key: 'attachment_id', cast: 'int' },
      ],
    },
    status: 204,
    errors: [403, 404],
  },
  {
    method: 'get',
    path: '/api/employees/{id}/attachments/{attachment_id}/file/',
    operationId: 'employees_attachments_file',
    summary: 'Télécharger une pièce jointe (route protégée)',
    description:
      '401 sans authentification, 403 sans permission, 404 hors du périmètre ou fichier absent. En-têtes : type du ' +
      'fichier, `X-Content-Type-Options: nosniff`, `Cache-Control: private, no-store`. ' + ATTACHMENT_RULES,
    tags: ['Salariés'],
    auth: 'account',
    permission: 'employee.view_employee_attachment',
    pathParams: attachmentParams,
    status: 200,
    responseContentTypes: DOCUMENT_CONTENT_TYPES,
    headers: { 'Cache-Control': 'private, no-store' },
    errors: [403, 404],
    sql: {
      fn: 'app_public.employee_attachment_file',
      args: [
        { name: 'p_employee', from: 'path', key: 'id', cast: 'int' },
        { name: 'p_id', from: 'path', key: 'attachment_id', cast: 'int' },
      ],
    },
    render: sendStoredFile,
  },
];

const contractSchema = s.object(
  {
    id: s.int(),
    type: s.int(),
    type_code: s.string(),
    type_name: s.string(),
    start_date: s.date(),
    end_date: s.nullable(s.date()),
    trial_end_date: s.nullable(s.date()),
    job_title: s.nullable(s.string()),
    weekly_hours: s.nullable(s.decimal()),
  },
  ['id', 'type', 'type_code', 'type_name', 'start_date', 'end_date', 'trial_end_date', 'job_title', 'weekly_hours'],
);

const employeeSchema = s.object(
  {
    id: s.int(),
    first_name: s.string(),
    last_name: s.string(),
    name: s.string({ description: 'Prénom et nom.' }),
    professional_email: s.nullable(s.string()),
    birth_date: s.nullable(s.date()),
    is_polyvalent: s.bool(),
    main_establishment: s.nullable(s.int()),
    main_establishment_name: s.nullable(s.string()),
    secondary_establishments: s.array(s.int()),
    teams: s.array(
      s.object({ id: s.int(), team: s.int(), team_name: s.string(), start_date: s.nullable(s.date()), end_date: s.nullable(s.date()) }),
      { description: 'Affectations aux équipes (historique compris).' },
    ),
    contracts: s.array(contractSchema),
    account: s.nullable(s.object({ id: s.int(), username: s.string(), is_active: s.bool() }, ['id', 'username', 'is_active'], {
      description: 'Compte de la fiche, s’il existe et si l’appelant peut le lire.',
    })),
    social_security_number: s.nullable(s.string({ description: SSN_DESCRIPTION })),
    created_at: s.dateTime(),
    updated_at: s.dateTime(),
  },
  ['id', 'first_name', 'last_name', 'name', 'professional_email', 'birth_date', 'is_polyvalent', 'main_establishment',
    'main_establishment_name', 'secondary_establishments', 'teams', 'contracts', 'account', 'created_at', 'updated_at'],
);

export const employeeModule: RouteModule = {
  schemas: {
    Employee: employeeSchema,
    EmployeeCreated: {
      allOf: [
        s.ref('Employee'),
        s.object({ invitation_queued: s.bool({ description: 'Invitation à définir le mot de passe mise en file (adresse professionnelle présente).' }) }, ['invitation_queued']),
      ],
    },
    EmergencyContact: s.object(
      {
        id: s.int(),
        employee: s.int(),
        name: s.string(),
        relationship: s.nullable(s.string()),
        phone: s.string(),
        alternate_phone: s.nullable(s.string()),
        email: s.nullable(s.string()),
        position: s.int({ minimum: 1, maximum: 10, description: 'Rang dans la liste (1 = à appeler en premier).' }),
      },
      ['id', 'employee', 'name', 'relationship', 'phone', 'alternate_phone', 'email', 'position'],
    ),
    EmployeeAttachment: s.object(
      {
        id: s.int(),
        employee: s.int(),
        title: s.string(),
        filename: s.string(),
        content_type: s.enum(['application/pdf', 'image/jpeg', 'image/png']),
        size_bytes: s.int(),
        uploaded_at: s.dateTime(),
        uploaded_by: s.nullable(s.int()),
        uploaded_by_name: s.string(),
        file: s.string({ format: 'uri', description: 'Adresse de la route de téléchargement protégée.' }),
      },
      ['id', 'employee', 'title', 'filename', 'content_type', 'size_bytes', 'uploaded_at', 'uploaded_by', 'uploaded_by_name', 'file'],
    ),
  },
  routes: [...employeeRoutes, ...contactRoutes, ...attachmentRoutes],
};
