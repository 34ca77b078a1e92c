import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { ApiFailure } from '../../../api/client';
import { requestToken } from '../api/auth';
import type { LoginProps } from '../session';

/** The login form; over the page (a modal dialog) when the session expired. */
export function Login({ onToken, onSend, expiredFor }: LoginProps) {
  const [username, setUsername] = useState(expiredFor ?? '');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const errorId = useId();
  const dialog = useRef<HTMLDialogElement>(null);
  const passwordInput = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (!expiredFor || !dialog.current || dialog.current.open) return;
    dialog.current.showModal();
    // The username is known: the password is what remains to type.
    passwordInput.current?.focus();
  }, [expiredFor]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    onSend?.();
    try {
      await onToken(await requestToken(username, password));
    } catch (failure) {
      setError(failure instanceof ApiFailure ? failure.message : 'Le serveur ne répond pas. Réessayez dans un instant.');
      setBusy(false);
    }
  };

  const form = (
    <form className="login" onSubmit={submit} aria-labelledby="login-title">
      <h1 id="login-title">{expiredFor ? 'Votre session a expiré' : 'Connexion'}</h1>
      {expiredFor && <p>Reconnectez-vous pour continuer : ce que vous étiez en train de saisir est conservé.</p>}
      <label htmlFor="login-username">Identifiant</label>
      <input id="login-username" name="username" autoComplete="username" required value={username}
        onChange={(e) => setUsername(e.target.value)} aria-describedby={error ? errorId : undefined} autoFocus={!expiredFor} />
      <label htmlFor="login-password">Mot de passe</label>
      <input id="login-password" ref={passwordInput} name="password" type="password" autoComplete="current-password" required value={password}
        onChange={(e) => setPassword(e.target.value)} aria-describedby={error ? errorId : undefined} />
      {error && <p className="field-error" id={errorId} role="alert">{error}</p>}
      <button type="submit" className="primary" disabled={busy}>{busy ? 'Connexion…' : 'Se connecter'}</button>
    </form>
  );

  if (expiredFor) {
    return (
      <dialog ref={dialog} className="login-dialog" aria-labelledby="login-title" onCancel={(e) => e.preventDefault()}>
        {form}
      </dialog>
    );
  }
  return (
    <main className="login-page">
      <p className="brand" aria-hidden="true">Temps &amp; absences</p>
      {form}
    </main>
  );
}
