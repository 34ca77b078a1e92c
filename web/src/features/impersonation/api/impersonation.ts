/** The impersonation feature's read: employees (and their accounts) matching a search. */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, ok } from '../../../api/client';
import { queryKeys } from '../../../lib/query-keys';

export function useImpersonationCandidates(search: string, page: number, pageSize: number) {
  return useQuery({
    queryKey: queryKeys.employees.impersonation(search, page),
    queryFn: () => ok(api.GET('/api/employees/', { params: { query: { search: search || undefined, page, page_size: pageSize } } })),
    placeholderData: keepPreviousData,
  });
}
