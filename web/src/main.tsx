import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { ApiFailure } from './api/client';
import { Loader, onDemand } from './components/Loader';
import { Login } from './features/session/components/Login';
import { SessionProvider } from './features/session/session';
import './styles.css';

// The login needs neither the router nor any screen: the app (router, menu, table of screens) is a
// file of its own, fetched as soon as a session is likely (a token kept by the tab, a login sent)
// while the server answers; each screen's code comes when it is opened (app/screens.tsx).
const app = onDemand(() => import('./app/App'));
const App = app.component((module) => module.App);

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      refetchOnWindowFocus: false,
      // A refusal is an answer: only a lost connection or a server failure is tried again.
      retry: (failures, error) => failures < 2 && !(error instanceof ApiFailure && error.status < 500),
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <SessionProvider login={(props) => <Login {...props} />} prepare={app.prefetch}>
        <Loader what="de l’application">
          <App />
        </Loader>
      </SessionProvider>
    </QueryClientProvider>
  </StrictMode>,
);
