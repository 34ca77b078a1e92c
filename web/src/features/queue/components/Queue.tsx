import { useEffect, useId, useRef, useState, type ChangeEvent } from 'react';
import { ExportButtons } from '../../../components/ExportButtons';
import { ErrorNotice, Loading, Page, Pager } from '../../../components/ui';
import { deName, frDate, frDateTime, minutes, quantity } from '../../../lib/format';
import { ABSENCE_STATUS, absencePeriod, SHIFT_STATUS } from '../../../lib/requests';
import { usePerimeterEmployees, usePerimeterEstablishments } from '../../../lib/shared-queries';
import { queueQuery, useQueueAbsences, useQueueDayChanges, type PanelItem, type QueueFilters, type QueueItem } from '../api/queue';
import { DecisionPanel } from './DecisionPanel';

const PAGE_SIZE = 10;

type AbsenceStatus = keyof typeof ABSENCE_STATUS;
type ShiftStatus = keyof typeof SHIFT_STATUS;

const INITIAL: QueueFilters = { kind: 'absence', status: 'pending', establishment: '', employee: '', from: '', to: '' };

/**
 * "File des demandes": absence and day-change requests of the reader's perimeter (the API's
 * lists filter it), 10 a page, with filters; a row asks to open the decision panel (`onOpen`).
 * The open item comes from the screen's address (`open`): the panel opened from a link shows
 * the list of its kind behind it; `onClose` leaves it.
 */
export function Queue({ open, onOpen, onClose }: { open: PanelItem | null; onOpen(item: QueueItem): void; onClose(): void }) {
  const id = useId();
  const [filters, setFilters] = useState<QueueFilters>(() => ({ ...INITIAL, kind: open?.kind ?? INITIAL.kind }));
  const [page, setPage] = useState(1);
  const [decided, setDecided] = useState<string | null>(null);
  const openers = useRef(new Map<string, HTMLButtonElement>());
  // Where the focus goes when the panel closes: the row that opened it (or, opened by its address, its row if shown).
  const returnFocus = useRef<string | null>(open ? `${open.kind}-${open.id}` : null);

  const establishments = usePerimeterEstablishments();
  const employees = usePerimeterEmployees();

  const absences = useQueueAbsences(filters, page, PAGE_SIZE);
  const shifts = useQueueDayChanges(filters, page, PAGE_SIZE);
  const list = filters.kind === 'absence' ? absences : shifts;
  const count = list.data?.count ?? 0;
  const pages = Math.max(1, Math.ceil(count / PAGE_SIZE));

  // A page emptied by decisions (or by a narrower filter) steps back to the last page.
  useEffect(() => {
    if (list.data && page > pages) setPage(pages);
  }, [list.data, page, pages]);

  // When the panel closes, the focus goes back to the row that opened it, or to the title.
  useEffect(() => {
    if (open || returnFocus.current == null) return;
    const opener = openers.current.get(returnFocus.current);
    returnFocus.current = null;
    if (opener?.isConnected) opener.focus();
    else document.querySelector<HTMLElement>('main h1')?.focus();
  }, [open, list.data]);

  const set = (key: keyof QueueFilters) => (event: ChangeEvent<HTMLInputElement | HTMLSelectElement>) => {
    const value = event.target.value;
    setFilters((current) => {
      const next = { ...current, [key]: value } as QueueFilters;
      // The statuses of a day change are fewer: an absence-only status goes back to "pending".
      if (key === 'kind' && value === 'shift_change' && !(next.status in SHIFT_STATUS) && next.status) next.status = 'pending';
      return next;
    });
    setPage(1);
    setDecided(null);
  };
  const openItem = (item: QueueItem) => {
    returnFocus.current = `${item.kind}-${item.id}`;
    setDecided(null);
    onOpen(item);
  };
  const opener = (item: QueueItem, description: string) => (
    <button type="button" ref={(element) => { if (element) openers.current.set(`${item.kind}-${item.id}`, element); else openers.current.delete(`${item.kind}-${item.id}`); }}
      onClick={() => openItem(item)}>
      Examiner<span className="sr-only"> {description}</span>
    </button>
  );
  const statuses: Record<string, string> = filters.kind === 'absence' ? ABSENCE_STATUS : SHIFT_STATUS;
  const kindLabel = filters.kind === 'absence' ? 'Demandes d’absence' : 'Demandes de modification de journée';
  // The export takes the list's filters, without paging.
  const { page: _page, page_size: _pageSize, ...listFilters } = queueQuery(filters, page, PAGE_SIZE);
  const exportStatus = filters.status || undefined;

  return (
    <Page
      title="File des demandes"
      actions={filters.kind === 'absence' ? (
        <ExportButtons path="/api/absences/export/" what="absences"
          query={{ ...listFilters, status: exportStatus as AbsenceStatus | undefined }} />
      ) : (
        <ExportButtons path="/api/shift-change-requests/export/" what="modifications de journée"
          query={{ ...listFilters, status: exportStatus as ShiftStatus | undefined }} />
      )}
    >
      <form className="panel filters" role="search" aria-label="Filtres de la file" onSubmit={(event) => event.preventDefault()}>
        <div className="row">
          <div>
            <label htmlFor={`${id}-kind`}>Type de demande</label>
            <select id={`${id}-kind`} value={filters.kind} onChange={set('kind')}>
              <option value="absence">Absences</option>
              <option value="shift_change">Modifications de journée</option>
            </select>
          </div>
          <div>
            <label htmlFor={`${id}-status`}>Statut</label>
            <select id={`${id}-status`} value={filters.status} onChange={set('status')}>
              <option value="">Tous</option>
              {Object.entries(statuses).map(([value, label]) => <option key={value} value={value}>{label}</option>)}
            </select>
          </div>
          <div>
            <label htmlFor={`${id}-establishment`}>Établissement</label>
            <select id={`${id}-establishment`} value={filters.establishment} onChange={set('establishment')}>
              <option value="">Tous</option>
              {establishments.data?.results.map((establishment) => (
                <option key={establishment.id} value={establishment.id}>{establishment.name}</option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor={`${id}-employee`}>Salarié</label>
            <select id={`${id}-employee`} value={filters.employee} onChange={set('employee')}>
              <option value="">Tous</option>
              {employees.data?.results.map((employee) => (
                <option key={employee.id} value={employee.id}>{employee.last_name} {employee.first_name}</option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor={`${id}-from`}>Du</label>
            <input id={`${id}-from`} type="date" value={filters.from} onChange={set('from')} />
          </div>
          <div>
            <label htmlFor={`${id}-to`}>Au</label>
            <input id={`${id}-to`} type="date" value={filters.to} min={filters.from || undefined} onChange={set('to')} />
          </div>
        </div>
        <div className="actions">
          <button type="button" onClick={() => { setFilters(INITIAL); setPage(1); setDecided(null); }}>Réinitialiser les filtres</button>
        </div>
      </form>

      {decided && <p className="notice success" role="status">{decided}</p>}
      <ErrorNotice error={establishments.error ?? employees.error ?? list.error} />
      {list.isPending && <Loading what="de la file" />}

      {list.data && (
        <div className="table-wrap">
          <table className="queue" aria-busy={list.isPlaceholderData}>
            <caption>
              {kindLabel} : {count} résultat{count > 1 ? 's' : ''}{pages > 1 ? `, page ${Math.min(list.data.page, pages)} sur ${pages}` : ''}
            </caption>
            {filters.kind === 'absence' ? (
              <>
                <thead>
                  <tr>
                    <th scope="col">Salarié</th><th scope="col">Motif</th><th scope="col">Période</th><th scope="col">Décompte</th>
                    <th scope="col">Statut</th><th scope="col">Déposée le</th><th scope="col"><span className="sr-only">Action</span></th>
                  </tr>
                </thead>
                <tbody>
                  {absences.data?.results.map((absence) => (
                    <tr key={absence.id} className={`status-${absence.status}`}>
                      <th scope="row" data-label="Salarié">
                        {absence.employee_name}
                        {absence.by_delegation_of && <span className="delegation-mark">par délégation de {absence.by_delegation_of}</span>}
                      </th>
                      <td data-label="Motif">{absence.type_name} <span className="code">{absence.type_code}</span></td>
                      <td data-label="Période">{absencePeriod(absence)}</td>
                      <td data-label="Décompte">{quantity(absence.counted_quantity, absence.counted_unit)}</td>
                      <td data-label="Statut"><span className="badge">{absence.status_label ?? ABSENCE_STATUS[absence.status]}</span></td>
                      <td data-label="Déposée le">{absence.submitted_at ? frDateTime(absence.submitted_at) : 'déclarée'}</td>
                      <td>{opener({ kind: 'absence', id: absence.id }, `la demande ${deName(absence.employee_name ?? '')}, ${absence.type_name}, ${absencePeriod(absence)}`)}</td>
                    </tr>
                  ))}
                </tbody>
              </>
            ) : (
              <>
                <thead>
                  <tr>
                    <th scope="col">Salarié</th><th scope="col">Journée</th><th scope="col">Prévu → demandé</th>
                    <th scope="col">Statut</th><th scope="col">Déposée le</th><th scope="col"><span className="sr-only">Action</span></th>
                  </tr>
                </thead>
                <tbody>
                  {shifts.data?.results.map((request) => (
                    <tr key={request.id} className={`status-${request.status}`}>
                      <th scope="row" data-label="Salarié">
                        {request.employee_name}
                        {request.by_delegation_of && <span className="delegation-mark">par délégation de {request.by_delegation_of}</span>}
                      </th>
                      <td data-label="Journée">{frDate(request.date)}</td>
                      <td data-label="Prévu → demandé">{minutes(request.planned_minutes)} → {minutes(request.requested_minutes)}{request.is_remote ? ' · télétravail' : ''}</td>
                      <td data-label="Statut"><span className="badge">{SHIFT_STATUS[request.status]}</span></td>
                      <td data-label="Déposée le">{frDateTime(request.created_at)}</td>
                      <td>{opener({ kind: 'shift_change', id: request.id }, `la modification de journée ${deName(request.employee_name ?? '')} du ${frDate(request.date)}`)}</td>
                    </tr>
                  ))}
                </tbody>
              </>
            )}
          </table>
          {count === 0 && <p className="muted">Aucune demande ne correspond à ces filtres.</p>}
        </div>
      )}
      {list.data && <Pager label="Pages de la file" page={Math.min(page, pages)} pageSize={PAGE_SIZE} count={count} onPage={setPage} />}

      {open && (
        <DecisionPanel
          key={`${open.kind}-${open.id}`}
          item={open}
          onClose={onClose}
          onDecided={(message) => {
            setDecided(message);
            onClose();
          }}
        />
      )}
    </Page>
  );
}
