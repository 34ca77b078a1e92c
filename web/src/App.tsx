import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Link, useLocation } from './router';
import { useSession, type Me } from './session';
import { Account } from './pages/Account';
import { AbsenceRequest } from './pages/AbsenceRequest';
import { Counters } from './pages/Counters';
import { Planning } from './pages/Planning';
import { MyRequests } from './pages/MyRequests';
import { Notifications, useUnreadCount } from './pages/Notifications';
import { Queue } from './pages/Queue';
import { TeamPlanning } from './pages/TeamPlanning';
import { Payroll } from './pages/Payroll';
import { Impersonate } from './pages/Impersonate';
import { CalendarFeeds } from './pages/CalendarFeeds';

interface Screen {
  path: string;
  label: string;
  render(): ReactNode;
  /** Reachable by this account. */
  shown(me: Me): boolean;
  /** Reached from another screen, not from the menu (its menu entry is that screen's). */
  parent?: string;
}

const hasEmployee = (me: Me) => me.employee_id != null;

const SCREENS: Screen[] = [
  { path: '/planning', label: 'Mon planning', render: () => <Planning />, shown: hasEmployee },
  { path: '/demandes', label: 'Mes demandes', render: () => <MyRequests />, shown: hasEmployee },
  { path: '/absences/nouvelle', label: 'Demander une absence', render: () => <AbsenceRequest />, shown: hasEmployee },
  { path: '/compteurs', label: 'Mes compteurs', render: () => <Counters />, shown: hasEmployee },
  // Manager screens: shown from the API's hints (the server refuses anyway).
  { path: '/file', label: 'File des demandes', render: () => <Queue />, shown: (me) => me.can_view_absence_queue },
  { path: '/absences/declarer', label: 'Déclarer une absence', render: () => <AbsenceRequest declare />, shown: (me) => me.can_decide_absences },
  { path: '/equipe', label: 'Planning d’équipe', render: () => <TeamPlanning />, shown: (me) => me.can_view_absence_queue },
  { path: '/paie', label: 'Paie', render: () => <Payroll />, shown: (me) => me.can_view_payroll },
  { path: '/notifications', label: 'Notifications', render: () => <Notifications />, shown: () => true },
  { path: '/compte', label: 'Mon compte', render: () => <Account />, shown: () => true },
  { path: '/compte/agendas', label: 'Agendas', render: () => <CalendarFeeds />, shown: () => true, parent: '/compte' },
  { path: '/emprunt', label: 'Emprunter une identité', render: () => <Impersonate />, shown: (me) => me.can_impersonate },
];

function home(me: Me): string {
  return (SCREENS.find((screen) => screen.shown(me)) ?? SCREENS[SCREENS.length - 1]!).path;
}

/** The frame of every screen: skip link, header with the menu, main region. */
export function App() {
  const { me, logout, impersonator } = useSession();
  const location = useLocation();
  const unread = useUnreadCount();
  const screen = SCREENS.find((candidate) => candidate.path === location.pathname && candidate.shown(me));
  const main = useRef<HTMLElement>(null);

  useEffect(() => {
    if (!screen) history.replaceState(null, '', home(me));
  }, [screen, me]);
  const current = screen ?? SCREENS.find((candidate) => candidate.path === home(me))!;

  // A change of screen moves the focus to its title, as a page load would.
  const first = useRef(true);
  useEffect(() => {
    document.title = `${current.label} · Temps & absences`;
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [current]);

  return (
    <>
      <a className="skip" href="#contenu">Aller au contenu</a>
      {impersonator && <ImpersonationBanner impersonator={impersonator} me={me} />}
      <header className="top">
        <p className="brand">Temps &amp; absences</p>
        <nav aria-label="Menu principal">
          <ul>
            {SCREENS.filter((candidate) => candidate.shown(me) && !candidate.parent).map((candidate) => (
              <li key={candidate.path}>
                <Link href={candidate.path}
                  aria-current={candidate === current ? 'page' : candidate.path === current.parent ? 'true' : undefined}>
                  {candidate.label}
                  {candidate.path === '/notifications' && unread ? (
                    <span className="count" aria-label={`, ${unread} non lue${unread > 1 ? 's' : ''}`}>{unread}</span>
                  ) : null}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span>
            {me.username}
            {me.role ? ` · ${me.role}` : ''}
          </span>
          <button type="button" onClick={logout}>Se déconnecter</button>
        </div>
      </header>
      <main id="contenu" ref={main}>
        {current.render()}
      </main>
    </>
  );
}

/** Shown while a superuser acts as another account: who is impersonated, and the way back. */
function ImpersonationBanner({ impersonator, me }: { impersonator: string; me: Me }) {
  const { endImpersonation } = useSession();
  const [leaving, setLeaving] = useState(false);
  return (
    <aside className="impersonation" aria-label="Emprunt d’identité">
      <p>
        Vous agissez en tant que <strong>{me.username}</strong>
        {me.role ? ` (${me.role})` : ''} : identité empruntée par <strong>{impersonator}</strong>.
      </p>
      <button type="button" disabled={leaving} onClick={() => { setLeaving(true); void endImpersonation().finally(() => setLeaving(false)); }}>
        Reprendre mon identité
      </button>
    </aside>
  );
}
