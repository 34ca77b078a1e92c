import type { Writable } from 'node:stream';
import type ExcelJS from 'exceljs';
import { wallClock, type ExportColumn, type RawValue } from './columns.js';
import { guardFormula } from './csv.js';

let excel: typeof ExcelJS | null = null;

/**
 * Loads exceljs, on the first XLSX export rather than at start-up (it is the heaviest module of the
 * service: a quarter of the start-up's module loading, BENCHMARKS.md "Start-up").
 */
export async function loadXlsx(): Promise<void> {
  excel ??= (await import('exceljs')).default;
}

export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

const NUMBER_FORMATS: Partial<Record<ExportColumn['kind'], string>> = {
  decimal: '0.00',
  date: 'dd/mm/yyyy',
  datetime: 'dd/mm/yyyy hh:mm',
};

/** A typed cell: numbers as numbers, dates as dates; text guarded as in the CSV. */
function cellValue(column: ExportColumn, value: RawValue): ExcelJS.CellValue {
  if (value === null) return null;
  switch (column.kind) {
    case 'int':
    case 'decimal':
      return Number(value);
    case 'date':
    case 'datetime':
      return wallClock(value);
    default:
      return guardFormula(value);
  }
}

/**
 * An XLSX workbook written row by row into `stream` (exceljs streaming writer: committed rows
 * leave memory; no shared strings table, which would keep every text until the end).
 */
export class XlsxExport {
  private readonly workbook: ExcelJS.stream.xlsx.WorkbookWriter;
  private readonly sheet: ExcelJS.Worksheet;

  constructor(stream: Writable, private readonly columns: readonly ExportColumn[], sheetName: string) {
    if (!excel) throw new Error('XlsxExport: call loadXlsx() first');
    this.workbook = new excel.stream.xlsx.WorkbookWriter({ stream, useStyles: true, useSharedStrings: false });
    this.sheet = this.workbook.addWorksheet(sheetName);
    this.sheet.columns = columns.map((column) => ({
      header: column.label,
      key: column.key,
      width: Math.max(12, column.label.length + 2),
      style: NUMBER_FORMATS[column.kind] ? { numFmt: NUMBER_FORMATS[column.kind] } : {},
    }));
  }

  addRow(row: Record<string, RawValue>): void {
    this.sheet.addRow(this.columns.map((column) => cellValue(column, row[column.key] ?? null))).commit();
  }

  /** Writes the end of the workbook; resolves once the zip is flushed into the stream. */
  async finish(): Promise<void> {
    this.sheet.commit();
    await this.workbook.commit();
  }
}
