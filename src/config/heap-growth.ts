import { setFlagsFromString } from 'node:v8';
import type { AppConfig } from './app-config';
import { roleDuties } from './service-role';

/** How far a delivery worker's old generation may grow past what survived the last full collection. */
export const WORKER_HEAP_GROWING_PERCENT = 40;

/**
 * `npm start` caps how far V8 lets the old generation grow past what survived
 * the last full collection (`--heap-growing-percent=10`): an instance that
 * serves the API otherwise climbs in memory under load, run after run.
 *
 * A delivery worker (`SERVICE_ROLE=worker`) allows more
 * (WORKER_HEAP_GROWING_PERCENT): under the cap its full collections come
 * often enough to cost CPU on every delivery, and with the wider margin its
 * memory still stays flat through a drain (V8's own, uncapped growth saves a
 * little more CPU but keeps growing through a drain). Figures in
 * docs/performance.md (Node flags). Only relaxed at run time, never imposed:
 * if Node ignored the flag, the worker would keep the cap it started with.
 */
export function heapGrowingPercentFor(config: Pick<AppConfig, 'serviceRole' | 'runBackgroundWork'>): number | null {
  return roleDuties(config).servesApi ? null : WORKER_HEAP_GROWING_PERCENT;
}

export function applyHeapGrowth(config: Pick<AppConfig, 'serviceRole' | 'runBackgroundWork'>): void {
  const percent = heapGrowingPercentFor(config);
  if (percent !== null) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
