import { useState } from 'react';
import type { Schemas } from '../../../api/client';

/** Shown while a superuser acts as another account: who is impersonated, and the way back (`onEnd`). */
export function ImpersonationBanner({ impersonator, me, onEnd }: { impersonator: string; me: Schemas['Me']; onEnd(): Promise<void> }) {
  const [leaving, setLeaving] = useState(false);
  return (
    <aside className="impersonation" aria-label="Emprunt d’identité">
      <p>
        Vous agissez en tant que <strong>{me.display_name}</strong> ({me.username}
        {me.roles.length > 0 ? ` · ${me.roles.join(', ')}` : ''}) : identité empruntée par <strong>{impersonator}</strong>.
      </p>
      <button type="button" disabled={leaving} onClick={() => { setLeaving(true); void onEnd().finally(() => setLeaving(false)); }}>
        Reprendre mon identité
      </button>
    </aside>
  );
}
