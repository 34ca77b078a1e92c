import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { ApiFailure, type Schemas } from '../../../api/client';
import { SlotEditor } from '../../../components/SlotEditor';
import { ErrorNotice, FieldError } from '../../../components/ui';
import { frLongDate, minutes } from '../../../lib/format';
import { netMinutes, slotsOfBlocks, type SlotDraft } from '../../../lib/slots';
import { useFileDayChange } from '../api/day-changes';

type Block = Schemas['PlanningBlock'];

const REASONS = [
  ['demande_personnelle', 'Demande personnelle'],
  ['urgence', 'Urgence'],
  ['remplacement', 'Remplacement'],
] as const;

/** A day-change request for one day, pre-filled from the planned day. */
export function DayChangeForm({ date, blocks, onClose, onSent }: { date: string; blocks: Block[]; onClose(): void; onSent(): void }) {
  const id = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  const [slots, setSlots] = useState<SlotDraft[]>(() => slotsOfBlocks(blocks));
  const [reason, setReason] = useState('demande_personnelle');
  const [comment, setComment] = useState('');
  const [isRemote, setIsRemote] = useState(blocks.some((block) => block.is_remote));
  const [isOffsite, setIsOffsite] = useState(blocks.some((block) => block.is_offsite));

  useEffect(() => heading.current?.focus(), [date]);

  const send = useFileDayChange(onSent);
  const errors = send.error instanceof ApiFailure ? send.error.fields : {};
  const described = (name: string) => (errors[name]?.length ? { 'aria-invalid': true, 'aria-describedby': `${id}-${name}-error` } : {});

  const changeSlots = (next: SlotDraft[]) => {
    setSlots(next);
    if (send.error) send.reset();
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    send.mutate({ date, reason, comment, isRemote, isOffsite, slots });
  };

  return (
    <section className="panel day-change" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} ref={heading} tabIndex={-1}>
        Modifier la journée du {frLongDate(date)}
      </h2>
      <form onSubmit={submit} noValidate aria-labelledby={`${id}-title`}>
        <SlotEditor slots={slots} onChange={changeSlots} legend="Créneaux demandés" errors={errors.slots ?? []}
          slotLabel={(index, slot) => `Créneau ${index + 1}${slot.label ? ` (${slot.label})` : ''}`}
          emptyText="Aucun créneau : ajoutez-en un pour travailler ce jour-là." />
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
