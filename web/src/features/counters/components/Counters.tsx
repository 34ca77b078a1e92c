import { useState } from 'react';
import type { Schemas } from '../../../api/client';
import { ErrorNotice, Loading, Page } from '../../../components/ui';
import { quantity } from '../../../lib/format';
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
      <ul className="counters">
        {list.map((counter) => (
          <CounterCard key={counter.code} counter={counter} />
        ))}
      </ul>
    </Page>
  );
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
    </li>
  );
}
