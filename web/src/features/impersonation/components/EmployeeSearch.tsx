import { useDeferredValue, useId, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { ErrorNotice, Loading, Page, Pager } from '../../../components/ui';
import { deName } from '../../../lib/format';
import { useImpersonationCandidates } from '../api/impersonation';

const PAGE_SIZE = 10;

/**
 * "Emprunter une identité" (superusers, when the server allows it: /api/auth/me/ can_impersonate):
 * find an employee's account and act as it (`impersonate`, the session's). The server decides who
 * may be impersonated.
 */
export function EmployeeSearch({ impersonate }: { impersonate(account: number): Promise<void> }) {
  const searchId = useId();
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const deferredSearch = useDeferredValue(search.trim());
  const employees = useImpersonationCandidates(deferredSearch, page, PAGE_SIZE);
  const start = useMutation({ mutationFn: (account: number) => impersonate(account) });

  return (
    <Page title="Emprunter une identité">
      <p>
        Vous agirez avec les droits du compte choisi ; chaque action sera journalisée avec votre nom. Un bandeau vous
        permet de reprendre votre identité à tout moment.
      </p>
      <label htmlFor={searchId}>Rechercher un salarié</label>
      <input id={searchId} type="search" value={search} maxLength={100} autoComplete="off"
        onChange={(event) => { setSearch(event.target.value); setPage(1); }} />
      <ErrorNotice error={employees.error ?? start.error} />
      {employees.isPending && <Loading what="des salariés" />}
      {employees.data?.count === 0 && <p>Aucun salarié ne correspond.</p>}
      <ul className="cards accounts" aria-label="Salariés">
        {employees.data?.results.map((employee) => (
          <li key={employee.id} className="card">
            <div className="card-head">
              <h2>{employee.name}</h2>
              <span className="muted">{employee.main_establishment_name ?? 'Sans établissement principal'}</span>
            </div>
            {employee.account ? (
              <div className="actions">
                <span>Compte <strong>{employee.account.username}</strong>{employee.account.is_active ? '' : ' (fermé)'}</span>
                {employee.account.is_active && (
                  <button type="button" disabled={start.isPending} onClick={() => start.mutate(employee.account!.id)}>
                    Emprunter l’identité<span className="sr-only"> {deName(employee.name)}</span>
                  </button>
                )}
              </div>
            ) : (
              <p className="muted">Pas de compte.</p>
            )}
          </li>
        ))}
      </ul>
      {employees.data && (
        <Pager label="Pages des salariés" page={page} pageSize={PAGE_SIZE} count={employees.data.count} onPage={setPage} />
      )}
    </Page>
  );
}
