import { setTimeout as sleep } from 'node:timers/promises';

/** The length of every rate-limit window (internal-api.md: "per fixed 60-second window"). */
const WINDOW_MS = 60_000;

/**
 * Waits, when needed, until the current rate-limit window has at least
 * `seconds` left. The windows are aligned to the clock, so a suite that counts
 * requests up to a budget and expects 429 fails if a window ends halfway
 * through it and the counts start again; run this in the suite's `before`.
 */
export async function roomInRateWindow(seconds = 5): Promise<void> {
  const left = WINDOW_MS - (Date.now() % WINDOW_MS);
  if (left < seconds * 1000) await sleep(left + 50);
}
