import { useNavigate, useParams } from 'react-router';
import { AppLink } from '../components/AppLink';
import { NotFoundNotice, Page } from '../components/ui';
import { ABSENCE_NOT_FOUND, MyAbsence } from '../features/absences/components/MyAbsence';
import { DAY_CHANGE_NOT_FOUND, MyDayChange } from '../features/day-changes/components/MyDayChange';
import { useSession } from '../features/session/session';
import { parseId, paths } from '../lib/paths';

/**
 * One request of mine opened by its address (/demandes/absences/:id, /demandes/journees/:id: the
 * links of notifications and e-mails): the same card as in « Mes demandes », and the way back to it.
 * Withdrawn, the request is gone: back to the list.
 */
export function MyRequestScreen({ kind }: { kind: 'absence' | 'day-change' }) {
  const { me } = useSession();
  const navigate = useNavigate();
  const id = parseId(useParams().id);
  const back = () => navigate(paths.myRequests());
  const employee = me.employee_id!;
  return (
    <Page title={kind === 'absence' ? 'Demande d’absence' : 'Demande de modification de journée'}
      actions={<AppLink to={paths.myRequests()}>Toutes mes demandes</AppLink>}>
      {id === null ? (
        <NotFoundNotice text={kind === 'absence' ? ABSENCE_NOT_FOUND : DAY_CHANGE_NOT_FOUND} />
      ) : kind === 'absence' ? (
        <MyAbsence key={id} id={id} employee={employee} onWithdrawn={back} />
      ) : (
        <MyDayChange key={id} id={id} employee={employee} onWithdrawn={back} />
      )}
    </Page>
  );
}
