import { AccountSummary } from '../features/account/components/AccountSummary';
import { CalendarFeeds } from '../features/calendar-feeds/components/CalendarFeeds';
import { Delegations } from '../features/delegations/components/Delegations';
import { useSession } from '../features/session/session';

/** « Mon compte ». */
export function AccountScreen() {
  const { me, logout } = useSession();
  return <AccountSummary me={me} onLogout={logout} />;
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
