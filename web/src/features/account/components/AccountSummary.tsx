import type { ReactNode } from 'react';
import type { Schemas } from '../../../api/client';
import { AppLink } from '../../../components/AppLink';
import { Page } from '../../../components/ui';
import { paths } from '../../../lib/paths';

/**
 * "Mon compte": the connected account as /api/auth/me/ describes it (`me`), the sections of other
 * features the screen hands over (`children`: the e-mail preferences), and the way out.
 */
export function AccountSummary({ me, onLogout, children }: { me: Schemas['Me']; onLogout(): void; children?: ReactNode }) {
  const rights = [
    me.can_view_absence_queue && 'consulter la file des demandes de votre périmètre',
    me.can_decide_absences && 'décider des demandes d’absence',
    me.can_decide_shift_changes && 'décider des demandes de modification de journée',
    me.can_view_payroll && 'consulter les éléments de paie',
  ].filter((right): right is string => Boolean(right));
  return (
    <Page title="Mon compte">
      <dl className="facts">
        <dt>Identifiant</dt>
        <dd>{me.username}</dd>
        <dt>Rôle</dt>
        <dd>{me.role ?? 'Aucun rôle'}</dd>
        <dt>Fiche salarié</dt>
        <dd>{me.employee_id == null ? 'Aucune fiche salarié rattachée' : `N° ${me.employee_id}`}</dd>
      </dl>
      <h2>Ce que votre compte permet</h2>
      {rights.length ? (
        <ul>
          {rights.map((right) => (
            <li key={right}>{right}</li>
          ))}
        </ul>
      ) : (
        <p>Consulter votre planning, vos demandes et vos compteurs.</p>
      )}
      <h2>Agendas</h2>
      <p>
        Suivez votre planning{me.can_view_absence_queue ? ' et les absences de votre périmètre' : ''} dans l’agenda de votre
        téléphone : <AppLink to={paths.calendarFeeds()}>abonner mon agenda (flux iCalendar)</AppLink>.
      </p>
      <h2>Délégations</h2>
      <p>
        {me.can_delegate_absences || me.can_delegate_shift_changes
          ? 'Absent(e) ? Nommez qui décide à votre place, et consultez les délégations reçues : '
          : 'Consultez les délégations de décision que vous avez reçues : '}
        <AppLink to={paths.delegations()}>mes délégations</AppLink>.
      </p>
      {children}
      <button type="button" onClick={onLogout}>
        Se déconnecter
      </button>
    </Page>
  );
}
