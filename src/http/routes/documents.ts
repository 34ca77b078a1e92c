import { sendStoredFile } from '../downloads.js';
import type { RouteModule } from '../openapi.js';
import { bodyField } from '../route.js';
import { s } from '../schema.js';
import { DOCUMENT_CONTENT_TYPES } from '../../storage/file-type.js';
import { INPUT_CONTRACT, megabytesFr } from '../input-contract.js';

/** Per document (CONTRACT section 7); compared with app_hidden.document_max_bytes() at start-up. */
export const MAX_DOCUMENT_BYTES = INPUT_CONTRACT.documentMaxBytes;

const FILE_HEADERS = { 'Cache-Control': 'private, no-store', 'X-Content-Type-Options': 'nosniff' };

const FILE_DESCRIPTION =
  'Contenu du fichier ; Content-Type application/pdf, image/jpeg ou image/png selon le fichier déposé, ' +
  'Content-Disposition attachment avec le nom du fichier. La consultation n’est pas journalisée.';

export const documentRoutes: RouteModule = {
  schemas: {
    HonorabilityCertificate: s.object(
      {
        employee: s.int(),
        filename: s.string(),
        content_type: s.enum(['application/pdf', 'image/jpeg', 'image/png']),
        size_bytes: s.int(),
        uploaded_at: s.dateTime({ description: 'Date du dépôt.' }),
        uploaded_by: s.string({ description: 'Nom du compte qui a déposé le fichier.' }),
        file: s.string({
          format: 'uri',
          description: 'Adresse de la route protégée de téléchargement ; clé absente pour les lecteurs sans le droit de lire le contenu.',
        }),
      },
      ['employee', 'filename', 'content_type', 'size_bytes', 'uploaded_at', 'uploaded_by'],
    ),
  },
  routes: [
    {
      method: 'get',
      path: '/api/absence-documents/{id}/file/',
      operationId: 'absence_document_file',
      summary: 'Télécharger un justificatif d’absence',
      description:
        'Le salarié concerné lit toujours ses justificatifs ; un tiers a besoin de ' +
        '`absences.view_absencedocument_file` et du salarié dans son périmètre (403 sinon). Un justificatif ' +
        'hors du périmètre de lecture, inconnu ou dont le fichier manque répond 404. ' + FILE_DESCRIPTION,
      tags: ['Justificatifs'],
      auth: 'account',
      permission: 'absences.view_absencedocument_file (tiers)',
      pathParams: { id: s.id() },
      status: 200,
      responseContentTypes: DOCUMENT_CONTENT_TYPES,
      headers: FILE_HEADERS,
      errors: [403, 404],
      sql: { fn: 'app_public.absence_document_file', args: [{ name: 'p_id', from: 'path', key: 'id', cast: 'int' }] },
      render: sendStoredFile,
    },
    {
      method: 'get',
      path: '/api/employees/{id}/honorability-certificate/',
      operationId: 'honorability_certificate_get',
      summary: 'Attestation d’honorabilité d’un salarié : nom du fichier, date et déposant',
      description: 'La clé `file` n’apparaît que pour les lecteurs autorisés à lire le contenu.',
      tags: ['Justificatifs'],
      auth: 'account',
      pathParams: { id: s.id() },
      sql: {
        fn: 'app_public.honorability_certificate_get',
        args: [
          { name: 'p_employee', from: 'path', key: 'id', cast: 'int' },
          { name: 'p_public_url', from: 'context', key: 'public_url', cast: 'text' },
        ],
      },
      status: 200,
      response: s.ref('HonorabilityCertificate'),
      errors: [404],
    },
    {
      method: 'put',
      path: '/api/employees/{id}/honorability-certificate/',
      operationId: 'honorability_certificate_put',
      summary: 'Déposer (ou remplacer) l’attestation d’honorabilité d’un salarié',
      description:
        'Corps multipart/form-data avec un seul fichier sous `file` (PDF, JPG ou PNG contrôlé par son contenu, ' +
        '' + megabytesFr(INPUT_CONTRACT.documentMaxBytes) + ' au plus). Dépôt ouvert au salarié, à l’encadrement de son périmètre (sans le droit de lire le ' +
        'contenu) et aux RH ; un salarié hors de ce périmètre répond 404, un appelant sans aucun de ces droits 403. ' +
        'Le fichier remplacé est supprimé du stockage.',
      tags: ['Justificatifs'],
      auth: 'account',
      permission: 'absences.view_absence_queue | employee.change_employee_record (ou le salarié lui-même)',
      pathParams: { id: s.id() },
      body: s.object({}, ['file']),
      multipart: { files: ['file'], maxFileBytes: MAX_DOCUMENT_BYTES },
      status: 200,
      response: s.ref('HonorabilityCertificate'),
      errors: [400, 403, 404],
      sql: {
        fn: 'app_public.honorability_certificate_put',
        args: [
          { name: 'p_employee', from: 'path', key: 'id', cast: 'int' },
          // The stored file's metadata from the multipart reader; SQL accepts only files of this request.
          bodyField('file', 'jsonb'),
          { name: 'p_public_url', from: 'context', key: 'public_url', cast: 'text' },
        ],
      },
      // The replaced certificate's file goes at once.
      purgeStorageAfterCommit: true,
    },
    {
      method: 'delete',
      path: '/api/employees/{id}/honorability-certificate/',
      operationId: 'honorability_certificate_delete',
      summary: 'Retirer l’attestation d’honorabilité d’un salarié',
      tags: ['Justificatifs'],
      auth: 'account',
      permission: 'absences.view_absence_queue | employee.change_employee_record (ou le salarié lui-même)',
      pathParams: { id: s.id() },
      status: 204,
      errors: [403, 404],
      sql: { fn: 'app_public.honorability_certificate_delete', args: [{ name: 'p_employee', from: 'path', key: 'id', cast: 'int' }] },
      purgeStorageAfterCommit: true,
    },
    {
      method: 'get',
      path: '/api/employees/{id}/honorability-certificate/file/',
      operationId: 'honorability_certificate_file',
      summary: 'Télécharger l’attestation d’honorabilité d’un salarié',
      description:
        'Mêmes règles que les justificatifs : le salarié lui-même, ou `absences.view_absencedocument_file` sur ' +
        'son périmètre (403 sinon) ; 404 hors périmètre ou sans fichier. ' + FILE_DESCRIPTION,
      tags: ['Justificatifs'],
      auth: 'account',
      permission: 'absences.view_absencedocument_file (tiers)',
      pathParams: { id: s.id() },
      status: 200,
      responseContentTypes: DOCUMENT_CONTENT_TYPES,
      headers: FILE_HEADERS,
      errors: [403, 404],
      sql: { fn: 'app_public.honorability_certificate_file', args: [{ name: 'p_employee', from: 'path', key: 'id', cast: 'int' }] },
      render: sendStoredFile,
    },
  ],
};
