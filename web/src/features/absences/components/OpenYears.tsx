import type { Schemas } from '../../../api/client';
import { quantity } from '../../../lib/format';
import { useCounters } from '../../../lib/shared-queries';

type AbsenceType = Schemas['AbsenceType'];

/**
 * Which years the counters of a reason are open for the employee (issue 27 point 5), shown as
 * soon as the reason is chosen, before any date: this year and the next, read from
 * GET /api/counters/ (the server's current year, then the next). « Congés payés 2027 : ouvert
 * (restant 20,83 jours) » or « Congés payés 2027 : pas encore ouvert ».
 */
export function OpenYears({ type, employee, askEmployee }: { type: AbsenceType | undefined; employee: number; askEmployee: boolean }) {
  const codes = type?.counter_codes ?? [];
  const enabled = codes.length > 0 && employee > 0;
  const current = useCounters({ employee, year: undefined, askEmployee, enabled });
  // The server's year: that of the current counters, else the device's.
  const thisYear = (current.data && Object.values(current.data)[0]?.year) || new Date().getFullYear();
  const next = useCounters({ employee, year: thisYear + 1, askEmployee, enabled: enabled && current.isSuccess });
  if (!enabled || !current.data || !next.data) return null;
  const lines = codes.flatMap((code) => [
    { year: thisYear, counter: current.data[code] },
    { year: thisYear + 1, counter: next.data[code] },
  ].map(({ year, counter }) => ({
    key: `${code}-${year}`,
    open: Boolean(counter && counter.is_active !== false),
    text: `${counter?.name ?? type!.name} ${year} : ${counter && counter.is_active !== false
      ? `ouvert (restant ${quantity(counter.remaining, counter.unit)})` : 'pas encore ouvert'}`,
  })));
  return (
    <ul className="open-years" aria-label="Années ouvertes de ses compteurs">
      {lines.map((line) => <li key={line.key} className={line.open ? 'open' : 'closed'}>{line.text}</li>)}
    </ul>
  );
}
