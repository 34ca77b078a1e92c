/**
 * The screens of the application: where each one lives (lib/paths.ts), its title, who may reach
 * it (from /api/auth/me/; the server refuses anyway) and its place in the menu. The router
 * (App.tsx) and the frame (Layout.tsx) are built from this table.
 */
import type { ReactNode } from 'react';
import type { Schemas } from '../api/client';
import { onDemand } from '../components/Loader';
import { paths, type AppPath, type ScreenName } from '../lib/paths';

// Each screen's module is a file of its own, fetched when the screen is first opened (or its menu
// entry pointed at): the first screen loads only its own code (BENCHMARKS.md, "The script, split").
const absenceRequest = onDemand(() => import('../routes/absence-request'));
const account = onDemand(() => import('../routes/account'));
const counters = onDemand(() => import('../routes/counters'));
const impersonation = onDemand(() => import('../routes/impersonation'));
const myRequest = onDemand(() => import('../routes/my-request'));
const myRequests = onDemand(() => import('../routes/my-requests'));
const notifications = onDemand(() => import('../routes/notifications'));
const payroll = onDemand(() => import('../routes/payroll'));
const planning = onDemand(() => import('../routes/planning'));
const queue = onDemand(() => import('../routes/queue'));
const teamPlanning = onDemand(() => import('../routes/team-planning'));

const AbsenceDeclarationScreen = absenceRequest.component((m) => m.AbsenceDeclarationScreen);
const AbsenceRequestScreen = absenceRequest.component((m) => m.AbsenceRequestScreen);
const AccountScreen = account.component((m) => m.AccountScreen);
const CalendarFeedsScreen = account.component((m) => m.CalendarFeedsScreen);
const DelegationsScreen = account.component((m) => m.DelegationsScreen);
const CountersScreen = counters.component((m) => m.CountersScreen);
const ImpersonationScreen = impersonation.component((m) => m.ImpersonationScreen);
const MyRequestScreen = myRequest.component((m) => m.MyRequestScreen);
const MyRequestsScreen = myRequests.component((m) => m.MyRequestsScreen);
const NotificationsScreen = notifications.component((m) => m.NotificationsScreen);
const PayrollScreen = payroll.component((m) => m.PayrollScreen);
const PlanningScreen = planning.component((m) => m.PlanningScreen);
const QueueScreen = queue.component((m) => m.QueueScreen);
const TeamPlanningScreen = teamPlanning.component((m) => m.TeamPlanningScreen);

type Me = Schemas['Me'];

export interface Screen {
  name: ScreenName;
  /** The menu entry and the page title (« … · Temps & absences »). */
  label: string;
  element: ReactNode;
  /** Starts fetching the screen's code (its menu entry is pointed at or focused). */
  prefetch(): void;
  shown(me: Me): boolean;
  /** Its menu entry's address; none for a screen reached from another (`parent`). */
  menu?: AppPath;
  /** The screen whose menu entry leads here (marked as the current section). */
  parent?: ScreenName;
  /** Addresses the same screen answers too, with something open over it (the queue's decision panels). */
  children?: ScreenName[];
}

const hasEmployee = (me: Me) => me.employee_id != null;

export const SCREENS: Screen[] = [
  { name: 'planning', label: 'Mon planning', element: <PlanningScreen />, prefetch: planning.prefetch, shown: hasEmployee, menu: paths.planning() },
  { name: 'myRequests', label: 'Mes demandes', element: <MyRequestsScreen />, prefetch: myRequests.prefetch, shown: hasEmployee, menu: paths.myRequests() },
  { name: 'myAbsence', label: 'Demande d’absence', element: <MyRequestScreen kind="absence" />, prefetch: myRequest.prefetch, shown: hasEmployee, parent: 'myRequests' },
  { name: 'myDayChange', label: 'Demande de modification de journée', element: <MyRequestScreen kind="day-change" />, prefetch: myRequest.prefetch, shown: hasEmployee, parent: 'myRequests' },
  { name: 'absenceRequest', label: 'Demander une absence', element: <AbsenceRequestScreen />, prefetch: absenceRequest.prefetch, shown: hasEmployee, menu: paths.absenceRequest() },
  { name: 'counters', label: 'Mes compteurs', element: <CountersScreen />, prefetch: counters.prefetch, shown: hasEmployee, menu: paths.counters() },
  // Manager screens: shown from the API's hints (the server refuses anyway).
  {
    name: 'queue', label: 'File des demandes', element: <QueueScreen />, prefetch: queue.prefetch, shown: (me) => me.can_view_absence_queue, menu: paths.queue(),
    children: ['queueAbsence', 'queueDayChange'],
  },
  // Declaring for others needs the decision held by the account itself, not by delegation (issue 30).
  { name: 'absenceDeclaration', label: 'Déclarer une absence', element: <AbsenceDeclarationScreen />, prefetch: absenceRequest.prefetch, shown: (me) => me.can_delegate_absences, menu: paths.absenceDeclaration() },
  { name: 'teamPlanning', label: 'Planning d’équipe', element: <TeamPlanningScreen />, prefetch: teamPlanning.prefetch, shown: (me) => me.can_view_absence_queue, menu: paths.teamPlanning() },
  { name: 'payroll', label: 'Paie', element: <PayrollScreen />, prefetch: payroll.prefetch, shown: (me) => me.can_view_payroll, menu: paths.payroll() },
  { name: 'notifications', label: 'Notifications', element: <NotificationsScreen />, prefetch: notifications.prefetch, shown: () => true, menu: paths.notifications() },
  { name: 'account', label: 'Mon compte', element: <AccountScreen />, prefetch: account.prefetch, shown: () => true, menu: paths.account() },
  { name: 'calendarFeeds', label: 'Agendas', element: <CalendarFeedsScreen />, prefetch: account.prefetch, shown: () => true, parent: 'account' },
  { name: 'delegations', label: 'Délégations', element: <DelegationsScreen />, prefetch: account.prefetch, shown: () => true, parent: 'account' },
  { name: 'impersonation', label: 'Emprunter une identité', element: <ImpersonationScreen />, prefetch: impersonation.prefetch, shown: (me) => me.can_impersonate, menu: paths.impersonation() },
];

/** Where an account lands: its first screen of the menu (« Mon compte » for anyone). */
export function home(screens: Screen[]): AppPath {
  return screens.find((screen) => screen.menu)?.menu ?? paths.account();
}
