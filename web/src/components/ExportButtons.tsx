import { useState } from 'react';
import { api, ok, type paths } from '../api/client';
import { ErrorNotice } from './ui';

/** The export routes and the query each takes (its list's filters, plus the format). */
type ExportPath = '/api/absences/export/' | '/api/counters/establishment/export/' | '/api/payroll/export/'
  | '/api/planning/export/' | '/api/shift-change-requests/export/';
type ExportQuery<P extends ExportPath> = Omit<NonNullable<paths[P]['get']['parameters']['query']>, 'format'>;

/** api.GET reading the body as a Blob (openapi-fetch's parseAs), typed loosely: its types expect JSON. */
const getBlob = api.GET as unknown as (path: string, init: object) => Promise<{ data?: Blob; error?: unknown; response: Response }>;

const FORMATS = [
  { format: 'csv', label: 'Exporter (CSV)' },
  { format: 'xlsx', label: 'Exporter (Excel)' },
] as const;

/** The file name the server gives (Content-Disposition), else a default. */
function filenameOf(response: Response, fallback: string): string {
  const header = response.headers.get('content-disposition') ?? '';
  const utf8 = /filename\*=UTF-8''([^;]+)/i.exec(header)?.[1];
  if (utf8) return decodeURIComponent(utf8);
  return /filename="([^"]+)"/i.exec(header)?.[1] ?? fallback;
}

/**
 * « Exporter (CSV) » and « Exporter (Excel) » for the list on screen, with its current filters.
 * The download needs the bearer token, so the file is fetched by the API client and handed to
 * the browser as an object URL (a plain link would go without the token).
 */
/** `what` names the group for assistive technology, in a word (paie, absences, compteurs). */
export function ExportButtons<P extends ExportPath>({ path, query, what }: { path: P; query: ExportQuery<P>; what: string }) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function download(format: 'csv' | 'xlsx') {
    setBusy(format);
    setError(null);
    try {
      const answer = await getBlob(path, { params: { query: { ...query, format } }, parseAs: 'blob' });
      const blob = await ok(Promise.resolve(answer));
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = filenameOf(answer.response, `export.${format}`);
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(null);
    }
  }

  return (
    <div className="export-buttons" role="group" aria-label={`Exports (${what})`}>
      {FORMATS.map(({ format, label }) => (
        <button key={format} type="button" disabled={busy !== null} aria-busy={busy === format}
          onClick={() => void download(format)}>
          {busy === format ? 'Export en cours…' : label}
        </button>
      ))}
      <ErrorNotice error={error} />
    </div>
  );
}
