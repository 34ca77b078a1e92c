import { AccountSummary } from '../features/account/components/AccountSummary';
import { CalendarFeeds } from '../features/calendar-feeds/components/CalendarFeeds';
import { EmailPreferencesForm } from '../features/notifications/components/EmailPreferences';
import { Delegations } from '../features/delegations/components/Delegations';
import { useSession } from '../features/session/session';

/** « Mon compte », with its e-mail preferences. */
export function AccountScreen() {
  const { me, logout } = useSession();
  const decider = me.can_view_absence_queue || me.can_decide_absences || me.can_decide_shift_changes;
  return (
    <AccountSummary me={me} onLogout={logout}>
      <EmailPreferencesForm decider={decider} />
    </AccountSummary>
  );
}

/** « Mon compte › Agendas »: the account's iCalendar feeds. */
export function CalendarFeedsScreen() {
  return <CalendarFeeds />;
}

/** « Mon compte › Délégations »: the delegations given and received, and delegating one's decisions. */
export function DelegationsScreen() {
  const { me } = useSession();
  return <Delegations me={me} />;
}
