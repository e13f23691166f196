/** The benchmarks' order statistics, so every script reads a p50 the same way. */

/** The value at fraction `p` (0..1) of an ascending array; NaN when it is empty. */
export const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;

/** The median of unsorted values (the upper one of an even count, as percentile(…, 0.5) reads it). */
export const median = (values: number[]): number => percentile([...values].sort((x, y) => x - y), 0.5);
