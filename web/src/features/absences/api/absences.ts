/** The absences feature's calls: one's own absences, one absence, the draft's preview, filing, withdrawal, cancellation. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../../../api/client';
import { AFTER_MY_REQUEST, invalidate, queryKeys } from '../../../lib/query-keys';

/** One page of an employee's own absences. */
export function useMyAbsences(employee: number | undefined, page: number, pageSize: number) {
  return useQuery({
    queryKey: queryKeys.absences.mine(employee, page),
    queryFn: () => ok(api.GET('/api/absences/', { params: { query: { employee, page, page_size: pageSize } } })),
  });
}

/** One absence, opened by its address. */
export function useAbsence(id: number) {
  return useQuery({
    queryKey: queryKeys.absences.detail(id),
    queryFn: () => ok(api.GET('/api/absences/{id}/', { params: { path: { id } } })),
  });
}

/**
 * The reasons the form offers (GET /api/absence-types/requestable/): for oneself those the
 * employee may ask for, for a declaration every one; each says whether it is available on the
 * date (its counter open for the year, the contract in force) and why not.
 */
export function useRequestableTypes(employee: number, date: string | undefined) {
  return useQuery({
    queryKey: queryKeys.requestableTypes(employee, date),
    queryFn: () => ok(api.GET('/api/absence-types/requestable/', { params: { query: { employee, date, page_size: 200 } } })),
    enabled: employee > 0,
    placeholderData: keepPreviousData,
  });
}

export type AbsenceDraftBody = {
  employee: number;
  type: number;
  date_start: string | undefined;
  date_end: string | undefined;
  start_half: 'morning' | 'afternoon' | null;
  end_half: 'morning' | 'afternoon' | null;
  start_time: string | null;
  end_time: string | null;
  comment: string | null;
};

/** The server's count of a draft (quantity, counter effects, warnings, errors by field), once it names a type, a day and an employee. */
export function useAbsencePreview(body: AbsenceDraftBody) {
  return useQuery({
    queryKey: queryKeys.absencePreview(body),
    queryFn: () => ok(api.POST('/api/absences/preview/', { body })),
    enabled: Boolean(body.type && body.date_start && body.employee),
    placeholderData: keepPreviousData,
    staleTime: 0,
  });
}

/** Files (or declares) an absence with its documents, in one multipart request. */
export function useFileAbsence(onFiled: (record: Awaited<ReturnType<typeof fileAbsence>>) => void | Promise<void>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: fileAbsence,
    onSuccess: async (record) => {
      await invalidate(queryClient, [queryKeys.absences.all, queryKeys.counters.all, queryKeys.planning.all, queryKeys.queue.all]);
      await onFiled(record);
    },
  });
}

function fileAbsence({ body, files }: { body: AbsenceDraftBody; files: File[] }) {
  const form = new FormData();
  for (const [key, value] of Object.entries(body)) if (value != null) form.append(key, String(value));
  for (const file of files) form.append('add_documents', file, file.name);
  return ok(api.POST('/api/absences/', { body: form as never, bodySerializer: (data: unknown) => data as FormData }));
}

/** Withdraws a pending request of one's own (the row goes: SPEC Absences rule 14). */
export function useWithdrawAbsence(id: number, onWithdrawn?: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => ok(api.DELETE('/api/absences/{id}/', { params: { path: { id } } })),
    onSuccess: async () => {
      // Leaves the withdrawn row's own page first: refreshed, it would answer 404.
      onWithdrawn?.();
      await invalidate(queryClient, AFTER_MY_REQUEST);
    },
  });
}

/** Asks for the cancellation of a granted absence of one's own, with an optional comment. */
export function useRequestCancellation(id: number, onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (comment: string) =>
      ok(api.POST('/api/absences/{id}/request-cancellation/', { params: { path: { id } }, body: { comment: comment || undefined } })),
    onSuccess: async () => {
      await invalidate(queryClient, AFTER_MY_REQUEST);
      onDone();
    },
  });
}
