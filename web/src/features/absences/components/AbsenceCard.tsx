import { useId, useState, type FormEvent } from 'react';
import { ApiFailure, type Schemas } from '../../../api/client';
import { ConfirmWithdraw } from '../../../components/ConfirmWithdraw';
import { ErrorNotice, FieldError } from '../../../components/ui';
import { frDateTime, quantity } from '../../../lib/format';
import { absencePeriod } from '../../../lib/requests';
import { useRequestCancellation, useWithdrawAbsence } from '../api/absences';

type Absence = Schemas['Absence'];

/** « du 01/12/2026 au 05/12/2026 » as it is; one day « 01/12/2026 » reads « du 01/12/2026 ». */
const withDu = (period: string) => (period.startsWith('du ') ? period : `du ${period}`);

/**
 * One absence of one's own, as « Mes demandes » lists it and its address opens it: its state,
 * the decision's reason, the documents, and what may still be done (withdraw a pending request,
 * ask for the cancellation of a granted one).
 */
export function AbsenceCard({ absence, onWithdrawn, headingLevel = 3 }: { absence: Absence; onWithdrawn?: () => void; headingLevel?: 2 | 3 }) {
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const [asking, setAsking] = useState(false);
  const withdraw = useWithdrawAbsence(absence.id, onWithdrawn);
  const titleId = `absence-${absence.id}`;
  return (
    <li className={`card status-${absence.status}`} aria-labelledby={titleId}>
      <div className="card-head">
        <Heading id={titleId}>
          {absence.type_name} <span className="code">{absence.type_code}</span>
        </Heading>
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
          <ConfirmWithdraw busy={withdraw.isPending} describedBy={titleId} onConfirm={() => withdraw.mutate()}
            what={`la demande d’absence «\u00a0${absence.type_name}\u00a0» ${withDu(absencePeriod(absence))} (${quantity(absence.counted_quantity, absence.counted_unit)})`} />
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
  const [comment, setComment] = useState('');
  const id = useId();
  const request = useRequestCancellation(absence.id, onDone);
  const errors = request.error instanceof ApiFailure ? request.error.fields : {};
  const other = Object.entries(errors).filter(([key]) => key !== 'comment').flatMap(([, messages]) => messages);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    request.mutate(comment);
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
