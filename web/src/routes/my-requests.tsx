import { Page } from '../components/ui';
import { MyAbsences } from '../features/absences/components/MyAbsences';
import { MyDayChanges } from '../features/day-changes/components/MyDayChanges';
import { useSession } from '../features/session/session';

/** « Mes demandes »: my absences and day-change requests, their states and what I may still do. */
export function MyRequestsScreen() {
  const { me } = useSession();
  const employee = me.employee_id ?? undefined;
  return (
    <Page title="Mes demandes">
      <MyAbsences employee={employee} />
      <MyDayChanges employee={employee} />
    </Page>
  );
}
