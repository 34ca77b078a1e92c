/** Display helpers: French dates and quantities (the values themselves come from the server). */
const dateFormat = new Intl.DateTimeFormat('fr-FR', { day: '2-digit', month: '2-digit', year: 'numeric', timeZone: 'UTC' });
const longDate = new Intl.DateTimeFormat('fr-FR', { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
const dateTime = new Intl.DateTimeFormat('fr-FR', { dateStyle: 'short', timeStyle: 'short', timeZone: 'Europe/Paris' });

export const frDate = (iso: string) => dateFormat.format(new Date(`${iso.slice(0, 10)}T00:00:00Z`));
export const frLongDate = (iso: string) => longDate.format(new Date(`${iso.slice(0, 10)}T00:00:00Z`));
export const frDateTime = (iso: string) => dateTime.format(new Date(iso));

/** "3,00" → "3", "1,50" → "1,5", with its unit. */
export function quantity(value: string | null | undefined, unit: string | null | undefined): string {
  if (value == null) return '—';
  const number = Number(value).toLocaleString('fr-FR', { maximumFractionDigits: 2 });
  const n = Math.abs(Number(value));
  if (unit === 'hour') return `${number} h`;
  return `${number} ${n >= 2 ? 'jours' : 'jour'}`; // French: plural from 2 (« 1,5 jour »)
}

export function minutes(total: number): string {
  const h = Math.floor(total / 60);
  const m = total % 60;
  return `${h} h ${String(m).padStart(2, '0')}`;
}

/** Calendar arithmetic on ISO dates (YYYY-MM-DD), in UTC so that no time zone shifts a day. */
export function addDays(iso: string, days: number): string {
  const date = new Date(`${iso}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

/** Monday of the week of a date. */
export function mondayOf(iso: string): string {
  const weekday = (new Date(`${iso}T00:00:00Z`).getUTCDay() + 6) % 7;
  return addDays(iso, -weekday);
}

export function monthBounds(iso: string): { first: string; last: string } {
  const first = `${iso.slice(0, 7)}-01`;
  const next = new Date(`${first}T00:00:00Z`);
  next.setUTCMonth(next.getUTCMonth() + 1);
  return { first, last: addDays(next.toISOString().slice(0, 10), -1) };
}

const monthName = new Intl.DateTimeFormat('fr-FR', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const dayHead = new Intl.DateTimeFormat('fr-FR', { weekday: 'short', day: 'numeric', month: 'short', timeZone: 'UTC' });
export const frMonth = (iso: string) => monthName.format(new Date(`${iso}T00:00:00Z`));
export const frDayHead = (iso: string) => dayHead.format(new Date(`${iso}T00:00:00Z`));
export const WEEKDAYS = ['lundi', 'mardi', 'mercredi', 'jeudi', 'vendredi', 'samedi', 'dimanche'];
