/** How requests read in French: statuses, an absence's period, the columns of a counter movement. */
import type { Schemas } from '../api/client';
import { frDate } from './format';

type Absence = Schemas['Absence'];
type ShiftChange = Schemas['ShiftChangeRequest'];

export const ABSENCE_STATUS = {
  pending: 'En attente',
  cancellation_requested: 'Annulation demandée',
  validated: 'Validée',
  refused: 'Refusée',
  cancelled: 'Annulée',
} as const satisfies Record<Absence['status'], string>;

export const SHIFT_STATUS: Record<ShiftChange['status'], string> = { pending: 'En attente', validated: 'Validée', refused: 'Refusée' };

/** The counter columns a movement touches (SPEC counters: « Planifiés » until the day, then « Pris »). */
export const COUNTER_COLUMN = { planned: 'Planifiés', taken: 'Pris' } as const;

/** Dates of an absence with its half-days or hours. */
export function absencePeriod(absence: Pick<Absence, 'date_start' | 'date_end' | 'start_half' | 'end_half' | 'start_time' | 'end_time'>): string {
  const half = (value: Absence['start_half']) => (value === 'morning' ? ' (matin)' : value === 'afternoon' ? ' (après-midi)' : '');
  if (absence.start_time && absence.end_time) return `${frDate(absence.date_start)}, ${absence.start_time}–${absence.end_time}`;
  if (absence.date_start === absence.date_end) {
    return absence.start_half && absence.start_half === absence.end_half
      ? `${frDate(absence.date_start)}${half(absence.start_half)}`
      : frDate(absence.date_start);
  }
  return `du ${frDate(absence.date_start)}${half(absence.start_half)} au ${frDate(absence.date_end)}${half(absence.end_half)}`;
}
