/** The planning feature's reads: one's own planning, the team planning of a month, the teams of the perimeter. */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, ok } from '../../../api/client';
import { queryKeys } from '../../../lib/query-keys';

/** One's own planning over a window (the server's current week when none). */
export function useMyPlanning(range: { from: string; to: string } | null) {
  return useQuery({
    queryKey: queryKeys.planning.mine(range),
    queryFn: () => ok(api.GET('/api/planning/', { params: { query: range ?? {} } })),
    placeholderData: keepPreviousData,
  });
}

/**
 * One's pending absence requests meeting the window: the planning marks their days with
 * pending_request only, « Mon planning » shows their reason there (not the planned post).
 */
export function useMyPendingAbsences(employee: number, range: { from: string; to: string } | null) {
  return useQuery({
    queryKey: queryKeys.absences.pendingIn(employee, range),
    queryFn: () => ok(api.GET('/api/absences/', {
      params: { query: { employee, status: 'pending', from: range!.from, to: range!.to, page_size: 200 } },
    })),
    enabled: range != null,
    placeholderData: keepPreviousData,
  });
}

/**
 * The perimeter's team month, filtered by establishment and team ('' for all): the compact grid
 * (GET /api/planning/grid/: each post, reason, block and day once, then per employee the index of
 * each day), what the grid draws and nothing more (issue 29 point 6).
 */
export function useTeamPlanning(first: string, last: string, establishment: string, team: string) {
  return useQuery({
    queryKey: queryKeys.planning.team(first, last, establishment, team),
    queryFn: () =>
      ok(api.GET('/api/planning/grid/', {
        params: {
          query: {
            from: first,
            to: last,
            establishment: establishment ? Number(establishment) : undefined,
            team: team ? Number(team) : undefined,
          },
        },
      })),
    placeholderData: keepPreviousData,
  });
}

/** The teams of the perimeter, of one establishment when chosen. */
export function usePerimeterTeams(establishment: string) {
  return useQuery({
    queryKey: queryKeys.teams.perimeter(establishment),
    queryFn: () =>
      ok(api.GET('/api/teams/', {
        params: { query: { scope: 'perimeter', establishment: establishment ? Number(establishment) : undefined, page_size: 200 } },
      })),
  });
}
