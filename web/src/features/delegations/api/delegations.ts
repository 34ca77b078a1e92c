/** The delegations feature's calls: given and received delegations, creating one, ending one; the delegate search. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schemas } from '../../../api/client';
import { invalidate, queryKeys } from '../../../lib/query-keys';

export type Delegation = Schemas['Delegation'];
export interface DelegationDraft {
  delegate: number | null;
  start_date: string;
  end_date: string;
  kinds: Delegation['kinds'] | '';
  establishments: number[];
  comment: string;
}

export function useDelegations(role: 'given' | 'received') {
  return useQuery({
    queryKey: queryKeys.delegations.list(role),
    queryFn: () => ok(api.GET('/api/delegations/', { params: { query: { role, page_size: 200 } } })),
  });
}

/** Employees (and their accounts) matching a name: the delegate is chosen by name. */
export function useDelegateCandidates(search: string) {
  return useQuery({
    queryKey: queryKeys.delegations.candidates(search),
    queryFn: () => ok(api.GET('/api/employees/', { params: { query: { search, page_size: 10 } } })),
    enabled: search.length >= 2,
    placeholderData: keepPreviousData,
  });
}

export function useCreateDelegation(done: (created: Delegation) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (draft: DelegationDraft) => ok(api.POST('/api/delegations/', {
      body: {
        // The server answers a missing delegate or kinds under its field.
        delegate: draft.delegate as number,
        start_date: draft.start_date,
        end_date: draft.end_date,
        kinds: draft.kinds as Delegation['kinds'],
        establishments: draft.establishments,
        comment: draft.comment.trim() || null,
      },
    })),
    onSuccess: (created) => {
      done(created);
      void invalidate(queryClient, [queryKeys.delegations.all]);
    },
  });
}

export function useEndDelegation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => ok(api.POST('/api/delegations/{id}/end/', { params: { path: { id } } })),
    onSuccess: () => void invalidate(queryClient, [queryKeys.delegations.all]),
  });
}
