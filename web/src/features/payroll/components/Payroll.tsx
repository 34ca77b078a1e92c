import { useDeferredValue, useId, useState } from 'react';
import type { Schemas } from '../../../api/client';
import { ExportButtons } from '../../../components/ExportButtons';
import { ErrorNotice, Loading, Page, Pager } from '../../../components/ui';
import { frDate, quantity } from '../../../lib/format';
import { usePayrollLines, usePayrollOptions } from '../api/payroll';

type Line = Schemas['PayrollLine'];

/** The server fixes payroll pages at 25 lines. */
const PAGE_SIZE = 25;

/** The current month as YYYY-MM, on the browser's clock (the reader picks another one at will). */
function currentMonth(): string {
  const now = new Date();
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}`;
}

const hours = (value: string) => quantity(value, 'hour');

/**
 * "Paie" (accounts holding employee.view_payroll): the payroll lines of a month, one per
 * contract, for the establishments the server authorises (payroll_options), with a search.
 */
export function Payroll() {
  const ids = { month: useId(), establishment: useId(), search: useId() };
  const [month, setMonth] = useState(currentMonth);
  const [establishment, setEstablishment] = useState('');
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const deferredSearch = useDeferredValue(search.trim());

  const options = usePayrollOptions();
  const validMonth = /^\d{4}-\d{2}$/.test(month);
  const lines = usePayrollLines({ month, establishment, search: deferredSearch, page, enabled: validMonth });
  const reset = () => setPage(1);

  return (
    <Page
      title="Éléments de paie"
      actions={validMonth && (
        <ExportButtons path="/api/payroll/export/" what="paie"
          query={{ month, establishment: establishment ? Number(establishment) : undefined, search: deferredSearch || undefined }} />
      )}
    >
      <form className="inline-filters" role="search" aria-label="Filtres de la paie" onSubmit={(event) => event.preventDefault()}>
        <div>
          <label htmlFor={ids.month}>Mois</label>
          <input id={ids.month} type="month" value={month} required
            onChange={(event) => { setMonth(event.target.value); reset(); }} />
        </div>
        <div>
          <label htmlFor={ids.establishment}>Établissement</label>
          <select id={ids.establishment} value={establishment} onChange={(event) => { setEstablishment(event.target.value); reset(); }}>
            <option value="">Tous les établissements autorisés</option>
            {options.data?.establishments.map((item) => (
              <option key={item.id} value={item.id}>{item.name}</option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor={ids.search}>Rechercher un salarié</label>
          <input id={ids.search} type="search" value={search} maxLength={100} autoComplete="off"
            onChange={(event) => { setSearch(event.target.value); reset(); }} />
        </div>
      </form>
      <ErrorNotice error={options.error ?? lines.error} />
      {!validMonth && <p className="notice warning" role="status">Choisissez un mois.</p>}
      {lines.isLoading && <Loading what="des éléments de paie" />}
      {lines.data && (
        <>
          <p className="muted" role="status">
            {lines.data.count === 0
              ? 'Aucune ligne pour ces critères.'
              : `${lines.data.count} ligne${lines.data.count > 1 ? 's' : ''} (une par contrat)`}
          </p>
          {lines.data.count > 0 && (
            <div className="table-scroll" role="region" aria-label="Lignes de paie" tabIndex={0}>
              <table className="payroll stacked">
                <thead>
                  <tr>
                    <th scope="col">Salarié</th>
                    <th scope="col">Contrat</th>
                    <th scope="col" className="num">Heures planifiées</th>
                    <th scope="col" className="num">Heures d’absence</th>
                    <th scope="col" className="num">Heures travaillées</th>
                    <th scope="col">Absences du mois</th>
                    <th scope="col">Compteurs</th>
                  </tr>
                </thead>
                <tbody>
                  {lines.data.results.map((line) => <PayrollRow key={`${line.employee}-${line.contract.id}`} line={line} />)}
                </tbody>
              </table>
            </div>
          )}
          <Pager label="Pages de la paie" page={page} pageSize={PAGE_SIZE} count={lines.data.count} onPage={setPage} />
        </>
      )}
    </Page>
  );
}

function PayrollRow({ line }: { line: Line }) {
  const { contract, period } = line;
  return (
    <tr>
      <th scope="row">
        {line.employee_name}
        <span className="sub">{line.main_establishment_name ?? 'Sans établissement principal'}</span>
      </th>
      <td data-label="Contrat">
        {contract.type_code}
        {contract.job_title ? ` · ${contract.job_title}` : ''}
        <span className="sub">du {frDate(period.start)} au {frDate(period.end)}</span>
      </td>
      <td className="num" data-label="Heures planifiées">{hours(line.planned_hours)}</td>
      <td className="num" data-label="Heures d’absence">{hours(line.absence_hours)}</td>
      <td className="num" data-label="Heures travaillées">{hours(line.worked_hours)}</td>
      <td data-label="Absences du mois">
        {line.absences.length === 0 ? (
          <span className="muted">Aucune</span>
        ) : (
          <ul className="plain">
            {line.absences.map((absence) => (
              <li key={absence.type}>
                <abbr title={absence.type_name}>{absence.type_code}</abbr> : {quantity(absence.quantity, absence.unit)}
              </li>
            ))}
          </ul>
        )}
      </td>
      <td className="counters" data-label="Compteurs (restant et année)">
        {line.counters.length === 0 ? (
          <span className="muted">Aucun</span>
        ) : (
          <ul className="plain">
            {line.counters.map((counter) => (
              <li key={counter.code}>
                <abbr title={counter.name}>{counter.code}</abbr> : {quantity(counter.remaining, counter.unit)}
                <CounterYearFacts counter={counter} year={Number(line.month.slice(0, 4))} />
              </li>
            ))}
          </ul>
        )}
      </td>
    </tr>
  );
}

type PayrollCounter = Line['counters'][number];

/**
 * The counter's year as « Mes compteurs » shows it (issue 27 point 5), from the same server figures:
 * how it acquires, still to come, carried over and until when, what the year's end carries over or loses.
 */
function CounterYearFacts({ counter, year }: { counter: PayrollCounter; year: number }) {
  const some = (value: string | null | undefined) => value != null && Number(value) > 0;
  const lines: string[] = [
    counter.acquisition === 'monthly' ? 'Acquisition mensuelle'
      : counter.acquisition === 'opening' ? 'Acquis à l’ouverture' : 'Ouvert à la main ou par import',
  ];
  if (some(counter.to_come)) lines.push(`À venir : ${quantity(counter.to_come, counter.unit)}`);
  if (some(counter.carried_over)) {
    lines.push(`Reporté de ${year - 1} : ${quantity(counter.carried_over, counter.unit)}`
      + (counter.carry_over_expires_on ? `, à prendre avant le ${frDate(counter.carry_over_expires_on)}` : '')
      + (some(counter.carry_over_expiring) ? ` (${quantity(counter.carry_over_expiring ?? '0', counter.unit)} perdus sinon)` : ''));
  }
  const end = counter.year_end;
  if (end && (some(end.carries_over) || some(end.expires))) {
    const parts = [
      some(end.carries_over) ? `${quantity(end.carries_over, counter.unit)} reportés sur ${year + 1}`
        + (end.carry_over_until ? ` jusqu’au ${frDate(end.carry_over_until)}` : '') : '',
      some(end.expires) ? `${quantity(end.expires, counter.unit)} perdus` : '',
    ].filter(Boolean);
    lines.push(`Au 31/12/${year} : ${parts.join(', ')}`);
  }
  return (
    <ul className="counter-facts">
      {lines.map((text) => <li key={text}>{text}</li>)}
    </ul>
  );
}
