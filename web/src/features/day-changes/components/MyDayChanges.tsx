import { useState } from 'react';
import { ErrorNotice, Loading, Pager } from '../../../components/ui';
import { useMyDayChanges } from '../api/day-changes';
import { DayChangeCard } from './DayChangeCard';

const PAGE_SIZE = 10;

/** « Mes demandes », day changes: the employee's own, 10 a page. */
export function MyDayChanges({ employee }: { employee: number | undefined }) {
  const [page, setPage] = useState(1);
  const shifts = useMyDayChanges(employee, page, PAGE_SIZE);
  return (
    <>
      <h2>Modifications de journée</h2>
      {shifts.isPending && <Loading what="des demandes de modification" />}
      <ErrorNotice error={shifts.error} />
      {shifts.data && shifts.data.count === 0 && <p>Aucune demande de modification de journée.</p>}
      <ul className="cards">
        {shifts.data?.results.map((request) => <DayChangeCard key={request.id} request={request} />)}
      </ul>
      {shifts.data && <Pager label="Pages des modifications" page={page} pageSize={PAGE_SIZE} count={shifts.data.count} onPage={setPage} />}
    </>
  );
}
