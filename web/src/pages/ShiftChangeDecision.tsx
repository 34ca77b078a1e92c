import { useId, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, ApiFailure, ok, type Schemas } from '../api/client';
import { frDateTime, frLongDate, minutes } from '../format';
import { ErrorNotice, FieldError, Loading } from '../ui';
import { SHIFT_STATUS } from './MyRequests';
import { DayFacts, decisionErrors, OtherErrors, Section, slotText, StaleNotice, useDecisionOutcome, Warnings } from './decision-parts';

type Slot = Schemas['Slot'];

/** The day-change request in the decision panel: asked, planned now, warnings, decision. */
export function ShiftChangeDecision({ id, onDecided }: { id: number; onDecided(message: string): void }) {
  const request = useQuery({
    queryKey: ['queue-item', 'shift_change', id],
    queryFn: () => ok(api.GET('/api/shift-change-requests/{id}/', { params: { path: { id } } })),
  });
  // Kept above the record: a 409 reloads it, and its message stays when the action foot goes.
  const outcome = useDecisionOutcome();
  if (request.isPending) return <Loading what="de la demande" />;
  if (request.error) return <ErrorNotice error={request.error} />;
  const r = request.data;
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

interface SlotDraft {
  key: number;
  start_time: string;
  end_time: string;
  break_start_time: string;
  break_end_time: string;
  break_paid: boolean;
  post: number | null;
  establishment: number | null;
  is_remote: boolean;
}

let nextKey = 1;
const draftOf = (slot: Slot): SlotDraft => ({
  key: nextKey++,
  start_time: slot.start_time,
  end_time: slot.end_time,
  break_start_time: slot.break_start_time ?? '',
  break_end_time: slot.break_end_time ?? '',
  break_paid: slot.break_paid,
  post: slot.post,
  establishment: slot.establishment,
  is_remote: slot.is_remote,
});

/** The action foot: validate as asked or with an adjusted day (and its reason), or refuse with a reason. */
function ShiftChangeActions({ request, planned, outcome, onDecided }: {
  request: Schemas['ShiftChangeRequest'];
  planned: Slot[];
  outcome: ReturnType<typeof useDecisionOutcome>;
  onDecided(message: string): void;
}) {
  const id = useId();
  const [adjusting, setAdjusting] = useState(false);
  const [slots, setSlots] = useState<SlotDraft[]>(() => (request.slots.length ? request.slots : planned).map(draftOf));
  const [reason, setReason] = useState('');

  const decide = useMutation({
    mutationFn: (action: 'validate' | 'refuse') =>
      action === 'validate'
        ? ok(api.POST('/api/shift-change-requests/{id}/validate/', {
            params: { path: { id: request.id } },
            body: {
              version: request.version,
              reason: reason.trim() || null,
              adjusted_slots: adjusting
                ? slots.map((slot) => ({
                    start_time: slot.start_time || null,
                    end_time: slot.end_time || null,
                    break_start_time: slot.break_start_time || null,
                    break_end_time: slot.break_end_time || null,
                    break_paid: slot.break_paid,
                    post: slot.post,
                    establishment: slot.establishment,
                    is_remote: slot.is_remote,
                  }))
                : null,
            },
          }))
        : ok(api.POST('/api/shift-change-requests/{id}/refuse/', {
            params: { path: { id: request.id } },
            body: { version: request.version, reason: reason.trim() || null },
          })),
    onError: outcome.onError,
    onSuccess: async (record, action) => {
      await outcome.refresh();
      const who = record.employee_name ?? 'le salarié';
      onDecided(action === 'validate' ? `Modification de journée de ${who} validée.` : `Modification de journée de ${who} refusée.`);
    },
  });
  const errors = decisionErrors(decide.error);
  const slotKeys = ['slots', 'adjusted_slots', 'daily_duration', 'rest_period', 'break_required'];
  const slotMessages = slotKeys.flatMap((key) => errors[key] ?? []);
  const stale = outcome.stale;
  const change = (key: number, patch: Partial<SlotDraft>) => {
    setSlots((current) => current.map((slot) => (slot.key === key ? { ...slot, ...patch } : slot)));
    if (decide.error) decide.reset();
  };
  const submit = (action: 'validate' | 'refuse') => (event?: FormEvent) => {
    event?.preventDefault();
    decide.mutate(action);
  };

  return (
    <form className="decision-foot" onSubmit={submit('validate')} noValidate aria-label="Décision">
      <h3>Décision</h3>
      <label className="check">
        <input type="checkbox" checked={adjusting} disabled={stale} onChange={(event) => { setAdjusting(event.target.checked); if (decide.error) decide.reset(); }} />
        Accorder une journée ajustée
      </label>
      {adjusting && (
        <fieldset className="slots" aria-describedby={slotMessages.length ? `${id}-slots-error` : undefined}>
          <legend>Journée accordée</legend>
          {slots.map((slot, index) => (
            <div className="slot" key={slot.key} role="group" aria-label={`Créneau accordé ${index + 1}`}>
              <div className="row">
                {([['start_time', 'Début'], ['end_time', 'Fin'], ['break_start_time', 'Début de pause'], ['break_end_time', 'Fin de pause']] as const).map(([key, label]) => (
                  <div key={key}>
                    <label htmlFor={`${id}-${slot.key}-${key}`}>{label}</label>
                    <input id={`${id}-${slot.key}-${key}`} type="time" value={slot[key]} disabled={stale}
                      aria-invalid={slotMessages.length > 0} onChange={(event) => change(slot.key, { [key]: event.target.value })} />
                  </div>
                ))}
              </div>
              <div className="checks">
                <label className="check">
                  <input type="checkbox" checked={slot.break_paid} disabled={stale} onChange={(event) => change(slot.key, { break_paid: event.target.checked })} /> Pause payée
                </label>
                <button type="button" disabled={stale} onClick={() => setSlots((current) => current.filter((other) => other.key !== slot.key))}>
                  Retirer ce créneau
                </button>
              </div>
            </div>
          ))}
          <button type="button" disabled={stale}
            onClick={() => setSlots((current) => [...current, { key: nextKey++, start_time: '', end_time: '', break_start_time: '', break_end_time: '', break_paid: false, post: null, establishment: null, is_remote: false }])}>
            Ajouter un créneau
          </button>
          <FieldError id={`${id}-slots`} messages={slotMessages} />
        </fieldset>
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
