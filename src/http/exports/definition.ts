import type { ExportColumn } from './columns.js';

/** What a route exports (its manifest's `export`): the columns, the file's name and the sheet's. */
export interface ExportDefinition {
  /**
   * The columns, or the columns of a request (the team planning's grid has one column per day
   * of the window asked for: its query decides them).
   */
  columns: readonly ExportColumn[] | ((query: Record<string, unknown>) => readonly ExportColumn[]);
  /** File name without extension (ASCII), e.g. absences-2026-11-25. */
  filename: (query: Record<string, unknown>) => string;
  /** The sheet's name in the workbook. */
  sheet: string;
}

/** The columns of an export for a request's query. */
export function columnsOf(definition: ExportDefinition, query: Record<string, unknown>): readonly ExportColumn[] {
  return typeof definition.columns === 'function' ? definition.columns(query) : definition.columns;
}
