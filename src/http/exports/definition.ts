import type { ExportColumn } from './columns.js';

/** What a route exports (its manifest's `export`): the columns, the file's name and the sheet's. */
export interface ExportDefinition {
  columns: readonly ExportColumn[];
  /** File name without extension (ASCII), e.g. absences-2026-11-25. */
  filename: (query: Record<string, unknown>) => string;
  /** The sheet's name in the workbook. */
  sheet: string;
}
