import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ApiFailure, ok, type Schemas } from '../api/client';
import { frLongDate, minutes } from '../format';
import { ErrorNotice, FieldError } from '../ui';

type Block = Schemas['PlanningBlock'];

interface SlotDraft {
  key: number;
  label: string | null;
  start_time: string;
  end_time: string;
  break_start_time: string;
  break_end_time: string;
  break_paid: boolean;
  post: number | null;
  establishment: number | null;
}

const REASONS = [
  ['demande_personnelle', 'Demande personnelle'],
  ['urgence', 'Urgence'],
  ['remplacement', 'Remplacement'],
] as const;

let nextKey = 1;

/** The worked blocks of the planned day, as editable slots (hours, break, post, establishment). */
function slotsOf(blocks: Block[]): SlotDraft[] {
  return blocks
    .filter((block) => block.kind === 'work' && !block.absence && block.start_time && block.end_time)
    .map((block) => ({
      key: nextKey++,
      label: block.post_code ? `${block.post_code}${block.post_label ? ` · ${block.post_label}` : ''}` : null,
      start_time: block.start_time!,
      end_time: block.end_time!,
      break_start_time: block.break_start_time ?? '',
      break_end_time: block.break_end_time ?? '',
      break_paid: block.break_paid,
      post: block.post,
      establishment: block.establishment,
    }));
}

const toMinutes = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
/** Minutes after the slot's start (a slot ending at or before its start ends the next day). */
const offset = (slot: SlotDraft, time: string) => (toMinutes(time) - toMinutes(slot.start_time) + 1440) % 1440;
const length = (slot: SlotDraft) => offset(slot, slot.end_time) || 1440;

function breakFits(slot: SlotDraft): boolean {
  if (!slot.break_start_time || !slot.break_end_time || !slot.start_time || !slot.end_time) return true;
  const start = offset(slot, slot.break_start_time);
  const end = offset(slot, slot.break_end_time);
  return start < end && end <= length(slot);
}

/** Net minutes of the requested day as the form stands: an unpaid break is deducted, a paid one is not. */
function netMinutes(slots: SlotDraft[]): number {
  return slots.reduce((total, slot) => {
    if (!slot.start_time || !slot.end_time) return total;
    const pause = slot.break_start_time && slot.break_end_time && !slot.break_paid ? offset(slot, slot.break_end_time) - offset(slot, slot.break_start_time) : 0;
    return total + length(slot) - Math.max(0, pause);
  }, 0);
}

/** A day-change request for one day, pre-filled from the planned day. */
export function DayChangeForm({ date, blocks, onClose, onSent }: { date: string; blocks: Block[]; onClose(): void; onSent(): void }) {
  const id = useId();
  const queryClient = useQueryClient();
  const heading = useRef<HTMLHeadingElement>(null);
  const [slots, setSlots] = useState<SlotDraft[]>(() => slotsOf(blocks));
  const [reason, setReason] = useState('demande_personnelle');
  const [comment, setComment] = useState('');
  const [isRemote, setIsRemote] = useState(blocks.some((block) => block.is_remote));
  const [isOffsite, setIsOffsite] = useState(blocks.some((block) => block.is_offsite));
  const [dropped, setDropped] = useState<string | null>(null);

  useEffect(() => heading.current?.focus(), [date]);

  const send = useMutation({
    mutationFn: () =>
      ok(
        api.POST('/api/shift-change-requests/', {
          body: {
            date,
            reason,
            comment: comment || null,
            is_remote: isRemote,
            is_offsite: isOffsite,
            slots: slots.map((slot) => ({
              start_time: slot.start_time || null,
              end_time: slot.end_time || null,
              break_start_time: slot.break_start_time || null,
              break_end_time: slot.break_end_time || null,
              break_paid: slot.break_paid,
              post: slot.post,
              establishment: slot.establishment,
            })),
          },
        }),
      ),
    onSuccess: async () => {
      await Promise.all(['planning', 'shift-changes'].map((key) => queryClient.invalidateQueries({ queryKey: [key] })));
      onSent();
    },
  });
  const errors = send.error instanceof ApiFailure ? send.error.fields : {};
  const described = (name: string) => (errors[name]?.length ? { 'aria-invalid': true, 'aria-describedby': `${id}-${name}-error` } : {});

  const change = (key: number, patch: Partial<SlotDraft>) => {
    setSlots((current) =>
      current.map((slot) => {
        if (slot.key !== key) return slot;
        const next = { ...slot, ...patch };
        // A slot shortened below its break loses the break (SPEC, creation rule 6).
        if (('start_time' in patch || 'end_time' in patch) && !breakFits(next)) {
          setDropped(`La pause de ${slot.break_start_time} à ${slot.break_end_time} a été retirée : elle ne tient plus dans le créneau.`);
          return { ...next, break_start_time: '', break_end_time: '' };
        }
        return next;
      }),
    );
    if (send.error) send.reset();
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    send.mutate();
  };

  return (
    <section className="panel day-change" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} ref={heading} tabIndex={-1}>
        Modifier la journée du {frLongDate(date)}
      </h2>
      <form onSubmit={submit} noValidate aria-labelledby={`${id}-title`}>
        <fieldset className="slots" {...(errors.slots?.length ? { 'aria-describedby': `${id}-slots-error` } : {})}>
          <legend>Créneaux demandés</legend>
          {slots.length === 0 && <p className="muted">Aucun créneau : ajoutez-en un pour travailler ce jour-là.</p>}
          {slots.map((slot, index) => (
            <div className="slot" key={slot.key} role="group" aria-label={`Créneau ${index + 1}${slot.label ? ` (${slot.label})` : ''}`}>
              {slot.label && <p className="slot-post">{slot.label}</p>}
              <div className="row">
                <div>
                  <label htmlFor={`${id}-${slot.key}-start`}>Début</label>
                  <input id={`${id}-${slot.key}-start`} type="time" value={slot.start_time} {...described('slots')}
                    onChange={(e) => change(slot.key, { start_time: e.target.value })} />
                </div>
                <div>
                  <label htmlFor={`${id}-${slot.key}-end`}>Fin</label>
                  <input id={`${id}-${slot.key}-end`} type="time" value={slot.end_time} {...described('slots')}
                    onChange={(e) => change(slot.key, { end_time: e.target.value })} />
                </div>
                <div>
                  <label htmlFor={`${id}-${slot.key}-break-start`}>Début de pause</label>
                  <input id={`${id}-${slot.key}-break-start`} type="time" value={slot.break_start_time}
                    onChange={(e) => change(slot.key, { break_start_time: e.target.value })} />
                </div>
                <div>
                  <label htmlFor={`${id}-${slot.key}-break-end`}>Fin de pause</label>
                  <input id={`${id}-${slot.key}-break-end`} type="time" value={slot.break_end_time}
                    onChange={(e) => change(slot.key, { break_end_time: e.target.value })} />
                </div>
              </div>
              <div className="checks">
                <label className="check">
                  <input type="checkbox" checked={slot.break_paid} onChange={(e) => change(slot.key, { break_paid: e.target.checked })} /> Pause payée
                </label>
                <button type="button" onClick={() => setSlots((current) => current.filter((other) => other.key !== slot.key))}>
                  Retirer ce créneau
                </button>
              </div>
            </div>
          ))}
          <button type="button" onClick={() => setSlots((current) => [...current, { key: nextKey++, label: null, start_time: '', end_time: '', break_start_time: '', break_end_time: '', break_paid: false, post: null, establishment: null }])}>
            Ajouter un créneau
          </button>
          <FieldError id={`${id}-slots`} messages={errors.slots} />
        </fieldset>
        {dropped && <p className="notice warning" role="status">{dropped}</p>}
        <p className="net" aria-live="polite">
          Durée nette demandée : <strong>{minutes(netMinutes(slots))}</strong>
        </p>

        <div className="checks">
          <label className="check">
            <input type="checkbox" checked={isRemote} onChange={(e) => setIsRemote(e.target.checked)} {...described('is_remote')} /> Télétravail
          </label>
          <label className="check">
            <input type="checkbox" checked={isOffsite} onChange={(e) => setIsOffsite(e.target.checked)} {...described('is_offsite')} /> Hors de l’établissement
          </label>
        </div>
        <FieldError id={`${id}-is_remote`} messages={errors.is_remote} />
        <FieldError id={`${id}-is_offsite`} messages={errors.is_offsite} />

        <label htmlFor={`${id}-reason`}>Motif</label>
        <select id={`${id}-reason`} value={reason} onChange={(e) => setReason(e.target.value)} {...described('reason')}>
          {REASONS.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
        </select>
        <FieldError id={`${id}-reason`} messages={errors.reason} />

        <label htmlFor={`${id}-comment`}>Commentaire (facultatif)</label>
        <textarea id={`${id}-comment`} rows={2} value={comment} onChange={(e) => setComment(e.target.value)} {...described('comment')} />
        <FieldError id={`${id}-comment`} messages={errors.comment} />
        <FieldError id={`${id}-date`} messages={errors.date} />
        {errors.non_field_errors && <p className="notice error" role="alert">{errors.non_field_errors.join(' ')}</p>}
        {send.error && !(send.error instanceof ApiFailure) && <ErrorNotice error={send.error} />}
        <div className="actions">
          <button type="submit" className="primary" disabled={send.isPending}>{send.isPending ? 'Envoi…' : 'Envoyer la demande'}</button>
          <button type="button" onClick={onClose}>Annuler</button>
        </div>
      </form>
    </section>
  );
}
