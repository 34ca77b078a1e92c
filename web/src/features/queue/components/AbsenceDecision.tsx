import { useId, useMemo, useState, type FormEvent } from 'react';
import { ApiFailure, type Schemas } from '../../../api/client';
import { CounterEffects } from '../../../components/CounterEffects';
import { ErrorNotice, FieldError, Loading, OpenedRecord } from '../../../components/ui';
import { deName, frDateTime, quantity } from '../../../lib/format';
import { absencePeriod } from '../../../lib/requests';
import { useAbsenceTypes, useCounters } from '../../../lib/shared-queries';
import { useAbsenceRowPreview, useDecideAbsence, useQueueAbsence, type AbsenceCorrections, type Decision } from '../api/queue';
import { DayFacts, decisionErrors, DocumentLink, OtherErrors, Section, StaleNotice, useDecisionOutcome, Warnings } from './decision-parts';

type Absence = Schemas['Absence'];
type AbsenceType = Schemas['AbsenceType'];

export const QUEUE_ABSENCE_NOT_FOUND = 'Cette demande d’absence est introuvable : elle a été retirée, ou elle n’est pas de votre périmètre.';

/** The absence in the decision panel: facts, planned day, warnings, counters, documents, decision. */
export function AbsenceDecision({ id, onDecided }: { id: number; onDecided(message: string): void }) {
  const absence = useQueueAbsence(id);
  const types = useAbsenceTypes();
  // Kept above the record: a 409 reloads it, and its message stays when the action foot goes.
  const outcome = useDecisionOutcome();
  return (
    <OpenedRecord query={absence} notFound={QUEUE_ABSENCE_NOT_FOUND}>
      {(record) => <AbsenceBody absence={record} types={types.data?.results ?? []} outcome={outcome} onDecided={onDecided} />}
    </OpenedRecord>
  );
}

type Outcome = ReturnType<typeof useDecisionOutcome>;

function AbsenceBody({ absence, types, outcome, onDecided }: { absence: Absence; types: AbsenceType[]; outcome: Outcome; onDecided(message: string): void }) {
  const type = types.find((candidate) => candidate.id === absence.type);
  const year = Number(absence.date_start.slice(0, 4));
  const counters = useCounters({ employee: absence.employee, year, askEmployee: true, enabled: Boolean(type?.counter_codes.length) });
  const held = type ? type.counter_codes.map((code) => counters.data?.[code]).filter((counter) => counter != null) : [];

  return (
    <div className="decision-body">
      <StaleNotice stale={outcome.stale} />
      <dl className="facts">
        <dt>Salarié</dt>
        <dd>{absence.employee_name ?? '—'}</dd>
        <dt>Motif</dt>
        <dd>{absence.type_name} <span className="code">{absence.type_code}</span></dd>
        <dt>Période</dt>
        <dd>{absencePeriod(absence)}</dd>
        <dt>Décompte</dt>
        <dd>{quantity(absence.counted_quantity, absence.counted_unit)}</dd>
        <dt>Statut</dt>
        <dd><span className={`badge status-${absence.status}`}>{absence.status_label ?? absence.status}</span></dd>
        <dt>Déposée le</dt>
        <dd>{absence.submitted_at ? frDateTime(absence.submitted_at) : 'déclarée par l’encadrement'}</dd>
        {absence.comment && (<><dt>Commentaire</dt><dd>{absence.comment}</dd></>)}
        {absence.decision_reason && (<><dt>Motif de la décision</dt><dd>{absence.decision_reason}</dd></>)}
        {absence.cancellation_requested_at && (
          <>
            <dt>Annulation demandée</dt>
            <dd>le {frDateTime(absence.cancellation_requested_at)}{absence.cancellation_comment ? ` : ${absence.cancellation_comment}` : ''}</dd>
          </>
        )}
      </dl>

      <Section title="Journée prévue du premier jour">
        {absence.planned_day ? (
          <DayFacts label={absence.planned_day.description || 'Repos'} total={absence.planned_day.minutes ?? 0}
            slots={(absence.planned_day.slots ?? []) as never[]} />
        ) : (
          <p className="muted">Non communiquée.</p>
        )}
      </Section>

      <Section title="Avertissements">
        <Warnings warnings={absence.warnings} />
      </Section>

      <Section title="Compteurs">
        {type && type.counter_codes.length === 0 && <p className="muted">Ce motif ne touche aucun compteur.</p>}
        {counters.isPending && counters.fetchStatus !== 'idle' && <Loading what="des compteurs" />}
        <ErrorNotice error={counters.error} />
        {held.length > 0 && (
          <table className="counter-table stacked">
            <caption className="sr-only">Compteurs {year} du salarié</caption>
            <thead>
              <tr><th scope="col">Compteur</th><th scope="col">Acquis</th><th scope="col">Pris</th><th scope="col">Planifiés</th><th scope="col">Restant</th></tr>
            </thead>
            <tbody>
              {held.map((counter) => (
                <tr key={counter.code}>
                  <th scope="row">{counter.code} {year}</th>
                  <td data-label="Acquis">{quantity(counter.acquired, counter.unit)}</td>
                  <td data-label="Pris">{quantity(counter.taken, counter.unit)}</td>
                  <td data-label="Planifiés">{quantity(counter.planned, counter.unit)}</td>
                  <td data-label="Restant">{quantity(counter.remaining, counter.unit)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {absence.cancellation_counter_effects && absence.status === 'cancellation_requested' && (
          <>
            <p>Accorder l’annulation recréditerait :</p>
            <CounterEffects effects={absence.cancellation_counter_effects} unit={absence.counted_unit} empty="Aucun mouvement de compteur." />
          </>
        )}
      </Section>

      <Section title="Justificatifs">
        {absence.documents.length === 0 ? (
          <p className="muted">Aucun justificatif.</p>
        ) : (
          <ul className="documents">
            {absence.documents.map((document) => (
              <li key={document.id}>
                {document.file ? (
                  <DocumentLink document={document} />
                ) : (
                  <>
                    {document.filename}
                    <span className="muted"> · déposé le {frDateTime(document.uploaded_at)} par {document.uploaded_by} · contenu réservé aux RH</span>
                  </>
                )}
              </li>
            ))}
          </ul>
        )}
      </Section>

      {absence.can_decide && <AbsenceActions absence={absence} types={types} outcome={outcome} onDecided={onDecided} />}
    </div>
  );
}

interface Correction {
  date_end: string;
  type: string;
  start_time: string;
  end_time: string;
}

/** The action foot: validate (with a date_end correction or a requalification) or refuse; for a cancellation request, grant or refuse it. */
function AbsenceActions({ absence, types, outcome, onDecided }: { absence: Absence; types: AbsenceType[]; outcome: Outcome; onDecided(message: string): void }) {
  const id = useId();
  const cancellation = absence.status === 'cancellation_requested';
  const initial: Correction = { date_end: absence.date_end, type: String(absence.type), start_time: absence.start_time ?? '', end_time: absence.end_time ?? '' };
  const [draft, setDraft] = useState<Correction>(initial);
  const [reason, setReason] = useState('');
  const type = types.find((candidate) => String(candidate.id) === draft.type);
  const hourly = type ? type.unit === 'hour' : absence.counted_unit === 'hour';

  // Only what the decider changed is sent: an untouched field is no correction.
  const corrections = useMemo(() => {
    const out: AbsenceCorrections = {};
    if (draft.type !== initial.type) out.type = Number(draft.type);
    if (!hourly && draft.date_end !== initial.date_end && draft.date_end) out.date_end = draft.date_end;
    if (hourly && (draft.start_time !== initial.start_time || draft.end_time !== initial.end_time || 'type' in out)) {
      out.start_time = draft.start_time || null;
      out.end_time = draft.end_time || null;
    }
    return out;
  }, [draft, initial.type, initial.date_end, initial.start_time, initial.end_time, hourly]);
  const corrected = Object.keys(corrections).length > 0;

  // The row as the validation would leave it: what it holds, with the corrections sent.
  const preview = useAbsenceRowPreview(absence.id, corrections, {
    type: corrections.type ?? absence.type,
    date_start: absence.date_start,
    date_end: corrections.date_end ?? absence.date_end,
    start_half: absence.start_half,
    end_half: absence.end_half,
    start_time: corrections.start_time !== undefined ? corrections.start_time : absence.start_time,
    end_time: corrections.end_time !== undefined ? corrections.end_time : absence.end_time,
  }, corrected && !cancellation);

  const decide = useDecideAbsence(absence.id, {
    onError: outcome.onError,
    onSuccess: async (record, action) => {
      await outcome.refresh();
      const ofWho = record.employee_name ? deName(record.employee_name) : 'du salarié';
      onDecided(
        cancellation
          ? action === 'validate' ? `Annulation accordée : l’absence ${ofWho} est annulée.` : `Annulation refusée : l’absence ${ofWho} est maintenue.`
          : action === 'validate' ? `Demande d’absence ${ofWho} validée.` : `Demande d’absence ${ofWho} refusée.`,
      );
    },
  });

  const errors = { ...(corrected && preview.data ? preview.data.errors : {}), ...decisionErrors(decide.error) };
  const field = (name: string) => ({
    id: `${id}-${name}`,
    'aria-invalid': Boolean(errors[name]?.length),
    'aria-describedby': errors[name]?.length ? `${id}-${name}-error` : undefined,
  });
  const set = (key: keyof Correction) => (event: { target: { value: string } }) => {
    setDraft((current) => ({ ...current, [key]: event.target.value }));
    if (decide.error) decide.reset();
  };
  const submit = (action: Decision) => (event?: FormEvent) => {
    event?.preventDefault();
    decide.mutate({ action, version: absence.version, reason: reason.trim() || null, corrections: cancellation ? {} : corrections });
  };
  const stale = outcome.stale;

  return (
    <form className="decision-foot" onSubmit={submit('validate')} noValidate aria-label="Décision">
      <h3>{cancellation ? 'Décider de l’annulation' : 'Décision'}</h3>
      {!cancellation && (
        <div className="row">
          {!hourly && (
            <div>
              <label htmlFor={`${id}-date_end`}>Date de fin (correction)</label>
              <input type="date" {...field('date_end')} value={draft.date_end} min={absence.date_start} onChange={set('date_end')} disabled={stale} />
              <FieldError id={`${id}-date_end`} messages={errors.date_end} />
            </div>
          )}
          <div>
            <label htmlFor={`${id}-type`}>Motif d’absence (requalification)</label>
            <select {...field('type')} value={draft.type} onChange={set('type')} disabled={stale}>
              {types.map((candidate) => (
                <option key={candidate.id} value={candidate.id}>{candidate.name} ({candidate.code})</option>
              ))}
            </select>
            <FieldError id={`${id}-type`} messages={errors.type} />
          </div>
          {hourly && (
            <>
              <div>
                <label htmlFor={`${id}-start_time`}>De</label>
                <input type="time" {...field('start_time')} value={draft.start_time} onChange={set('start_time')} disabled={stale} />
                <FieldError id={`${id}-start_time`} messages={errors.start_time} />
              </div>
              <div>
                <label htmlFor={`${id}-end_time`}>À</label>
                <input type="time" {...field('end_time')} value={draft.end_time} onChange={set('end_time')} disabled={stale} />
                <FieldError id={`${id}-end_time`} messages={errors.end_time} />
              </div>
            </>
          )}
        </div>
      )}
      {corrected && !cancellation && preview.data && (
        <div className="correction-preview" aria-live="polite">
          <p>
            Après correction : <strong>{preview.data.quantity == null ? '—' : quantity(preview.data.quantity, preview.data.unit)}</strong>
          </p>
          <CounterEffects effects={preview.data.counter_effects} unit={preview.data.unit} empty="Aucun mouvement de compteur." />
          {preview.data.warnings.map((warning) => <p key={warning} className="notice warning">{warning}</p>)}
        </div>
      )}

      <label htmlFor={`${id}-reason`}>Motif de la décision</label>
      <p className="muted hint" id={`${id}-reason-hint`}>Obligatoire pour un refus et pour une correction.</p>
      <textarea id={`${id}-reason`} rows={2} value={reason} disabled={stale}
        onChange={(event) => { setReason(event.target.value); if (decide.error) decide.reset(); }}
        aria-invalid={Boolean(errors.reason?.length)}
        aria-describedby={errors.reason?.length ? `${id}-reason-hint ${id}-reason-error` : `${id}-reason-hint`} />
      <FieldError id={`${id}-reason`} messages={errors.reason} />

      <OtherErrors errors={errors} shown={cancellation ? ['reason'] : ['type', 'reason', ...(hourly ? ['start_time', 'end_time'] : ['date_end'])]} />
      {decide.error instanceof ApiFailure ? null : <ErrorNotice error={decide.error} />}
      <div className="actions">
        <button type="submit" className="primary" disabled={decide.isPending || stale}>
          {cancellation ? 'Accorder l’annulation' : corrected ? 'Valider avec correction' : 'Valider'}
        </button>
        <button type="button" onClick={submit('refuse')} disabled={decide.isPending || stale}>
          {cancellation ? 'Refuser l’annulation' : 'Refuser'}
        </button>
      </div>
    </form>
  );
}
