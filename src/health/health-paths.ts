/** The probe paths: served on both listeners, without a credential. */
export const HEALTH_PATHS: readonly string[] = ['/healthz', '/readyz'];
