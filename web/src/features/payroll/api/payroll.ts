/** The payroll feature's reads: the establishments the reader may consult, the lines of a month. */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, ok } from '../../../api/client';
import { queryKeys } from '../../../lib/query-keys';

export function usePayrollOptions() {
  return useQuery({
    queryKey: queryKeys.payroll.options(),
    queryFn: () => ok(api.GET('/api/payroll/options/')),
  });
}

/** One page (25 lines, the server's) of a month's payroll lines; establishment '' for all those authorised. */
export function usePayrollLines({ month, establishment, search, page, enabled }: {
  month: string;
  establishment: string;
  search: string;
  page: number;
  enabled: boolean;
}) {
  return useQuery({
    queryKey: queryKeys.payroll.lines(month, establishment, search, page),
    queryFn: () =>
      ok(api.GET('/api/payroll/', {
        params: {
          query: {
            month,
            establishment: establishment ? Number(establishment) : undefined,
            search: search || undefined,
            page,
          },
        },
      })),
    enabled,
    placeholderData: keepPreviousData,
  });
}
