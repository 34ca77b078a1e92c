import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { bindSession, type Schemas } from '../../api/client';
import { endImpersonationOnServer, fetchMe, startImpersonation } from './api/auth';

export type Me = Schemas['Me'];

interface Session {
  me: Me;
  /** Logs out: forgets the token and every cached answer. */
  logout(): void;
  /** Set while a superuser speaks for another account: who they are (their own username). */
  impersonator: string | null;
  /** Speaks for another account (superuser, ALLOW_IMPERSONATION): its token replaces ours, the cache is cleared. */
  impersonate(account: number): Promise<void>;
  /** Takes back the superuser's own token; the cache is cleared again. */
  endImpersonation(): Promise<void>;
}

const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

const STORAGE_KEY = 'wfm.token';
/** While impersonating: the superuser's own token and username, to come back to (the tab's sessionStorage). */
const IMPERSONATOR_KEY = 'wfm.impersonator';

interface Impersonator {
  token: string;
  username: string;
  /** The superuser's name (the header's display_name), for the banner. */
  name?: string;
}

function readImpersonator(): Impersonator | null {
  try {
    const value = JSON.parse(sessionStorage.getItem(IMPERSONATOR_KEY) ?? 'null') as Impersonator | null;
    return value && typeof value.token === 'string' && typeof value.username === 'string' ? value : null;
  } catch {
    return null;
  }
}

type State =
  | { phase: 'loading'; token: string }
  | { phase: 'anonymous' }
  | { phase: 'in'; token: string; me: Me; expired: boolean };

/**
 * Holds the token (kept for the tab in sessionStorage) and the account it opens. Logging in and
 * out clears the data cache (SPEC, Authentication rule 5). When the server refuses the token
 * (6 hours have passed), the login comes back over the page, which stays mounted and keeps what
 * was being typed; logging in again as the same account resumes it and refetches every answer
 * (another account starts from an empty cache).
 */
export function SessionProvider({ login, prepare, children }: {
  login: (props: LoginProps) => ReactNode;
  /** Called when a session is likely (a token kept by the tab, a login being sent): the app's code can start loading. */
  prepare?: () => void;
  children: ReactNode;
}) {
  const queryClient = useQueryClient();
  const [state, setState] = useState<State>(() => {
    const token = sessionStorage.getItem(STORAGE_KEY);
    return token ? { phase: 'loading', token } : { phase: 'anonymous' };
  });

  const expire = useCallback(() => {
    if (readImpersonator()) {
      // An impersonation token is not renewed by a login (the superuser has no password for the
      // account): its expiry ends the whole session.
      sessionStorage.removeItem(STORAGE_KEY);
      sessionStorage.removeItem(IMPERSONATOR_KEY);
      queryClient.clear();
      setState({ phase: 'anonymous' });
      return;
    }
    setState((current) => (current.phase === 'in' ? { ...current, expired: true } : { phase: 'anonymous' }));
  }, [queryClient]);

  const token = state.phase === 'anonymous' ? null : state.token;
  const expired = state.phase === 'in' && state.expired;
  // The client presents no token while the login is shown again: nothing is sent in vain.
  bindSession(expired ? null : token, expire);

  useEffect(() => {
    if (state.phase !== 'loading') return;
    prepare?.();
    let live = true;
    fetchMe().then(
      (me) => live && setState({ phase: 'in', token: state.token, me, expired: false }),
      () => {
        if (!live) return;
        sessionStorage.removeItem(STORAGE_KEY);
        setState({ phase: 'anonymous' });
      },
    );
    return () => {
      live = false;
    };
  }, [state, prepare]);

  const signIn = useCallback(
    async (newToken: string) => {
      bindSession(newToken, expire);
      const me = await fetchMe();
      sessionStorage.setItem(STORAGE_KEY, newToken);
      sessionStorage.removeItem(IMPERSONATOR_KEY);
      setState((current) => {
        if (current.phase === 'in' && current.me.id === me.id) {
          // Same account after an expiry: the page stays as it was (forms keep what was typed)
          // and every answer is fetched again with the new token. Another account: all goes.
          void queryClient.invalidateQueries();
        } else {
          queryClient.clear();
        }
        return { phase: 'in', token: newToken, me, expired: false };
      });
    },
    [expire, queryClient],
  );

  const logout = useCallback(() => {
    sessionStorage.removeItem(STORAGE_KEY);
    sessionStorage.removeItem(IMPERSONATOR_KEY);
    queryClient.clear();
    setState({ phase: 'anonymous' });
    history.replaceState(null, '', '/');
  }, [queryClient]);

  /** Changes of account inside a session (impersonation and its end): new token, empty cache, home screen. */
  const switchAccount = useCallback(
    async (newToken: string, impersonator: Impersonator | null) => {
      bindSession(newToken, expire);
      const me = await fetchMe();
      sessionStorage.setItem(STORAGE_KEY, newToken);
      if (impersonator) sessionStorage.setItem(IMPERSONATOR_KEY, JSON.stringify(impersonator));
      else sessionStorage.removeItem(IMPERSONATOR_KEY);
      queryClient.clear();
      history.replaceState(null, '', '/');
      setState({ phase: 'in', token: newToken, me, expired: false });
    },
    [expire, queryClient],
  );

  const impersonate = useCallback(
    async (account: number) => {
      if (state.phase !== 'in') return;
      await switchAccount(await startImpersonation(account), { token: state.token, username: state.me.username, name: state.me.display_name });
    },
    [state, switchAccount],
  );

  const endImpersonation = useCallback(async () => {
    const impersonator = readImpersonator();
    if (!impersonator) return;
    // The end is audited by the server; an error there (an expired impersonation token) does
    // not keep the superuser in the borrowed identity.
    await endImpersonationOnServer().catch(() => undefined);
    try {
      await switchAccount(impersonator.token, null);
    } catch {
      // The superuser's own token has expired meanwhile: they log in again.
      logout();
    }
  }, [switchAccount, logout]);

  const session = useMemo(
    () => (state.phase === 'in'
      ? { me: state.me, logout, impersonator: (readImpersonator()?.name ?? readImpersonator()?.username) ?? null, impersonate, endImpersonation }
      : null),
    [state, logout, impersonate, endImpersonation],
  );

  if (state.phase === 'loading') return <p className="splash" role="status">Chargement…</p>;
  if (state.phase === 'anonymous' || !session) return <>{login({ onToken: signIn, onSend: prepare, expiredFor: null })}</>;
  return (
    <SessionContext.Provider value={session}>
      {/* The page stays mounted under the login (inert): what was typed is kept. */}
      <div inert={expired} key={state.me.id}>
        {children}
      </div>
      {expired && login({ onToken: signIn, onSend: prepare, expiredFor: state.me.username })}
    </SessionContext.Provider>
  );
}

export interface LoginProps {
  onToken(token: string): Promise<void>;
  /** Called as the form is sent, before the server has checked the password. */
  onSend?: () => void;
  /** Set when the token expired: the username whose session is resumed. */
  expiredFor: string | null;
}

