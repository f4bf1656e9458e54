// Figures of the benchmark's measurements, shared by bench/run.ts and bench/events.ts.

/** The median of the finite values; NaN when there is none. */
export const median = (xs: number[]) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
