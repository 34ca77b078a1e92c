import { DayChangeForm } from '../features/day-changes/components/DayChangeForm';
import { MyPlanning } from '../features/planning/components/MyPlanning';

/** « Mon planning »: the grid, whose days open the day-change request form. */
export function PlanningScreen() {
  return <MyPlanning dayEditor={(props) => <DayChangeForm {...props} />} />;
}
