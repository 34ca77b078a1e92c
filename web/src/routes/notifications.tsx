import { Notifications } from '../features/notifications/components/Notifications';

/** « Notifications ». */
export function NotificationsScreen() {
  return <Notifications />;
}
