import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';
import { INPUT_CONTRACT } from '../input-contract.js';

const nullableTime = (description: string) => s.nullable(s.time({ description }));

/** A slot as a client sends it (request, adjusted grant, back-office correction). */
export const slotInput = s.object(
  {
    start_time: nullableTime('Début (HH:MM) ; avec end_time, rend le créneau complet. Une ligne sans début ni fin est retirée de la journée.'),
    end_time: nullableTime('Fin (HH:MM) ; une fin antérieure ou égale au début finit le lendemain (nuit), mais pas égale.'),
    break_start_time: nullableTime('Début de pause (HH:MM) ; va avec break_end_time. Une pause hors du créneau (créneau raccourci) est abandonnée.'),
    break_end_time: nullableTime('Fin de pause (HH:MM).'),
    break_paid: s.nullable(s.bool({ description: 'Pause payée : non déduite de la durée nette.' })),
    post: s.nullable(s.id('Poste ; par défaut le poste prévu ce jour-là, sinon le premier poste de l’établissement principal.')),
    establishment: s.nullable(s.id('Établissement ; par défaut celui du poste.')),
    is_remote: s.nullable(s.bool({ description: 'Télétravail sur ce créneau.' })),
  },
  [],
  { description: 'Créneau d’une journée. Les clés inconnues sont ignorées.' },
);

export const shiftChangeRoutes: RouteModule = {
  schemas: {
    Slot: s.object(
      {
        start_time: s.time(),
        end_time: s.time(),
        break_start_time: s.nullable(s.time()),
        break_end_time: s.nullable(s.time()),
        break_paid: s.bool(),
        post: s.nullable(s.int()),
        post_code: s.nullable(s.string()),
        post_label: s.nullable(s.string()),
        establishment: s.nullable(s.int()),
        is_remote: s.bool(),
        minutes: s.int({ description: 'Durée nette du créneau (pause non payée déduite, pause payée comptée).' }),
      },
      ['start_time', 'end_time', 'break_start_time', 'break_end_time', 'break_paid', 'post', 'post_code', 'post_label',
        'establishment', 'is_remote', 'minutes'],
    ),
    SlotInput: slotInput,
    CurrentDay: s.object(
      {
        date: s.date(),
        label: s.string({ description: 'Postes et horaires prévus (code, libellé, HH:MM-HH:MM), ou « Repos ».' }),
        minutes: s.int({ description: 'Durée nette de la journée prévue.' }),
        slots: s.array(s.ref('Slot')),
        is_remote: s.bool(),
        is_offsite: s.bool(),
        modified: s.bool({ description: 'La journée vient d’une modification de journée (et non du planning type).' }),
        comment: s.nullable(s.string()),
      },
      ['date', 'label', 'minutes', 'slots', 'is_remote', 'is_offsite', 'modified', 'comment'],
    ),
    ShiftChangeRequest: s.object(
      {
        id: s.int(),
        employee: s.int({ description: 'Fiche du demandeur (toujours la sienne).' }),
        employee_name: s.nullable(s.string()),
        date: s.date(),
        reason: s.string({ description: 'demande_personnelle, urgence ou remplacement.' }),
        reason_label: s.nullable(s.string()),
        comment: s.nullable(s.string()),
        is_remote: s.bool({ description: 'Option télétravail de la journée.' }),
        is_offsite: s.bool({ description: 'Option hors de l’établissement.' }),
        slots: s.array(s.ref('Slot'), { description: 'Créneaux demandés ; vide = horaires de la journée inchangés.' }),
        status: s.enum(['pending', 'validated', 'refused']),
        version: s.int({ description: '1 à la création ; +1 à chaque décision et à chaque correction du back-office.' }),
        planned_description: s.string({ description: 'Journée prévue au dépôt (code, libellé, HH:MM-HH:MM par poste, ou « Repos »).' }),
        planned_minutes: s.int({ description: 'Durée nette de la journée prévue au dépôt.' }),
        requested_minutes: s.int({ description: 'Durée nette demandée ; égale à planned_minutes sans créneau.' }),
        decided_by: s.nullable(s.int({ description: 'Compte qui a décidé.' })),
        decided_by_name: s.nullable(s.string()),
        on_behalf_of: s.nullable(s.int({ description: 'Décision par délégation : le compte délégant pour qui decided_by a décidé ; null sinon.' })),
        on_behalf_of_name: s.nullable(s.string()),
        by_delegation_of: s.nullable(s.string({
          description: 'Pour le lecteur : le délégant par qui il voit cette demande dans sa file (« par délégation de X ») ; null quand sa propre file la montre.',
        })),
        decided_at: s.nullable(s.dateTime()),
        decision_reason: s.nullable(s.string()),
        corrected_by: s.nullable(s.int({ description: 'Compte RH qui a corrigé la demande au back-office.' })),
        corrected_by_name: s.nullable(s.string()),
        corrected_at: s.nullable(s.dateTime()),
        granted_slots: s.nullable(s.array(s.ref('Slot'), { description: 'Journée accordée après ajustement ; null sans ajustement.' })),
        granted_minutes: s.nullable(s.int()),
        granted_gap_minutes: s.nullable(s.int({ description: 'Accordé moins demandé, en minutes.' })),
        created_at: s.dateTime(),
        updated_at: s.dateTime(),
      },
      ['id', 'employee', 'date', 'reason', 'comment', 'is_remote', 'is_offsite', 'slots', 'status', 'version',
        'planned_description', 'planned_minutes', 'requested_minutes', 'decided_by', 'decided_at', 'decision_reason',
        'corrected_by', 'granted_slots', 'granted_minutes', 'granted_gap_minutes', 'created_at', 'updated_at'],
    ),
  },
  routes: [
    {
      method: 'post',
      path: '/api/shift-change-requests/',
      operationId: 'shift_change_requests_create',
      summary: 'Demander la modification d’un de ses jours',
      description:
        'La demande porte toujours sur la fiche du demandeur (une clé employee est ignorée). Règles (400) : ' +
        'date antérieure de plus de ' + INPUT_CONTRACT.retroactivityDays + ' jours (date) ; demande déjà en attente pour cette date (date) ; ' +
        'demande qui ne change rien : sans créneau ni option, option seule un jour de repos, ou journée identique ' +
        'à la journée prévue (non_field_errors) ; créneaux incomplets, qui se chevauchent ou qui retirent tous les ' +
        'créneaux de la journée (slots) ; motif inconnu (reason). Les valideurs rattachés sont notifiés ' +
        '(« Nouvelle demande de modification ») ; sans valideur, l’auteur et les administrateurs reçoivent ' +
        '« Demande de modification sans valideur » et has_recipient vaut false. 403 pour un compte sans fiche salarié.',
      tags: ['Demandes de modification'],
      auth: 'account',
      permission: 'le demandeur, pour son propre jour',
      body: s.object(
        {
          date: s.date({ description: 'Jour concerné ; au plus tôt aujourd’hui moins ' + INPUT_CONTRACT.retroactivityDays + ' jours.' }),
          reason: s.string({ maxLength: 50, description: 'demande_personnelle, urgence ou remplacement.' }),
          comment: s.nullable(s.text(INPUT_CONTRACT.commentMaxLength, { description: 'Commentaire libre du demandeur.' })),
          is_remote: s.nullable(s.bool({ description: 'Option télétravail de la journée.' })),
          is_offsite: s.nullable(s.bool({ description: 'Option hors de l’établissement.' })),
          slots: s.nullable(s.array(slotInput, { maxItems: 9, description: 'Créneaux demandés ; absent ou vide = horaires inchangés.' })),
        },
        ['date', 'reason'],
      ),
      sql: {
        fn: 'app_public.shift_change_create',
        args: [
          { name: 'p_date', from: 'body-field', key: 'date', cast: 'date' },
          { name: 'p_reason', from: 'body-field', key: 'reason', cast: 'text' },
          { name: 'p_comment', from: 'body-field', key: 'comment', cast: 'text' },
          { name: 'p_is_remote', from: 'body-field', key: 'is_remote', cast: 'boolean' },
          { name: 'p_is_offsite', from: 'body-field', key: 'is_offsite', cast: 'boolean' },
          { name: 'p_slots', from: 'body-field', key: 'slots', cast: 'jsonb' },
        ],
      },
      status: 201,
      response: {
        allOf: [
          s.ref('ShiftChangeRequest'),
          s.object({ has_recipient: s.bool({ description: 'false quand aucun valideur ne peut traiter la demande.' }) }, ['has_recipient']),
        ],
      },
      errors: [400, 403],
    },
    {
      method: 'get',
      path: '/api/shift-change-requests/',
      operationId: 'shift_change_requests_list',
      summary: 'Demandes de modification (les siennes ; le périmètre pour la file des demandes)',
      description:
        'Le demandeur lit ses demandes ; un compte absences.view_absence_queue lit aussi celles de son périmètre. ' +
        'Tri : date décroissante. Un statut inconnu répond 400 sous status.',
      tags: ['Demandes de modification'],
      auth: 'account',
      permission: 'absences.view_absence_queue (périmètre) ; sinon ses propres demandes',
      paginated: true,
      query: s.object({
        status: s.enum(['pending', 'validated', 'refused'], { description: 'Filtre sur le statut.' }),
        from: s.date({ description: 'Date minimale (incluse) du jour concerné.' }),
        to: s.date({ description: 'Date maximale (incluse) du jour concerné.' }),
        employee: s.id('Filtre sur le salarié.'),
        establishment: s.id('Filtre sur l’établissement du salarié (principal ou secondaire).'),
      }),
      sql: {
        fn: 'app_public.shift_change_search',
        args: [
          { name: 'p_status', from: 'query', key: 'status', cast: 'text' },
          { name: 'p_from', from: 'query', key: 'from', cast: 'date' },
          { name: 'p_to', from: 'query', key: 'to', cast: 'date' },
          { name: 'p_employee', from: 'query', key: 'employee', cast: 'int' },
          { name: 'p_establishment', from: 'query', key: 'establishment', cast: 'int' },
          { name: 'p_page', from: 'page', cast: 'int' },
          { name: 'p_page_size', from: 'page_size', cast: 'int' },
        ],
      },
      status: 200,
      response: s.ref('ShiftChangeRequest'),
      errors: [400, 404],
    },
    {
      method: 'get',
      path: '/api/shift-change-requests/{id}/',
      operationId: 'shift_change_requests_read',
      summary: 'Détail d’une demande de modification, avec la journée prévue et les avertissements',
      description:
        'current_day : la journée telle que prévue maintenant. warnings (demande en attente seulement, sinon null ; ' +
        'null quand il n’y a rien à signaler) : l’absence accordée ce jour-là, une fois par motif (une demande ' +
        'd’absence en attente n’est pas citée), et le délai de prévenance conventionnel. can_decide : le lecteur peut ' +
        'décider la demande maintenant. 404 hors périmètre.',
      tags: ['Demandes de modification'],
      auth: 'account',
      permission: 'absences.view_absence_queue (périmètre) ; sinon ses propres demandes',
      pathParams: { id: s.id() },
      sql: { fn: 'app_public.shift_change_get', args: [{ name: 'p_id', from: 'path', key: 'id', cast: 'int' }] },
      status: 200,
      response: {
        allOf: [
          s.ref('ShiftChangeRequest'),
          s.object(
            {
              current_day: s.ref('CurrentDay'),
              warnings: s.nullable(s.array(s.string())),
              can_decide: s.bool({
                description:
                  'Le lecteur peut-il valider ou refuser maintenant (planning.decide_shift_change sur ce salarié, pas sa propre ' +
                  'demande, demande en attente) ? Indication pour le panneau de décision.',
              }),
            },
            ['current_day', 'warnings', 'can_decide'],
          ),
        ],
      },
      errors: [404],
    },
    {
      method: 'delete',
      path: '/api/shift-change-requests/{id}/',
      operationId: 'shift_change_requests_delete',
      summary: 'Retirer sa demande de modification en attente',
      description:
        'Le demandeur seul (un manager reçoit 403), tant que la demande est en attente (sinon 400 sous status). ' +
        'Ligne d’audit Suppression ; personne n’est notifié.',
      tags: ['Demandes de modification'],
      auth: 'account',
      permission: 'le demandeur',
      pathParams: { id: s.id() },
      sql: { fn: 'app_public.shift_change_delete', args: [{ name: 'p_id', from: 'path', key: 'id', cast: 'int' }] },
      status: 204,
      errors: [400, 403, 404],
    },
    {
      method: 'post',
      path: '/api/shift-change-requests/{id}/validate/',
      operationId: 'shift_change_requests_validate',
      summary: 'Valider une demande de modification (éventuellement avec une journée ajustée)',
      description:
        'Version périmée : 409 avant tout autre contrôle de la demande. Demande non en attente : 400 sous status. ' +
        'DA ou rôle sans planning.decide_shift_change : 403 ; sa propre demande : 403. Motif obligatoire (400 sous ' +
        'reason) quand la demande a été corrigée au back-office ou quand adjusted_slots accorde une autre journée. ' +
        'adjusted_slots s’applique au jour de la demande quelle que soit la date envoyée ; la journée accordée est ' +
        'rangée à côté de la demande (granted_slots, granted_minutes, granted_gap_minutes). Règles de modulation ' +
        'de la journée accordée, chacune sous sa clé, rien n’est écrit : daily_duration (12 h nettes au plus), ' +
        'rest_period (11 h de repos avec la veille et le lendemain travaillés), break_required (pause de 20 minutes ' +
        'consécutives au-delà de 6 h), slots (créneaux qui se chevauchent). La modification de journée est créée ou ' +
        'remplacée (créneaux, options ; le commentaire qu’elle porte est conservé) ; le demandeur est notifié ' +
        '(« Demande de modification validée »).',
      tags: ['Demandes de modification'],
      auth: 'account',
      permission: 'planning.decide_shift_change',
      pathParams: { id: s.id() },
      body: s.object(
        {
          version: s.int({ minimum: 1, description: 'Version lue.' }),
          reason: s.nullable(s.text(INPUT_CONTRACT.commentMaxLength, { description: 'Motif ; obligatoire après correction ou avec adjusted_slots.' })),
          adjusted_slots: s.nullable(s.array(slotInput, { maxItems: 9, description: 'Journée accordée à la place de la journée demandée.' })),
        },
        ['version'],
      ),
      sql: {
        fn: 'app_public.shift_change_validate',
        args: [
          { name: 'p_id', from: 'path', key: 'id', cast: 'int' },
          { name: 'p_version', from: 'body-field', key: 'version', cast: 'int' },
          { name: 'p_reason', from: 'body-field', key: 'reason', cast: 'text' },
          { name: 'p_adjusted_slots', from: 'body-field', key: 'adjusted_slots', cast: 'jsonb' },
        ],
      },
      status: 200,
      response: s.ref('ShiftChangeRequest'),
      errors: [400, 403, 404, 409],
    },
    {
      method: 'post',
      path: '/api/shift-change-requests/{id}/refuse/',
      operationId: 'shift_change_requests_refuse',
      summary: 'Refuser une demande de modification',
      description:
        'Motif obligatoire et non vide (400 sous reason, contrôlé après la version : une version périmée répond 409). ' +
        'La journée prévue ne change pas ; le demandeur est notifié (« Demande de modification refusée », niveau ' +
        'error, le texte se termine par le motif).',
      tags: ['Demandes de modification'],
      auth: 'account',
      permission: 'planning.decide_shift_change',
      pathParams: { id: s.id() },
      body: s.object(
        {
          version: s.int({ minimum: 1, description: 'Version lue.' }),
          reason: s.nullable(s.text(INPUT_CONTRACT.commentMaxLength, { description: 'Motif du refus (obligatoire, non vide).' })),
        },
        ['version'],
      ),
      sql: {
        fn: 'app_public.shift_change_refuse',
        args: [
          { name: 'p_id', from: 'path', key: 'id', cast: 'int' },
          { name: 'p_version', from: 'body-field', key: 'version', cast: 'int' },
          { name: 'p_reason', from: 'body-field', key: 'reason', cast: 'text' },
        ],
      },
      status: 200,
      response: s.ref('ShiftChangeRequest'),
      errors: [400, 403, 404, 409],
    },
  ],
};
