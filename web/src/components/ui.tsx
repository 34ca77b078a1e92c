import { useId, type ReactNode } from 'react';
import type { UseQueryResult } from '@tanstack/react-query';
import { ApiFailure } from '../api/client';

/** Messages of a field, tied to its input by aria-describedby (id `${id}-error`). */
export function FieldError({ id, messages }: { id: string; messages?: string[] }) {
  if (!messages?.length) return null;
  return (
    <p className="field-error" id={`${id}-error`}>
      {messages.join(' ')}
    </p>
  );
}

/** The answer of a failed call, read out when it appears. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiFailure ? Object.values(error.fields).flat().join(' ') : 'Le serveur ne répond pas. Réessayez dans un instant.';
  return (
    <p className="notice error" role="alert">
      {text}
    </p>
  );
}

/** The API's 404: no such record, or none the reader may see (the API does not tell them apart). */
export const isNotFound = (error: unknown) => error instanceof ApiFailure && error.status === 404;

/**
 * The failure to read a record opened by its address: a 404 says `notFound` (in the words of the
 * reader's situation), any other failure what ErrorNotice says.
 */
export function LoadError({ error, notFound }: { error: unknown; notFound: string }) {
  if (!error) return null;
  if (!isNotFound(error)) return <ErrorNotice error={error} />;
  return <NotFoundNotice text={notFound} />;
}

/** An address that names no record the reader may open (an unknown id, or not a number at all). */
export function NotFoundNotice({ text }: { text: string }) {
  return (
    <p className="notice error" role="alert">
      {text}
    </p>
  );
}

/**
 * A record opened by its address: « Chargement … » while it comes, `notFound` for a 404 or a record
 * the reader is not to open here (`opens` false), another failure as ErrorNotice says it, else the record.
 */
export function OpenedRecord<T>({ query, notFound, opens = () => true, children }: {
  query: UseQueryResult<T>;
  notFound: string;
  opens?(record: T): boolean;
  children(record: T): ReactNode;
}) {
  if (query.isPending) return <Loading what="de la demande" />;
  if (query.error) return <LoadError error={query.error} notFound={notFound} />;
  if (!opens(query.data as T)) return <NotFoundNotice text={notFound} />;
  return <>{children(query.data as T)}</>;
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      Chargement {what}…
    </p>
  );
}

export function Page({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  const id = useId();
  return (
    <section aria-labelledby={id} className="page">
      <header className="page-head">
        <h1 id={id} tabIndex={-1}>
          {title}
        </h1>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** Previous / next page of a paginated list (count from the server). */
export function Pager({ page, pageSize, count, onPage, label }: { page: number; pageSize: number; count: number; onPage(page: number): void; label: string }) {
  const pages = Math.max(1, Math.ceil(count / pageSize));
  if (pages === 1) return null;
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        Page précédente
      </button>
      <span aria-live="polite">
        Page {page} sur {pages}
      </span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={page >= pages}>
        Page suivante
      </button>
    </nav>
  );
}
