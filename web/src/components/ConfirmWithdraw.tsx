import { useEffect, useId, useRef, useState } from 'react';

/**
 * « Retirer la demande », asked twice: the first press shows what would be withdrawn, in words
 * (`what`: « la demande d’absence « Congés payés » du 01/12/2026 au 05/12/2026 (5 jours) »), and
 * the two answers; only « Oui, retirer » withdraws (`onConfirm`). The focus goes to the question's
 * answer and back to the button when the person keeps the request.
 */
export function ConfirmWithdraw({ what, onConfirm, busy, describedBy }: {
  what: string;
  onConfirm(): void;
  busy: boolean;
  describedBy?: string;
}) {
  const [asking, setAsking] = useState(false);
  const id = useId();
  const confirm = useRef<HTMLButtonElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);
  useEffect(() => {
    if (asking) confirm.current?.focus();
    else if (wasAsking.current) opener.current?.focus();
    wasAsking.current = asking;
  }, [asking]);

  if (!asking) {
    return (
      <button type="button" ref={opener} onClick={() => setAsking(true)} disabled={busy} aria-describedby={describedBy}>
        Retirer la demande
      </button>
    );
  }
  return (
    <div className="confirm" role="group" aria-labelledby={`${id}-question`}>
      <p id={`${id}-question`}>
        Retirer {what} ? Elle sera supprimée et ne sera plus examinée.
      </p>
      <div className="actions">
        <button type="button" className="danger" ref={confirm} disabled={busy} aria-busy={busy}
          aria-describedby={`${id}-question`} onClick={onConfirm}>
          Oui, retirer la demande
        </button>
        <button type="button" disabled={busy} onClick={() => setAsking(false)}>Non, la garder</button>
      </div>
    </div>
  );
}
