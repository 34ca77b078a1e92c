import { TeamPlanning } from '../features/planning/components/TeamPlanning';

/** « Planning d’équipe » (readers of a perimeter's queue). */
export function TeamPlanningScreen() {
  return <TeamPlanning />;
}
