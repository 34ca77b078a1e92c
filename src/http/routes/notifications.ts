import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';

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
      },
      ['id', 'title', 'body', 'level', 'created_at', 'read_at'],
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
