/** Nearest-rank percentile of unsorted samples (copied and sorted once per call set). */
export function percentiles(samples: readonly number[], ranks: readonly number[]): number[] {
  if (samples.length === 0) return ranks.map(() => Number.NaN);
  const sorted = Float64Array.from(samples).sort();
  return ranks.map((p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number);
}

export function median(samples: readonly number[]): number {
  return percentiles(samples, [50])[0] as number;
}
