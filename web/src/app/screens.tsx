/**
 * The screens of the application: where each one lives (lib/paths.ts), its title, who may reach
 * it (from /api/auth/me/; the server refuses anyway) and its place in the menu. The router
 * (App.tsx) and the frame (Layout.tsx) are built from this table.
 */
import type { ReactNode } from 'react';
import type { Schemas } from '../api/client';
import { paths, type AppPath, type ScreenName } from '../lib/paths';
import { AbsenceDeclarationScreen, AbsenceRequestScreen } from '../routes/absence-request';
import { AccountScreen, CalendarFeedsScreen, DelegationsScreen } from '../routes/account';
import { CountersScreen } from '../routes/counters';
import { ImpersonationScreen } from '../routes/impersonation';
import { MyRequestScreen } from '../routes/my-request';
import { MyRequestsScreen } from '../routes/my-requests';
import { NotificationsScreen } from '../routes/notifications';
import { PayrollScreen } from '../routes/payroll';
import { PlanningScreen } from '../routes/planning';
import { QueueScreen } from '../routes/queue';
import { TeamPlanningScreen } from '../routes/team-planning';

type Me = Schemas['Me'];

export interface Screen {
  name: ScreenName;
  /** The menu entry and the page title (« … · Temps & absences »). */
  label: string;
  element: ReactNode;
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
  { name: 'planning', label: 'Mon planning', element: <PlanningScreen />, shown: hasEmployee, menu: paths.planning() },
  { name: 'myRequests', label: 'Mes demandes', element: <MyRequestsScreen />, shown: hasEmployee, menu: paths.myRequests() },
  { name: 'myAbsence', label: 'Demande d’absence', element: <MyRequestScreen kind="absence" />, shown: hasEmployee, parent: 'myRequests' },
  { name: 'myDayChange', label: 'Demande de modification de journée', element: <MyRequestScreen kind="day-change" />, shown: hasEmployee, parent: 'myRequests' },
  { name: 'absenceRequest', label: 'Demander une absence', element: <AbsenceRequestScreen />, shown: hasEmployee, menu: paths.absenceRequest() },
  { name: 'counters', label: 'Mes compteurs', element: <CountersScreen />, shown: hasEmployee, menu: paths.counters() },
  // Manager screens: shown from the API's hints (the server refuses anyway).
  {
    name: 'queue', label: 'File des demandes', element: <QueueScreen />, shown: (me) => me.can_view_absence_queue, menu: paths.queue(),
    children: ['queueAbsence', 'queueDayChange'],
  },
  // Declaring for others needs the decision held by the account itself, not by delegation (issue 30).
  { name: 'absenceDeclaration', label: 'Déclarer une absence', element: <AbsenceDeclarationScreen />, shown: (me) => me.can_delegate_absences, menu: paths.absenceDeclaration() },
  { name: 'teamPlanning', label: 'Planning d’équipe', element: <TeamPlanningScreen />, shown: (me) => me.can_view_absence_queue, menu: paths.teamPlanning() },
  { name: 'payroll', label: 'Paie', element: <PayrollScreen />, shown: (me) => me.can_view_payroll, menu: paths.payroll() },
  { name: 'notifications', label: 'Notifications', element: <NotificationsScreen />, shown: () => true, menu: paths.notifications() },
  { name: 'account', label: 'Mon compte', element: <AccountScreen />, shown: () => true, menu: paths.account() },
  { name: 'calendarFeeds', label: 'Agendas', element: <CalendarFeedsScreen />, shown: () => true, parent: 'account' },
  { name: 'delegations', label: 'Délégations', element: <DelegationsScreen />, shown: () => true, parent: 'account' },
  { name: 'impersonation', label: 'Emprunter une identité', element: <ImpersonationScreen />, shown: (me) => me.can_impersonate, menu: paths.impersonation() },
];

/** Where an account lands: its first screen of the menu (« Mon compte » for anyone). */
export function home(screens: Screen[]): AppPath {
  return screens.find((screen) => screen.menu)?.menu ?? paths.account();
}
