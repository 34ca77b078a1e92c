import { Component, lazy, Suspense, type ComponentType, type LazyExoticComponent, type ReactNode } from 'react';

/**
 * Code loaded on demand (the app after the login, each screen when first opened; BENCHMARKS.md,
 * "The script, split (issue 29 point 6)"): a module's file is fetched the first time one of its
 * components is shown, or earlier by `prefetch()` (a login being sent, a menu entry pointed at).
 */

/** A module's file could not be fetched (connection lost, or a new version installed and the old files gone). */
export class LoadFailure extends Error {
  name = 'LoadFailure';
}

export interface OnDemand<M> {
  /** Starts fetching the module (once; again after a failure, which is shown when a component of it is). */
  prefetch(): void;
  /** One of its components, fetched with the module when first rendered (under a `Loader`). */
  component<P extends object>(pick: (module: M) => ComponentType<P>): LazyExoticComponent<ComponentType<P>>;
}

export function onDemand<M>(load: () => Promise<M>): OnDemand<M> {
  let pending: Promise<M> | null = null;
  const preload = () =>
    (pending ??= load().catch((error: unknown) => {
      pending = null;
      throw new LoadFailure(error instanceof Error ? error.message : String(error));
    }));
  return {
    prefetch: () => void preload().catch(() => undefined),
    component: (pick) => lazy(() => preload().then((module) => ({ default: pick(module) }))),
  };
}

/**
 * Where code loaded on demand is shown: « Chargement … » while its file comes; when it cannot come,
 * a message and a way to reload the page rather than a blank page (any other error goes up as
 * before). A new `resetKey` (the next screen opened) tries again.
 */
export function Loader({ what, resetKey, children }: { what: string; resetKey?: string; children: ReactNode }) {
  return (
    <LoadBoundary resetKey={resetKey}>
      <Suspense fallback={<p className="splash" role="status">Chargement {what}…</p>}>{children}</Suspense>
    </LoadBoundary>
  );
}

interface BoundaryProps {
  resetKey?: string;
  children: ReactNode;
}

interface BoundaryState {
  error: unknown;
  resetKey?: string;
}

class LoadBoundary extends Component<BoundaryProps, BoundaryState> {
  state: BoundaryState = { error: null, resetKey: this.props.resetKey };

  static getDerivedStateFromError(error: unknown): Partial<BoundaryState> {
    return { error };
  }

  static getDerivedStateFromProps(props: BoundaryProps, state: BoundaryState): Partial<BoundaryState> | null {
    return props.resetKey !== state.resetKey ? { error: null, resetKey: props.resetKey } : null;
  }

  render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    if (!(error instanceof LoadFailure)) throw error;
    return (
      <div className="notice error" role="alert">
        <p>
          Cette page n’a pas pu être chargée : la connexion est peut-être coupée, ou une nouvelle version de
          l’application vient d’être installée.
        </p>
        <button type="button" onClick={() => location.reload()}>Recharger la page</button>
      </div>
    );
  }
}
