import type { Schemas } from '../../../api/client';
import { ConfirmWithdraw } from '../../../components/ConfirmWithdraw';
import { ErrorNotice } from '../../../components/ui';
import { frDate, minutes } from '../../../lib/format';
import { SHIFT_STATUS } from '../../../lib/requests';
import { useWithdrawDayChange } from '../api/day-changes';

/**
 * One day-change request of one's own, as « Mes demandes » lists it and its address opens it:
 * planned and asked, its state and reason, what was granted; a pending one may be withdrawn.
 */
export function DayChangeCard({ request, onWithdrawn, headingLevel = 3 }: {
  request: Schemas['ShiftChangeRequest'];
  onWithdrawn?: () => void;
  headingLevel?: 2 | 3;
}) {
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const withdraw = useWithdrawDayChange(request.id, onWithdrawn);
  const titleId = `shift-${request.id}`;
  const asked = request.slots.length
    ? request.slots.map((slot) => `${slot.start_time}–${slot.end_time}${slot.post_code ? ` (${slot.post_code})` : ''}`).join(', ')
    : 'horaires inchangés';
  return (
    <li className={`card status-${request.status}`} aria-labelledby={titleId}>
      <div className="card-head">
        <Heading id={titleId}>Journée du {frDate(request.date)}</Heading>
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
          <ConfirmWithdraw busy={withdraw.isPending} describedBy={titleId} onConfirm={() => withdraw.mutate()}
            what={`la demande de modification de la journée du ${frDate(request.date)} (demandé : ${asked})`} />
        </div>
      )}
    </li>
  );
}
