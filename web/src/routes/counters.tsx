import { Counters } from '../features/counters/components/Counters';
import { useSession } from '../features/session/session';

/** « Mes compteurs ». */
export function CountersScreen() {
  const { me } = useSession();
  return <Counters employee={me.employee_id!} />;
}
