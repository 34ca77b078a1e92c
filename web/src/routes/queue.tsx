import { useLocation, useMatch, useNavigate } from 'react-router';
import type { PanelItem, QueueItem } from '../features/queue/api/queue';
import { Queue } from '../features/queue/components/Queue';
import { parseId, paths, patterns } from '../lib/paths';

/** Set on the history entry of a panel opened from the queue: closing it is going back. */
interface FromQueue {
  fromQueue: true;
}

/**
 * « File des demandes », and its decision panel at /file/absences/:id and /file/journees/:id
 * (a row's « Examiner », a notification, an e-mail). Closing the panel returns to /file: one step
 * back when the queue opened it, else in place of the panel's address.
 */
export function QueueScreen() {
  const navigate = useNavigate();
  const location = useLocation();
  const absence = useMatch(patterns.queueAbsence);
  const dayChange = useMatch(patterns.queueDayChange);
  const match = absence ?? dayChange;
  const open: PanelItem | null = match ? { kind: absence ? 'absence' : 'shift_change', id: parseId(match.params.id) } : null;

  const onOpen = (item: QueueItem) =>
    navigate(item.kind === 'absence' ? paths.queueAbsence(item.id) : paths.queueDayChange(item.id), { state: { fromQueue: true } satisfies FromQueue });
  const onClose = () => {
    if ((location.state as FromQueue | null)?.fromQueue) navigate(-1);
    else navigate(paths.queue(), { replace: true });
  };

  return <Queue open={open} onOpen={onOpen} onClose={onClose} />;
}
