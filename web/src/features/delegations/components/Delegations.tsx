import { useDeferredValue, useId, useState, type FormEvent } from 'react';
import { ApiFailure, type Schemas } from '../../../api/client';
import { AppLink } from '../../../components/AppLink';
import { ErrorNotice, FieldError, Loading, Page } from '../../../components/ui';
import { frDate } from '../../../lib/format';
import { paths } from '../../../lib/paths';
import { usePerimeterEstablishments } from '../../../lib/shared-queries';
import {
  useCreateDelegation, useDelegateCandidates, useDelegations, useEndDelegation, type Delegation, type DelegationDraft,
} from '../api/delegations';

const KINDS: Record<Delegation['kinds'], string> = {
  absences: 'les demandes d’absence',
  shift_changes: 'les demandes de modification de journée',
  both: 'les demandes d’absence et de modification de journée',
};
const EMPTY: DelegationDraft = { delegate: null, start_date: '', end_date: '', kinds: '', establishments: [], comment: '' };

/**
 * « Mon compte › Délégations »: a decider names who decides in its place while it is away
 * (a date range, all or some establishments of its perimeter, absences, day changes or both),
 * and everybody reads the delegations given and received. The server checks every rule.
 */
export function Delegations({ me }: { me: Schemas['Me'] }) {
  const decides = me.can_delegate_absences || me.can_delegate_shift_changes;
  const given = useDelegations('given');
  const received = useDelegations('received');
  return (
    <Page title="Délégations" actions={<AppLink to={paths.account()}>Retour à mon compte</AppLink>}>
      <p>
        Pendant vos congés, une personne de confiance décide à votre place : elle voit la file des demandes de votre
        périmètre et décide comme vous le feriez, jamais au-delà de vos droits. Chaque décision porte son nom « par
        délégation » du vôtre. Une délégation reçue ne se délègue pas.
      </p>
      {decides && <DelegationForm me={me} />}
      <section aria-labelledby="delegations-given">
        <h2 id="delegations-given">Délégations données</h2>
        <DelegationList query={given} empty="Vous n’avez donné aucune délégation." mine />
      </section>
      <section aria-labelledby="delegations-received">
        <h2 id="delegations-received">Délégations reçues</h2>
        <DelegationList query={received} empty="Vous n’avez reçu aucune délégation." />
      </section>
    </Page>
  );
}

function DelegationForm({ me }: { me: Schemas['Me'] }) {
  const id = useId();
  const [draft, setDraft] = useState<DelegationDraft>(EMPTY);
  const [delegateName, setDelegateName] = useState<string | null>(null);
  const [search, setSearch] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const deferred = useDeferredValue(search.trim());
  const candidates = useDelegateCandidates(deferred);
  const establishments = usePerimeterEstablishments();
  const create = useCreateDelegation((delegation) => {
    setCreated(`Délégation enregistrée : ${delegation.delegate_name ?? 'le délégataire'} décide à votre place du ${frDate(delegation.start_date)} au ${frDate(delegation.end_date)}.`);
    setDraft(EMPTY);
    setDelegateName(null);
    setSearch('');
  });
  const errors = create.error instanceof ApiFailure ? create.error.fields : {};
  const field = (name: string) => ({
    id: `${id}-${name}`,
    'aria-invalid': Boolean(errors[name]?.length),
    'aria-describedby': errors[name]?.length ? `${id}-${name}-error` : undefined,
  });
  const errorOf = (name: string) => <FieldError id={`${id}-${name}`} messages={errors[name]} />;
  const change = (patch: Partial<DelegationDraft>) => {
    setDraft((current) => ({ ...current, ...patch }));
    setCreated(null);
  };
  const kinds: Array<[Delegation['kinds'], string]> = [
    ...(me.can_delegate_absences ? [['absences', 'Absences'] as [Delegation['kinds'], string]] : []),
    ...(me.can_delegate_shift_changes ? [['shift_changes', 'Modifications de journée'] as [Delegation['kinds'], string]] : []),
    ...(me.can_delegate_absences && me.can_delegate_shift_changes ? [['both', 'Les deux'] as [Delegation['kinds'], string]] : []),
  ];
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(draft);
  };
  const other = Object.entries(errors)
    .filter(([key]) => !['delegate', 'start_date', 'end_date', 'kinds', 'establishments', 'comment'].includes(key))
    .flatMap(([, messages]) => messages);
  const people = (candidates.data?.results ?? []).filter((employee) => employee.account?.is_active && employee.account.id !== me.id);

  return (
    <form className="panel delegation-form" onSubmit={onSubmit} noValidate aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Déléguer mes décisions</h2>
      <label htmlFor={`${id}-search`}>Délégataire (rechercher par nom)</label>
      <input id={`${id}-search`} type="search" value={search} maxLength={100} autoComplete="off"
        aria-invalid={Boolean(errors.delegate?.length)} aria-describedby={errors.delegate?.length ? `${id}-delegate-error` : `${id}-chosen`}
        onChange={(event) => setSearch(event.target.value)} />
      <p id={`${id}-chosen`} className="muted" role="status">
        {delegateName ? <>Délégataire choisi : <strong>{delegateName}</strong></> : 'Aucun délégataire choisi : tapez au moins deux lettres de son nom.'}
      </p>
      {errorOf('delegate')}
      {deferred.length >= 2 && candidates.isPending && <Loading what="des personnes" />}
      {deferred.length >= 2 && candidates.data && people.length === 0 && <p className="muted">Personne ne correspond.</p>}
      {deferred.length >= 2 && people.length > 0 && (
        <ul className="cards accounts" aria-label="Personnes trouvées">
          {people.map((employee) => (
            <li key={employee.id} className="card">
              <div className="card-head">
                <h3>{employee.name}</h3>
                <span className="muted">{employee.main_establishment_name ?? 'Sans établissement principal'}</span>
              </div>
              <div className="actions">
                <button type="button" aria-pressed={draft.delegate === employee.account!.id}
                  onClick={() => { change({ delegate: employee.account!.id }); setDelegateName(employee.name); }}>
                  Choisir<span className="sr-only"> {employee.name}</span>
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}

      <div className="row">
        <div>
          <label htmlFor={`${id}-start_date`}>Du</label>
          <input type="date" {...field('start_date')} value={draft.start_date} onChange={(event) => change({ start_date: event.target.value })} required />
          {errorOf('start_date')}
        </div>
        <div>
          <label htmlFor={`${id}-end_date`}>Au (inclus)</label>
          <input type="date" {...field('end_date')} value={draft.end_date} min={draft.start_date || undefined}
            onChange={(event) => change({ end_date: event.target.value })} required />
          {errorOf('end_date')}
        </div>
      </div>

      <fieldset aria-invalid={Boolean(errors.kinds?.length)} aria-describedby={errors.kinds?.length ? `${id}-kinds-error` : undefined}>
        <legend>Décisions déléguées</legend>
        {kinds.map(([value, label]) => (
          <label key={value} className="check">
            <input type="radio" name={`${id}-kinds`} value={value} checked={draft.kinds === value} onChange={() => change({ kinds: value })} />
            {label}
          </label>
        ))}
        {errorOf('kinds')}
      </fieldset>

      <fieldset aria-invalid={Boolean(errors.establishments?.length)}
        aria-describedby={errors.establishments?.length ? `${id}-establishments-error` : `${id}-establishments-hint`}>
        <legend>Établissements</legend>
        <p id={`${id}-establishments-hint`} className="muted">Aucun coché : tout votre périmètre.</p>
        <ErrorNotice error={establishments.error} />
        {establishments.data?.results.map((establishment) => (
          <label key={establishment.id} className="check">
            <input type="checkbox" checked={draft.establishments.includes(establishment.id)}
              onChange={(event) => change({
                establishments: event.target.checked
                  ? [...draft.establishments, establishment.id]
                  : draft.establishments.filter((x) => x !== establishment.id),
              })} />
            {establishment.name}
          </label>
        ))}
        {errorOf('establishments')}
      </fieldset>

      <label htmlFor={`${id}-comment`}>Commentaire (facultatif)</label>
      <textarea {...field('comment')} rows={2} value={draft.comment} onChange={(event) => change({ comment: event.target.value })} />
      {errorOf('comment')}

      {other.length > 0 && <p className="notice error" role="alert">{other.join(' ')}</p>}
      {create.error && !(create.error instanceof ApiFailure) && <ErrorNotice error={create.error} />}
      {created && <p className="notice success" role="status">{created}</p>}
      <div className="actions">
        <button type="submit" disabled={create.isPending}>Déléguer</button>
      </div>
    </form>
  );
}

function DelegationList({ query, empty, mine = false }: {
  query: ReturnType<typeof useDelegations>;
  empty: string;
  mine?: boolean;
}) {
  const end = useEndDelegation();
  if (query.isPending) return <Loading what="des délégations" />;
  if (query.error) return <ErrorNotice error={query.error} />;
  if (!query.data.results.length) return <p className="muted">{empty}</p>;
  return (
    <>
      <ErrorNotice error={end.error} />
      <ul className="cards">
        {query.data.results.map((delegation) => {
          const state = delegation.is_over ? 'Terminée' : delegation.is_active ? 'En cours' : 'À venir';
          return (
            <li key={delegation.id} className="card" aria-labelledby={`delegation-${delegation.id}`}>
              <div className="card-head">
                <h3 id={`delegation-${delegation.id}`}>
                  {mine ? `À ${delegation.delegate_name ?? 'un compte'}` : `De ${delegation.delegator_name ?? 'un compte'}`}
                </h3>
                <span className="badge">{state}</span>
              </div>
              <p>
                Du <time dateTime={delegation.start_date}>{frDate(delegation.start_date)}</time> au{' '}
                <time dateTime={delegation.end_date}>{frDate(delegation.end_date)}</time> : {KINDS[delegation.kinds]},{' '}
                {delegation.all_establishments ? 'tout le périmètre' : delegation.establishment_names.join(', ')}.
              </p>
              {delegation.created_by != null && delegation.created_by !== delegation.delegator && (
                <p className="muted">Créée par {delegation.created_by_name}.</p>
              )}
              {delegation.ended_at && <p className="muted">Terminée plus tôt par {delegation.ended_by_name ?? 'un compte'}.</p>}
              {delegation.comment && <p className="muted">{delegation.comment}</p>}
              {mine && !delegation.is_over && (
                <div className="actions">
                  <button type="button" disabled={end.isPending} onClick={() => end.mutate(delegation.id)} aria-describedby={`delegation-${delegation.id}`}>
                    Mettre fin maintenant
                  </button>
                </div>
              )}
            </li>
          );
        })}
      </ul>
    </>
  );
}
