import { Fragment, useState, type ReactNode } from 'react';
import type { Schemas } from '../../../api/client';
import { AppLink } from '../../../components/AppLink';
import { ErrorNotice, Loading, Page } from '../../../components/ui';
import { addDays, frDate, frDayHead, frLongDate, frMonth, minutes, mondayOf, monthBounds, WEEKDAYS } from '../../../lib/format';
import { paths } from '../../../lib/paths';
import { useMyPendingAbsences, useMyPlanning } from '../api/planning';
import { PlanningLegend } from './PlanningLegend';

type Block = Schemas['PlanningBlock'];
type PendingAbsence = Schemas['Absence'];
type View = { kind: 'week'; from: string | null } | { kind: 'month'; month: string };

const PART = { morning: 'matin', afternoon: 'après-midi', day: 'journée', hours: 'heures' } as const;

/** The window asked of the server: a week (the server's current one at first) or the whole weeks covering a month. */
function windowOf(view: View): { from: string; to: string } | null {
  if (view.kind === 'week') return view.from ? { from: view.from, to: addDays(view.from, 6) } : null;
  const { first, last } = monthBounds(view.month);
  return { from: mondayOf(first), to: addDays(mondayOf(last), 6) };
}

/** What the day editor of a week's day is given: the day, its blocks, and what to do when it closes or has sent. */
export interface DayEditorProps {
  date: string;
  blocks: Block[];
  onClose(): void;
  onSent(): void;
}

/**
 * "Mon planning": my days as a grid, a week or a month at a time. In the week, each day has
 * « Modifier », which opens `dayEditor` (the day-change request form, given by the screen).
 */
export function MyPlanning({ employee, dayEditor }: { employee: number; dayEditor(props: DayEditorProps): ReactNode }) {
  const [view, setView] = useState<View>({ kind: 'week', from: null });
  const [editing, setEditing] = useState<string | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const range = windowOf(view);
  const planning = useMyPlanning(range);
  const data = planning.data;
  const pendingList = useMyPendingAbsences(employee, data ? { from: data.from, to: data.to } : range);
  const pending = new Map((pendingList.data?.results ?? []).map((absence) => [absence.id, absence]));
  const cells = new Map((data?.cells ?? []).map((cell) => [cell.date, cell.blocks]));
  // Public holidays of the window, as the team planning shows them.
  const holidays = new Map((data?.holidays ?? []).map((holiday) => [holiday.date, holiday.name]));
  const shownFrom = data?.from ?? range?.from ?? null;

  // The arrows wait for the first answer to name the period (disabled until then).
  const step = (direction: 1 | -1) => {
    if (!shownFrom) return;
    if (view.kind === 'week') setView({ kind: 'week', from: addDays(mondayOf(shownFrom), 7 * direction) });
    else {
      const first = new Date(`${view.month}T00:00:00Z`);
      first.setUTCMonth(first.getUTCMonth() + direction);
      setView({ kind: 'month', month: first.toISOString().slice(0, 10) });
    }
  };
  const month = view.kind === 'month' ? view.month : shownFrom ? `${addDays(shownFrom, 3).slice(0, 7)}-01` : null;
  const title = view.kind === 'month' ? frMonth(view.month) : shownFrom ? `Semaine du ${frDate(mondayOf(shownFrom))}` : '';

  const days: string[] = [];
  if (data) for (let day = data.from; day <= data.to; day = addDays(day, 1)) days.push(day);

  return (
    <Page
      title="Mon planning"
      actions={
        <div className="toolbar">
          <div role="group" aria-label="Affichage" className="segmented">
            <button type="button" aria-pressed={view.kind === 'week'} onClick={() => setView({ kind: 'week', from: shownFrom ? mondayOf(view.kind === 'month' ? view.month : shownFrom) : null })}>
              Semaine
            </button>
            <button type="button" aria-pressed={view.kind === 'month'} onClick={() => month && setView({ kind: 'month', month })}>
              Mois
            </button>
          </div>
          <nav className="stepper" aria-label="Période">
            <button type="button" onClick={() => step(-1)} disabled={!shownFrom} aria-label={view.kind === 'week' ? 'Semaine précédente' : 'Mois précédent'}>‹</button>
            <span aria-live="polite" className="period">{title}</span>
            <button type="button" onClick={() => step(1)} disabled={!shownFrom} aria-label={view.kind === 'week' ? 'Semaine suivante' : 'Mois suivant'}>›</button>
          </nav>
          <button type="button" onClick={() => setView({ kind: 'week', from: null })}>Cette semaine</button>
        </div>
      }
    >
      {planning.isPending && <Loading what="du planning" />}
      <ErrorNotice error={planning.error} />
      {data && (
        <>
          <PlanningLegend last={[{ swatch: 'on-call', label: 'Astreinte' }, { swatch: 'holiday', label: 'Jour férié' }]} />
          <table className={`grid ${view.kind}`}>
            <caption className="sr-only">{`Planning, ${title}`}</caption>
            <thead>
              <tr>
                {WEEKDAYS.map((weekday) => (
                  <th key={weekday} scope="col">
                    <abbr title={weekday}>{weekday.slice(0, 3)}.</abbr>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {Array.from({ length: Math.ceil(days.length / 7) }, (_, row) => (
                <tr key={days[row * 7]}>
                  {days.slice(row * 7, row * 7 + 7).map((day) => (
                    <DayCell key={day} day={day} blocks={cells.get(day) ?? []} pending={pending} holiday={holidays.get(day)}
                      outside={view.kind === 'month' && day.slice(0, 7) !== view.month.slice(0, 7)} compact={view.kind === 'month'}
                      onEdit={view.kind === 'week' ? () => { setSent(null); setEditing(day); } : undefined} />
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          {sent && <p className="notice success" role="status">{sent}</p>}
          {editing && (
            // Keyed by the day: another day starts a new form.
            <Fragment key={editing}>
              {dayEditor({
                date: editing,
                blocks: cells.get(editing) ?? [],
                onClose: () => setEditing(null),
                onSent: () => { setSent(`Demande de modification du ${frDate(editing)} envoyée : elle apparaît en attente dans le planning.`); setEditing(null); },
              })}
            </Fragment>
          )}
        </>
      )}
      <p className="muted">
        <AppLink to={paths.calendarFeeds()}>Ajouter ce planning à l’agenda de mon téléphone</AppLink>
      </p>
    </Page>
  );
}

function DayCell({ day, blocks, pending, holiday, outside, compact, onEdit }: {
  day: string; blocks: Block[]; pending: Map<number, PendingAbsence>; holiday?: string; outside: boolean; compact: boolean; onEdit?: () => void;
}) {
  const onCall = blocks.flatMap((block) => block.on_call);
  const uniqueOnCall = [...new Map(onCall.map((period) => [period.id, period])).values()];
  return (
    <td className={[outside && 'outside', holiday && 'holiday'].filter(Boolean).join(' ') || undefined}>
      <div className="day" data-date={day}>
        <span className="date" aria-hidden="true">{compact ? Number(day.slice(8)) : frDayHead(day)}</span>
        <span className="sr-only">{frLongDate(day)}</span>
        {holiday && (
          <span className="holiday-name">
            {compact ? <abbr title={`Jour férié : ${holiday}`}>Férié</abbr> : `Férié : ${holiday}`}
          </span>
        )}
        {blocks.map((block, index) => (
          <BlockView key={index} day={day} block={block} pending={pending} compact={compact} />
        ))}
        {uniqueOnCall.map((period) => (
          <span key={period.id} className="block on-call">
            {compact ? <abbr title={`Astreinte : ${period.name}`}>Astr.</abbr> : `Astreinte : ${period.name}`}
            {!compact && period.comment ? ` (${period.comment})` : ''}
          </span>
        ))}
        {onEdit && (
          <button type="button" className="day-edit" onClick={onEdit}>
            Modifier<span className="sr-only"> la journée du {frLongDate(day)}</span>
          </button>
        )}
      </div>
    </td>
  );
}

/** The part of a day a pending absence asks for (its half-day bounds on its first and last days). */
function requestedPart(absence: PendingAbsence, day: string): string {
  if (absence.start_time && absence.end_time) return `${absence.start_time}–${absence.end_time}`;
  const morning = day === absence.date_end && absence.end_half === 'morning';
  const afternoon = day === absence.date_start && absence.start_half === 'afternoon';
  return morning && !afternoon ? PART.morning : afternoon && !morning ? PART.afternoon : PART.day;
}

function BlockView({ day, block, pending: requests, compact }: { day: string; block: Block; pending: Map<number, PendingAbsence>; compact: boolean }) {
  const pending = block.pending_request;
  const pendingText = pending ? (pending.is_cancellation ? 'Annulation demandée' : 'Demande en attente') : null;
  // A day under a pending absence request shows the reason asked for, not the post planned.
  const requested = pending?.kind === 'absence' && !pending.is_cancellation ? requests.get(pending.id) : undefined;
  if (requested) {
    return (
      <span className="block absence requested pending">
        <strong>{requested.type_code}</strong>
        {!compact && <> {requested.type_name}</>} <span className="part">({requestedPart(requested, day)})</span>
        <em className="flag">{pendingText}</em>
      </span>
    );
  }
  if (block.absence) {
    const absence = block.absence;
    const part = absence.part === 'hours' ? `${absence.start_time}–${absence.end_time}` : PART[absence.part];
    return (
      <span className={`block absence part-${absence.part}${absence.status === 'cancellation_requested' ? ' cancelling' : ''}${pending ? ' pending' : ''}`}>
        <strong>{absence.type_code}</strong>
        {!compact && <> {absence.type_name}</>} <span className="part">({part})</span>
        {pendingText && <em className="flag">{pendingText}</em>}
      </span>
    );
  }
  if (block.kind === 'rest') {
    return (
      <span className={`block rest${pending ? ' pending' : ''}`}>
        Repos{pendingText && <em className="flag">{pendingText}</em>}
      </span>
    );
  }
  const options = [block.is_remote && 'télétravail', block.is_offsite && 'hors établissement'].filter(Boolean).join(', ');
  return (
    <span className={`block work${block.modified ? ' modified' : ''}${pending ? ' pending' : ''}`}>
      <strong>{block.post_code}</strong>{' '}
      {compact ? (
        // A month cell is narrow on a phone: the two times on two lines, never past the cell.
        <span className="times"><span>{block.start_time}–</span><span>{block.end_time}</span></span>
      ) : (
        <span className="nowrap">{block.start_time}–{block.end_time}</span>
      )}
      {!compact && block.minutes != null && <span className="muted nowrap"> · {minutes(block.minutes)}</span>}
      {block.modified && <em className="flag">Modifiée</em>}
      {options && <em className="flag">{options}</em>}
      {pendingText && <em className="flag">{pendingText}</em>}
    </span>
  );
}
