export const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/**
 * Polls until `probe` returns something other than undefined, and returns
 * it; fails naming `what` after `timeoutMs`. For effects that happen in the
 * background (deliveries, retries, readiness), where a fixed wait would be
 * either flaky or slow.
 */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(40);
  }
}
