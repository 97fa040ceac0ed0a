import type { AppConfig } from './app-config';

/**
 * What an instance runs, read from its role (SERVICE_ROLE) and from whether
 * it is a long-running service at all (the one-shot CLI runs none of it).
 * Every part that starts on a role asks here, so a role means one thing.
 */
export interface RoleDuties {
  /** The public listener, and with it the API key cache's notifications. */
  servesApi: boolean;
  /** The webhook delivery worker (and its wake-ups). */
  runsDeliveryWorker: boolean;
  /** The scheduled jobs (each on one instance at a time, see ScheduledJobs). */
  runsScheduledJobs: boolean;
}

export function roleDuties(config: Pick<AppConfig, 'serviceRole' | 'runBackgroundWork'>): RoleDuties {
  const background = config.runBackgroundWork;
  return {
    servesApi: config.serviceRole !== 'worker',
    runsDeliveryWorker: background && config.serviceRole !== 'api',
    runsScheduledJobs: background && config.serviceRole !== 'api',
  };
}
