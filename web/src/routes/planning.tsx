import { DayChangeForm } from '../features/day-changes/components/DayChangeForm';
import { MyPlanning } from '../features/planning/components/MyPlanning';
import { useSession } from '../features/session/session';

/** « Mon planning »: the grid, whose days open the day-change request form. */
export function PlanningScreen() {
  const { me } = useSession();
  return <MyPlanning employee={me.employee_id!} dayEditor={(props) => <DayChangeForm {...props} />} />;
}
