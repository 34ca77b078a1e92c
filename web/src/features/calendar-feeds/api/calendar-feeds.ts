/** The calendar-feeds feature's calls: the account's feeds, and creating, renewing or deleting one. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schemas } from '../../../api/client';
import { invalidate, queryKeys } from '../../../lib/query-keys';

type Kind = Schemas['CalendarFeedState']['kind'];
type Address = Schemas['CalendarFeedAddress'];

export function useCalendarFeeds() {
  return useQuery({ queryKey: queryKeys.calendarFeeds.all, queryFn: () => ok(api.GET('/api/calendar-feeds/')) });
}

/** Create, renew and delete a feed; `done` receives the new secret address (null once deleted). */
export function useFeedActions(kind: Kind, done: (address: Address | null) => void) {
  const queryClient = useQueryClient();
  const after = (result: Address | null) => {
    done(result);
    void invalidate(queryClient, [queryKeys.calendarFeeds.all]);
  };
  const create = useMutation({
    mutationFn: () => ok(api.POST('/api/calendar-feeds/', { body: { kind } })),
    onSuccess: after,
  });
  const rotate = useMutation({
    mutationFn: () => ok(api.POST('/api/calendar-feeds/{kind}/rotate/', { params: { path: { kind } } })),
    onSuccess: after,
  });
  const revoke = useMutation({
    mutationFn: () => ok(api.DELETE('/api/calendar-feeds/{kind}/', { params: { path: { kind } } })),
    onSuccess: () => after(null),
  });
  return { create, rotate, revoke };
}
