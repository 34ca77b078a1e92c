import type { Schemas } from '../api/client';
import { quantity } from '../lib/format';
import { COUNTER_COLUMN } from '../lib/requests';

/** The counter movements of an absence as the server computes them (« CP 2026 : −3 jours en « Planifiés » »). */
export function CounterEffects({ effects, unit, empty }: { effects: Schemas['CounterEffect'][]; unit: string | null | undefined; empty: string }) {
  if (!effects.length) return <p className="muted">{empty}</p>;
  return (
    <ul className="effects">
      {effects.map((effect) => (
        <li key={`${effect.counter}-${effect.year}-${effect.column}-${effect.direction}`}>
          <strong>{effect.counter} {effect.year}</strong> : {effect.direction === 'debit' ? '−' : '+'}
          {quantity(effect.quantity, unit)} en « {COUNTER_COLUMN[effect.column]} »
        </li>
      ))}
    </ul>
  );
}
