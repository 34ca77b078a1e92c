import { useState } from 'react';
import { ErrorNotice, Loading, Pager } from '../../../components/ui';
import { useMyAbsences } from '../api/absences';
import { AbsenceCard } from './AbsenceCard';

const PAGE_SIZE = 10;

/** « Mes demandes », absences: the employee's own, 10 a page, newest first. */
export function MyAbsences({ employee }: { employee: number | undefined }) {
  const [page, setPage] = useState(1);
  const absences = useMyAbsences(employee, page, PAGE_SIZE);
  return (
    <>
      <h2>Absences</h2>
      {absences.isPending && <Loading what="des absences" />}
      <ErrorNotice error={absences.error} />
      {absences.data && absences.data.count === 0 && <p>Aucune demande d’absence.</p>}
      <ul className="cards">
        {absences.data?.results.map((absence) => <AbsenceCard key={absence.id} absence={absence} />)}
      </ul>
      {absences.data && <Pager label="Pages des absences" page={page} pageSize={PAGE_SIZE} count={absences.data.count} onPage={setPage} />}
    </>
  );
}
