/**
 * The figures of the delivery benches, from raw samples: percentiles, the
 * memory flatness rule, and values read from the Prometheus text of
 * `/internal/metrics` (gauges, and a quantile of a histogram between two scrapes).
 */

/** The value at or above which `p`% of the sorted samples lie (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  const value = sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
  if (value === undefined) throw new Error('no latencies were measured');
  return value;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

const tenth = (value: number): number => Math.round(value * 10) / 10;

/** p50, p99 and the largest of some latencies (ms, to a tenth); null when there are none. */
export function latencySummary(values: number[]): LatencySummary | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: tenth(percentile(sorted, 50)),
    p99: tenth(percentile(sorted, 99)),
    max: tenth(percentile(sorted, 100)),
  };
}

/** How far memory may move over a window and still count as flat: the last sample within 10% of the first. */
export const FLAT_WITHIN = 0.1;

export interface Flatness {
  firstMiB: number;
  lastMiB: number;
  /** last / first − 1, to a thousandth. */
  change: number;
  flat: boolean;
}

/** Whether memory sampled over a window (after warm-up) stayed flat: the last sample within 10% of the first. */
export function flatness(samplesMiB: number[]): Flatness | null {
  const first = samplesMiB[0];
  const last = samplesMiB[samplesMiB.length - 1];
  if (first === undefined || last === undefined || first <= 0) return null;
  const change = Math.round((last / first - 1) * 1000) / 1000;
  // Judged on the rounded change, so that exactly 10% (88 of 80) is not lost to floating point.
  return { firstMiB: tenth(first), lastMiB: tenth(last), change, flat: Math.abs(change) <= FLAT_WITHIN };
}

/** The sum over every label set of one unlabelled-or-labelled sample name (`name` or `name{...}`); null if absent. */
export function metricValue(text: string, name: string): number | null {
  let sum: number | null = null;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!rest.startsWith(' ') && !rest.startsWith('{')) continue;
    const value = Number(rest.slice(rest.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum = (sum ?? 0) + value;
  }
  return sum;
}

/** A histogram's cumulative bucket counts by upper bound (`le`), summed over its other labels. */
export type Buckets = Map<number, number>;

export function histogramBuckets(text: string, name: string): Buckets | null {
  const buckets: Buckets = new Map();
  const prefix = `${name}_bucket{`;
  for (const line of text.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    const count = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (le === undefined || !Number.isFinite(count)) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + count);
  }
  return buckets.size === 0 ? null : buckets;
}

/**
 * The `q` quantile (0..1) of what a histogram observed between two scrapes,
 * as the upper bound of the bucket it falls in (so never an underestimate;
 * Infinity when it lies above the largest finite bound). Null when nothing
 * was observed in between.
 */
export function histogramQuantile(before: Buckets | null, after: Buckets, q: number): number | null {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const observed = (bound: number): number => (after.get(bound) ?? 0) - (before?.get(bound) ?? 0);
  const total = observed(Infinity);
  if (total <= 0) return null;
  const bound = bounds.find((candidate) => observed(candidate) >= q * total);
  return bound ?? Infinity;
}
