/** Small figures of the comparison tools' summaries (bench/lib/pairs.ts, bench/lib/variants.ts). */

/** The mean, or null without values. */
export const mean = (values: number[]) => (values.length ? values.reduce((sum, v) => sum + v, 0) / values.length : null);

/** The median (the mean of the two middle values for an even count), or null without values. */
export const median = (values: number[]) => {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** A figure for a markdown table ('–' when missing). */
export const fmt = (value: number | null, digits = 1) => (value === null ? '–' : value.toFixed(digits));

/** A ratio for a markdown table: ×1.73 ('–' when missing). */
export const times = (value: number | null) => (value === null ? '–' : `×${value.toFixed(2)}`);
