import type { RouteModule } from '../openapi.js';
import { SENT_KEYS, type ArgSpec } from '../route.js';
import { s, TIME_PATTERN, type JsonSchema } from '../schema.js';
import { INPUT_CONTRACT, megabytesFr } from '../input-contract.js';
import { MAX_DOCUMENT_BYTES } from './documents.js';

const STATUSES = ['pending', 'validated', 'refused', 'cancellation_requested', 'cancelled'] as const;

const half = (description: string): JsonSchema => ({
  type: ['string', 'null'],
  enum: ['morning', 'afternoon', null],
  description,
});
const time = (description: string): JsonSchema => ({ type: ['string', 'null'], format: 'time-hm', description });

/** Writable fields of an absence (creation, correction, preview). */
const absenceFields: Record<string, JsonSchema> = {
  employee: s.id('Fiche du salarié concerné ; un salarié ne peut nommer que la sienne.'),
  type: s.id('Motif d’absence (voir /api/absence-types/).'),
  date_start: s.date({ description: 'Premier jour (inclus).' }),
  date_end: s.date({ description: 'Dernier jour (inclus) ; par défaut date_start. Un motif en heures porte sur une seule date.' }),
  start_half: half('Demi-journée de début : "afternoon" = le matin de date_start est travaillé ; null = journée entière.'),
  end_half: half('Demi-journée de fin : "morning" = l’après-midi de date_end est travaillé ; null = journée entière.'),
  start_time: time('Heure de début (HH:MM), motifs en heures.'),
  end_time: time('Heure de fin (HH:MM), motifs en heures.'),
  comment: s.nullable(s.text(INPUT_CONTRACT.commentMaxLength, { description: 'Commentaire libre.' })),
};

const counterEffect = s.object(
  {
    counter: s.string({ description: 'Code du compteur.' }),
    year: s.int({ description: 'Année civile du compteur.' }),
    direction: s.enum(['debit', 'credit']),
    quantity: s.decimal(),
    column: s.enum(['planned', 'taken'], { description: 'Planifiés ou Pris.' }),
  },
  ['counter', 'year', 'direction', 'quantity', 'column'],
);

const document = s.object(
  {
    id: s.int(),
    filename: s.string(),
    content_type: s.enum(['application/pdf', 'image/jpeg', 'image/png']),
    size_bytes: s.int(),
    uploaded_at: s.dateTime({ description: 'Date du dépôt.' }),
    uploaded_by: s.string({ description: 'Nom du compte qui a déposé le justificatif.' }),
    file: s.string({
      format: 'uri',
      description:
        'Adresse de la route protégée de téléchargement ; clé absente (et non vide) pour les lecteurs qui ne peuvent pas lire le contenu.',
    }),
  },
  ['id', 'filename', 'content_type', 'size_bytes', 'uploaded_at', 'uploaded_by'],
);

const nullableDateTime = s.nullable(s.dateTime());
const nullableInt = s.nullable(s.int());
const nullableString = s.nullable(s.string());

const absence = s.object(
  {
    id: s.int(),
    employee: s.int(),
    employee_name: nullableString,
    type: s.int(),
    type_code: s.string(),
    type_name: s.string(),
    date_start: s.date(),
    date_end: s.date(),
    start_half: s.nullable(s.enum(['morning', 'afternoon'])),
    end_half: s.nullable(s.enum(['morning', 'afternoon'])),
    start_time: s.nullable(s.string({ pattern: TIME_PATTERN })),
    end_time: s.nullable(s.string({ pattern: TIME_PATTERN })),
    comment: nullableString,
    status: s.enum(STATUSES),
    status_label: s.string({ description: 'Libellé affiché (En attente, Validée, Refusée, Annulation demandée, Annulée).' }),
    version: s.int({ description: '1 à la création ; chaque écriture l’avance de 1.' }),
    counted_quantity: s.nullable(s.decimal({ description: 'Décompte du serveur (jours sur la base de l’établissement, ou heures).' })),
    counted_unit: s.nullable(s.enum(['day', 'hour'])),
    author: nullableInt,
    submitted_at: s.nullable(s.dateTime({ description: 'Date de dépôt de la demande ; null pour une déclaration.' })),
    created_at: s.dateTime(),
    updated_at: s.dateTime(),
    decided_by: nullableInt,
    decided_at: nullableDateTime,
    decision_reason: nullableString,
    on_behalf_of: s.nullable(s.int({ description: 'Décision par délégation : le compte délégant pour qui decided_by a décidé ; null sinon.' })),
    by_delegation_of: s.nullable(s.string({
      description: 'Pour le lecteur : le délégant par qui il voit cette demande dans sa file (« par délégation de X ») ; null quand sa propre file la montre.',
    })),
    corrected_by: nullableInt,
    cancellation_comment: nullableString,
    cancellation_requested_at: nullableDateTime,
    cancellation_decided_at: nullableDateTime,
    cancellation_decision_reason: nullableString,
    cancellation_counter_effects: s.nullable(
      s.array(counterEffect, { description: 'Ce qu’accorder l’annulation recréditerait (absence accordée) ; null sinon.' }),
    ),
    cancelled_by: nullableInt,
    cancelled_at: nullableDateTime,
    warnings: s.nullable(
      s.array(s.string(), { description: 'Liste (éventuellement vide) en création, correction et lecture unitaire ; null dans les listes.' }),
    ),
    documents: s.array(s.ref('AbsenceDocument')),
    can_decide: s.bool({
      description:
        'Lecture unitaire seulement : le lecteur peut-il valider ou refuser maintenant (droit de décider sur ce salarié, ' +
        'pas sa propre absence, demande en attente ou annulation demandée) ? Indication pour le panneau de décision.',
    }),
    planned_day: s.object(
      {
        date: s.date(),
        description: s.string(),
        minutes: s.int(),
        is_rest_day: s.bool(),
        slots: s.array(s.anyObject('Créneau : heures, pause, poste, établissement.')),
      },
      [],
      { description: 'Lecture unitaire seulement, pour le salarié et l’encadrement : la journée prévue du premier jour.' },
    ),
  },
  ['id', 'employee', 'type', 'date_start', 'date_end', 'status', 'version', 'warnings', 'documents'],
);

const preview = s.object(
  {
    quantity: s.nullable(s.decimal({ description: 'null quand une règle refuse l’absence (une erreur de compteurs seule le laisse).' })),
    unit: s.nullable(s.enum(['day', 'hour'])),
    counter_effects: s.array(counterEffect),
    warnings: s.array(s.string()),
    errors: { type: 'object', additionalProperties: s.array(s.string()), description: 'Messages par champ à corriger.' },
  },
  ['quantity', 'unit', 'counter_effects', 'warnings', 'errors'],
);

const idParam = { id: s.id() };
const publicUrl = { name: 'p_public_url', from: 'context', key: 'public_url', cast: 'text' } as const;
const idArg: ArgSpec = { name: 'p_id', from: 'path', key: 'id', cast: 'int' };
/** One key of the body as one typed argument of the SQL function (absent: null). */
const field = (name: string, key: string, cast: Extract<ArgSpec, { from: 'body-field' }>['cast']): ArgSpec => ({ name, from: 'body-field', key, cast });
/** The fields of an absence that the rules read (creation and its preview). */
const draftArgs: ArgSpec[] = [
  field('p_employee', 'employee', 'int'),
  field('p_type', 'type', 'int'),
  field('p_date_start', 'date_start', 'date'),
  field('p_date_end', 'date_end', 'date'),
  field('p_start_half', 'start_half', 'text'),
  field('p_end_half', 'end_half', 'text'),
  field('p_start_time', 'start_time', 'time'),
  field('p_end_time', 'end_time', 'time'),
];
/** The fields of a correction (PATCH and its preview): the draft's but the employee's, with p_sent. */
const correctionArgs: ArgSpec[] = draftArgs.filter((arg) => arg.name !== 'p_employee');
const multipart = { files: ['add_documents'], arrays: ['remove_document_ids'], maxFileBytes: MAX_DOCUMENT_BYTES };
const TAGS = ['Absences'];

/** The version read and the reason of a decision (validation, refusal). */
const decisionArgs: ArgSpec[] = [field('p_version', 'version', 'int'), field('p_reason', 'reason', 'text')];

export const absenceRoutes: RouteModule = {
  schemas: { Absence: absence, AbsenceDocument: document, AbsencePreview: preview, CounterEffect: counterEffect },
  routes: [
    {
      method: 'get',
      path: '/api/absences/',
      operationId: 'absences_list',
      summary: 'Absences : les siennes, et pour l’encadrement celles de son périmètre',
      description:
        'Sans status, tous les états. from/to : absences qui chevauchent la fenêtre (dates incluses). ' +
        'establishment : lieu de travail principal ou secondaire du salarié ; type : motif d’absence. ' +
        'Un statut inconnu répond 400 sous la clé `status`. Chaque ligne porte `warnings: null`. ' +
        'Un salarié sans lieu de travail principal n’apparaît qu’à l’encadrement de toute l’association.',
      tags: TAGS,
      auth: 'account',
      permission: 'absences.view_absence_queue (périmètre) ; sinon ses propres absences',
      query: s.object({
        status: s.enum(STATUSES, { description: 'pending, validated, refused, cancellation_requested ou cancelled.' }),
        employee: s.id('Fiche du salarié.'),
        from: s.date({ description: 'Début de la fenêtre (inclus).' }),
        to: s.date({ description: 'Fin de la fenêtre (incluse).' }),
        establishment: s.id('Établissement du lieu de travail principal ou secondaire du salarié.'),
        type: s.id('Motif d’absence.'),
      }),
      paginated: true,
      sql: {
        fn: 'app_public.absences_list',
        args: [
          { name: 'p_status', from: 'query', key: 'status', cast: 'text' },
          { name: 'p_employee', from: 'query', key: 'employee', cast: 'int' },
          { name: 'p_from', from: 'query', key: 'from', cast: 'date' },
          { name: 'p_to', from: 'query', key: 'to', cast: 'date' },
          { name: 'p_page', from: 'page', cast: 'int' },
          { name: 'p_page_size', from: 'page_size', cast: 'int' },
          publicUrl,
          { name: 'p_establishment', from: 'query', key: 'establishment', cast: 'int' },
          { name: 'p_type', from: 'query', key: 'type', cast: 'int' },
        ],
      },
      // The page's JSON text as SQL writes it (app_public.absences_list_text), sent as it comes.
      listText: 'app_public.absences_list_text',
      status: 200,
      response: s.ref('Absence'),
      errors: [400],
    },
    {
      method: 'post',
      path: '/api/absences/',
      operationId: 'absence_create',
      summary: 'Déposer une demande d’absence (pour soi) ou déclarer une absence (encadrement, périmètre)',
      description:
        'La demande d’un salarié pour lui-même naît en attente (compteurs réservés en Planifiés, valideurs ' +
        'notifiés ; `has_recipient` faux quand personne ne peut décider). La déclaration d’un manager pour un ' +
        'salarié de son périmètre naît validée, sans date de décision, et ne notifie personne (`has_recipient` ' +
        'null). Le statut envoyé est ignoré. Toutes les règles de déclaration s’appliquent (décompte, ' +
        'demi-journées, chevauchement, plafonds, types de contrat, compteurs, rétroactivité de ' + INPUT_CONTRACT.retroactivityDays + ' jours pour ' +
        'soi ou jusqu’au 1er décembre de l’année précédente pour autrui) ; les règles conventionnelles et ' +
        'délais de prévenance donnent des `warnings`. Justificatifs : corps multipart avec `add_documents` ' +
        'répété une fois par fichier.',
      tags: TAGS,
      auth: 'account',
      body: s.object(absenceFields, ['employee', 'type', 'date_start']),
      multipart,
      sql: {
        fn: 'app_public.absence_create',
        args: [
          ...draftArgs,
          field('p_comment', 'comment', 'text'),
          // The stored files' metadata from the multipart reader; SQL accepts only files of this request.
          field('p_add_documents', 'add_documents', 'jsonb'),
          publicUrl,
        ],
      },
      status: 201,
      response: {
        allOf: [
          s.ref('Absence'),
          s.object({
            has_recipient: s.nullable(s.bool({ description: 'Faux quand aucun valideur ne peut traiter la demande ; null pour une déclaration.' })),
          }),
        ],
      },
      errors: [400],
    },
    {
      method: 'post',
      path: '/api/absences/preview/',
      operationId: 'absence_preview',
      summary: 'Prévisualiser une absence : décompte, effets sur les compteurs, avertissements et erreurs',
      description:
        'Même corps qu’une création ; n’écrit rien. Répond 200 dès que le corps est lisible : les refus des ' +
        'règles sont dans `errors` (par champ) et `quantity` vaut alors null, sauf pour une erreur de ' +
        '`counters` seule. Sans `type` : 400. Sans `employee` : sa propre fiche. Un salarié ne prévisualise ' +
        'que pour lui-même.',
      tags: TAGS,
      auth: 'account',
      body: s.object(absenceFields, ['type']),
      sql: { fn: 'app_public.absence_preview', args: draftArgs },
      status: 200,
      response: s.ref('AbsencePreview'),
      errors: [400],
    },
    {
      method: 'get',
      path: '/api/absences/{id}/',
      operationId: 'absence_get',
      summary: 'Une absence, ses justificatifs et la journée prévue de son premier jour',
      tags: TAGS,
      auth: 'account',
      permission: 'absences.view_absence_queue (périmètre) ; sinon ses propres absences',
      pathParams: idParam,
      sql: { fn: 'app_public.absence_get', args: [{ name: 'p_id', from: 'path', key: 'id', cast: 'int' }, publicUrl] },
      status: 200,
      response: s.ref('Absence'),
      errors: [404],
    },
    {
      method: 'patch',
      path: '/api/absences/{id}/',
      operationId: 'absence_update',
      summary: 'Corriger une absence (encadrement) ; ajouter ou retirer des justificatifs',
      description:
        'Côté encadrement seulement : un salarié reçoit 403, et un manager ne corrige pas sa propre absence ' +
        '(403 : la retirer et déposer une nouvelle demande). Corriger la période, le motif, les heures ou le ' +
        'commentaire demande `absences.decide_absence`, rejoue toutes les règles et compense les compteurs ' +
        '(le solde bouge de la différence) ; le DA peut seulement déposer des justificatifs. ' +
        '`remove_document_ids` : identifiants de justificatifs de cette absence (un autre identifiant répond ' +
        '400, rien n’est modifié). `version` (facultative) : 409 si elle est périmée.',
      tags: TAGS,
      auth: 'account',
      permission: 'absences.view_absence_queue (justificatifs) ; absences.decide_absence (corrections)',
      pathParams: idParam,
      body: s.object({
        ...Object.fromEntries(Object.entries(absenceFields).filter(([key]) => key !== 'employee')),
        version: s.int({ minimum: 1, description: 'Version lue (facultative) ; périmée : 409.' }),
        remove_document_ids: s.array(s.id(), { description: 'Justificatifs à supprimer (multipart : clé répétée une fois par identifiant).' }),
      }),
      multipart,
      status: 200,
      response: s.ref('Absence'),
      errors: [400, 403, 404, 409],
      sql: {
        fn: 'app_public.absence_update',
        args: [
          idArg,
          ...correctionArgs,
          field('p_comment', 'comment', 'text'),
          field('p_version', 'version', 'int'),
          field('p_remove_document_ids', 'remove_document_ids', 'int[]'),
          // The stored files' metadata from the multipart reader; SQL accepts only files of this request.
          field('p_add_documents', 'add_documents', 'jsonb'),
          SENT_KEYS,
          publicUrl,
        ],
      },
      // Removed documents leave the storage at once.
      purgeStorageAfterCommit: true,
    },
    {
      method: 'delete',
      path: '/api/absences/{id}/',
      operationId: 'absence_delete',
      summary: 'Retirer sa demande en attente, ou « Supprimer l’absence » accordée (décideur)',
      description:
        'Le salarié retire sa demande en attente (réservation libérée, justificatifs supprimés) ; tout autre ' +
        'état répond 400 sous `status` (une absence accordée s’annule sur demande). Un décideur du périmètre ' +
        'qui supprime une absence validée l’annule : la ligne reste (statut cancelled), les justificatifs sont ' +
        'supprimés, les compteurs recrédités, et le salarié est notifié (« Absence annulée »). Une demande ' +
        'refusée n’est jamais effacée.',
      tags: TAGS,
      auth: 'account',
      pathParams: idParam,
      status: 204,
      errors: [400, 403, 404],
      sql: { fn: 'app_public.absence_delete', args: [idArg] },
      purgeStorageAfterCommit: true,
    },
    {
      method: 'post',
      path: '/api/absences/{id}/preview/',
      operationId: 'absence_preview_row',
      summary: 'Prévisualiser la correction d’une absence (encadrement)',
      description:
        'Même corps qu’une création (le salarié ne change pas) ; l’absence s’exclut elle-même du chevauchement ' +
        'et des plafonds ; `counter_effects` donne la différence avec ce qu’elle tient. N’écrit rien.',
      tags: TAGS,
      auth: 'account',
      permission: 'absences.view_absence_queue',
      pathParams: idParam,
      body: s.object(absenceFields, ['type']),
      sql: {
        fn: 'app_public.absence_preview_row',
        // The employee never changes (the key is ignored), nor does a preview read the comment.
        args: [idArg, ...correctionArgs, SENT_KEYS],
      },
      status: 200,
      response: s.ref('AbsencePreview'),
      errors: [400, 403, 404],
    },
    {
      method: 'post',
      path: '/api/absences/{id}/validate/',
      operationId: 'absence_validate',
      summary: 'Valider une demande (avec correction éventuelle) ou accorder une demande d’annulation',
      description:
        'Demande en attente → validated : `date_end`, `type`, `start_time`/`end_time` facultatifs corrigent ' +
        'la demande et rejouent toutes les règles (une requalification en heures sans heures est refusée) ; ' +
        'un motif (`reason`) est alors obligatoire. Demande d’annulation → cancelled : justificatifs supprimés, ' +
        'compteurs recrédités ; une annulation ne se corrige pas. Version périmée : 409 avant tout autre ' +
        'contrôle ; demande qui n’est plus en attente : 400 sous `status` ; DA ou demande personnelle : 403.',
      tags: TAGS,
      auth: 'account',
      permission: 'absences.decide_absence',
      pathParams: idParam,
      body: s.object(
        {
          version: s.int({ minimum: 1, description: 'Version lue.' }),
          date_end: s.date({ description: 'Correction de la date de fin.' }),
          type: s.id('Requalification du motif.'),
          start_time: time('Heure de début (motif en heures).'),
          end_time: time('Heure de fin (motif en heures).'),
          reason: s.nullable(s.text(INPUT_CONTRACT.commentMaxLength, { description: 'Motif de la décision ; obligatoire si la décision corrige la demande.' })),
        },
        ['version'],
      ),
      status: 200,
      response: s.ref('Absence'),
      errors: [400, 403, 404, 409],
      sql: {
        fn: 'app_public.absence_validate',
        args: [
          idArg,
          ...decisionArgs,
          field('p_date_end', 'date_end', 'date'),
          field('p_type', 'type', 'int'),
          // jsonb: an absent hour keeps the stored one, a null clears it (SQL tells them apart).
          field('p_start_time', 'start_time', 'jsonb'),
          field('p_end_time', 'end_time', 'jsonb'),
          publicUrl,
        ],
      },
      // A granted cancellation deletes the documents.
      purgeStorageAfterCommit: true,
    },
    {
      method: 'post',
      path: '/api/absences/{id}/refuse/',
      operationId: 'absence_refuse',
      summary: 'Refuser une demande d’absence, ou une demande d’annulation',
      description:
        'Demande en attente → refused (réservation libérée, la demande reste au dossier). Demande ' +
        'd’annulation → validated (l’absence est maintenue). `reason` non vide obligatoire (400 sous `reason`).',
      tags: TAGS,
      auth: 'account',
      permission: 'absences.decide_absence',
      pathParams: idParam,
      body: s.object(
        {
          version: s.int({ minimum: 1, description: 'Version lue.' }),
          reason: s.nullable(s.text(INPUT_CONTRACT.commentMaxLength, { description: 'Motif du refus (obligatoire, non vide).' })),
        },
        ['version'],
      ),
      sql: {
        fn: 'app_public.absence_refuse',
        args: [idArg, ...decisionArgs, publicUrl],
      },
      status: 200,
      response: s.ref('Absence'),
      errors: [400, 403, 404, 409],
    },
    {
      method: 'post',
      path: '/api/absences/{id}/request-cancellation/',
      operationId: 'absence_request_cancellation',
      summary: 'Demander l’annulation de son absence accordée',
      description:
        'Le salarié concerné seulement (403 sinon ; 404 hors périmètre), sur une absence validée commençant ' +
        'au plus ' + INPUT_CONTRACT.retroactivityDays + ' jours en arrière (400 sous `status` ou `date_start`). L’absence reste dessinée et comptée ' +
        'jusqu’à la décision ; les valideurs sont notifiés.',
      tags: TAGS,
      auth: 'account',
      pathParams: idParam,
      body: s.object({
        comment: s.nullable(s.text(INPUT_CONTRACT.commentMaxLength, { description: 'Commentaire du demandeur.' })),
        version: s.int({ minimum: 1, description: 'Version lue (facultative) ; périmée : 409.' }),
      }),
      sql: {
        fn: 'app_public.absence_request_cancellation',
        args: [idArg, field('p_version', 'version', 'int'), field('p_comment', 'comment', 'text'), publicUrl],
      },
      status: 200,
      response: s.ref('Absence'),
      errors: [400, 403, 404, 409],
    },
    {
      method: 'post',
      path: '/api/absences/{id}/documents/',
      operationId: 'absence_add_documents',
      summary: 'Déposer des justificatifs sur une absence (salarié concerné ou encadrement)',
      description:
        'Corps multipart/form-data, `add_documents` répété une fois par fichier (PDF, JPG ou PNG contrôlés par ' +
        'leur contenu, ' + megabytesFr(INPUT_CONTRACT.documentMaxBytes) + ' au plus chacun). Ouvert au salarié concerné et à l’encadrement de son périmètre, ' +
        'sur une absence ni refusée ni annulée.',
      tags: TAGS,
      auth: 'account',
      pathParams: idParam,
      body: s.object({}, ['add_documents']),
      multipart: { files: ['add_documents'], maxFileBytes: MAX_DOCUMENT_BYTES },
      sql: {
        fn: 'app_public.absence_add_documents',
        args: [idArg, field('p_add_documents', 'add_documents', 'jsonb'), publicUrl],
      },
      status: 200,
      response: s.ref('Absence'),
      errors: [400, 404],
    },
  ],
};
