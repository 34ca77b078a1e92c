/** The queue feature's calls: the lists of the perimeter, the panel's records and previews, the decisions. */
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { api, ok, type paths } from '../../../api/client';
import { queryKeys } from '../../../lib/query-keys';
import type { ABSENCE_STATUS, SHIFT_STATUS } from '../../../lib/requests';

export type QueueKind = 'absence' | 'shift_change';
export interface QueueItem {
  kind: QueueKind;
  id: number;
}

/** The item of an open decision panel, from its address: id null when the address names no request (not a number). */
export interface PanelItem {
  kind: QueueKind;
  id: number | null;
}

export interface QueueFilters {
  kind: QueueKind;
  status: string;
  establishment: string;
  employee: string;
  from: string;
  to: string;
}

type AbsenceStatus = keyof typeof ABSENCE_STATUS;
type ShiftStatus = keyof typeof SHIFT_STATUS;

/** The list query of the chosen kind, as the API's filters name them. */
export function queueQuery(filters: QueueFilters, page: number, pageSize: number) {
  return {
    employee: filters.employee ? Number(filters.employee) : undefined,
    establishment: filters.establishment ? Number(filters.establishment) : undefined,
    from: filters.from || undefined,
    to: filters.to || undefined,
    page,
    page_size: pageSize,
  };
}

/** One page of the absences of the perimeter; the answer keeps its page (while the next one loads, the caption still names the rows shown). */
export function useQueueAbsences(filters: QueueFilters, page: number, pageSize: number) {
  return useQuery({
    queryKey: queryKeys.queue.list('absence', filters, page),
    queryFn: async () => ({
      ...(await ok(api.GET('/api/absences/', { params: { query: { ...queueQuery(filters, page, pageSize), status: (filters.status || undefined) as AbsenceStatus | undefined } } }))),
      page,
    }),
    enabled: filters.kind === 'absence',
    placeholderData: keepPreviousData,
  });
}

/** One page of the day-change requests of the perimeter. */
export function useQueueDayChanges(filters: QueueFilters, page: number, pageSize: number) {
  return useQuery({
    queryKey: queryKeys.queue.list('shift_change', filters, page),
    queryFn: async () => ({
      ...(await ok(api.GET('/api/shift-change-requests/', { params: { query: { ...queueQuery(filters, page, pageSize), status: (filters.status || undefined) as ShiftStatus | undefined } } }))),
      page,
    }),
    enabled: filters.kind === 'shift_change',
    placeholderData: keepPreviousData,
  });
}

/** The absence of the decision panel. */
export function useQueueAbsence(id: number) {
  return useQuery({
    queryKey: queryKeys.queue.item('absence', id),
    queryFn: () => ok(api.GET('/api/absences/{id}/', { params: { path: { id } } })),
  });
}

/** The day-change request of the decision panel. */
export function useQueueDayChange(id: number) {
  return useQuery({
    queryKey: queryKeys.queue.item('shift_change', id),
    queryFn: () => ok(api.GET('/api/shift-change-requests/{id}/', { params: { path: { id } } })),
  });
}

/** The body of the row preview, as the API types it. */
export type AbsenceRowBody = NonNullable<paths['/api/absences/{id}/preview/']['post']['requestBody']>['content']['application/json'];

/** The row as a validation with corrections would leave it, counted by the server (only while there are corrections). */
export function useAbsenceRowPreview(id: number, corrections: AbsenceCorrections, body: AbsenceRowBody, enabled: boolean) {
  return useQuery({
    queryKey: queryKeys.absenceRowPreview(id, corrections),
    queryFn: () => ok(api.POST('/api/absences/{id}/preview/', { params: { path: { id } }, body })),
    enabled,
    placeholderData: keepPreviousData,
    staleTime: 0,
  });
}

export type Decision = 'validate' | 'refuse';

/** What a decider corrects when validating an absence: only what changed is sent. */
export type AbsenceCorrections = { date_end?: string; type?: number; start_time?: string | null; end_time?: string | null };

/** Validates (with its corrections) or refuses an absence, or grants or refuses its cancellation, at the version read. */
export function useDecideAbsence(id: number, handlers: { onError(error: unknown): void; onSuccess(record: { employee_name?: string | null }, action: Decision): Promise<void> }) {
  return useMutation({
    mutationFn: ({ action, version, reason, corrections }: { action: Decision; version: number; reason: string | null; corrections: AbsenceCorrections }) =>
      action === 'validate'
        ? ok(api.POST('/api/absences/{id}/validate/', { params: { path: { id } }, body: { version, reason, ...corrections } }))
        : ok(api.POST('/api/absences/{id}/refuse/', { params: { path: { id } }, body: { version, reason } })),
    onError: handlers.onError,
    onSuccess: (record, { action }) => handlers.onSuccess(record, action),
  });
}

type AdjustedSlot = {
  start_time: string | null;
  end_time: string | null;
  break_start_time: string | null;
  break_end_time: string | null;
  break_paid: boolean;
  post: number | null;
  establishment: number | null;
  is_remote: boolean;
};

/** Validates a day-change request as asked or with an adjusted day, or refuses it, at the version read. */
export function useDecideDayChange(id: number, handlers: { onError(error: unknown): void; onSuccess(record: { employee_name?: string | null }, action: Decision): Promise<void> }) {
  return useMutation({
    mutationFn: ({ action, version, reason, adjustedSlots }: { action: Decision; version: number; reason: string | null; adjustedSlots: AdjustedSlot[] | null }) =>
      action === 'validate'
        ? ok(api.POST('/api/shift-change-requests/{id}/validate/', { params: { path: { id } }, body: { version, reason, adjusted_slots: adjustedSlots } }))
        : ok(api.POST('/api/shift-change-requests/{id}/refuse/', { params: { path: { id } }, body: { version, reason } })),
    onError: handlers.onError,
    onSuccess: (record, { action }) => handlers.onSuccess(record, action),
  });
}

/** A document's content, through the authenticated client (the file route needs the token). */
export async function documentFile(id: number): Promise<Blob> {
  return (await ok(api.GET('/api/absence-documents/{id}/file/', { params: { path: { id } }, parseAs: 'blob' }))) as unknown as Blob;
}
