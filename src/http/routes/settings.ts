import type { RouteModule } from '../openapi.js';
import { s } from '../schema.js';

const length = (what: string) => s.int({ minimum: 1, description: `Longueur maximale (caractères) : ${what}.` });

export const settingsRoutes: RouteModule = {
  schemas: {
    Settings: s.object(
      {
        comment_max_length: length('commentaire libre ou motif de décision (absences, modifications de journée)'),
        on_call_comment_max_length: length('commentaire d’une astreinte'),
        event_title_max_length: length('titre d’un événement'),
        event_description_max_length: length('description d’un événement'),
        name_max_length: length('nom d’une équipe, d’un établissement, d’un motif… ; libellé d’un poste'),
        person_name_max_length: length('prénom ou nom d’un salarié'),
        relationship_max_length: length('lien d’un contact d’urgence avec le salarié'),
        job_title_max_length: length('intitulé de poste d’un contrat'),
        attachment_title_max_length: length('titre d’une pièce jointe d’un salarié'),
        adjustment_reason_max_length: length('motif d’un ajustement manuel de compteur'),
        email_max_length: length('adresse e-mail'),
        username_max_length: length('identifiant'),
        username_pattern: s.string({ description: 'Expression régulière d’un identifiant.' }),
        time_pattern: s.string({ description: 'Expression régulière d’une heure HH:MM.' }),
        retroactivity_days: s.int({ minimum: 0, description: 'Jours en arrière que la demande d’un salarié peut atteindre (SPEC Limits).' }),
        planning_max_days: s.int({ minimum: 1, description: 'Nombre maximal de jours d’une lecture du planning.' }),
        absence_max_days: s.int({ minimum: 1, description: 'Écart maximal entre le premier et le dernier jour d’une absence.' }),
        document_max_bytes: s.int({ minimum: 1, description: 'Taille maximale d’un justificatif, d’une pièce jointe ou d’une attestation, en octets.' }),
        document_content_types: s.array(s.string(), { description: 'Types de contenu acceptés pour ces fichiers (contrôlés par leur contenu).' }),
      },
      ['comment_max_length', 'on_call_comment_max_length', 'event_title_max_length', 'event_description_max_length',
        'name_max_length', 'person_name_max_length', 'relationship_max_length', 'job_title_max_length',
        'attachment_title_max_length', 'adjustment_reason_max_length', 'email_max_length', 'username_max_length',
        'username_pattern', 'time_pattern', 'retroactivity_days', 'planning_max_days', 'absence_max_days',
        'document_max_bytes', 'document_content_types'],
    ),
  },
  routes: [
    {
      method: 'get',
      path: '/api/settings/',
      operationId: 'settings',
      summary: 'Limites de saisie (taille et formats des justificatifs, rétroactivité, fenêtre du planning, longueurs)',
      description:
        'Les mêmes valeurs que celles que le serveur applique, pour qu’un client les affiche et les vérifie avant ' +
        'd’envoyer ; identiques pour tous les comptes.',
      tags: ['Système'],
      auth: 'account',
      sql: { fn: 'app_public.client_settings', args: [] },
      status: 200,
      response: s.ref('Settings'),
      errors: [401],
    },
  ],
};
