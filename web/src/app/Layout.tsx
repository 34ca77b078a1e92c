import { useEffect, useRef, useState } from 'react';
import { matchPath, Outlet, useLocation } from 'react-router';
import { AppLink } from '../components/AppLink';
import { Loader } from '../components/Loader';
import { ImpersonationBanner } from '../features/impersonation/components/ImpersonationBanner';
import { useUnreadCount } from '../features/notifications/api/notifications';
import { useSession } from '../features/session/session';
import { patterns } from '../lib/paths';
import { useSettings } from '../lib/settings';
import type { Screen } from './screens';

/** The screen an address belongs to (its own pattern, or one of its children's). */
function screenAt(screens: Screen[], pathname: string): Screen | undefined {
  return screens.find((screen) => [screen.name, ...(screen.children ?? [])].some((name) => matchPath(patterns[name], pathname)));
}

/** The frame of every screen: skip link, header with the menu, main region. */
export function Layout({ screens }: { screens: Screen[] }) {
  const { me, logout, impersonator, endImpersonation } = useSession();
  const location = useLocation();
  const unread = useUnreadCount();
  // Read once at the start of the session: the forms that show a limit have it when they open.
  useSettings();
  const current = screenAt(screens, location.pathname);
  const main = useRef<HTMLElement>(null);
  // On a phone the menu folds behind « Menu » (styles.css); it closes when a screen opens.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [location.pathname]);

  // A change of screen moves the focus to its title, as a page load would.
  const first = useRef(true);
  useEffect(() => {
    if (!current) return;
    document.title = `${current.label} · Temps & absences`;
    if (first.current) {
      first.current = false;
      return;
    }
    // The screen's code may still be coming (loaded on demand): its title is focused when it is there.
    const area = main.current;
    if (!area) return;
    const focusTitle = () => {
      const title = area.querySelector<HTMLElement>('h1');
      title?.focus();
      return title != null;
    };
    if (focusTitle()) return;
    const observer = new MutationObserver(() => {
      if (focusTitle()) observer.disconnect();
    });
    observer.observe(area, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, [current]);

  return (
    <>
      <a className="skip" href="#contenu">Aller au contenu</a>
      {impersonator && <ImpersonationBanner impersonator={impersonator} me={me} onEnd={endImpersonation} />}
      <header className={menuOpen ? 'top open' : 'top'}
        onKeyDown={(event) => { if (event.key === 'Escape' && menuOpen) setMenuOpen(false); }}>
        <p className="brand">Temps &amp; absences</p>
        <nav aria-label="Menu principal">
          <button type="button" className="menu-toggle" aria-expanded={menuOpen} aria-controls="menu-principal"
            onClick={() => setMenuOpen((open) => !open)}>
            Menu
            {unread ? <span className="count" aria-label={`, ${unread} notification${unread > 1 ? 's' : ''} non lue${unread > 1 ? 's' : ''}`}>{unread}</span> : null}
          </button>
          <ul id="menu-principal">
            {screens.filter((screen) => screen.menu).map((screen) => (
              <li key={screen.name}>
                <AppLink to={screen.menu!} onPointerEnter={screen.prefetch} onFocus={screen.prefetch}
                  aria-current={screen === current ? 'page' : screen.name === current?.parent ? 'true' : undefined}>
                  {screen.label}
                  {screen.name === 'notifications' && unread ? (
                    <span className="count" aria-label={`, ${unread} non lue${unread > 1 ? 's' : ''}`}>{unread}</span>
                  ) : null}
                </AppLink>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span>
            <strong>{me.display_name}</strong>
            {me.roles.length > 0 ? ` · ${me.roles.join(', ')}` : ''}
          </span>
          <button type="button" onClick={logout}>Se déconnecter</button>
        </div>
      </header>
      <main id="contenu" ref={main}>
        <Loader what="de la page" resetKey={current?.name}>
          <Outlet />
        </Loader>
      </main>
    </>
  );
}
