import { OpenedRecord } from '../../../components/ui';
import { useDayChange } from '../api/day-changes';
import { DayChangeCard } from './DayChangeCard';

export const DAY_CHANGE_NOT_FOUND = 'Cette demande de modification de journée est introuvable : elle a été retirée, ou ce n’est pas l’une de vos demandes.';

/**
 * One day-change request of one's own, opened by its address (/demandes/journees/:id). Another
 * employee's request is not opened here: its place is the queue's decision panel.
 */
export function MyDayChange({ id, employee, onWithdrawn }: { id: number; employee: number; onWithdrawn(): void }) {
  return (
    <OpenedRecord query={useDayChange(id)} notFound={DAY_CHANGE_NOT_FOUND} opens={(request) => request.employee === employee}>
      {(request) => (
        <ul className="cards">
          <DayChangeCard request={request} onWithdrawn={onWithdrawn} headingLevel={2} />
        </ul>
      )}
    </OpenedRecord>
  );
}
