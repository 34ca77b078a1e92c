import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { useSession } from '../features/session/session';
import { patterns } from '../lib/paths';
import { Layout } from './Layout';
import { home, SCREENS } from './screens';

/**
 * The router: the screens this account may reach (screens.tsx) at their addresses; any other
 * address (or a screen it may not use) goes to its home screen. It lives inside the session, so
 * an address opened without one (a link from an e-mail) waits under the login and opens after it.
 */
export function App() {
  const { me } = useSession();
  const screens = SCREENS.filter((screen) => screen.shown(me));
  return (
    <BrowserRouter>
      <Routes>
        <Route element={<Layout screens={screens} />}>
          {screens.map((screen) => (
            <Route key={screen.name} path={patterns[screen.name]} element={screen.element}>
              {screen.children?.map((child) => <Route key={child} path={patterns[child]} />)}
            </Route>
          ))}
          <Route path="*" element={<Navigate to={home(screens)} replace />} />
        </Route>
      </Routes>
    </BrowserRouter>
  );
}
