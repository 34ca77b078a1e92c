/**
 * The notifications feature's calls: the unread count of the menu, the list, marking one or all
 * read, and the account's e-mail preferences (« Mon compte »).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schemas } from '../../../api/client';
import { invalidate, queryKeys } from '../../../lib/query-keys';

export type EmailPreferences = Schemas['NotificationPreferences'];

/** The number of unread notifications, for the header (refreshed every minute). */
export function useUnreadCount(): number | undefined {
  const unread = useQuery({
    queryKey: queryKeys.notifications.unreadCount(),
    queryFn: () => ok(api.GET('/api/notifications/', { params: { query: { unread: true, page_size: 1 } } })),
    refetchInterval: 60_000,
  });
  return unread.data?.count;
}

export function useNotifications(page: number, pageSize: number) {
  return useQuery({
    queryKey: queryKeys.notifications.list(page),
    queryFn: () => ok(api.GET('/api/notifications/', { params: { query: { page, page_size: pageSize } } })),
  });
}

/** Marks one notification read; the list and the count are read again. */
export function useMarkRead() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => ok(api.POST('/api/notifications/{id}/read/', { params: { path: { id } } })),
    onSuccess: () => invalidate(queryClient, [queryKeys.notifications.all]),
  });
}

/** « Tout marquer comme lu »; the list and the count are read again. */
export function useMarkAllRead() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => ok(api.POST('/api/notifications/read-all/')),
    onSuccess: () => invalidate(queryClient, [queryKeys.notifications.all]),
  });
}

export function useEmailPreferences() {
  return useQuery({
    queryKey: queryKeys.notifications.preferences(),
    queryFn: () => ok(api.GET('/api/notifications/preferences/')),
  });
}

export function useSaveEmailPreferences() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Omit<EmailPreferences, 'email'>) => ok(api.PUT('/api/notifications/preferences/', { body })),
    onSuccess: (saved) => queryClient.setQueryData(queryKeys.notifications.preferences(), saved),
  });
}
