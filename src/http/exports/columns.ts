/**
 * The columns of an export: the SQL function's output column (`key`), the French header a
 * spreadsheet shows, and how a cell is written. PostgreSQL sends every value as text (the
 * statement asks for no parsing), so that numbers and dates reach the file exactly as stored.
 */
export type ColumnKind = 'text' | 'int' | 'decimal' | 'date' | 'datetime';

export interface ExportColumn {
  key: string;
  label: string;
  kind: ColumnKind;
}

/** A value as PostgreSQL wrote it in text format, or null. */
export type RawValue = string | null;

/** 2026-11-25 → 25/11/2026 (French spreadsheets read it as a date). */
export function frenchDate(value: string): string {
  const [year, month, day] = value.slice(0, 10).split('-');
  return `${day}/${month}/${year}`;
}

/** 2026-11-25 10:30:00.123+01 (business time zone) → 25/11/2026 10:30. */
export function frenchDateTime(value: string): string {
  return `${frenchDate(value)} ${value.slice(11, 16)}`;
}

/** The wall-clock time of a timestamp (already in the business time zone) as a Date for a cell. */
export function wallClock(value: string): Date {
  const local = value.length > 10 ? `${value.slice(0, 10)}T${value.slice(11, 19)}Z` : `${value.slice(0, 10)}T00:00:00Z`;
  return new Date(local);
}
