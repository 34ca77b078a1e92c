import { useId, useState, type FormEvent } from 'react';
import { ApiFailure, type Schemas } from '../../../api/client';
import { SlotEditor } from '../../../components/SlotEditor';
import { ErrorNotice, FieldError, OpenedRecord } from '../../../components/ui';
import { deName, frDateTime, frLongDate, minutes } from '../../../lib/format';
import { SHIFT_STATUS } from '../../../lib/requests';
import { slotBody, slotDraftOf, type SlotDraft } from '../../../lib/slots';
import { useDecideDayChange, useQueueDayChange, type Decision } from '../api/queue';
import { DayFacts, decisionErrors, OtherErrors, Section, slotText, StaleNotice, useDecisionOutcome, Warnings } from './decision-parts';

type Slot = Schemas['Slot'];

export const QUEUE_DAY_CHANGE_NOT_FOUND = 'Cette demande de modification de journée est introuvable : elle a été retirée, ou elle n’est pas de votre périmètre.';

/** The day-change request in the decision panel: asked, planned now, warnings, decision. */
export function ShiftChangeDecision({ id, onDecided }: { id: number; onDecided(message: string): void }) {
  const request = useQueueDayChange(id);
  // Kept above the record: a 409 reloads it, and its message stays when the action foot goes.
  const outcome = useDecisionOutcome();
  return (
    <OpenedRecord query={request} notFound={QUEUE_DAY_CHANGE_NOT_FOUND}>
      {(record) => <DayChangeBody r={record} outcome={outcome} onDecided={onDecided} />}
    </OpenedRecord>
  );
}

function DayChangeBody({ r, outcome, onDecided }: {
  r: NonNullable<ReturnType<typeof useQueueDayChange>['data']>;
  outcome: ReturnType<typeof useDecisionOutcome>;
  onDecided(message: string): void;
}) {
  const options = [r.is_remote ? 'télétravail' : null, r.is_offsite ? 'hors de l’établissement' : null].filter(Boolean).join(', ');
  return (
    <div className="decision-body">
      <StaleNotice stale={outcome.stale} />
      <dl className="facts">
        <dt>Salarié</dt>
        <dd>{r.employee_name ?? '—'}</dd>
        <dt>Journée</dt>
        <dd>{frLongDate(r.date)}</dd>
        <dt>Motif</dt>
        <dd>{r.reason_label ?? r.reason}</dd>
        <dt>Statut</dt>
        <dd><span className={`badge status-${r.status}`}>{SHIFT_STATUS[r.status]}</span></dd>
        <dt>Déposée le</dt>
        <dd>{frDateTime(r.created_at)}</dd>
        {r.comment && (<><dt>Commentaire</dt><dd>{r.comment}</dd></>)}
        <dt>Prévu au dépôt</dt>
        <dd>{r.planned_description || 'Repos'} ({minutes(r.planned_minutes)})</dd>
        <dt>Demandé</dt>
        <dd>
          {r.slots.length ? r.slots.map(slotText).join(' ; ') : 'horaires inchangés'} ({minutes(r.requested_minutes)})
          {options && ` · ${options}`}
        </dd>
        {r.corrected_by_name && (<><dt>Corrigée au back-office</dt><dd>par {r.corrected_by_name}{r.corrected_at ? `, le ${frDateTime(r.corrected_at)}` : ''}</dd></>)}
        {r.decision_reason && (<><dt>Motif de la décision</dt><dd>{r.decision_reason}</dd></>)}
        {r.granted_slots && (<><dt>Accordé</dt><dd>{r.granted_slots.map(slotText).join(' ; ')} ({minutes(r.granted_minutes ?? 0)})</dd></>)}
      </dl>

      <Section title="Journée prévue aujourd’hui">
        <DayFacts label={r.current_day.label} total={r.current_day.minutes} slots={r.current_day.slots}
          note={r.current_day.modified ? 'journée déjà modifiée' : null} />
      </Section>

      <Section title="Avertissements">
        <Warnings warnings={r.warnings} />
      </Section>

      {r.can_decide && <ShiftChangeActions request={r} planned={r.current_day.slots} outcome={outcome} onDecided={onDecided} />}
    </div>
  );
}

/** The action foot: validate as asked or with an adjusted day (and its reason), or refuse with a reason. */
function ShiftChangeActions({ request, planned, outcome, onDecided }: {
  request: Schemas['ShiftChangeRequest'];
  planned: Slot[];
  outcome: ReturnType<typeof useDecisionOutcome>;
  onDecided(message: string): void;
}) {
  const id = useId();
  const [adjusting, setAdjusting] = useState(false);
  const [slots, setSlots] = useState<SlotDraft[]>(() => (request.slots.length ? request.slots : planned).map(slotDraftOf));
  const [reason, setReason] = useState('');

  const decide = useDecideDayChange(request.id, {
    onError: outcome.onError,
    onSuccess: async (record, action) => {
      await outcome.refresh();
      const ofWho = record.employee_name ? deName(record.employee_name) : 'du salarié';
      onDecided(action === 'validate' ? `Modification de journée ${ofWho} validée.` : `Modification de journée ${ofWho} refusée.`);
    },
  });
  const errors = decisionErrors(decide.error);
  const slotKeys = ['slots', 'adjusted_slots', 'daily_duration', 'rest_period', 'break_required'];
  const slotMessages = slotKeys.flatMap((key) => errors[key] ?? []);
  const stale = outcome.stale;
  const changeSlots = (next: SlotDraft[]) => {
    setSlots(next);
    if (decide.error) decide.reset();
  };
  const submit = (action: Decision) => (event?: FormEvent) => {
    event?.preventDefault();
    decide.mutate({
      action,
      version: request.version,
      reason: reason.trim() || null,
      adjustedSlots: action === 'validate' && adjusting ? slots.map((slot) => ({ ...slotBody(slot), is_remote: slot.is_remote })) : null,
    });
  };

  return (
    <form className="decision-foot" onSubmit={submit('validate')} noValidate aria-label="Décision">
      <h3>Décision</h3>
      <label className="check">
        <input type="checkbox" checked={adjusting} disabled={stale} onChange={(event) => { setAdjusting(event.target.checked); if (decide.error) decide.reset(); }} />
        Accorder une journée ajustée
      </label>
      {adjusting && (
        <SlotEditor slots={slots} onChange={changeSlots} legend="Journée accordée" errors={slotMessages} disabled={stale}
          slotLabel={(index) => `Créneau accordé ${index + 1}`} />
      )}

      <label htmlFor={`${id}-reason`}>Motif de la décision</label>
      <p className="muted hint" id={`${id}-reason-hint`}>Obligatoire pour un refus, une journée ajustée ou une demande corrigée au back-office.</p>
      <textarea id={`${id}-reason`} rows={2} value={reason} disabled={stale}
        onChange={(event) => { setReason(event.target.value); if (decide.error) decide.reset(); }}
        aria-invalid={Boolean(errors.reason?.length)}
        aria-describedby={errors.reason?.length ? `${id}-reason-hint ${id}-reason-error` : `${id}-reason-hint`} />
      <FieldError id={`${id}-reason`} messages={errors.reason} />

      <OtherErrors errors={errors} shown={adjusting ? [...slotKeys, 'reason'] : ['reason']} />
      {decide.error instanceof ApiFailure ? null : <ErrorNotice error={decide.error} />}
      <div className="actions">
        <button type="submit" className="primary" disabled={decide.isPending || stale}>
          {adjusting ? 'Valider la journée ajustée' : 'Valider'}
        </button>
        <button type="button" onClick={submit('refuse')} disabled={decide.isPending || stale}>Refuser</button>
      </div>
    </form>
  );
}
