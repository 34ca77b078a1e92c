/** The day-changes feature's calls: one's own requests, one request, filing and withdrawal. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../../../api/client';
import { AFTER_MY_REQUEST, invalidate, queryKeys } from '../../../lib/query-keys';
import { slotBody, type SlotDraft } from '../../../lib/slots';

/** One page of an employee's own day-change requests. */
export function useMyDayChanges(employee: number | undefined, page: number, pageSize: number) {
  return useQuery({
    queryKey: queryKeys.dayChanges.mine(employee, page),
    queryFn: () => ok(api.GET('/api/shift-change-requests/', { params: { query: { employee, page, page_size: pageSize } } })),
  });
}

/** One day-change request, opened by its address. */
export function useDayChange(id: number) {
  return useQuery({
    queryKey: queryKeys.dayChanges.detail(id),
    queryFn: () => ok(api.GET('/api/shift-change-requests/{id}/', { params: { path: { id } } })),
  });
}

export interface DayChangeDraft {
  date: string;
  reason: string;
  comment: string;
  isRemote: boolean;
  isOffsite: boolean;
  slots: SlotDraft[];
}

/** Files a day-change request; the planning and one's requests are read again. */
export function useFileDayChange(onSent: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (draft: DayChangeDraft) =>
      ok(api.POST('/api/shift-change-requests/', {
        body: {
          date: draft.date,
          reason: draft.reason,
          comment: draft.comment || null,
          is_remote: draft.isRemote,
          is_offsite: draft.isOffsite,
          slots: draft.slots.map(slotBody),
        },
      })),
    onSuccess: async () => {
      await invalidate(queryClient, [queryKeys.planning.all, queryKeys.dayChanges.all]);
      onSent();
    },
  });
}

/** Withdraws a pending request of one's own. */
export function useWithdrawDayChange(id: number, onWithdrawn?: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => ok(api.DELETE('/api/shift-change-requests/{id}/', { params: { path: { id } } })),
    onSuccess: async () => {
      // Leaves the withdrawn request's own page first: refreshed, it would answer 404.
      onWithdrawn?.();
      await invalidate(queryClient, AFTER_MY_REQUEST);
    },
  });
}
