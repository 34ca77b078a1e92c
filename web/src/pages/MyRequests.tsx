import { useId, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiFailure, ok, type Schemas } from '../api/client';
import { frDate, frDateTime, minutes, quantity } from '../format';
import { useSession } from '../session';
import { ErrorNotice, FieldError, Loading, Page, Pager } from '../ui';

type Absence = Schemas['Absence'];
type ShiftChange = Schemas['ShiftChangeRequest'];

const PAGE_SIZE = 10;

export const SHIFT_STATUS: Record<ShiftChange['status'], string> = { pending: 'En attente', validated: 'Validée', refused: 'Refusée' };

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

/** "Mes demandes": my absences and day-change requests, their states and what I may still do. */
export function MyRequests() {
  const { me } = useSession();
  const [absencePage, setAbsencePage] = useState(1);
  const [shiftPage, setShiftPage] = useState(1);
  const employee = me.employee_id ?? undefined;
  const absences = useQuery({
    queryKey: ['absences', 'mine', employee, absencePage],
    queryFn: () => ok(api.GET('/api/absences/', { params: { query: { employee, page: absencePage, page_size: PAGE_SIZE } } })),
  });
  const shifts = useQuery({
    queryKey: ['shift-changes', 'mine', employee, shiftPage],
    queryFn: () => ok(api.GET('/api/shift-change-requests/', { params: { query: { employee, page: shiftPage, page_size: PAGE_SIZE } } })),
  });
  return (
    <Page title="Mes demandes">
      <h2>Absences</h2>
      {absences.isPending && <Loading what="des absences" />}
      <ErrorNotice error={absences.error} />
      {absences.data && absences.data.count === 0 && <p>Aucune demande d’absence.</p>}
      <ul className="cards">
        {absences.data?.results.map((absence) => <AbsenceItem key={absence.id} absence={absence} />)}
      </ul>
      {absences.data && <Pager label="Pages des absences" page={absencePage} pageSize={PAGE_SIZE} count={absences.data.count} onPage={setAbsencePage} />}

      <h2>Modifications de journée</h2>
      {shifts.isPending && <Loading what="des demandes de modification" />}
      <ErrorNotice error={shifts.error} />
      {shifts.data && shifts.data.count === 0 && <p>Aucune demande de modification de journée.</p>}
      <ul className="cards">
        {shifts.data?.results.map((request) => <ShiftItem key={request.id} request={request} />)}
      </ul>
      {shifts.data && <Pager label="Pages des modifications" page={shiftPage} pageSize={PAGE_SIZE} count={shifts.data.count} onPage={setShiftPage} />}
    </Page>
  );
}

function useRefreshRequests() {
  const queryClient = useQueryClient();
  return () =>
    Promise.all(['absences', 'shift-changes', 'counters', 'planning'].map((key) => queryClient.invalidateQueries({ queryKey: [key] })));
}

function AbsenceItem({ absence }: { absence: Absence }) {
  const refresh = useRefreshRequests();
  const [asking, setAsking] = useState(false);
  const withdraw = useMutation({
    mutationFn: () => ok(api.DELETE('/api/absences/{id}/', { params: { path: { id: absence.id } } })),
    onSuccess: refresh,
  });
  const titleId = `absence-${absence.id}`;
  return (
    <li className={`card status-${absence.status}`} aria-labelledby={titleId}>
      <div className="card-head">
        <h3 id={titleId}>
          {absence.type_name} <span className="code">{absence.type_code}</span>
        </h3>
        <span className="badge">{absence.status_label ?? absence.status}</span>
      </div>
      <p>
        {absencePeriod(absence)} · {quantity(absence.counted_quantity, absence.counted_unit)}
      </p>
      {absence.comment && <p className="muted">Votre commentaire : {absence.comment}</p>}
      {absence.decision_reason && <p>Motif de la décision : {absence.decision_reason}</p>}
      {absence.cancellation_requested_at && (
        <p className="muted">Annulation demandée le {frDateTime(absence.cancellation_requested_at)}{absence.cancellation_comment ? ` : ${absence.cancellation_comment}` : ''}</p>
      )}
      {absence.cancellation_decision_reason && <p>Motif du refus d’annulation : {absence.cancellation_decision_reason}</p>}
      {absence.documents.length > 0 && (
        <p className="muted">Justificatifs : {absence.documents.map((document) => document.filename).join(', ')}</p>
      )}
      <ErrorNotice error={withdraw.error} />
      <div className="actions">
        {absence.status === 'pending' && (
          <button type="button" onClick={() => withdraw.mutate()} disabled={withdraw.isPending} aria-describedby={titleId}>
            Retirer la demande
          </button>
        )}
        {absence.status === 'validated' && !asking && (
          <button type="button" onClick={() => setAsking(true)} aria-describedby={titleId}>
            Demander l’annulation
          </button>
        )}
      </div>
      {asking && <CancellationForm absence={absence} onDone={() => setAsking(false)} />}
    </li>
  );
}

function CancellationForm({ absence, onDone }: { absence: Absence; onDone(): void }) {
  const refresh = useRefreshRequests();
  const [comment, setComment] = useState('');
  const id = useId();
  const request = useMutation({
    mutationFn: () =>
      ok(api.POST('/api/absences/{id}/request-cancellation/', { params: { path: { id: absence.id } }, body: { comment: comment || undefined } })),
    onSuccess: async () => {
      await refresh();
      onDone();
    },
  });
  const errors = request.error instanceof ApiFailure ? request.error.fields : {};
  const other = Object.entries(errors).filter(([key]) => key !== 'comment').flatMap(([, messages]) => messages);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    request.mutate();
  };
  return (
    <form className="inline-form" onSubmit={submit}>
      <label htmlFor={`${id}-comment`}>Pourquoi demandez-vous l’annulation ? (facultatif)</label>
      <textarea id={`${id}-comment`} value={comment} onChange={(e) => setComment(e.target.value)} rows={2}
        aria-describedby={errors.comment ? `${id}-comment-error` : undefined} aria-invalid={Boolean(errors.comment)} />
      <FieldError id={`${id}-comment`} messages={errors.comment} />
      {other.length > 0 && <p className="notice error" role="alert">{other.join(' ')}</p>}
      {request.error && !(request.error instanceof ApiFailure) && <ErrorNotice error={request.error} />}
      <div className="actions">
        <button type="submit" className="primary" disabled={request.isPending}>Envoyer la demande d’annulation</button>
        <button type="button" onClick={onDone}>Ne pas annuler</button>
      </div>
    </form>
  );
}

function ShiftItem({ request }: { request: ShiftChange }) {
  const refresh = useRefreshRequests();
  const withdraw = useMutation({
    mutationFn: () => ok(api.DELETE('/api/shift-change-requests/{id}/', { params: { path: { id: request.id } } })),
    onSuccess: refresh,
  });
  const titleId = `shift-${request.id}`;
  const asked = request.slots.length
    ? request.slots.map((slot) => `${slot.start_time}–${slot.end_time}${slot.post_code ? ` (${slot.post_code})` : ''}`).join(', ')
    : 'horaires inchangés';
  return (
    <li className={`card status-${request.status}`} aria-labelledby={titleId}>
      <div className="card-head">
        <h3 id={titleId}>Journée du {frDate(request.date)}</h3>
        <span className="badge">{SHIFT_STATUS[request.status]}</span>
      </div>
      <p>
        Prévu : {request.planned_description || 'repos'} ({minutes(request.planned_minutes)}) → demandé : {asked} ({minutes(request.requested_minutes)})
        {request.is_remote && ' · télétravail'}
        {request.is_offsite && ' · hors établissement'}
      </p>
      {request.reason_label && <p className="muted">Motif : {request.reason_label}</p>}
      {request.decision_reason && <p>Motif de la décision : {request.decision_reason}</p>}
      {request.granted_slots && (
        <p>Accordé : {request.granted_slots.map((slot) => `${slot.start_time}–${slot.end_time}`).join(', ')} ({minutes(request.granted_minutes ?? 0)})</p>
      )}
      <ErrorNotice error={withdraw.error} />
      {request.status === 'pending' && (
        <div className="actions">
          <button type="button" onClick={() => withdraw.mutate()} disabled={withdraw.isPending} aria-describedby={titleId}>
            Retirer la demande
          </button>
        </div>
      )}
    </li>
  );
}
