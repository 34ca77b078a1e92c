/**
 * An export's file name: what it holds, its period and its filters (issue 29 point 4), in ASCII
 * (e.g. absences-du-2026-11-01-au-2026-11-30-statut-pending-etablissement-3), so that two
 * downloads of different periods or filters never take each other's name in a folder.
 */
export type FilenamePart = [label: string, value: unknown];

/** A filter's value as a file name word: lower-case ASCII letters, digits and hyphens. */
export function filenameWord(value: unknown): string {
  return String(value)
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
}

/** The period of a from/to filter: du-A-au-B, depuis-A, jusqu-au-B, or nothing. */
export function periodWords(from: unknown, to: unknown): string[] {
  if (from && to) return from === to ? [`le-${String(from)}`] : [`du-${String(from)}-au-${String(to)}`];
  if (from) return [`depuis-${String(from)}`];
  if (to) return [`jusqu-au-${String(to)}`];
  return [];
}

/** base, then the period, then each filter given (label-value), joined by hyphens. */
export function exportFilename(base: string, period: string[], filters: FilenamePart[]): string {
  const words = [base, ...period];
  for (const [label, value] of filters) {
    if (value === undefined || value === null || value === '') continue;
    const word = filenameWord(value);
    if (word) words.push(`${label}-${word}`);
  }
  return words.join('-');
}
