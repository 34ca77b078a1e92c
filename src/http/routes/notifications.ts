import type { RouteModule } from '../openapi.js';
import { bodyField } from '../route.js';
import { s } from '../schema.js';

const KINDS = ['own', 'decide', 'planning'] as const;
const MODES = ['immediate', 'digest', 'never'] as const;
const PREFERENCES =
  'Chaque notification part aussi par e-mail (sans adresse sur la fiche salarié, ou compte fermé : aucun), selon le ' +
  'choix du compte par type (own : mes demandes ; decide : à décider ; planning) : immediate (tout de suite), digest ' +
  '(un résumé quotidien à digest_hour, Europe/Paris) ou never (jamais). Sans choix enregistré : tout de suite, ' +
  'résumé à 7 h. Un e-mail ne dit que le titre, le salarié, les dates et le lien : jamais le type d’absence, un motif, ' +
  'un commentaire ni un justificatif.';

const PAGE_ARGS = [
  { name: 'p_page', from: 'page', cast: 'int' },
  { name: 'p_page_size', from: 'page_size', cast: 'int' },
] as const;

export const notificationRoutes: RouteModule = {
  schemas: {
    Notification: s.object(
      {
        id: s.int(),
        title: s.string(),
        body: s.string(),
        level: s.enum(['info', 'warning', 'error'], { description: 'error : refus (affiché en rouge) ; info : acceptation ; warning : alerte.' }),
        created_at: s.dateTime(),
        read_at: s.nullable(s.dateTime({ description: 'Première lecture, ou null tant que la notification n’est pas lue.' })),
        kind: s.enum(KINDS, {
          description: 'own : mes demandes et mon compte ; decide : une demande d’un autre (à décider, à suivre) ; planning : une alerte du planning.',
        }),
        path: s.nullable(s.string({
          pattern: '^/[a-z0-9/]*$',
          description:
            'Adresse dans l’application web de ce qu’elle concerne, pour son destinataire : /demandes/absences/<id> pour sa ' +
            'propre demande, /file/absences/<id> (panneau de décision) pour une demande à décider, /demandes/journees/<id>, ' +
            '/file/journees/<id>, /equipe, /compte ; null quand la notification est tout.',
        })),
      },
      ['id', 'title', 'body', 'level', 'created_at', 'read_at', 'kind', 'path'],
    ),
    NotificationPreferences: s.object(
      {
        email: s.nullable(s.string({ description: 'Adresse où partent les e-mails (l’e-mail professionnel de la fiche salarié) ; null : aucun e-mail n’est envoyé.' })),
        own: s.enum(MODES, { description: 'Mes demandes (décisions, relances, mon compte).' }),
        decide: s.enum(MODES, { description: 'Demandes à décider ou à suivre.' }),
        planning: s.enum(MODES, { description: 'Alertes du planning (un événement contre une absence).' }),
        digest_hour: s.int({ minimum: 0, maximum: 23, description: 'Heure du résumé quotidien (Europe/Paris), de 0 à 23.' }),
      },
      ['email', 'own', 'decide', 'planning', 'digest_hour'],
    ),
    OutboxEmail: s.object(
      {
        id: s.int(),
        kind: s.string({ description: 'password_reset, invitation, …' }),
        to_address: s.string(),
        subject: s.string(),
        account: s.nullable(s.int()),
        created_at: s.dateTime(),
        sent_at: s.nullable(s.dateTime()),
        attempts: s.int({ minimum: 0 }),
        last_attempt_at: s.nullable(s.dateTime()),
        last_error: s.nullable(s.string()),
        body_text: s.string({ description: 'Texte du message ; montré aux seuls superutilisateurs (il contient des liens à usage unique).' }),
      },
      ['id', 'kind', 'to_address', 'subject', 'account', 'created_at', 'sent_at', 'attempts', 'last_attempt_at', 'last_error'],
    ),
  },
  routes: [
    {
      method: 'get',
      path: '/api/notifications/',
      operationId: 'notifications_list',
      summary: 'Mes notifications, les plus récentes d’abord',
      description: 'Notifications du compte connecté uniquement. `unread=true` ne garde que les non lues (`false` : les lues).',
      tags: ['Notifications'],
      auth: 'account',
      query: s.object({ unread: s.bool({ description: 'true : non lues seulement ; false : lues seulement.' }) }),
      paginated: true,
      sql: {
        fn: 'app_public.notifications_list',
        args: [{ name: 'p_unread', from: 'query', key: 'unread', cast: 'boolean' }, ...PAGE_ARGS],
      },
      status: 200,
      response: s.ref('Notification'),
      errors: [400, 401],
    },
    {
      method: 'post',
      path: '/api/notifications/{id}/read/',
      operationId: 'notification_mark_read',
      summary: 'Marquer une de mes notifications comme lue',
      description:
        'Idempotent : une notification déjà lue garde sa première date de lecture. La notification d’un autre compte répond 404.',
      tags: ['Notifications'],
      auth: 'account',
      pathParams: { id: s.id() },
      sql: { fn: 'app_public.notification_mark_read', args: [{ name: 'p_id', from: 'path', key: 'id', cast: 'int' }] },
      status: 200,
      response: s.ref('Notification'),
      errors: [401, 404],
    },
    {
      method: 'post',
      path: '/api/notifications/read-all/',
      operationId: 'notifications_mark_all_read',
      summary: 'Tout marquer comme lu',
      description: 'Marque lues toutes les notifications non lues du compte connecté et répond combien.',
      tags: ['Notifications'],
      auth: 'account',
      sql: { fn: 'app_public.notifications_mark_all_read', args: [] },
      status: 200,
      response: s.object({ count: s.int({ minimum: 0, description: 'Notifications marquées lues par cet appel.' }) }, ['count']),
      errors: [401],
    },
    {
      method: 'get',
      path: '/api/notifications/preferences/',
      operationId: 'notification_preferences_get',
      summary: 'Mes préférences d’e-mail',
      description: PREFERENCES,
      tags: ['Notifications'],
      auth: 'account',
      sql: { fn: 'app_public.notification_preferences_get', args: [] },
      status: 200,
      response: s.ref('NotificationPreferences'),
      errors: [401],
    },
    {
      method: 'put',
      path: '/api/notifications/preferences/',
      operationId: 'notification_preferences_set',
      summary: 'Choisir mes préférences d’e-mail',
      description: `${PREFERENCES} Toutes les clés sont requises ; une valeur inconnue répond 400 sous son champ.`,
      tags: ['Notifications'],
      auth: 'account',
      body: s.object(
        {
          own: s.enum(MODES),
          decide: s.enum(MODES),
          planning: s.enum(MODES),
          digest_hour: s.int({ minimum: 0, maximum: 23 }),
        },
        ['own', 'decide', 'planning', 'digest_hour'],
      ),
      sql: {
        fn: 'app_public.notification_preferences_set',
        args: [bodyField('own', 'text'), bodyField('decide', 'text'), bodyField('planning', 'text'), bodyField('digest_hour', 'int')],
      },
      status: 200,
      response: s.ref('NotificationPreferences'),
      errors: [400, 401],
    },
    {
      method: 'post',
      path: '/api/notifications/unsubscribe/',
      operationId: 'notification_unsubscribe',
      summary: 'Se désabonner des e-mails de notification (List-Unsubscribe, en un clic)',
      description:
        'L’adresse de l’en-tête List-Unsubscribe des e-mails de notification (RFC 8058 : le client de messagerie envoie ' +
        '`List-Unsubscribe=One-Click` en formulaire, accepté et ignoré). Publique : le secret `token` de l’adresse suffit. ' +
        'Les types nommés dans `kinds` (own, decide, planning, séparés par des virgules) passent à « jamais ». Un secret ' +
        'ou un type inconnu répond 404.',
      tags: ['Notifications'],
      auth: 'public',
      acceptsFormBody: true,
      query: s.object(
        {
          token: s.string({ pattern: '^[0-9a-f]{48}$', description: 'Secret de désabonnement du compte.' }),
          kinds: s.string({ pattern: '^(own|decide|planning)(,(own|decide|planning)){0,2}$', description: 'Types : own, decide, planning.' }),
        },
        ['token', 'kinds'],
      ),
      sql: {
        fn: 'app_public.notification_unsubscribe',
        args: [
          { name: 'p_token', from: 'query', key: 'token', cast: 'text' },
          { name: 'p_kinds', from: 'query', key: 'kinds', cast: 'text' },
        ],
      },
      status: 200,
      response: s.object({ detail: s.string() }, ['detail']),
      errors: [400, 404],
    },
    {
      method: 'get',
      path: '/api/email-outbox/',
      operationId: 'email_outbox_list',
      summary: 'Boîte d’envoi des e-mails (personnel d’administration)',
      description:
        'Les e-mails (réinitialisation de mot de passe, invitations) attendent ici leur envoi par le worker ; sans ' +
        'réglages SMTP (SMTP_URL, SMTP_FROM) ils y restent. Réservé aux comptes staff et superutilisateurs ; le texte ' +
        'du message (liens à usage unique) n’est montré qu’aux superutilisateurs. `status` : pending (non envoyés), ' +
        'sent (envoyés), failed (non envoyés après au moins un échec).',
      tags: ['Notifications'],
      auth: 'staff',
      query: s.object({ status: s.enum(['pending', 'sent', 'failed']) }),
      paginated: true,
      sql: {
        fn: 'app_public.email_outbox_list',
        args: [{ name: 'p_status', from: 'query', key: 'status', cast: 'text' }, ...PAGE_ARGS],
      },
      status: 200,
      response: s.ref('OutboxEmail'),
      errors: [400, 401, 403],
    },
  ],
};
