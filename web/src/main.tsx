import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { ApiFailure } from './api/client';
import { App } from './app/App';
import { Login } from './features/session/components/Login';
import { SessionProvider } from './features/session/session';
import './styles.css';

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
      <SessionProvider login={(props) => <Login {...props} />}>
        <App />
      </SessionProvider>
    </QueryClientProvider>
  </StrictMode>,
);
