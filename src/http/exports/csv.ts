import { frenchDate, frenchDateTime, type ExportColumn, type RawValue } from './columns.js';

/**
 * CSV for French spreadsheet software: UTF-8 with a byte order mark (so that accents are read
 * as UTF-8), `;` between cells (the comma is the decimal separator), CRLF line ends, RFC 4180
 * quoting.
 */
export const CSV_BOM = '\ufeff';
export const CSV_SEPARATOR = ';';
/** The documented media type; the answer adds `; charset=utf-8`. */
export const CSV_MEDIA_TYPE = 'text/csv';
export const CSV_CONTENT_TYPE = `${CSV_MEDIA_TYPE}; charset=utf-8`;

/**
 * A cell a spreadsheet would take for a formula (= + - @, or a tab or carriage return that
 * some programs strip first) is prefixed with an apostrophe: text typed by a user never runs
 * as a formula on the computer of whoever opens the export (CSV injection).
 */
export function guardFormula(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

/** One cell: guarded, and quoted when it holds the separator, a quote or a line break. */
export function csvCell(text: string): string {
  const guarded = guardFormula(text);
  return /[;"\r\n]/.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

/** The text of a value in a cell: French dates, decimal comma. */
function cellText(column: ExportColumn, value: RawValue): string {
  if (value === null) return '';
  switch (column.kind) {
    case 'date':
      return frenchDate(value);
    case 'datetime':
      return frenchDateTime(value);
    case 'decimal':
      return value.replace('.', ',');
    default:
      return value;
  }
}

/** One line, CRLF-terminated. Numbers and dates need no guard (a negative decimal stays a number). */
export function csvLine(cells: string[]): string {
  return `${cells.join(CSV_SEPARATOR)}\r\n`;
}

export function csvHeader(columns: readonly ExportColumn[]): string {
  return CSV_BOM + csvLine(columns.map((column) => csvCell(column.label)));
}

export function csvRow(columns: readonly ExportColumn[], row: Record<string, RawValue>): string {
  return csvLine(columns.map((column) => {
    const text = cellText(column, row[column.key] ?? null);
    return column.kind === 'text' ? csvCell(text) : text;
  }));
}
