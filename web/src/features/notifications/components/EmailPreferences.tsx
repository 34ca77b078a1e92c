import { useEffect, useId, useState, type FormEvent } from 'react';
import { ApiFailure, type FieldErrors } from '../../../api/client';
import { ErrorNotice, FieldError, Loading } from '../../../components/ui';
import { useEmailPreferences, useSaveEmailPreferences, type EmailPreferences } from '../api/notifications';

type Choice = Omit<EmailPreferences, 'email'>;
type Kind = 'own' | 'decide' | 'planning';
type Mode = Choice[Kind];

const KINDS: { kind: Kind; legend: string; hint: string }[] = [
  { kind: 'own', legend: 'Mes demandes', hint: 'Les décisions sur vos demandes, les relances de justificatifs, votre compte.' },
  { kind: 'decide', legend: 'Demandes à décider', hint: 'Les demandes de votre périmètre qui attendent une décision ou un suivi.' },
  { kind: 'planning', legend: 'Planning', hint: 'Les alertes du planning : un événement qui chevauche une absence.' },
];
const MODES: [Mode, string][] = [
  ['immediate', 'Tout de suite'],
  ['digest', 'Un résumé par jour'],
  ['never', 'Jamais'],
];
const HOURS = Array.from({ length: 24 }, (_, hour) => hour);

/**
 * « Mon compte › E-mails »: per kind of notification, at once, a daily digest at an hour the
 * account picks, or never. `decider` shows the kind « Demandes à décider » (kept as it is otherwise).
 */
export function EmailPreferencesForm({ decider }: { decider: boolean }) {
  const id = useId();
  const stored = useEmailPreferences();
  const save = useSaveEmailPreferences();
  const [choice, setChoice] = useState<Choice | null>(null);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    if (stored.data && !choice) {
      const { email: _email, ...rest } = stored.data;
      setChoice(rest);
    }
  }, [stored.data, choice]);

  if (stored.isPending) return <Loading what="de vos préférences d’e-mail" />;
  if (stored.error || !choice) return <ErrorNotice error={stored.error} />;

  const errors: FieldErrors = save.error instanceof ApiFailure ? save.error.fields : {};
  const described = (field: string) => (errors[field] ? { 'aria-describedby': `${id}-${field}-error`, 'aria-invalid': true } : {});
  const change = (next: Partial<Choice>) => {
    setChoice({ ...choice, ...next });
    setSaved(false);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(choice, { onSuccess: () => setSaved(true) });
  };
  const email = stored.data?.email;

  return (
    <form className="email-preferences" onSubmit={submit} noValidate aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>E-mails</h2>
      {email ? (
        <p>
          Chaque notification vous est aussi envoyée à <strong>{email}</strong>, avec un lien qui ouvre la demande. Le
          type d’absence, les motifs, les commentaires et les justificatifs ne partent jamais par e-mail.
        </p>
      ) : (
        <p className="notice warning">
          Votre fiche salarié n’a pas d’adresse e-mail professionnelle : aucun e-mail ne vous est envoyé. Vos choix
          s’appliqueront dès qu’une adresse y sera enregistrée.
        </p>
      )}
      {KINDS.filter(({ kind }) => kind !== 'decide' || decider).map(({ kind, legend, hint }) => (
        <fieldset key={kind} className="choices" aria-describedby={errors[kind] ? `${id}-${kind}-error` : undefined}>
          <legend>{legend}</legend>
          <p className="muted">{hint}</p>
          {MODES.map(([mode, label]) => (
            <label key={mode} className="check">
              <input type="radio" name={`${id}-${kind}`} value={mode} checked={choice[kind] === mode}
                onChange={() => change({ [kind]: mode } as Partial<Choice>)} /> {label}
            </label>
          ))}
          <FieldError id={`${id}-${kind}`} messages={errors[kind]} />
        </fieldset>
      ))}
      <label htmlFor={`${id}-digest_hour`}>Heure du résumé quotidien (heure de Paris)</label>
      <select id={`${id}-digest_hour`} value={choice.digest_hour}
        onChange={(event) => change({ digest_hour: Number(event.target.value) })} {...described('digest_hour')}>
        {HOURS.map((hour) => <option key={hour} value={hour}>{`${hour} h`}</option>)}
      </select>
      <FieldError id={`${id}-digest_hour`} messages={errors.digest_hour} />
      {errors.non_field_errors && <p className="notice error" role="alert">{errors.non_field_errors.join(' ')}</p>}
      {save.error && !(save.error instanceof ApiFailure) && <ErrorNotice error={save.error} />}
      {saved && <p className="notice success" role="status">Vos préférences d’e-mail sont enregistrées.</p>}
      <div className="actions">
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? 'Enregistrement…' : 'Enregistrer mes préférences d’e-mail'}
        </button>
      </div>
    </form>
  );
}
