/**
 * Every query key of the web application, built here and nowhere else: a screen asks for
 * `queryKeys.absences.mine(employee, page)`, and an invalidation names the same prefixes
 * (`queryKeys.absences.all`), so that what a write refreshes is read in one place.
 */
import type { QueryClient, QueryKey } from '@tanstack/react-query';

export const queryKeys = {
  settings: () => ['settings'] as const,
  absenceTypes: () => ['absence-types'] as const,
  /** The reasons a form offers for an employee on a date, with their availability (issue 29). */
  requestableTypes: (employee: number, date: string | undefined) => ['absence-types', 'requestable', employee, date ?? 'today'] as const,
  absences: {
    all: ['absences'] as const,
    mine: (employee: number | undefined, page: number) => ['absences', 'mine', employee, page] as const,
    detail: (id: number) => ['absences', 'detail', id] as const,
    /** One's pending absence requests over a window of « Mon planning » (their reasons in the cells). */
    pendingIn: (employee: number, range: { from: string; to: string } | null) => ['absences', 'pending', employee, range] as const,
  },
  /** The server's count of a draft absence (the request form) or of a row with a decider's corrections. */
  absencePreview: (body: object) => ['absence-preview', body] as const,
  absenceRowPreview: (id: number, corrections: object) => ['absence-preview-row', id, corrections] as const,
  dayChanges: {
    all: ['shift-changes'] as const,
    mine: (employee: number | undefined, page: number) => ['shift-changes', 'mine', employee, page] as const,
    detail: (id: number) => ['shift-changes', 'detail', id] as const,
  },
  queue: {
    all: ['queue'] as const,
    list: (kind: 'absence' | 'shift_change', filters: object, page: number) => ['queue', kind, filters, page] as const,
    /** The records of the decision panel. */
    items: ['queue-item'] as const,
    item: (kind: 'absence' | 'shift_change', id: number) => ['queue-item', kind, id] as const,
  },
  counters: {
    all: ['counters'] as const,
    /** An employee's counters of a year ('current': the server's current year). */
    of: (employee: number | null | undefined, year: number | 'current') => ['counters', employee, year] as const,
  },
  planning: {
    all: ['planning'] as const,
    mine: (range: { from: string; to: string } | null) => ['planning', 'mine', range] as const,
    team: (from: string, to: string, establishment: string, team: string) => ['planning', 'team', from, to, establishment, team] as const,
  },
  establishments: {
    perimeter: () => ['establishments', 'perimeter'] as const,
  },
  employees: {
    perimeter: () => ['employees', 'perimeter'] as const,
    impersonation: (search: string, page: number) => ['employees', 'impersonation', search, page] as const,
  },
  teams: {
    perimeter: (establishment: string) => ['teams', 'perimeter', establishment] as const,
  },
  payroll: {
    options: () => ['payroll', 'options'] as const,
    lines: (month: string, establishment: string, search: string, page: number) => ['payroll', 'lines', month, establishment, search, page] as const,
  },
  notifications: {
    all: ['notifications'] as const,
    unreadCount: () => ['notifications', 'unread-count'] as const,
    list: (page: number) => ['notifications', 'list', page] as const,
    /** The account's e-mail preferences (« Mon compte »). */
    preferences: () => ['notifications', 'preferences'] as const,
  },
  calendarFeeds: {
    all: ['calendar-feeds'] as const,
  },
  delegations: {
    all: ['delegations'] as const,
    list: (role: 'given' | 'received') => ['delegations', role] as const,
    candidates: (search: string) => ['delegations', 'candidates', search] as const,
  },
};

/** What a change of one's own requests (filing, withdrawal, cancellation request) makes stale. */
export const AFTER_MY_REQUEST: readonly QueryKey[] = [queryKeys.absences.all, queryKeys.dayChanges.all, queryKeys.counters.all, queryKeys.planning.all];

/** What a decision makes stale: the queue and its panel, the requests, counters and plannings. */
export const AFTER_DECISION: readonly QueryKey[] = [
  queryKeys.queue.all, queryKeys.queue.items, queryKeys.absences.all, queryKeys.dayChanges.all, queryKeys.counters.all, queryKeys.planning.all,
];

/** Marks every query under these prefixes stale (those on screen are fetched again). */
export function invalidate(queryClient: QueryClient, prefixes: readonly QueryKey[]): Promise<unknown> {
  return Promise.all(prefixes.map((queryKey) => queryClient.invalidateQueries({ queryKey })));
}
