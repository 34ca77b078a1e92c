import { useEffect, useId, useMemo, useState, type ChangeEvent, type FormEvent, type ReactNode } from 'react';
import { ApiFailure, type Schemas } from '../../../api/client';
import { CounterEffects } from '../../../components/CounterEffects';
import { ErrorNotice, FieldError, Loading, Page } from '../../../components/ui';
import { quantity } from '../../../lib/format';
import { absencePeriod } from '../../../lib/requests';
import { documentAccept, documentFormatsText, documentProblems, megabytes, useSettings } from '../../../lib/settings';
import { usePerimeterEmployees } from '../../../lib/shared-queries';
import { useAbsencePreview, useFileAbsence, useRequestableTypes, type AbsenceDraftBody } from '../api/absences';
import { OpenYears } from './OpenYears';

type AbsenceType = Schemas['RequestableAbsenceType'];
type Half = 'morning' | 'afternoon' | null;
/** The part of a one-day absence: the whole day, or one half of it. */
type DayPart = 'day' | 'morning' | 'afternoon';

interface Draft {
  type: string;
  date_start: string;
  date_end: string;
  /** One day: the whole day, the morning or the afternoon. */
  part: DayPart;
  /** Several days: the first day starts in the afternoon (its morning is worked). */
  starts_afternoon: boolean;
  /** Several days: the last day ends at noon (its afternoon is worked). */
  ends_at_noon: boolean;
  start_time: string;
  end_time: string;
  comment: string;
}

const EMPTY: Draft = {
  type: '', date_start: '', date_end: '', part: 'day', starts_afternoon: false, ends_at_noon: false, start_time: '', end_time: '', comment: '',
};

/** One day when no last day is given or the last day is the first. */
const isOneDay = (draft: Draft) => !draft.date_end || draft.date_end === draft.date_start;

/**
 * The half-days the server reads for what the controls say (CONTRACT 7): one morning is
 * morning–morning, one afternoon afternoon–afternoon; several days start in the afternoon
 * (start_half "afternoon") and end at noon (end_half "morning"); null is a whole day.
 */
function halvesOf(draft: Draft): { start_half: Half; end_half: Half } {
  if (isOneDay(draft)) {
    const half = draft.part === 'day' ? null : draft.part;
    return { start_half: half, end_half: half };
  }
  return { start_half: draft.starts_afternoon ? 'afternoon' : null, end_half: draft.ends_at_noon ? 'morning' : null };
}

/** The body the server reads for this draft and type (hours or half-days, never both). */
function bodyOf(draft: Draft, type: AbsenceType | undefined, employee: number): AbsenceDraftBody {
  const hourly = type?.unit === 'hour';
  const halves = hourly || !type?.half_day_allowed ? { start_half: null, end_half: null } : halvesOf(draft);
  return {
    employee,
    type: Number(draft.type),
    date_start: draft.date_start || undefined,
    date_end: (hourly ? draft.date_start : draft.date_end || draft.date_start) || undefined,
    ...halves,
    start_time: hourly ? draft.start_time || null : null,
    end_time: hourly ? draft.end_time || null : null,
    comment: draft.comment || null,
  };
}

/** Waits for the person to stop typing before asking the server again. */
function useSettled<T>(value: T, delay = 300): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delay);
    return () => clearTimeout(timer);
  }, [value, delay]);
  return settled;
}

/**
 * An absence request: the server's preview (quantity, counter effects, warnings, errors) follows
 * the form; documents are checked against the server's limits (GET /api/settings/) before the
 * upload. Without `declare`, the employee's own request (`employee`), then `onFiled`. With
 * `declare`, a manager declares an absence for an employee of the perimeter (picker from the
 * API's perimeter list; the server decides what the declaration may be) and the form starts again.
 */
export function AbsenceRequestForm(props: { declare?: false; employee: number; onFiled(): void } | { declare: true }) {
  const declare = props.declare === true;
  const [chosen, setChosen] = useState('');
  const employee = props.declare ? Number(chosen) || 0 : props.employee;
  const id = useId();
  const settings = useSettings();
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [files, setFiles] = useState<File[]>([]);
  const [fileErrors, setFileErrors] = useState<string[]>([]);
  const [declared, setDeclared] = useState<string | null>(null);
  const [formKey, setFormKey] = useState(0);
  const employees = usePerimeterEmployees({ enabled: declare });
  // The date judges the counters' year and the contract: a valid first day, else today.
  const types = useRequestableTypes(employee, /^\d{4}-\d{2}-\d{2}$/.test(draft.date_start) ? draft.date_start : undefined);
  const type = types.data?.results.find((candidate) => String(candidate.id) === draft.type);
  const body = useMemo(() => bodyOf(draft, type, employee), [draft, type, employee]);
  const settled = useSettled(body);
  const preview = useAbsencePreview(settled);

  const submit = useFileAbsence((record) => {
    if (!props.declare) return props.onFiled();
    // The next declaration starts from an empty form (the file input too), for the same employee.
    setDeclared(`Absence déclarée pour ${record.employee_name ?? 'le salarié'} (${absencePeriod(record)}) : ${record.status_label ?? record.status}.`);
    setDraft(EMPTY);
    setFiles([]);
    setFormKey((key) => key + 1);
  });

  // Errors under their fields: those of a refused filing, else those of the preview.
  const errors: Record<string, string[]> = submit.error instanceof ApiFailure ? submit.error.fields : preview.data?.errors ?? {};
  const changed = (patch: Partial<Draft>) => {
    setDraft((current) => ({ ...current, ...patch }));
    if (submit.error) submit.reset();
    setDeclared(null);
  };
  const set = (key: 'type' | 'date_start' | 'date_end' | 'start_time' | 'end_time' | 'comment') =>
    (event: ChangeEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>) => changed({ [key]: event.target.value });

  const chooseFiles = (event: ChangeEvent<HTMLInputElement>) => {
    const chosen = Array.from(event.target.files ?? []);
    // Before the limits are known the server alone checks (it does anyway).
    const problems = settings ? chosen.flatMap((file) => documentProblems(file, settings)) : [];
    setFileErrors(problems);
    setFiles(problems.length ? [] : chosen);
    if (problems.length) event.target.value = '';
  };

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (fileErrors.length) return;
    submit.mutate({ body, files });
  };

  const groups = useMemo(() => {
    const byCategory = new Map<string, AbsenceType[]>();
    for (const candidate of types.data?.results ?? []) {
      byCategory.set(candidate.category, [...(byCategory.get(candidate.category) ?? []), candidate]);
    }
    return [...byCategory];
  }, [types.data]);
  const unavailable = (types.data?.results ?? []).filter((candidate) => !candidate.available);

  const field = (name: string) => ({
    id: `${id}-${name}`,
    'aria-invalid': Boolean(errors[name]?.length),
    'aria-describedby': errors[name]?.length ? `${id}-${name}-error` : undefined,
  });
  const errorOf = (name: string) => <FieldError id={`${id}-${name}`} messages={errors[name]} />;
  const other = Object.entries(errors)
    .filter(([key]) => !['type', 'date_start', 'date_end', 'start_half', 'end_half', 'start_time', 'end_time', 'comment', 'add_documents', ...(declare ? ['employee'] : [])].includes(key))
    .flatMap(([, messages]) => messages);
  const hourly = type?.unit === 'hour';
  const halfDays = Boolean(type && !hourly && type.half_day_allowed);
  const oneDay = isOneDay(draft);
  // The count shown is the count of what would be sent: until the preview answers for this very
  // draft, the button waits (the person sees what is counted before sending).
  const previewCurrent = settled === body && !preview.isFetching && Boolean(preview.data || preview.error);
  const halfErrors = [...(errors.start_half ?? []), ...(errors.end_half ?? [])];

  return (
    <Page title={declare ? 'Déclarer une absence' : 'Demander une absence'}>
      {types.isPending && <Loading what="des motifs" />}
      <ErrorNotice error={types.error ?? employees.error} />
      {declared && <p className="notice success" role="status">{declared}</p>}
      <form className="request-form" onSubmit={onSubmit} noValidate aria-label={declare ? 'Déclaration d’absence' : 'Demande d’absence'} key={formKey}>
        <div className="panel fields">
          {declare && (
            <>
              <label htmlFor={`${id}-employee`}>Salarié</label>
              <select {...field('employee')} value={chosen} required
                onChange={(event) => { setChosen(event.target.value); if (submit.error) submit.reset(); setDeclared(null); }}>
                <option value="">Choisissez un salarié…</option>
                {employees.data?.results.map((candidate) => (
                  <option key={candidate.id} value={candidate.id}>{candidate.last_name} {candidate.first_name}</option>
                ))}
              </select>
              {errorOf('employee')}
            </>
          )}
          <label htmlFor={`${id}-type`}>Motif</label>
          <select {...field('type')} value={draft.type} onChange={set('type')} required disabled={!employee}>
            <option value="">{employee ? 'Choisissez un motif…' : 'Choisissez d’abord un salarié…'}</option>
            {groups.map(([category, list]) => (
              <optgroup key={category} label={category}>
                {list.map((candidate) => (
                  <option key={candidate.id} value={candidate.id} disabled={!candidate.available && String(candidate.id) !== draft.type}>
                    {candidate.name} ({candidate.code}){candidate.available ? '' : ' — indisponible'}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
          {errorOf('type')}
          {type && (
            <p className="muted hint">
              Décompté en {hourly ? 'heures' : 'jours'}
              {hourly ? '' : type.half_day_allowed ? ', demi-journées possibles' : ', par journées entières'}
              {type.documents_expected ? ' · justificatif attendu' : ''}
            </p>
          )}
          {type && !type.available && <p className="notice warning">{type.unavailable_reason}</p>}
          {unavailable.length > 0 && (
            <details className="unavailable">
              <summary>{unavailable.length === 1 ? '1 motif indisponible' : `${unavailable.length} motifs indisponibles`} : pourquoi</summary>
              <ul>
                {unavailable.map((candidate) => (
                  <li key={candidate.id}><strong>{candidate.name} ({candidate.code})</strong> : {candidate.unavailable_reason}</li>
                ))}
              </ul>
            </details>
          )}
          <OpenYears type={type} employee={employee} askEmployee={declare} />

          <div className="row">
            <div>
              <label htmlFor={`${id}-date_start`}>{hourly ? 'Date' : 'Premier jour'}</label>
              <input type="date" {...field('date_start')} value={draft.date_start} onChange={set('date_start')} required />
              {errorOf('date_start')}
            </div>
            {!hourly && (
              <div>
                <label htmlFor={`${id}-date_end`}>Dernier jour</label>
                <input type="date" {...field('date_end')} value={draft.date_end} min={draft.date_start || undefined} onChange={set('date_end')}
                  aria-describedby={errors.date_end?.length ? `${id}-date_end-error` : `${id}-date_end-hint`} />
                <p className="muted hint" id={`${id}-date_end-hint`}>Vide : une seule journée.</p>
                {errorOf('date_end')}
              </div>
            )}
          </div>

          {halfDays && oneDay && (
            <fieldset className="choices" aria-describedby={halfErrors.length ? `${id}-half-error` : undefined}>
              <legend>Cette journée</legend>
              {([
                ['day', 'Journée entière', 'compte 1 jour'],
                ['morning', 'Matin seulement', 'compte ½ jour'],
                ['afternoon', 'Après-midi seulement', 'compte ½ jour'],
              ] as const).map(([value, label, counted]) => (
                <label key={value} className="check">
                  <input type="radio" name={`${id}-part`} value={value} checked={draft.part === value}
                    onChange={() => changed({ part: value })} />
                  {label} <span className="muted">({counted})</span>
                </label>
              ))}
            </fieldset>
          )}
          {halfDays && !oneDay && (
            <fieldset className="choices" aria-describedby={halfErrors.length ? `${id}-half-error` : undefined}>
              <legend>Demi-journées</legend>
              <label className="check">
                <input type="checkbox" checked={draft.starts_afternoon} onChange={(event) => changed({ starts_afternoon: event.target.checked })} />
                Commence l’après-midi <span className="muted">(le premier jour compte ½ jour)</span>
              </label>
              <label className="check">
                <input type="checkbox" checked={draft.ends_at_noon} onChange={(event) => changed({ ends_at_noon: event.target.checked })} />
                Finit à midi <span className="muted">(le dernier jour compte ½ jour)</span>
              </label>
            </fieldset>
          )}
          {halfDays && <FieldError id={`${id}-half`} messages={halfErrors.length ? halfErrors : undefined} />}

          {hourly && (
            <div className="row">
              <div>
                <label htmlFor={`${id}-start_time`}>De</label>
                <input type="time" {...field('start_time')} value={draft.start_time} onChange={set('start_time')} />
                {errorOf('start_time')}
              </div>
              <div>
                <label htmlFor={`${id}-end_time`}>À</label>
                <input type="time" {...field('end_time')} value={draft.end_time} onChange={set('end_time')} />
                {errorOf('end_time')}
              </div>
            </div>
          )}

          <label htmlFor={`${id}-comment`}>Commentaire (facultatif)</label>
          <textarea {...field('comment')} rows={3} value={draft.comment} onChange={set('comment')} />
          {errorOf('comment')}

          <label htmlFor={`${id}-documents`}>
            {`Justificatifs${settings ? ` (${documentFormatsText(settings)}, ${megabytes(settings.document_max_bytes)} au plus chacun)` : ''}`}
          </label>
          <input type="file" id={`${id}-documents`} multiple accept={settings && documentAccept(settings)}
            onChange={chooseFiles} aria-invalid={Boolean(fileErrors.length || errors.add_documents?.length)}
            aria-describedby={fileErrors.length || errors.add_documents?.length ? `${id}-documents-error` : undefined} />
          <FieldError id={`${id}-documents`} messages={fileErrors.length ? fileErrors : errors.add_documents} />
          {files.length > 1 && <p className="muted">{files.map((file) => file.name).join(', ')}</p>}
        </div>

        <section className="panel preview" aria-labelledby={`${id}-preview`} aria-live="polite">
          <h2 id={`${id}-preview`}>Aperçu</h2>
          {!settled.type || !settled.date_start || !settled.employee ? (
            <p className="muted">Choisissez {declare ? 'un salarié, ' : ''}un motif et des dates : le décompte s’affiche ici.</p>
          ) : preview.isPending ? (
            <Loading what="du décompte" />
          ) : preview.error ? (
            <ErrorNotice error={preview.error} />
          ) : (
            preview.data && <PreviewBody preview={preview.data} />
          )}
        </section>

        <div className="send">
          {other.length > 0 && <p className="notice error" role="alert">{other.join(' ')}</p>}
          {submit.error && !(submit.error instanceof ApiFailure) && <ErrorNotice error={submit.error} />}
          <div className="actions">
            <button type="submit" className="primary" disabled={submit.isPending || !draft.type || !employee || !previewCurrent}>
              {submit.isPending ? 'Envoi…' : declare ? 'Déclarer l’absence' : 'Envoyer la demande'}
            </button>
          </div>
        </div>
      </form>
    </Page>
  );
}

function PreviewBody({ preview }: { preview: Schemas['AbsencePreview'] }): ReactNode {
  const hasErrors = Object.keys(preview.errors).length > 0;
  return (
    <>
      <p className="big">{preview.quantity == null ? '—' : quantity(preview.quantity, preview.unit)}</p>
      <CounterEffects effects={preview.counter_effects} unit={preview.unit} empty="Aucun compteur n’est touché." />
      {preview.warnings.map((warning) => (
        <p key={warning} className="notice warning">{warning}</p>
      ))}
      {hasErrors && <p className="notice error">La demande ne peut pas être envoyée en l’état : voyez les messages sous les champs.</p>}
    </>
  );
}
