import { useEffect, useId, useRef } from 'react';
import { NotFoundNotice } from '../../../components/ui';
import type { PanelItem } from '../api/queue';
import { AbsenceDecision, QUEUE_ABSENCE_NOT_FOUND } from './AbsenceDecision';
import { QUEUE_DAY_CHANGE_NOT_FOUND, ShiftChangeDecision } from './ShiftChangeDecision';

/**
 * The decision panel: a modal dialog over the queue. Focus moves to its title when it opens,
 * Escape or "Fermer" closes it, and the focus goes back to the row that opened it (or to the
 * page title when that row left the queue). What the reader may do comes from the API
 * (`can_decide`): without it, the panel has no action foot.
 */
export function DecisionPanel({ item, onClose, onDecided }: { item: PanelItem; onClose(): void; onDecided(message: string): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();

  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
    element?.querySelector<HTMLElement>('h2')?.focus();
  }, []);

  return (
    <dialog ref={dialog} className="decision" aria-labelledby={titleId} onClose={onClose}>
      <div className="decision-head">
        <h2 id={titleId} tabIndex={-1}>
          {item.kind === 'absence' ? 'Demande d’absence' : 'Demande de modification de journée'}
        </h2>
        <button type="button" onClick={() => dialog.current?.close()}>
          Fermer<span className="sr-only"> le panneau de décision</span>
        </button>
      </div>
      {item.id === null ? (
        <NotFoundNotice text={item.kind === 'absence' ? QUEUE_ABSENCE_NOT_FOUND : QUEUE_DAY_CHANGE_NOT_FOUND} />
      ) : item.kind === 'absence' ? (
        <AbsenceDecision id={item.id} onDecided={onDecided} />
      ) : (
        <ShiftChangeDecision id={item.id} onDecided={onDecided} />
      )}
    </dialog>
  );
}
