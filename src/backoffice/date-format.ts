/**
 * A French date format of the back-office, made at its first use: the first Intl.DateTimeFormat
 * of a process loads ICU's locale data (30 to 90 ms of CPU), which start-up then does not pay
 * (BENCHMARKS.md, "Start-up (issue 31)"); the first back-office page that shows a date does.
 */
export function frenchFormat(options: Intl.DateTimeFormatOptions): { format(date: Date | number): string } {
  let made: Intl.DateTimeFormat | null = null;
  return { format: (date) => (made ??= new Intl.DateTimeFormat('fr-FR', options)).format(date) };
}
