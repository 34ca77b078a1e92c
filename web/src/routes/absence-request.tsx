import { useNavigate } from 'react-router';
import { AbsenceRequestForm } from '../features/absences/components/AbsenceRequestForm';
import { useSession } from '../features/session/session';
import { paths } from '../lib/paths';

/** « Demander une absence »: my own request; once sent, « Mes demandes » shows it. */
export function AbsenceRequestScreen() {
  const { me } = useSession();
  const navigate = useNavigate();
  return <AbsenceRequestForm employee={me.employee_id!} onFiled={() => navigate(paths.myRequests())} />;
}

/** « Déclarer une absence »: a decider declares an absence for an employee of the perimeter. */
export function AbsenceDeclarationScreen() {
  return <AbsenceRequestForm declare />;
}
