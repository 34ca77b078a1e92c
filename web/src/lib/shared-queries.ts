/**
 * Reads that several features show (the reference and the reader's perimeter): one definition
 * each, so that the screens share their cache. A feature's own reads live in its api/ folder.
 */
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../api/client';
import { queryKeys } from './query-keys';

/** The active absence types with their counters (reference: changes rarely). */
export function useAbsenceTypes() {
  return useQuery({
    queryKey: queryKeys.absenceTypes(),
    queryFn: () => ok(api.GET('/api/absence-types/', { params: { query: { page_size: 200 } } })),
    staleTime: 10 * 60_000,
  });
}

/** The employees of the reader's perimeter (pickers and filters). */
export function usePerimeterEmployees({ enabled = true }: { enabled?: boolean } = {}) {
  return useQuery({
    queryKey: queryKeys.employees.perimeter(),
    queryFn: () => ok(api.GET('/api/employees/', { params: { query: { scope: 'perimeter', page_size: 200 } } })),
    staleTime: 10 * 60_000,
    enabled,
  });
}

/** The establishments of the reader's perimeter (filters). */
export function usePerimeterEstablishments() {
  return useQuery({
    queryKey: queryKeys.establishments.perimeter(),
    queryFn: () => ok(api.GET('/api/establishments/', { params: { query: { scope: 'perimeter', page_size: 200 } } })),
    staleTime: 10 * 60_000,
  });
}

/**
 * An employee's counters of a year. Without `employee` in the query the server answers the
 * reader's own; the key names the employee either way, so that both reads share the cache.
 */
export function useCounters({ employee, year, askEmployee, enabled = true }: {
  employee: number | null | undefined;
  year: number | undefined;
  /** Send the employee to the server (another employee's counters) rather than read one's own. */
  askEmployee: boolean;
  enabled?: boolean;
}) {
  return useQuery({
    queryKey: queryKeys.counters.of(employee, year ?? 'current'),
    queryFn: () => ok(api.GET('/api/counters/', {
      params: { query: { ...(askEmployee && employee != null ? { employee } : {}), ...(year ? { year } : {}) } },
    })),
    enabled,
  });
}
