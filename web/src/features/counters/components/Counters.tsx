import { useState } from 'react';
import type { Schemas } from '../../../api/client';
import { ErrorNotice, Loading, Page } from '../../../components/ui';
import { frDate, quantity } from '../../../lib/format';
import { useCounters } from '../../../lib/shared-queries';

type Counter = Schemas['Counter'];

/** "Mes compteurs": Acquis, Pris, Planifiés, Restant per counter, for a civil year (the reader's own: `employee`). */
export function Counters({ employee }: { employee: number }) {
  const [year, setYear] = useState<number | undefined>(undefined);
  const counters = useCounters({ employee, year, askEmployee: false });
  const list = counters.data ? Object.values(counters.data) : [];
  const shown = year ?? list[0]?.year ?? null;
  return (
    <Page
      title="Mes compteurs"
      actions={
        shown != null && (
          <nav className="stepper" aria-label="Année">
            <button type="button" onClick={() => setYear(shown - 1)} aria-label={`Année ${shown - 1}`}>‹</button>
            <span aria-live="polite">Année {shown}</span>
            <button type="button" onClick={() => setYear(shown + 1)} aria-label={`Année ${shown + 1}`}>›</button>
          </nav>
        )
      }
    >
      {counters.isPending && <Loading what="des compteurs" />}
      <ErrorNotice error={counters.error} />
      {counters.data && list.length === 0 && <p>Aucun compteur pour cette année.</p>}
      <ul className="counter-cards">
        {list.map((counter) => (
          <CounterCard key={counter.code} counter={counter} />
        ))}
      </ul>
      {shown != null && year == null && <NextYear employee={employee} year={shown + 1} />}
    </Page>
  );
}

/**
 * Next year's counters under this year's, as soon as they are open (issue 27 point 5): a compact
 * line each (acquired so far, left), what is still to come and the year's end.
 */
function NextYear({ employee, year }: { employee: number; year: number }) {
  const counters = useCounters({ employee, year, askEmployee: false });
  const list = counters.data ? Object.values(counters.data) : [];
  return (
    <section aria-labelledby="next-year" className="next-year">
      <h2 id="next-year">Compteurs de {year}</h2>
      <ErrorNotice error={counters.error} />
      {counters.data && list.length === 0 && <p>Les compteurs de {year} ne sont pas encore ouverts.</p>}
      <ul className="next-year-list">
        {list.map((counter) => (
          <li key={counter.code} className="next-counter">
            <h3>{counter.name} <span className="code">{counter.code}</span></h3>
            <p>Acquis à ce jour : <strong>{quantity(counter.acquired, counter.unit)}</strong> · Restant : <strong>{quantity(counter.remaining, counter.unit)}</strong></p>
            <CounterYear counter={counter} />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** What the rules say of the counter's year: to come, carried over and its date, the year's end. */
function CounterYear({ counter }: { counter: Counter }) {
  const lines: string[] = [];
  const some = (value: string | null | undefined) => value != null && Number(value) > 0;
  if (some(counter.to_come)) lines.push(`À venir : ${quantity(counter.to_come, counter.unit)} d’ici la fin de ${(counter.year ?? 0) - 1} (acquisition mensuelle)`);
  if (some(counter.carried_over)) {
    lines.push(counter.carry_over_expires_on
      ? `Reporté de ${(counter.year ?? 0) - 1} : ${quantity(counter.carried_over, counter.unit)}, à prendre avant le ${frDate(counter.carry_over_expires_on)}`
        + (some(counter.carry_over_expiring) ? ` (${quantity(counter.carry_over_expiring, counter.unit)} perdus sinon)` : '')
      : `Reporté de ${(counter.year ?? 0) - 1} : ${quantity(counter.carried_over, counter.unit)}`);
  }
  const end = counter.year_end;
  if (end && (some(end.carries_over) || some(end.expires))) {
    const parts = [some(end.carries_over) ? `${quantity(end.carries_over, counter.unit)} reportés sur ${(counter.year ?? 0) + 1}`
      + (end.carry_over_until ? ` jusqu’au ${frDate(end.carry_over_until)}` : '') : '',
    some(end.expires) ? `${quantity(end.expires, counter.unit)} perdus` : ''].filter(Boolean);
    lines.push(`Au 31/12/${counter.year ?? ''} : ${parts.join(', ')}`);
  }
  if (!lines.length) return null;
  return <ul className="counter-year">{lines.map((line) => <li key={line}>{line}</li>)}</ul>;
}

function CounterCard({ counter }: { counter: Counter }) {
  const acquired = Number(counter.acquired);
  const share = (value: string) => (acquired > 0 ? Math.max(0, Math.min(100, (Number(value) / acquired) * 100)) : 0);
  const headingId = `counter-${counter.code}`;
  return (
    <li className="counter" aria-labelledby={headingId}>
      <h2 id={headingId}>
        {counter.name} <span className="code">{counter.code}</span>
      </h2>
      <div className="gauge" aria-hidden="true">
        <span className="taken" style={{ width: `${share(counter.taken)}%` }} />
        <span className="planned" style={{ width: `${share(counter.planned)}%` }} />
      </div>
      <dl>
        {(['acquired', 'taken', 'planned', 'remaining'] as const).map((key) => (
          <div key={key} className={key}>
            <dt>{counter.labels[key]}</dt>
            <dd>{quantity(counter[key], counter.unit)}</dd>
          </div>
        ))}
      </dl>
      <CounterYear counter={counter} />
    </li>
  );
}
