import type { ConnectionFigures } from './instance-statements';

/**
 * Connections an instance opens outside its pool: the one dedicated client
 * of the notification hub (src/database/notifications/notification-hub.ts),
 * which LISTENs for every channel (key changes, delivery wake-ups, session ends).
 */
export const DEDICATED_CONNECTIONS = 1;

/**
 * After how long a replacement refused beside an instance killed a moment ago
 * fits: by then the killed one has missed a heartbeat (7.5 s after its last),
 * and the start waits for it to count as gone.
 */
export const REPLACEMENT_RETRY_SECONDS = 10;

export interface OwnConnections {
  poolMax: number;
  dedicated: number;
}

/**
 * Why this instance would not fit the server's connections, or null when it
 * fits. What the live instances may open (their pools at full size and their
 * dedicated connections) plus this instance's must stay within
 * `max_connections` less the connections the server keeps for superusers and
 * reserved roles: past that, a busy moment turns into "too many clients"
 * refusals on some instance, which is worse than refusing to start now.
 */
export function connectionBudgetProblem(figures: ConnectionFigures, own: OwnConnections): string | null {
  const reserved = figures.superuser_reserved + figures.reserved;
  const available = figures.max_connections - reserved;
  const needed = figures.other_connections + own.poolMax + own.dedicated;
  if (needed <= available) return null;
  return (
    `DB_POOL_MAX=${own.poolMax} does not fit the database server: the live instances would need ${needed} connections ` +
    `(${figures.other_instances} other instance(s) with ${figures.other_connections}, plus this instance's pool of ` +
    `${own.poolMax} and its ${own.dedicated} dedicated connection${own.dedicated === 1 ? '' : 's'}), but the server allows ${available} ` +
    `(max_connections ${figures.max_connections} less ${reserved} reserved). Lower DB_POOL_MAX or raise max_connections.` +
    (figures.other_instances > 0 &&
    connectionBudgetProblem({ ...figures, other_instances: 0, other_connections: 0 }, own) === null
      ? ` If this instance replaces one stopped a moment ago without a SIGTERM, start it again in ${REPLACEMENT_RETRY_SECONDS} s: ` +
        'an instance that has missed a heartbeat is waited for, one not yet late still counts.'
      : '')
  );
}
