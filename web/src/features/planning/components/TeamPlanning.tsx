import { useEffect, useId, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import type { Schemas } from '../../../api/client';
import { AppLink } from '../../../components/AppLink';
import { ExportButtons } from '../../../components/ExportButtons';
import { ErrorNotice, Loading, Page } from '../../../components/ui';
import { addDays, frLongDate, frMonth, monthBounds } from '../../../lib/format';
import { paths } from '../../../lib/paths';
import { usePerimeterEstablishments } from '../../../lib/shared-queries';
import { usePerimeterTeams, useTeamPlanning } from '../api/planning';
import { PlanningLegend } from './PlanningLegend';

type Grid = Schemas['PlanningGrid'];
type GridBlock = Grid['blocks'][number];

/** A block as its cell draws it: the grid's block with its post and reason resolved. */
interface Block extends Omit<GridBlock, 'post' | 'reason'> {
  post: Grid['posts'][number] | null;
  reason: Grid['reasons'][number] | null;
}

/** Height of an employee row in pixels (fixed: rows are virtualised by it; see .team-grid in styles.css). */
const ROW_HEIGHT = 44;
/** Rows drawn above and below the visible ones, so that a fast scroll shows no gap. */
const OVERSCAN = 8;

const PART = { morning: 'matin', afternoon: 'après-midi', day: 'journée', hours: 'heures' } as const;
const WEEKDAY_INITIALS = ['L', 'M', 'M', 'J', 'V', 'S', 'D'];

/** The month shown first: `?mois=YYYY-MM` of the address, else the browser's current month. */
function initialMonth(asked: string | null): string {
  if (asked && /^\d{4}-(0[1-9]|1[0-2])$/.test(asked)) return `${asked}-01`;
  const now = new Date();
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-01`;
}

function shiftMonth(first: string, months: number): string {
  const date = new Date(`${first}T00:00:00Z`);
  date.setUTCMonth(date.getUTCMonth() + months);
  return date.toISOString().slice(0, 10);
}

const weekdayOf = (iso: string) => (new Date(`${iso}T00:00:00Z`).getUTCDay() + 6) % 7;

/**
 * "Planning d'équipe" (accounts reading the queue of a perimeter): the perimeter's employees by
 * the days of a month, absences (half-days), modified days and pending requests drawn, weekends
 * and public holidays shaded; establishment and team filters. Rows are virtualised: only those
 * in view are in the page, so 200 employees stay fast.
 */
export function TeamPlanning() {
  const ids = { establishment: useId(), team: useId() };
  const [search, setSearch] = useSearchParams();
  const [month, setMonth] = useState(() => initialMonth(search.get('mois')));
  const [establishment, setEstablishment] = useState('');
  const [team, setTeam] = useState('');
  const { first, last } = monthBounds(month);

  // The address names the month shown (a link or a reload opens it again), without a history step per month.
  useEffect(() => {
    setSearch((current) => {
      const next = new URLSearchParams(current);
      next.set('mois', month.slice(0, 7));
      return next;
    }, { replace: true });
  }, [month, setSearch]);

  const establishments = usePerimeterEstablishments();
  const teams = usePerimeterTeams(establishment);
  const planning = useTeamPlanning(first, last, establishment, team);
  const shown = planning.data;
  const stale = planning.isPlaceholderData;

  return (
    <Page
      title="Planning d’équipe"
      actions={
        <nav className="stepper" aria-label="Mois">
          <button type="button" onClick={() => setMonth(shiftMonth(month, -1))} aria-label="Mois précédent">‹</button>
          <span aria-live="polite" className="period">{frMonth(month)}</span>
          <button type="button" onClick={() => setMonth(shiftMonth(month, 1))} aria-label="Mois suivant">›</button>
        </nav>
      }
    >
      <form className="inline-filters no-print" role="search" aria-label="Filtres du planning" onSubmit={(event) => event.preventDefault()}>
        <div>
          <label htmlFor={ids.establishment}>Établissement</label>
          <select id={ids.establishment} value={establishment}
            onChange={(event) => { setEstablishment(event.target.value); setTeam(''); }}>
            <option value="">Tout mon périmètre</option>
            {establishments.data?.results.map((item) => <option key={item.id} value={item.id}>{item.name}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor={ids.team}>Équipe</label>
          <select id={ids.team} value={team} onChange={(event) => setTeam(event.target.value)}>
            <option value="">Toutes les équipes</option>
            {teams.data?.results.map((item) => <option key={item.id} value={item.id}>{item.name}</option>)}
          </select>
        </div>
      </form>
      <div className="export-row no-print">
        <span>Grille de {frMonth(month)} :</span>
        <ExportButtons path="/api/planning/export/" what="grille du planning"
          query={{ from: first, to: last, establishment: establishment ? Number(establishment) : undefined, team: team ? Number(team) : undefined }} />
        <button type="button" onClick={() => window.print()}>Imprimer (A4 paysage)</button>
      </div>
      {establishment && (
        <div className="export-row no-print">
          <span>Compteurs {month.slice(0, 4)} de l’établissement :</span>
          <ExportButtons path="/api/counters/establishment/export/" what="compteurs"
            query={{ establishment: Number(establishment), year: Number(month.slice(0, 4)) }} />
        </div>
      )}
      <ErrorNotice error={planning.error ?? establishments.error ?? teams.error} />
      {planning.isPending && <Loading what="du planning d’équipe" />}
      {shown && (
        <>
          <PlanningLegend last={{ swatch: 'holiday', label: 'Week-end, jour férié' }} />
          <p className="muted" role="status">
            {stale
              ? 'Chargement…'
              : `${shown.employees.length} salarié${shown.employees.length > 1 ? 's' : ''}, ${frMonth(shown.from)}`}
          </p>
          {shown.employees.length === 0 ? (
            <p>Aucun salarié pour ces filtres.</p>
          ) : (
            <MonthGrid planning={shown} busy={stale} />
          )}
        </>
      )}
      <p className="muted no-print">
        <AppLink to={paths.calendarFeeds()}>Suivre les absences de mon périmètre dans mon agenda</AppLink>
      </p>
    </Page>
  );
}

/**
 * True while the page is printed (or shown as printed): the print media query, which the
 * browser turns on before it lays out the pages (window.print, « Imprimer », a PDF).
 */
function usePrinting(): boolean {
  const [printing, setPrinting] = useState(() => window.matchMedia('print').matches);
  useEffect(() => {
    const media = window.matchMedia('print');
    const onChange = () => setPrinting(media.matches);
    const before = () => setPrinting(true);
    const after = () => setPrinting(media.matches);
    media.addEventListener('change', onChange);
    window.addEventListener('beforeprint', before);
    window.addEventListener('afterprint', after);
    return () => {
      media.removeEventListener('change', onChange);
      window.removeEventListener('beforeprint', before);
      window.removeEventListener('afterprint', after);
    };
  }, []);
  return printing;
}

/**
 * The employees × days table, drawing only the rows in view of its scrolling frame; every row
 * when printed (A4 landscape, the days' heads repeated on each page: the print rules of styles.css).
 */
function MonthGrid({ planning, busy }: { planning: Grid; busy: boolean }) {
  const frame = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 600 });
  const printing = usePrinting();

  const days = useMemo(() => {
    const list: string[] = [];
    for (let day = planning.from; day <= planning.to; day = addDays(day, 1)) list.push(day);
    return list;
  }, [planning.from, planning.to]);
  const holidays = useMemo(() => new Map(planning.holidays.map((holiday) => [holiday.date, holiday.name])), [planning.holidays]);
  // Each distinct day of the grid drawn once (its blocks resolved, its words and classes): a row's
  // day is an index in this list, so 6 000 cells cost the hundred or so distinct ones.
  const cells = useMemo(() => {
    const blocks: Block[] = planning.blocks.map(({ post, reason, ...block }) => ({
      ...block,
      post: post == null ? null : planning.posts[post] ?? null,
      reason: reason == null ? null : planning.reasons[reason] ?? null,
    }));
    return planning.cells.map((cell) => drawnDay(cell.map((index) => blocks[index]!)));
  }, [planning.blocks, planning.posts, planning.reasons, planning.cells]);

  useLayoutEffect(() => {
    const element = frame.current;
    if (!element) return;
    const measure = () => setView({ top: element.scrollTop, height: element.clientHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const count = planning.employees.length;
  const start = printing ? 0 : Math.max(0, Math.floor(view.top / ROW_HEIGHT) - OVERSCAN);
  const end = printing ? count : Math.min(count, Math.ceil((view.top + view.height) / ROW_HEIGHT) + OVERSCAN);
  const dayClass = (day: string) =>
    [weekdayOf(day) >= 5 && 'weekend', holidays.has(day) && 'holiday'].filter(Boolean).join(' ') || undefined;

  return (
    <div className="team-grid" data-printing={printing || undefined} ref={frame} tabIndex={0} role="region" aria-label={`Planning d’équipe, ${frMonth(planning.from)}`}
      aria-busy={busy} onScroll={(event) => setView({ top: event.currentTarget.scrollTop, height: event.currentTarget.clientHeight })}>
      <table aria-rowcount={count + 1}>
        <caption className="sr-only">
          {`Planning d’équipe de ${frMonth(planning.from)} : ${count} salariés en lignes, les jours en colonnes.`}
        </caption>
        <thead>
          <tr aria-rowindex={1}>
            <th scope="col" className="who-col">Salarié</th>
            {days.map((day) => (
              <th key={day} scope="col" className={dayClass(day)} title={holidays.get(day) ?? undefined}>
                <span aria-hidden="true">
                  <span className="weekday">{WEEKDAY_INITIALS[weekdayOf(day)]}</span>
                  {Number(day.slice(8))}
                </span>
                <span className="sr-only">{frLongDate(day)}{holidays.has(day) ? `, ${holidays.get(day)} (férié)` : ''}</span>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {start > 0 && <tr aria-hidden="true" className="spacer" style={{ height: start * ROW_HEIGHT }} />}
          {planning.employees.slice(start, end).map((employee, index) => {
            const row = planning.rows[start + index];
            return (
              <tr key={employee.id} aria-rowindex={start + index + 2} data-employee={employee.id}>
                <th scope="row" className="who-col" title={employee.name}>{employee.name}</th>
                {days.map((day, dayIndex) => (
                  <DayCell key={day} day={day} drawn={cells[row?.[dayIndex] ?? -1] ?? EMPTY_DAY} className={dayClass(day)} />
                ))}
              </tr>
            );
          })}
          {end < count && <tr aria-hidden="true" className="spacer" style={{ height: (count - end) * ROW_HEIGHT }} />}
        </tbody>
      </table>
    </div>
  );
}


/** What a block is, in words (for the tooltip and screen readers). */
function describe(block: Block): string {
  const pending = block.pending ? block.pending === 'cancellation' ? ', annulation demandée' : ', demande en attente' : '';
  if (block.kind === 'absence' && block.reason && block.part) {
    const part = block.part === 'hours' ? `${block.start_time}–${block.end_time}` : PART[block.part];
    return `${block.reason.name} (${part})${block.status === 'cancellation_requested' ? ', annulation demandée' : ''}${pending}`;
  }
  if (block.kind === 'rest') return `Repos${block.modified ? ' (journée modifiée)' : ''}${pending}`;
  return `${block.post?.label ?? block.post?.code ?? 'Travail'} ${block.start_time}–${block.end_time}${block.modified ? ' (journée modifiée)' : ''}${pending}`;
}

function blockClass(block: Block): string {
  const classes = ['tblock', block.kind];
  if (block.kind === 'absence') classes.push(`part-${block.part}`);
  if (block.status === 'cancellation_requested') classes.push('cancelling');
  if (block.modified) classes.push('modified');
  if (block.pending) classes.push('pending');
  return classes.join(' ');
}

/** What a day's cell shows: its words (title and screen readers), whether it is two halves, its blocks' classes and texts. */
interface DrawnDay {
  text: string;
  halves: boolean;
  blocks: Array<{ className: string; label: string }>;
}

function drawnDay(blocks: Block[]): DrawnDay {
  return {
    text: blocks.map(describe).join(' ; '),
    // A half-day absence and the worked half next to it: two stacked halves, morning first.
    halves: blocks.some((block) => block.part === 'morning' || block.part === 'afternoon'),
    blocks: blocks.map((block) => ({
      className: blockClass(block),
      label: (block.kind === 'absence' ? block.reason?.code : block.kind === 'work' ? block.post?.code : '') ?? '',
    })),
  };
}

const EMPTY_DAY: DrawnDay = drawnDay([]);

function DayCell({ day, drawn, className }: { day: string; drawn: DrawnDay; className?: string }) {
  const { text, halves, blocks } = drawn;
  return (
    <td className={className} data-date={day} title={text || undefined}>
      <div className={`tcell${halves ? ' halves' : ''}`}>
        {blocks.map((block, index) => (
          <span key={index} className={block.className} aria-hidden="true">{block.label}</span>
        ))}
      </div>
      {text && <span className="sr-only">{text}</span>}
    </td>
  );
}
