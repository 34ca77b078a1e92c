import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';

/**
 * Verbs of an audit line (CONTRACT section 7, the impersonation of an account, and the security
 * events of accounts: model account_security, `after.event`, SECURITY.md « Audit events »).
 */
export const AUDIT_VERBS = ['Creation', 'Modification', 'Suppression', 'Validation', 'Refus', 'Correction', "Demande d'annulation", 'Annulation', 'Impersonation', 'Securite'];

export const auditLogRoutes: RouteModule = {
  schemas: {
    AuditLine: s.object(
      {
        id: s.int(),
        at: s.dateTime(),
        actor: s.nullable(s.int({ description: 'Compte qui a agi ; null pour une écriture sans compte (administrateur de base, tâche).' })),
        actor_identity: s.nullable(
          s.object(
            { username: s.nullable(s.string()), display_name: s.nullable(s.string()) },
            ['username', 'display_name'],
            { description: 'Identité du compte figée au moment de l’action.' },
          ),
        ),
        impersonator: s.nullable(s.int({ description: 'Superutilisateur qui agissait pour le compte de l’auteur (emprunt d’identité) ; null sinon.' })),
        impersonator_identity: s.nullable(
          s.object(
            { username: s.nullable(s.string()), display_name: s.nullable(s.string()) },
            ['username', 'display_name'],
            { description: 'Identité du superutilisateur figée au moment de l’action : « par lui, pour le compte de l’auteur ».' },
          ),
        ),
        client_address: s.nullable(s.string({ description: 'Adresse du client de la requête qui a écrit la ligne, quand elle est connue.' })),
        verb: s.enum(AUDIT_VERBS),
        model: s.string({ description: 'absence, shift_change_request, day_modification, account, account_security (événements de sécurité : after.event)…' }),
        target_id: s.nullable(s.int()),
        before: s.nullable(s.anyObject('Valeurs avant (null pour une création).')),
        after: s.nullable(s.anyObject('Valeurs après (null pour une suppression).')),
      },
      ['id', 'at', 'actor', 'actor_identity', 'impersonator', 'impersonator_identity', 'client_address', 'verb', 'model',
        'target_id', 'before', 'after'],
    ),
  },
  routes: [
    {
      method: 'get',
      path: '/api/audit-log/',
      operationId: 'audit_log_list',
      summary: 'Journal d’audit, les lignes les plus récentes d’abord',
      description:
        'Réservé aux comptes qui détiennent la permission explicite audit.view_actionlog ET l’accès au back-office ' +
        '(staff, superutilisateur, ou rôle RH n1 / RH n2 actif) ; les autres reçoivent 403. La permission est ' +
        'explicite et sans restriction d’établissement : un lecteur lit les lignes de toute l’association. ' +
        'Filtres : `model` (un modèle connu, sinon 400 sous model), `target_id` (entier), `actor` (identifiant du compte ' +
        'qui a agi), `impersonator` (identifiant du superutilisateur qui agissait pour le compte de l’auteur), `verb` et ' +
        'la période `from` / `to` (dates incluses, fuseau de l’association).',
      tags: ['Audit'],
      auth: 'account',
      permission: 'audit.view_actionlog (+ accès back-office)',
      query: s.object({
        model: s.string({ minLength: 1, maxLength: 63, description: 'absence, shift_change_request, day_modification ou account.' }),
        target_id: s.int({ minimum: 1, maximum: 2147483647, description: 'Identifiant de l’objet concerné.' }),
        actor: s.string({ minLength: 1, maxLength: 150, description: 'Identifiant (username) du compte qui a agi, sans distinction de casse.' }),
        impersonator: s.string({ minLength: 1, maxLength: 150, description: 'Identifiant (username) du superutilisateur qui agissait pour le compte de l’auteur, sans distinction de casse.' }),
        verb: s.enum(AUDIT_VERBS, { description: 'Nature de l’écriture.' }),
        from: s.date({ description: 'Lignes écrites ce jour-là ou après.' }),
        to: s.date({ description: 'Lignes écrites ce jour-là ou avant.' }),
      }),
      paginated: true,
      sql: {
        fn: 'app_public.audit_log_search',
        args: [
          { name: 'p_model', from: 'query', key: 'model', cast: 'text' },
          { name: 'p_target_id', from: 'query', key: 'target_id', cast: 'int' },
          { name: 'p_actor', from: 'query', key: 'actor', cast: 'text' },
          { name: 'p_verb', from: 'query', key: 'verb', cast: 'text' },
          { name: 'p_from', from: 'query', key: 'from', cast: 'date' },
          { name: 'p_to', from: 'query', key: 'to', cast: 'date' },
          { name: 'p_page', from: 'page', cast: 'int' },
          { name: 'p_page_size', from: 'page_size', cast: 'int' },
          { name: 'p_impersonator', from: 'query', key: 'impersonator', cast: 'text' },
        ],
      },
      status: 200,
      response: s.ref('AuditLine'),
      errors: [400, 401, 403],
    },
  ],
};
