import { useId, useState } from 'react';
import { breakFits, emptySlot, type SlotDraft } from '../lib/slots';
import { FieldError } from './ui';

const TIMES = [
  ['start_time', 'Début'],
  ['end_time', 'Fin'],
  ['break_start_time', 'Début de pause'],
  ['break_end_time', 'Fin de pause'],
] as const;

/**
 * The slots of one day, edited: hours, break and whether it is paid, slots added and removed.
 * One editor for both slot forms (« Mon planning »'s day-change request, the decision panel's
 * adjusted day). A slot shortened below its break loses the break, and says so (SPEC, day-change
 * rule 6). The server's messages about the slots appear under the group (`errors`).
 */
export function SlotEditor({ slots, onChange, legend, slotLabel, errors, disabled = false, emptyText }: {
  slots: SlotDraft[];
  onChange(slots: SlotDraft[]): void;
  legend: string;
  /** The name of a slot's group for assistive technology, from its position (from 0). */
  slotLabel(index: number, slot: SlotDraft): string;
  errors: string[];
  disabled?: boolean;
  /** Said when there is no slot at all (nothing when absent). */
  emptyText?: string;
}) {
  const id = useId();
  const [dropped, setDropped] = useState<string | null>(null);
  const invalid = errors.length > 0 ? { 'aria-invalid': true, 'aria-describedby': `${id}-slots-error` } : {};

  const change = (key: number, patch: Partial<SlotDraft>) => {
    onChange(slots.map((slot) => {
      if (slot.key !== key) return slot;
      const next = { ...slot, ...patch };
      if (('start_time' in patch || 'end_time' in patch) && !breakFits(next)) {
        setDropped(`La pause de ${slot.break_start_time} à ${slot.break_end_time} a été retirée : elle ne tient plus dans le créneau.`);
        return { ...next, break_start_time: '', break_end_time: '' };
      }
      return next;
    }));
  };

  return (
    <>
      <fieldset className="slots" aria-describedby={errors.length ? `${id}-slots-error` : undefined}>
        <legend>{legend}</legend>
        {slots.length === 0 && emptyText && <p className="muted">{emptyText}</p>}
        {slots.map((slot, index) => (
          <div className="slot" key={slot.key} role="group" aria-label={slotLabel(index, slot)}>
            {slot.label && <p className="slot-post">{slot.label}</p>}
            <div className="row">
              {TIMES.map(([field, label]) => (
                <div key={field}>
                  <label htmlFor={`${id}-${slot.key}-${field}`}>{label}</label>
                  <input id={`${id}-${slot.key}-${field}`} type="time" value={slot[field]} disabled={disabled} {...invalid}
                    onChange={(event) => change(slot.key, { [field]: event.target.value })} />
                </div>
              ))}
            </div>
            <div className="checks">
              <label className="check">
                <input type="checkbox" checked={slot.break_paid} disabled={disabled}
                  onChange={(event) => change(slot.key, { break_paid: event.target.checked })} /> Pause payée
              </label>
              <button type="button" disabled={disabled} onClick={() => onChange(slots.filter((other) => other.key !== slot.key))}>
                Retirer ce créneau
              </button>
            </div>
          </div>
        ))}
        <button type="button" disabled={disabled} onClick={() => onChange([...slots, emptySlot()])}>
          Ajouter un créneau
        </button>
        <FieldError id={`${id}-slots`} messages={errors} />
      </fieldset>
      {dropped && <p className="notice warning" role="status">{dropped}</p>}
    </>
  );
}
