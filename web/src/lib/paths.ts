/**
 * Every address of the web application, built in one place: screens, menus, notifications and
 * e-mails link with these builders (README, "Addresses of the web application"). Plain
 * TypeScript with no import, so that server code can build the same links.
 */

/** The route patterns (React Router syntax); each builder below fills one. */
export const patterns = {
  planning: '/planning',
  myRequests: '/demandes',
  myAbsence: '/demandes/absences/:id',
  myDayChange: '/demandes/journees/:id',
  absenceRequest: '/absences/nouvelle',
  absenceDeclaration: '/absences/declarer',
  counters: '/compteurs',
  queue: '/file',
  queueAbsence: '/file/absences/:id',
  queueDayChange: '/file/journees/:id',
  teamPlanning: '/equipe',
  payroll: '/paie',
  notifications: '/notifications',
  account: '/compte',
  calendarFeeds: '/compte/agendas',
  delegations: '/compte/delegations',
  impersonation: '/emprunt',
} as const;

export type ScreenName = keyof typeof patterns;

/** A month of the team planning, YYYY-MM. */
export type Month = `${number}-${number}`;

export const paths = {
  planning: () => patterns.planning,
  myRequests: () => patterns.myRequests,
  /** The author's own absence request, opened. */
  myAbsence: (id: number) => `/demandes/absences/${id}` as const,
  /** The author's own day-change request, opened. */
  myDayChange: (id: number) => `/demandes/journees/${id}` as const,
  absenceRequest: () => patterns.absenceRequest,
  absenceDeclaration: () => patterns.absenceDeclaration,
  counters: () => patterns.counters,
  queue: () => patterns.queue,
  /** The queue with the decision panel of an absence open over it. */
  queueAbsence: (id: number) => `/file/absences/${id}` as const,
  /** The queue with the decision panel of a day-change request open over it. */
  queueDayChange: (id: number) => `/file/journees/${id}` as const,
  /** The team planning, at a month when given (`?mois=YYYY-MM`). */
  teamPlanning: (month?: Month) => (month ? (`/equipe?mois=${month}` as const) : patterns.teamPlanning),
  payroll: () => patterns.payroll,
  notifications: () => patterns.notifications,
  account: () => patterns.account,
  calendarFeeds: () => patterns.calendarFeeds,
  delegations: () => patterns.delegations,
  impersonation: () => patterns.impersonation,
} satisfies Record<ScreenName, (...args: never[]) => string>;

/** An address of the application, as the builders make them: what a link of the application may point to. */
export type AppPath = ReturnType<(typeof paths)[ScreenName]>;

/**
 * An address the server wrote (a notification's `path`), as an address of the application, or
 * null when it names none of them: a link is only ever made to a screen of this router.
 */
export function appPath(path: string | null | undefined): AppPath | null {
  if (!path) return null;
  const request = /^\/(demandes|file)\/(absences|journees)\/([^/]+)$/.exec(path);
  if (request) {
    const id = parseId(request[3]);
    if (id === null) return null;
    if (request[1] === 'demandes') return request[2] === 'absences' ? paths.myAbsence(id) : paths.myDayChange(id);
    return request[2] === 'absences' ? paths.queueAbsence(id) : paths.queueDayChange(id);
  }
  const screen = (Object.keys(patterns) as ScreenName[]).find((name) => !patterns[name].includes(':') && patterns[name] === path);
  return screen ? (patterns[screen] as AppPath) : null;
}

/** A path id as the API takes it (a positive PostgreSQL integer), or null for anything else. */
export function parseId(value: string | undefined): number | null {
  if (!value || !/^[1-9][0-9]{0,9}$/.test(value)) return null;
  const id = Number(value);
  return id <= 2_147_483_647 ? id : null;
}
