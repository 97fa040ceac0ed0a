import type { ValueTransformer } from 'typeorm';

/**
 * bigint columns come back from pg as strings. The columns carry CHECK
 * constraints that keep every value within Number.MAX_SAFE_INTEGER, so the
 * conversion to a number is exact: money stays integer minor units, never a float.
 */
export const safeIntegerTransformer: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};
