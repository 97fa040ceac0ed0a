/**
 * `work`, or a rejection once `ms` have passed without its answer (`what`
 * names the one that did not answer). The timer is cleared either way, and
 * `work` settling after the timeout won is never an unhandled rejection.
 */
export function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  void work.catch(() => undefined);
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
