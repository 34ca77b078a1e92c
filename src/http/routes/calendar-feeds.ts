import { createHash } from 'node:crypto';
import type { RouteModule } from '../openapi.js';
import { bodyField, type ArgSpec, type HandlerContext, type HandlerResult } from '../route.js';
import { s } from '../schema.js';
import { writeCalendar, type CalendarFeed } from '../icalendar.js';

const KINDS = ['planning', 'perimeter'] as const;
const RULES =
  'Deux flux par compte au plus : « planning » (mes jours travaillés avec horaires et poste, mes absences, mes ' +
  'modifications validées, mes astreintes), ouvert à tout compte, et « perimeter » (qui est absent quand dans mon ' +
  'périmètre de lecture des demandes), réservé aux lecteurs des demandes d’absence (`absences.view_absence_queue`, 403 ' +
  'sinon). L’adresse secrète n’est montrée qu’à la création et au renouvellement (seule son empreinte SHA-256 est ' +
  'gardée) ; l’ancienne adresse d’un flux renouvelé ou supprimé répond 404.';

const kindArg: ArgSpec = { name: 'p_kind', from: 'path', key: 'kind', cast: 'text' };
const publicUrl: ArgSpec = { name: 'p_public_url', from: 'context', key: 'public_url', cast: 'text' };

/** Polling clients revalidate at most every 5 minutes, then cost a 304 while nothing changed. */
const FEED_CACHE_CONTROL = 'private, max-age=300';

/** A strong validator of the exact body. */
function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url')}"`;
}

/** If-None-Match (RFC 9110 13.1.2): `*` or a list of tags, weak ones compared weakly. */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * GET /api/feeds/{token}.ics: the route is public (a session sent along is ignored), and
 * calendar_feed_read makes the feed's owner the acting account; its events become RFC 5545
 * text here, with an ETag.
 */
function renderFeed(ctx: HandlerContext, result: unknown): HandlerResult {
  const feed = result as CalendarFeed;
  const body = writeCalendar(feed);
  const etag = etagOf(body);
  const { req, res } = ctx;
  res.setHeader('Cache-Control', FEED_CACHE_CONTROL);
  res.setHeader('ETag', etag);
  if (matches(req.get('if-none-match'), etag)) {
    res.status(304).end();
    return { handled: true };
  }
  res.status(200);
  res.setHeader('Content-Type', 'text/calendar; charset=utf-8');
  res.setHeader('Content-Disposition', `inline; filename="${feed.kind}.ics"`);
  res.end(req.method === 'HEAD' ? undefined : body);
  return { handled: true };
}

const feedSummary = {
  kind: s.enum(KINDS),
  label: s.string({ description: 'Nom du flux, en français.' }),
};

export const calendarFeedRoutes: RouteModule = {
  schemas: {
    CalendarFeedState: s.object(
      {
        ...feedSummary,
        allowed: s.bool({ description: 'Le compte peut détenir ce flux.' }),
        active: s.bool({ description: 'Un flux de ce type existe (son adresse n’est plus affichable : renouvelez-la pour la revoir).' }),
        created_at: s.nullable(s.dateTime({ description: 'Création ou dernier renouvellement.' })),
      },
      ['kind', 'label', 'allowed', 'active', 'created_at'],
    ),
    CalendarFeedAddress: s.object(
      {
        ...feedSummary,
        created_at: s.dateTime(),
        url: s.string({ format: 'uri', description: 'Adresse secrète d’abonnement (.ics), montrée cette fois seulement.' }),
      },
      ['kind', 'label', 'created_at', 'url'],
    ),
  },
  routes: [
    {
      method: 'get',
      path: '/api/calendar-feeds/',
      operationId: 'calendar_feeds_list',
      summary: 'Mes flux de calendrier',
      description: RULES,
      tags: ['Calendriers'],
      auth: 'account',
      sql: { fn: 'app_public.calendar_feeds_list', args: [] },
      status: 200,
      response: s.object({ feeds: s.array(s.ref('CalendarFeedState')) }, ['feeds']),
      errors: [],
    },
    {
      method: 'post',
      path: '/api/calendar-feeds/',
      operationId: 'calendar_feeds_create',
      summary: 'Créer un flux de calendrier (son adresse secrète est montrée une fois)',
      description: `${RULES} Un seul flux par type : un second est refusé sous \`kind\` (renouvelez l’adresse).`,
      tags: ['Calendriers'],
      auth: 'account',
      permission: 'absences.view_absence_queue (flux « perimeter »)',
      body: s.object({ kind: s.enum(KINDS, { description: 'planning ou perimeter.' }) }, ['kind']),
      sql: { fn: 'app_public.calendar_feed_create', args: [bodyField('kind', 'text'), publicUrl] },
      status: 201,
      response: s.ref('CalendarFeedAddress'),
      errors: [400, 403],
    },
    {
      method: 'post',
      path: '/api/calendar-feeds/{kind}/rotate/',
      operationId: 'calendar_feeds_rotate',
      summary: 'Renouveler l’adresse secrète d’un flux (l’ancienne répond 404)',
      description: RULES,
      tags: ['Calendriers'],
      auth: 'account',
      pathParams: { kind: s.enum(KINDS) },
      sql: { fn: 'app_public.calendar_feed_rotate', args: [kindArg, publicUrl] },
      status: 200,
      response: s.ref('CalendarFeedAddress'),
      errors: [403, 404],
    },
    {
      method: 'delete',
      path: '/api/calendar-feeds/{kind}/',
      operationId: 'calendar_feeds_revoke',
      summary: 'Supprimer un flux (son adresse répond 404)',
      description: RULES,
      tags: ['Calendriers'],
      auth: 'account',
      pathParams: { kind: s.enum(KINDS) },
      sql: { fn: 'app_public.calendar_feed_revoke', args: [kindArg] },
      status: 204,
      errors: [404],
    },
    {
      method: 'get',
      path: '/api/feeds/{token}.ics',
      operationId: 'calendar_feed_read',
      summary: 'Flux iCalendar (RFC 5545) d’une adresse secrète',
      description:
        'Lu par les applications d’agenda, sans session : l’adresse secrète suffit, et le flux montre ce que son ' +
        'propriétaire peut lire (mêmes périmètres que le planning et la file des demandes), de 3 mois en arrière à ' +
        '12 mois en avant. Fuseau Europe/Paris déclaré (VTIMEZONE) ; UID stables ; les journées entières en ' +
        'VALUE=DATE, les demi-journées (matin [00:00, 12:00[, après-midi [12:00, 24:00[) et les horaires en heure ' +
        'locale. Dans le flux « perimeter », le motif d’une absence n’apparaît que pour le salarié et ceux qui ' +
        'décident de ses absences ; les autres lisent « Absent(e) ». En-têtes `ETag` (empreinte du corps) et ' +
        '`Cache-Control: private, max-age=300` ; `If-None-Match` avec l’ETag courant répond 304 sans corps. Une adresse ' +
        'inconnue, renouvelée ou supprimée, ou d’un compte fermé, répond 404 ; un flux « perimeter » dont le ' +
        'propriétaire ne lit plus les demandes, 403.',
      tags: ['Calendriers'],
      auth: 'public',
      pathParams: { token: s.string({ pattern: '^[0-9a-f]{64}$', description: 'Secret du flux (64 caractères hexadécimaux).' }) },
      status: 200,
      responseContentTypes: ['text/calendar'],
      headers: { 'Cache-Control': FEED_CACHE_CONTROL },
      otherResponses: { 304: 'Non modifié : l’ETag envoyé dans If-None-Match est toujours celui du flux.' },
      errors: [403, 404],
      sql: { fn: 'app_public.calendar_feed_read', args: [{ name: 'p_token', from: 'path', key: 'token', cast: 'text' }] },
      render: renderFeed,
    },
  ],
};
