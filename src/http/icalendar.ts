/**
 * Writes an iCalendar feed (RFC 5545) from the events app_public.calendar_feed_read returns.
 * SQL decides every event and what it says; this module only writes the format: CRLF line
 * ends, lines folded at 75 octets, TEXT escaping, the Europe/Paris VTIMEZONE, all-day events as
 * VALUE=DATE and the others as local times of that zone.
 */

export interface CalendarEvent {
  uid: string;
  summary: string;
  description: string | null;
  location: string | null;
  all_day: boolean;
  /** YYYY-MM-DD (all day) or local YYYY-MM-DDTHH:MM:SS of the business time zone. */
  start: string;
  /** Exclusive end, same form as start. */
  end: string;
  status: 'CONFIRMED' | 'TENTATIVE';
  sequence: number;
  /** ISO 8601 timestamps with offset. */
  stamp: string;
  last_modified: string | null;
}

export interface CalendarFeed {
  kind: string;
  name: string;
  events: CalendarEvent[];
}

export const CALENDAR_TIMEZONE = 'Europe/Paris';
/** The right-hand side of every UID: the same whatever host serves the feed, so that a moved
 * service keeps the events its subscribers already hold. */
export const UID_DOMAIN = 'calendrier.wfm';

/** Europe/Paris since 1996: CET/CEST, changes on the last Sundays of March and October. */
const VTIMEZONE = [
  'BEGIN:VTIMEZONE',
  `TZID:${CALENDAR_TIMEZONE}`,
  'BEGIN:DAYLIGHT',
  'TZOFFSETFROM:+0100',
  'TZOFFSETTO:+0200',
  'TZNAME:CEST',
  'DTSTART:19700329T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU',
  'END:DAYLIGHT',
  'BEGIN:STANDARD',
  'TZOFFSETFROM:+0200',
  'TZOFFSETTO:+0100',
  'TZNAME:CET',
  'DTSTART:19701025T030000',
  'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU',
  'END:STANDARD',
  'END:VTIMEZONE',
];

/** TEXT value escaping (RFC 5545 3.3.11): backslash, semicolon, comma, newlines. */
export function escapeText(value: string): string {
  return value
    .replace(/\\/g, '\\\\')
    .replace(/;/g, '\\;')
    .replace(/,/g, '\\,')
    .replace(/\r\n|\r|\n/g, '\\n');
}

/**
 * Folds a content line at 75 octets (RFC 5545 3.1): each continuation starts with a space, and
 * a UTF-8 character is never cut.
 */
export function foldLine(line: string): string {
  const parts: string[] = [];
  let current = '';
  let octets = 0;
  for (const char of line) {
    const size = Buffer.byteLength(char, 'utf8');
    // the first line holds 75 octets; a continuation 74 after its leading space
    if (octets + size > (parts.length === 0 ? 75 : 74)) {
      parts.push(current);
      current = '';
      octets = 0;
    }
    current += char;
    octets += size;
  }
  parts.push(current);
  return parts.join('\r\n ');
}

/** 2026-12-10T12:00:00 → 20261210T120000; 2026-12-01 → 20261201. */
function localValue(value: string): string {
  return value.replace(/[-:]/g, '');
}

/** An instant as UTC: 20261116T090000Z. */
function utcValue(iso: string): string {
  return new Date(iso).toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
}

function eventLines(event: CalendarEvent): string[] {
  const when = (name: string, value: string) =>
    event.all_day ? `${name};VALUE=DATE:${localValue(value)}` : `${name};TZID=${CALENDAR_TIMEZONE}:${localValue(value)}`;
  return [
    'BEGIN:VEVENT',
    `UID:${event.uid}@${UID_DOMAIN}`,
    `DTSTAMP:${utcValue(event.stamp)}`,
    when('DTSTART', event.start),
    when('DTEND', event.end),
    `SUMMARY:${escapeText(event.summary)}`,
    ...(event.description ? [`DESCRIPTION:${escapeText(event.description)}`] : []),
    ...(event.location ? [`LOCATION:${escapeText(event.location)}`] : []),
    `STATUS:${event.status}`,
    `SEQUENCE:${event.sequence}`,
    ...(event.last_modified ? [`LAST-MODIFIED:${utcValue(event.last_modified)}`] : []),
    // Absences of other people do not make the reader busy.
    `TRANSP:${event.uid.startsWith('absence-') ? 'TRANSPARENT' : 'OPAQUE'}`,
    'END:VEVENT',
  ];
}

/** The whole VCALENDAR, CRLF-terminated. */
export function writeCalendar(feed: CalendarFeed): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//WFM//Calendrier//FR',
    'CALSCALE:GREGORIAN',
    `X-WR-CALNAME:${escapeText(feed.name)}`,
    `X-WR-TIMEZONE:${CALENDAR_TIMEZONE}`,
    'REFRESH-INTERVAL;VALUE=DURATION:PT1H',
    'X-PUBLISHED-TTL:PT1H',
    ...VTIMEZONE,
    ...feed.events.flatMap(eventLines),
    'END:VCALENDAR',
  ];
  return lines.map(foldLine).join('\r\n') + '\r\n';
}
