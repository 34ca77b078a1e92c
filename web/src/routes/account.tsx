import { AccountSummary } from '../features/account/components/AccountSummary';
import { CalendarFeeds } from '../features/calendar-feeds/components/CalendarFeeds';
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
