/** The parts shared by the absence and day-change panels: outcome of a decision, sections, day, warnings, documents. */
import { useId, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { ApiFailure, type Schemas } from '../../../api/client';
import { frDateTime, minutes } from '../../../lib/format';
import { AFTER_DECISION, invalidate } from '../../../lib/query-keys';
import { documentFile } from '../api/queue';

/** What a 409 of a decision means for the reader (SPEC: somebody else decided first). */
export const STALE_MESSAGE = 'Quelqu’un d’autre a déjà décidé ; rechargez la file';

/**
 * The state of a decision call: its field errors, and the 409 that reloads the queue and the
 * record (the message stays shown while the panel is open).
 */
export function useDecisionOutcome() {
  const queryClient = useQueryClient();
  const [stale, setStale] = useState(false);
  const refresh = () => invalidate(queryClient, AFTER_DECISION);
  const onError = (error: unknown) => {
    if (error instanceof ApiFailure && error.status === 409) {
      setStale(true);
      void refresh();
    }
  };
  return { stale, onError, refresh };
}

/** Errors of a refused decision by field (a 409 is shown apart, as STALE_MESSAGE). */
export function decisionErrors(error: unknown): Record<string, string[]> {
  if (!(error instanceof ApiFailure) || error.status === 409) return {};
  return error.fields;
}

/** Messages of the fields a form does not show under an input, in one alert. */
export function OtherErrors({ errors, shown }: { errors: Record<string, string[]>; shown: string[] }) {
  const other = Object.entries(errors).filter(([key]) => !shown.includes(key)).flatMap(([, messages]) => messages);
  if (!other.length) return null;
  return <p className="notice error" role="alert">{other.join(' ')}</p>;
}

export function StaleNotice({ stale }: { stale: boolean }) {
  if (!stale) return null;
  return <p className="notice error" role="alert">{STALE_MESSAGE}</p>;
}

/** A titled block of the panel. */
export function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = useId();
  return (
    <section className="decision-section" aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      {children}
    </section>
  );
}

type Slot = Schemas['Slot'];

/** Slots as "09:00–17:00 (J · Journée, pause 12:00–12:30)". */
export function slotText(slot: Pick<Slot, 'start_time' | 'end_time' | 'break_start_time' | 'break_end_time' | 'break_paid'> & { post_code?: string | null; post_label?: string | null; is_remote?: boolean }): string {
  const post = slot.post_code ? `${slot.post_code}${slot.post_label ? ` · ${slot.post_label}` : ''}` : null;
  const pause = slot.break_start_time && slot.break_end_time
    ? `pause ${slot.break_start_time}–${slot.break_end_time}${slot.break_paid ? ' payée' : ''}`
    : null;
  const details = [post, pause, slot.is_remote ? 'télétravail' : null].filter(Boolean).join(', ');
  return `${slot.start_time}–${slot.end_time}${details ? ` (${details})` : ''}`;
}

/** The day as planned now: its label, net duration and slots. */
export function DayFacts({ label, total, slots, note }: { label: string; total: number; slots: Array<Parameters<typeof slotText>[0]>; note?: string | null }) {
  return (
    <>
      <p>
        {label} · <span className="nowrap">{minutes(total)} nettes</span>
        {note ? ` · ${note}` : ''}
      </p>
      {slots.length > 0 && (
        <ul className="slot-list">
          {slots.map((slot, index) => <li key={index}>{slotText(slot)}</li>)}
        </ul>
      )}
    </>
  );
}

/** Warnings as the server words them. */
export function Warnings({ warnings }: { warnings: string[] | null | undefined }) {
  if (!warnings?.length) return <p className="muted">Aucun avertissement.</p>;
  return (
    <ul className="warnings">
      {warnings.map((warning) => <li key={warning} className="notice warning">{warning}</li>)}
    </ul>
  );
}

/** Downloads a document through the authenticated client (the file route needs the token). */
export function DocumentLink({ document }: { document: Schemas['AbsenceDocument'] }) {
  const [error, setError] = useState<string | null>(null);
  const open = async () => {
    setError(null);
    try {
      const blob = await documentFile(document.id);
      const url = URL.createObjectURL(blob);
      const link = Object.assign(window.document.createElement('a'), { href: url, download: document.filename });
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (failure) {
      setError(failure instanceof ApiFailure ? failure.message : 'Le justificatif n’a pas pu être téléchargé.');
    }
  };
  return (
    <>
      <button type="button" className="link" onClick={open}>
        {document.filename}
        <span className="sr-only"> (télécharger)</span>
      </button>
      <span className="muted"> · déposé le {frDateTime(document.uploaded_at)} par {document.uploaded_by}</span>
      {error && <span className="field-error" role="alert"> {error}</span>}
    </>
  );
}
