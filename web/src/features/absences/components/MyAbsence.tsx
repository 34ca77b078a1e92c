import { OpenedRecord } from '../../../components/ui';
import { useAbsence } from '../api/absences';
import { AbsenceCard } from './AbsenceCard';

export const ABSENCE_NOT_FOUND = 'Cette demande d’absence est introuvable : elle a été retirée, ou ce n’est pas l’une de vos demandes.';

/**
 * One absence request of one's own, opened by its address (/demandes/absences/:id, from a
 * notification or an e-mail). Another employee's record, even one the reader may see as a
 * decider, is not opened here: its place is the queue's decision panel.
 */
export function MyAbsence({ id, employee, onWithdrawn }: { id: number; employee: number; onWithdrawn(): void }) {
  return (
    <OpenedRecord query={useAbsence(id)} notFound={ABSENCE_NOT_FOUND} opens={(absence) => absence.employee === employee}>
      {(absence) => (
        <ul className="cards">
          <AbsenceCard absence={absence} onWithdrawn={onWithdrawn} headingLevel={2} />
        </ul>
      )}
    </OpenedRecord>
  );
}
